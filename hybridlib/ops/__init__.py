"""The operator registry and its families, one file each, in the order they build on each other.

``registry.py`` defines OpDef and the table; ``attrs.py`` the typed attributes; ``frontend.py``
generates ``nd.*``/``sym.*`` functions from the table. Importing this package registers every
operator.
"""
from . import registry
from .registry import get, find, list_ops, REGISTRY

from . import elemwise      # noqa: F401  unary maths, binary, scalar, comparison
from . import creation      # noqa: F401  zeros/ones/full/arange, Cast, copies, random
from . import shape         # noqa: F401  Reshape, Flatten, transpose, concat, split, ...
from . import slicing       # noqa: F401  slice, slice_axis, slice_like, tile, repeat, Pad
from . import reduce        # noqa: F401  sum/mean/max/.../norm/argmax, broadcast_to
from . import gather        # noqa: F401  take, pick, one_hot, where, gather_nd, scatter_nd, ...
from . import sort          # noqa: F401  topk, sort, argsort
from . import sequence      # noqa: F401  SequenceMask, SequenceLast, SequenceReverse
from . import embedding     # noqa: F401  Embedding
from . import nn            # noqa: F401  FullyConnected, activations, Dropout, dot, batch_dot
from . import softmax       # noqa: F401  softmax, log_softmax, softmin, SoftmaxOutput
from . import loss_ops  # noqa: F401  CTCLoss, softmax_cross_entropy, *RegressionOutput, MakeLoss
from . import conv          # noqa: F401  Convolution, Deconvolution, im2col, col2im
from . import pooling       # noqa: F401  Pooling and its gradients
from . import resize        # noqa: F401  UpSampling, AdaptiveAvgPooling2D, BilinearResize2D
from . import norm          # noqa: F401  BatchNorm, LayerNorm, InstanceNorm, GroupNorm, ...
from . import rnn           # noqa: F401  the fused RNN and its parameter packing
from . import optimizer     # noqa: F401  fused optimizer updates: sgd_update, adam_update, ...
from . import multi_tensor  # noqa: F401  multi_sgd_update, _multi_lamb_update, multi_sum_sq, ...
from . import contrib       # noqa: F401  detection: MultiBoxPrior/Target/Detection, box_nms
from . import detection     # noqa: F401  Proposal, PSROIPooling, DeformableConvolution, ...
from . import deformable    # noqa: F401  DeformableConvolution, ModulatedDeformableConvolution
from . import roi           # noqa: F401  ROIAlign
from . import image         # noqa: F401  _image_* (nd.image), cv resize/border
from . import custom        # noqa: F401  Custom: operators written in Python (mx.operator)
from . import control_flow  # noqa: F401  foreach, while_loop, cond of nd.contrib/sym.contrib
from . import contrib_misc  # noqa: F401  SyncBatchNorm, boolean_mask, fft, hawkesll, isnan, ...
from . import linalg        # noqa: F401  nd.linalg: gemm, potrf, trsm, gelqf, syevd, det, ...
from . import numeric       # noqa: F401  khatri_rao, cumsum, histogram, ravel_multi_index, ...
from . import pdf           # noqa: F401  random_pdf_*: densities of the random distributions
from . import spatial       # noqa: F401  GridGenerator, BilinearSampler, ROIPooling, Crop, ...
from . import attention     # noqa: F401  arange_like, div_sqrt_dim, interleaved_matmul_*
from . import legacy        # noqa: F401  Convolution_v1, Pooling_v1, BatchNorm_v1, SVMOutput, ...

__all__ = ['registry', 'get', 'find', 'list_ops', 'REGISTRY']
