"""Cases for hybridlib/ops/contrib.py: MultiBoxPrior/Target/Detection, box_nms, box_iou.

The harness cases check each operator against straightforward loop references written from
MXNet's CPU kernels; the ``test_*_matches_mxnet`` functions compare with outputs of MXNet 1.9.1
(float32) pasted below, on the inputs pasted with them.
"""
import numpy as np
import pytest

from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, MXNetError, ShapeError
from harness import Case, check_case, normal, uniform

# -------------------------------------------------------------------------------------------------
# Literals from MXNet 1.9.1
# -------------------------------------------------------------------------------------------------

# MultiBoxPrior(zeros((1, 1, 2, 2)), sizes=(0.5, 0.3), ratios=(1, 2))[0]: the anchors below
ANCHORS = np.array([[0, 0, 0.5, 0.5],
                    [0.099999994, 0.099999994, 0.400000006, 0.400000006],
                    [-0.103553385, 0.0732233077, 0.603553414, 0.426776707],
                    [0.5, 0, 1, 0.5],
                    [0.600000024, 0.099999994, 0.899999976, 0.400000006],
                    [0.396446615, 0.0732233077, 1.10355341, 0.426776707],
                    [0, 0.5, 0.5, 1],
                    [0.099999994, 0.600000024, 0.400000006, 0.899999976],
                    [-0.103553385, 0.573223293, 0.603553414, 0.926776707],
                    [0.5, 0.5, 1, 1],
                    [0.600000024, 0.600000024, 0.899999976, 0.899999976],
                    [0.396446615, 0.573223293, 1.10355341, 0.926776707]], dtype=np.float32)

# MultiBoxPrior(zeros((1, 1, 2, 3)), sizes=(0.6,), ratios=(1, 3, 0.4), clip=True,
#               steps=(0.3, 0.25), offsets=(0.2, 0.6))[0]
PRIOR_CLIP = np.array([[0, 0, 0.350000024, 0.360000014],
                       [0, 0, 0.496410161, 0.233205095],
                       [0.0235088915, 0, 0.276491106, 0.534341693],
                       [0.200000003, 0, 0.600000024, 0.360000014],
                       [0.0535898507, 0, 0.746410131, 0.233205095],
                       [0.273508906, 0, 0.526491106, 0.534341693],
                       [0.449999988, 0, 0.849999964, 0.360000014],
                       [0.303589821, 0, 0.996410131, 0.233205095],
                       [0.523508847, 0, 0.776491106, 0.534341693],
                       [0, 0.0600000024, 0.350000024, 0.660000026],
                       [0, 0.186794922, 0.496410161, 0.533205092],
                       [0.0235088915, 0, 0.276491106, 0.834341645],
                       [0.200000003, 0.0600000024, 0.600000024, 0.660000026],
                       [0.0535898507, 0.186794922, 0.746410131, 0.533205092],
                       [0.273508906, 0, 0.526491106, 0.834341645],
                       [0.449999988, 0.0600000024, 0.849999964, 0.660000026],
                       [0.303589821, 0.186794922, 0.996410131, 0.533205092],
                       [0.523508847, 0, 0.776491106, 0.834341645]], dtype=np.float32)

# the MultiBoxTarget inputs: ANCHORS[None], LABEL (below) and
CLS_PRED = [[[1.7, -0.5, 0.0, 0.4, -0.8, 0.0, -0.0, -1.8, 1.0, 0.6, -0.6, -0.2],
             [0.5, -0.3, -0.2, -1.5, 0.6, 0.1, 0.3, -1.5, 1.7, 0.2, -0.4, 2.0],
             [-0.0, -1.5, -0.4, -2.3, 1.0, -0.4, -0.7, 1.1, -1.7, 0.5, -2.1, -0.7]],
            [[-1.2, 1.5, 1.8, -0.3, 0.8, -0.2, 0.6, -0.8, -1.7, -1.8, 0.4, 2.2],
             [0.3, -0.5, 1.9, 0.2, 0.1, 0.3, -0.1, -0.3, -1.4, 0.5, -0.1, 1.2],
             [-0.4, -1.9, -0.1, 1.7, -0.4, -0.9, -1.2, -1.1, -0.3, -1.2, 1.5, -0.3]],
            [[0.1, 1.4, 1.5, -0.2, 0.3, 0.7, -0.2, -1.8, 0.7, 0.9, 0.4, -0.9],
             [-0.2, -0.6, -0.3, 1.3, 1.5, 0.7, 0.5, 0.7, -0.0, -0.1, -0.7, -0.1],
             [2.3, 0.9, -0.3, -0.5, -0.9, 0.4, 0.4, -1.4, 0.5, -0.6, 1.4, 0.2]]]

# attributes {}
TARGET_DEFAULT_CLS = np.array([[2, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0],
                               [0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0],
                               [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]], dtype=np.float32)

TARGET_DEFAULT_LOC = np.array([[0.500000119, 1.00000024, -1.78337479,
                                -1.11571765],
                               [0.833333492, 1.66666698, 0.770753264,
                                1.43841016],
                               [-0.499999523, -1.50000095, -0.526802719,
                                -0.526802719],
                               [2.12132025, 0, -2.84858561, 0.617149353]], dtype=np.float32)

# attributes {'negative_mining_ratio': 2, 'negative_mining_thresh': 0.3}
TARGET_MINING_CLS = np.array([[2, 2, -1, 0, 0, 0, 0, 0, 0, 1, -1, -1],
                              [-1, -1, -1, 0, -1, -1, -1, -1, 3, 0, -1, -1],
                              [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]], dtype=np.float32)

TARGET_MINING_LOC = np.array([[0.500000119, 1.00000024, -1.78337479,
                               -1.11571765],
                              [0.833333492, 1.66666698, 0.770753264,
                               1.43841016],
                              [-0.499999523, -1.50000095, -0.526802719,
                               -0.526802719],
                              [2.12132025, 0, -2.84858561, 0.617149353]], dtype=np.float32)

# attributes {'overlap_threshold': 0.2, 'ignore_label': -3, 'variances': (0.2, 0.2, 0.1, 0.1)}
TARGET_LOW_CLS = np.array([[2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1, 1],
                           [0, 0, 0, 0, 0, 0, 3, 3, 3, 0, 0, 3],
                           [-3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3]], dtype=np.float32)

TARGET_LOW_LOC = np.array([[0.25000006, 0.500000119, -3.56674957, -2.2314353],
                           [0.416666746, 0.833333492, 1.54150653, 2.87682033],
                           [0.176776722, 0.707106888, -7.03248596, 1.23429978],
                           [-0.249999762, -0.750000477, -1.05360544,
                            -1.05360544],
                           [-0.416666329, -1.25000107, 4.05465269, 4.05465269],
                           [-0.176776513, -1.06066072, -4.51934195, 2.41212988],
                           [1.5, 0, -2.23143458, -2.23143601],
                           [2.5, 0, 2.87682104, 2.87682199],
                           [1.06066012, 0, -5.69717121, 1.23429871],
                           [-2.47487354, 0, -5.69717121, 1.23429871]], dtype=np.float32)

# the MultiBoxDetection inputs: DET_PROB, DET_LOC, ANCHORS[None]
DET_PROB = [[[0.98, 0.27, 0.17, 0.88, 0.91, 0.2, 0.44, 0.72, 0.85, 0.17, 0.66, 0.81],
             [0.55, 0.16, 0.04, 0.28, 0.81, 0.04, 0.01, 0.36, 0.06, 0.15, 0.02, 0.52],
             [0.7, 0.43, 0.13, 0.33, 0.59, 0.94, 0.99, 0.24, 0.01, 0.83, 0.93, 0.46]],
            [[0.77, 0.87, 0.61, 0.87, 0.02, 0.27, 0.28, 0.12, 0.91, 0.03, 0.67, 0.07],
             [0.36, 0.42, 0.18, 0.52, 0.53, 0.32, 0.74, 0.16, 0.19, 0.35, 0.38, 0.21],
             [0.92, 0.83, 0.11, 0.37, 0.23, 0.45, 0.28, 0.5, 0.92, 0.38, 0.65, 0.6]]]

DET_LOC = [[-0.8, 0.4, 0.6, 0.5, -0.5, 0.2, 0.9, -0.7, 0.2, 0.6, -0.3, 0.3, -0.5, -0.4, -0.4, 0.1,
            -0.0, 0.5, -0.5, -0.1, 0.5, 0.3, -0.7, 0.3, -0.2, 0.2, 0.2, 0.6, 0.1, -0.9, -0.7, 0.4,
            -0.1, 0.6, 0.1, -0.4, 0.5, -0.4, -1.0, 1.0, -1.0, 0.3, 0.5, 0.1, -0.8, 0.5, -0.7,
            -0.7],
           [-0.2, 0.4, 0.2, 0.4, -0.2, -0.1, -0.6, -0.2, 0.3, -0.1, 0.2, -0.3, -0.3, 0.0, -0.1,
            0.3, 0.1, 0.9, -0.1, -0.1, -0.5, 0.0, 0.3, -0.4, -0.0, 0.4, -0.1, -0.3, 0.5, 0.0, 0.2,
            0.6, 0.6, -0.2, -0.3, 0.1, -0.1, -0.9, 0.6, 0.0, 0.4, -0.6, 0.6, -0.3, -0.1, -0.7,
            -0.1, -0.1]]

# attributes {}
DET_DEFAULT = np.array([[[1, 0.99000001, 0, 0.478125781, 0.500202715, 1],
                         [1, 0.939999998, 0.477990746, 0.0728986412, 1,
                          0.448314607],
                         [1, 0.930000007, 0.554224432, 0.605969846, 0.885775626,
                          0.91203016],
                         [1, 0.829999983, 0.570317268, 0.424649328, 0.979682684,
                          1],
                         [0, 0.810000002, 0.614274383, 0.117970183, 0.885725617,
                          0.412029803],
                         [1, 0.699999988, 0, 0, 0.491874218, 0.546292782],
                         [0, 0.519999981, 0.386066854, 0.613995373, 1,
                          0.921359956],
                         [1, 0.430000007, 0.0554173887, 0.12559627, 0.41458261,
                          0.386403739],
                         [0, 0.360000014, 0.122596249, 0.56050694, 0.383403718,
                          0.88549304],
                         [-1, 0.330000013, 0.494220942, 0, 0.955779076,
                          0.485050321],
                         [-1, 0.129999995, 0, 0.0835052282, 0.597106218,
                          0.458921194],
                         [0, 0.0599999987, 0, 0.608027756, 0.603624582,
                          0.934398711]],
                        [[1, 0.920000017, 0, 0, 0.500202715, 0.540821791],
                         [1, 0.920000017, 0, 0.562581062, 0.62539047,
                          0.923276782],
                         [1, 0.829999983, 0.110961929, 0.102881566, 0.377038062,
                          0.391118407],
                         [0, 0.74000001, 0.00495032966, 0.534558833,
                          0.495049655, 1],
                         [1, 0.649999976, 0.59287554, 0.590735316, 0.931124508,
                          0.87326467],
                         [1, 0.600000024, 0.396376342, 0.551974952, 1,
                          0.898527563],
                         [0, 0.529999971, 0.605970263, 0.129970208, 0.900029778,
                          0.424029827],
                         [0, 0.519999981, 0.489950359, 0, 0.98004967,
                          0.51545918],
                         [1, 0.5, 0.108878359, 0.580875516, 0.421121597,
                          0.919124484],
                         [1, 0.449999988, 0.339228719, 0.0868145376, 1,
                          0.413185477],
                         [-1, 0.379999995, 0.463125795, 0.454999983, 1,
                          0.954999983],
                         [0, 0.180000007, 0, 0.0799824297, 0.639195442,
                          0.412946492]]], dtype=np.float32)

# attributes {'nms_topk': 4, 'threshold': 0.3}
DET_TOPK = np.array([[[1, 0.99000001, 0, 0.478125781, 0.500202715, 1],
                      [1, 0.939999998, 0.477990746, 0.0728986412, 1,
                       0.448314607],
                      [1, 0.930000007, 0.554224432, 0.605969846, 0.885775626,
                       0.91203016],
                      [1, 0.829999983, 0.570317268, 0.424649328, 0.979682684,
                       1],
                      [-1, 0.939999998, 0.477990746, 0.0728986412, 1,
                       0.448314607],
                      [-1, 0.99000001, 0, 0.478125781, 0.500202715, 1],
                      [-1, 0.360000014, 0.122596249, 0.56050694, 0.383403718,
                       0.88549304],
                      [-1, 0.829999983, 0.570317268, 0.424649328, 0.979682684,
                       1],
                      [-1, 0.930000007, 0.554224432, 0.605969846, 0.885775626,
                       0.91203016],
                      [-1, 0.519999981, 0.386066854, 0.613995373, 1,
                       0.921359956],
                      [-1, -1, -1, -1, -1, -1], [-1, -1, -1, -1, -1, -1]],
                     [[1, 0.920000017, 0, 0, 0.500202715, 0.540821791],
                      [1, 0.920000017, 0, 0.562581062, 0.62539047, 0.923276782],
                      [1, 0.829999983, 0.110961929, 0.102881566, 0.377038062,
                       0.391118407],
                      [0, 0.74000001, 0.00495032966, 0.534558833, 0.495049655,
                       1],
                      [-1, 0.449999988, 0.339228719, 0.0868145376, 1,
                       0.413185477],
                      [-1, 0.74000001, 0.00495032966, 0.534558833, 0.495049655,
                       1],
                      [-1, 0.5, 0.108878359, 0.580875516, 0.421121597,
                       0.919124484],
                      [-1, 0.920000017, 0, 0.562581062, 0.62539047,
                       0.923276782],
                      [-1, 0.379999995, 0.463125795, 0.454999983, 1,
                       0.954999983],
                      [-1, 0.649999976, 0.59287554, 0.590735316, 0.931124508,
                       0.87326467],
                      [-1, 0.600000024, 0.396376342, 0.551974952, 1,
                       0.898527563],
                      [-1, -1, -1, -1, -1, -1]]], dtype=np.float32)

# attributes {'force_suppress': True, 'nms_threshold': 0.2,
#  'clip': False, 'variances': (0.2, 0.1, 0.3, 0.2)}
DET_FORCE = np.array([[[1, 0.99000001, -0.0354591459, 0.478125781, 0.495459139,
                        1.04187417],
                       [1, 0.939999998, 0.534125805, 0.0728986412, 1.10729551,
                        0.448314607],
                       [1, 0.930000007, 0.515724897, 0.605969846, 0.864275098,
                        0.91203016],
                       [-1, 0.829999983, 0.614795446, 0.424649328, 0.985204577,
                        1.03535068],
                       [-1, 0.810000002, 0.620893836, 0.117970183, 0.879106164,
                        0.412029803],
                       [1, 0.699999988, -0.129304349, -0.00629273057,
                        0.469304323, 0.546292782],
                       [-1, 0.519999981, 0.35027805, 0.613995373, 0.923447728,
                        0.921359956],
                       [-1, 0.430000007, 0.0235053301, 0.12559627, 0.416494668,
                        0.386403739],
                       [-1, 0.360000014, 0.134412378, 0.56050694, 0.377587646,
                        0.88549304],
                       [-1, 0.330000013, 0.478269875, -0.0250503272,
                        0.921730101, 0.485050321],
                       [-1, 0.129999995, -0.0448392034, 0.0835052282,
                        0.601407766, 0.458921194],
                       [-1, 0.0599999987, -0.128462866, 0.608027756,
                        0.600178599, 0.934398711]],
                      [[1, 0.920000017, -0.0354591459, -0.000821769238,
                        0.495459139, 0.540821791],
                       [1, 0.920000017, 0.0117293298, 0.562581062, 0.65797627,
                        0.923276782],
                       [-1, 0.829999983, 0.112709463, 0.102881566, 0.363290548,
                        0.391118407],
                       [-1, 0.74000001, 0.00738862157, 0.534558833, 0.492611378,
                        1.00544107],
                       [1, 0.649999976, 0.594417453, 0.590735316, 0.953582525,
                        0.87326467],
                       [-1, 0.600000024, 0.392753512, 0.551974952, 1.07896221,
                        0.898527563],
                       [0, 0.529999971, 0.610433161, 0.129970208, 0.901566803,
                        0.424029827],
                       [-1, 0.519999981, 0.47738865, -0.0154591501, 0.962611437,
                        0.51545918],
                       [-1, 0.5, 0.120724499, 0.580875516, 0.439275503,
                        0.919124484],
                       [-1, 0.449999988, 0.292440295, 0.0868145376, 1.06613839,
                        0.413185477],
                       [-1, 0.379999995, 0.440695673, 0.454999983, 1.03930438,
                        0.954999983],
                       [-1, 0.180000007, -0.0829895437, 0.0799824297,
                        0.667842388, 0.412946492]]], dtype=np.float32)

# box_nms input; for each attribute set: the input rows kept, per batch element, in output
# order (the converted rows where the format changes)
NMS_DATA = [[[0.0, 0.05, 0.46, 0.08, 0.68, 0.73], [0.0, 0.83, 0.27, 0.14, 0.64, 0.5],
             [0.0, 0.01, 0.37, 0.01, 0.74, 0.64], [0.0, 0.67, 0.26, 0.4, 0.72, 0.96],
             [1.0, 0.0, 0.37, 0.05, 0.59, 0.82], [0.0, 0.34, 0.42, 0.12, 0.82, 0.64]],
            [[0.0, 0.95, 0.4, 0.25, 0.74, 0.98], [0.0, 0.49, 0.08, 0.37, 0.67, 0.86],
             [1.0, 0.66, 0.4, 0.35, 0.92, 0.68], [1.0, 0.74, 0.48, 0.13, 0.99, 0.81],
             [1.0, 0.11, 0.12, 0.07, 0.75, 0.86], [0.0, 0.84, 0.27, 0.2, 0.71, 0.86]]]

# attributes {'overlap_thresh': 0.5}
NMS_DEFAULT = [[1, 3, 5, 0], [6, 9, 8, 7]]
# attributes {'id_index': 0, 'overlap_thresh': 0.2, 'topk': 4}
NMS_CLASS = [[1, 3], [6, 9]]
# attributes {'id_index': 0, 'background_id': 1, 'out_format': 'center', 'valid_thresh': 0.3}
NMS_CENTER = [[1, 3, 5], [6, 7]]
NMS_CENTER_OUT = np.array([[0, 0.829999983, 0.454999983, 0.319999993,
                            0.369999975, 0.360000014],
                           [0, 0.670000017, 0.49000001, 0.680000007,
                            0.460000038, 0.559999943],
                           [0, 0.340000004, 0.620000005, 0.379999995,
                            0.400000006, 0.519999981],
                           [0, 0.949999988, 0.569999993, 0.61500001,
                            0.340000004, 0.730000019],
                           [0, 0.49000001, 0.375, 0.61500001, 0.590000033,
                            0.49000001]], dtype=np.float32)

# attributes {'id_index': 0, 'force_suppress': True, 'overlap_thresh': 0.2}
NMS_FORCE = [[1, 3], [6]]
# attributes {'in_format': 'center', 'overlap_thresh': 0.5}
NMS_IN_CENTER = [[1, 3, 0], [6, 7, 10]]
NMS_IN_CENTER_OUT = np.array([[0, 0.829999983, -0.0499999821, -0.109999999,
                               0.590000033, 0.389999986],
                              [0, 0.670000017, -0.100000024, -0.0799999833,
                               0.620000005, 0.879999995],
                              [0, 0.0500000007, 0.120000005, -0.285000026,
                               0.800000012, 0.444999993],
                              [0, 0.949999988, 0.0300000012, -0.24000001,
                               0.769999981, 0.74000001],
                              [0, 0.49000001, -0.254999995, -0.0600000024,
                               0.415000021, 0.800000012],
                              [1, 0.109999999, -0.254999995, -0.360000014,
                               0.495000005, 0.5]], dtype=np.float32)

# box_iou(NMS_DATA[0, :, 2:], NMS_DATA[1, :3, 2:], format='center')
IOU_CENTER = np.array([[0.573517025, 0.16129382, 0.358024627],
                       [0.365917474, 0.304607332, 0.346241415],
                       [0.509633601, 0.182273775, 0.274582565],
                       [0.518764794, 0.537174106, 0.541198432],
                       [0.518844187, 0.200181171, 0.31461069],
                       [0.609994888, 0.225375623, 0.441965371]], dtype=np.float32)

LABEL = np.array([[[1, .1, .1, .45, .5], [0, .5, .45, .95, .9], [-1] * 5],
                  [[2, .2, .55, .6, .95], [-1] * 5, [-1] * 5],
                  [[-1] * 5, [-1] * 5, [-1] * 5]], dtype=np.float32)

# -------------------------------------------------------------------------------------------------
# Loop references, written from MXNet's CPU kernels
# -------------------------------------------------------------------------------------------------


def ref_prior(data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0),
              offsets=(0.5, 0.5)):
    height, width = data.shape[2:4]
    step_y, step_x = steps if steps[0] > 0 and steps[1] > 0 else (1 / height, 1 / width)
    boxes = []
    for r in range(height):
        for c in range(width):
            cx, cy = (c + offsets[1]) * step_x, (r + offsets[0]) * step_y
            shapes = [(s, np.sqrt(ratios[0])) for s in sizes]
            shapes += [(sizes[0], np.sqrt(q)) for q in ratios[1:]]
            for s, q in shapes:
                w, h = s * height / width * q / 2, s / q / 2
                boxes.append([cx - w, cy - h, cx + w, cy + h])
    boxes = np.array(boxes)[None]
    return np.clip(boxes, 0, 1) if clip else boxes


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return 0.0 if union == 0 else w * h / union


def ref_target(anchor, label, cls_pred, overlap_threshold=0.5, ignore_label=-1.0,
               negative_mining_ratio=-1.0, negative_mining_thresh=0.5,
               minimum_negative_samples=0, variances=(0.1, 0.1, 0.2, 0.2)):
    anchors = anchor[0]
    n_anchor = len(anchors)
    batch = label.shape[0]
    loc = np.zeros((batch, n_anchor, 4))
    mask = np.zeros((batch, n_anchor, 4))
    cls = np.full((batch, n_anchor), float(ignore_label))
    for b in range(batch):
        gts = []
        for row in label[b]:
            if row[0] == -1:
                break
            gts.append(row)
        if not gts:
            continue
        iou = [[_iou(a, g[1:5]) for g in gts] for a in anchors]
        flag, match, done = [-1] * n_anchor, [-1] * n_anchor, [False] * len(gts)
        while not all(done):
            best, value = None, 1e-6
            for j in range(n_anchor):
                for k in range(len(gts)):
                    if flag[j] != 1 and not done[k] and iou[j][k] > value:
                        best, value = (j, k), iou[j][k]
            if best is None:
                break
            flag[best[0]], match[best[0]], done[best[1]] = 1, best[1], True
        for j in range(n_anchor):
            if flag[j] != 1:
                match[j] = int(np.argmax(iou[j]))
                if overlap_threshold > 0 and iou[j][match[j]] > overlap_threshold:
                    flag[j] = 1
        if negative_mining_ratio > 0:
            n_pos = flag.count(1)
            n_neg = min(int(n_pos * negative_mining_ratio), n_anchor - n_pos)
            scored = []
            for j in range(n_anchor):
                if flag[j] != 1 and max(iou[j]) < negative_mining_thresh:
                    p = np.exp(cls_pred[b, :, j] - cls_pred[b, :, j].max())
                    scored.append((p[0] / p.sum(), j))
            for _, j in sorted(scored, key=lambda t: t[0])[:n_neg]:
                flag[j] = 0
        else:
            flag = [1 if f == 1 else 0 for f in flag]
        for j in range(n_anchor):
            if flag[j] == 1:
                g, a = gts[match[j]], anchors[j]
                aw, ah = a[2] - a[0], a[3] - a[1]
                gw, gh = g[3] - g[1], g[4] - g[2]
                loc[b, j] = [((g[1] + g[3]) / 2 - (a[0] + a[2]) / 2) / aw / variances[0],
                             ((g[2] + g[4]) / 2 - (a[1] + a[3]) / 2) / ah / variances[1],
                             np.log(gw / aw) / variances[2], np.log(gh / ah) / variances[3]]
                mask[b, j] = 1
                cls[b, j] = g[0] + 1
            elif flag[j] == 0:
                cls[b, j] = 0
    return loc.reshape(batch, -1), mask.reshape(batch, -1), cls


def ref_detection(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, background_id=0,
                  nms_threshold=0.5, force_suppress=False, variances=(0.1, 0.1, 0.2, 0.2),
                  nms_topk=-1):
    batch, n_class, n_anchor = cls_prob.shape
    out = np.full((batch, n_anchor, 6), -1.0)
    for b in range(batch):
        rows = []
        for i in range(n_anchor):
            probs = cls_prob[b, 1:, i]
            k = int(np.argmax(probs))
            if probs[k] < threshold:
                continue
            a, p = anchor[0, i], loc_pred[b, 4 * i:4 * i + 4]
            aw, ah = a[2] - a[0], a[3] - a[1]
            x = p[0] * variances[0] * aw + (a[0] + a[2]) / 2
            y = p[1] * variances[1] * ah + (a[1] + a[3]) / 2
            w = np.exp(p[2] * variances[2]) * aw / 2
            h = np.exp(p[3] * variances[3]) * ah / 2
            box = [x - w, y - h, x + w, y + h]
            rows.append([k, probs[k]] + (list(np.clip(box, 0, 1)) if clip else box))
        if rows and 0 < nms_threshold <= 1:
            ranked = sorted(rows, key=lambda r: -r[1])      # stable
            keep = len(rows) if nms_topk <= 0 else min(len(rows), nms_topk)
            rows = [list(r) for r in ranked[:keep]] + [[-1] + r[1:] for r in rows[keep:]]
            for i in range(keep):
                for j in range(i + 1, keep):
                    if rows[i][0] >= 0 and rows[j][0] >= 0 and (
                            force_suppress or rows[i][0] == rows[j][0]):
                        if _iou(rows[i][2:], rows[j][2:]) >= nms_threshold:
                            rows[j][0] = -1
        if rows:
            out[b, :len(rows)] = rows
    return out


def _corner(box, fmt):
    if fmt == 'corner':
        return box
    x, y, w, h = box
    return [x - w / 2, y - h / 2, x + w / 2, y + h / 2]


def _nms_iou(a, b, fmt):
    a, b = _corner(a, fmt), _corner(b, fmt)
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * \
        max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = [max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1]) if r[2] >= r[0] and r[3] >= r[1]
            else 0.0 for r in (a, b)]
    return 0.0 if inter <= 0 else inter / (area[0] + area[1] - inter)


def ref_nms(data, overlap_thresh=0.5, valid_thresh=0, topk=-1, coord_start=2, score_index=1,
            id_index=-1, background_id=-1, force_suppress=False, in_format='corner',
            out_format='corner'):
    if topk == 0:
        return data
    shape = data.shape
    flat = data.reshape((-1,) + shape[-2:])
    out = np.full(flat.shape, -1.0)
    c = slice(coord_start, coord_start + 4)
    for b, boxes in enumerate(flat):
        order = [i for i in np.argsort(-boxes[:, score_index], kind='stable')
                 if boxes[i, score_index] > valid_thresh
                 and (id_index < 0 or boxes[i, id_index] != background_id)]
        order = order[:topk] if topk > 0 else order
        kept = []
        for i in order:
            if not any((id_index < 0 or force_suppress
                        or int(boxes[i, id_index]) == int(boxes[j, id_index]))
                       and _nms_iou(boxes[j, c], boxes[i, c], in_format) > overlap_thresh
                       for j in kept):
                kept.append(i)
        for r, i in enumerate(kept):
            out[b, r] = boxes[i]
            x0, y0, x1, y1 = boxes[i, c]
            if in_format != out_format and x0 >= 0:
                out[b, r, c] = ([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0]
                                if out_format == 'center' else _corner(boxes[i, c], 'center'))
    return out.reshape(shape)


def ref_iou(lhs, rhs, format='corner'):
    a, b = lhs.reshape(-1, 4), rhs.reshape(-1, 4)
    out = np.array([[_nms_iou(x, y, format) for y in b] for x in a])
    return out.reshape(lhs.shape[:-1] + rhs.shape[:-1])


def ref_nms_backward(ograd, record, **attrs):
    rows = ograd.reshape(-1, ograd.shape[-1])
    out = np.zeros_like(rows)
    for i, r in enumerate(record.reshape(-1)):
        if r >= 0:
            out[int(r)] = rows[i]
    return out.reshape(ograd.shape)


def zero_grads(cots, *inputs, **attrs):
    """MXNet's gradient of the MultiBox operators and box_iou: zeros."""
    return [np.zeros_like(x) for x in inputs]


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------

def centered(shape):
    """Random boxes [x, y, width, height]."""
    def make(rng):
        return np.concatenate([rng.uniform(0.2, 0.8, shape[:-1] + (2,)),
                               rng.uniform(0.1, 0.5, shape[:-1] + (2,))], axis=-1)
    return make


def boxes(shape, ids=None):
    """Random box rows [id, score, xmin, ymin, xmax, ymax] (ids 0.5/1.5: class 0/1 whatever
    finite differences add)."""
    def make(rng):
        n = shape[:-1]
        xy = rng.uniform(0, 0.6, n + (2,))
        wh = rng.uniform(0.15, 0.5, n + (2,))
        cls = rng.integers(0, 2, n + (1,)) + (0.5 if ids is None else ids)
        return np.concatenate([cls, rng.uniform(0.05, 1, n + (1,)), xy, xy + wh], axis=-1)
    return make


def target_label(rng):
    label = np.full((2, 3, 6), -1.0)
    label[0, :2] = [[1, .05, .1, .45, .5, 7], [0, .5, .45, .95, .9, 7]]
    label[1, :1] = [[2, .2, .55, .6, .95, 7]]
    return label


def probabilities(shape):
    def make(rng):
        p = rng.uniform(0.05, 1, shape)
        return p / p.sum(axis=1, keepdims=True)
    return make


def nms_grad(cots, data, **attrs):
    """MXNet routes whole output rows back to their input rows, even across a format change
    (so this is not the derivative there)."""
    out = ref_nms(data, **attrs)
    grad = np.zeros_like(data)
    for r, row in enumerate(out):
        if row[0] >= 0:
            source = [i for i in range(len(data)) if (data[i, :2] == row[:2]).all()]
            grad[source[0]] = cots[0][r]
    return [grad]


ANCHOR_INPUT = ANCHORS[None].astype(np.float64)
RECORD = np.array([[[5], [-1], [0], [2]], [[7], [4], [-1], [6]]], dtype=np.float64)

CASES = [
    Case('_contrib_MultiBoxPrior', [(2, 3, 4, 5)], ref=ref_prior),
    Case('_contrib_MultiBoxPrior', [(1, 2, 3, 2)],
         dict(sizes=(0.4, 0.2, 0.1), ratios=(1, 2, 0.5), clip=True), ref=ref_prior,
         name='clip'),
    Case('_contrib_MultiBoxPrior', [(1, 1, 3, 4)],
         dict(sizes=(0.7,), ratios=(3, 0.3), steps=(0.2, 0.3), offsets=(0.1, 0.9)),
         ref=ref_prior, name='steps'),
    Case('_contrib_MultiBoxTarget', [ANCHOR_INPUT, target_label, normal((2, 3, 12))],
         ref=ref_target, grad_ref=zero_grads),
    Case('_contrib_MultiBoxTarget', [ANCHOR_INPUT, target_label, normal((2, 3, 12))],
         dict(negative_mining_ratio=2, negative_mining_thresh=0.3, ignore_label=-2),
         ref=ref_target, grad_ref=zero_grads, name='mining'),
    Case('_contrib_MultiBoxTarget', [ANCHOR_INPUT, target_label, normal((2, 3, 12))],
         dict(overlap_threshold=0, negative_mining_ratio=1.5, variances=(0.2, 0.1, 0.3, 0.2)),
         ref=ref_target, grad_ref=zero_grads, name='bipartite-only'),
    Case('_contrib_MultiBoxDetection',
         [probabilities((2, 3, 12)), normal((2, 48), 0.5), ANCHOR_INPUT],
         dict(threshold=0.2), ref=ref_detection, grad_ref=zero_grads),
    Case('_contrib_MultiBoxDetection',
         [probabilities((2, 4, 12)), normal((2, 48), 0.5), ANCHOR_INPUT],
         dict(nms_topk=3, nms_threshold=0.3, clip=False, variances=(0.2, 0.2, 0.1, 0.1)),
         ref=ref_detection, grad_ref=zero_grads, name='topk'),
    Case('_contrib_MultiBoxDetection',
         [probabilities((1, 3, 12)), normal((1, 48), 0.5), ANCHOR_INPUT],
         dict(force_suppress=True, nms_threshold=0.2), ref=ref_detection,
         grad_ref=zero_grads, name='force'),
    Case('_contrib_MultiBoxDetection',
         [probabilities((1, 3, 12)), normal((1, 48), 0.5), ANCHOR_INPUT],
         dict(nms_threshold=0, threshold=0.4), ref=ref_detection, grad_ref=zero_grads,
         name='no-nms'),
    Case('_contrib_box_nms', [boxes((2, 5, 6))], dict(overlap_thresh=0.3), ref=ref_nms),
    Case('_contrib_box_nms', [boxes((7, 6))], dict(overlap_thresh=0.4, topk=4, id_index=0),
         ref=ref_nms, name='class-topk'),
    Case('_contrib_box_nms', [boxes((2, 1, 5, 6))],
         dict(id_index=0, force_suppress=True, valid_thresh=0.3, overlap_thresh=0.2),
         ref=ref_nms, name='force'),
    Case('_contrib_box_nms', [boxes((2, 5, 6), ids=0)],
         dict(id_index=0, background_id=1, overlap_thresh=0.3), ref=ref_nms, grad=False,
         name='background'),
    Case('_contrib_box_non_maximum_suppression', [boxes((6, 6))],
         dict(in_format='center', overlap_thresh=0.2), ref=ref_nms, grad_ref=nms_grad,
         name='center'),
    Case('_contrib_box_nms', [boxes((6, 6))], dict(out_format='center', overlap_thresh=0.3),
         ref=ref_nms, grad_ref=nms_grad, name='to-center'),
    Case('_contrib_box_nms', [uniform((4, 7))], dict(topk=0, coord_start=3, score_index=0),
         ref=ref_nms, name='topk0'),
    Case('_backward_contrib_box_nms', [normal((2, 4, 6)), RECORD], ref=ref_nms_backward,
         grad_inputs=[0]),
    Case('_contrib_box_iou', [uniform((3, 4), 0, 1), uniform((2, 2, 4), 0, 1)], ref=ref_iou,
         grad_ref=zero_grads),
    Case('_contrib_box_iou', [centered((5, 4)), centered((1, 3, 4))], dict(format='center'),
         ref=ref_iou, grad_ref=zero_grads, name='center'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_contrib(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers
# -------------------------------------------------------------------------------------------------

def _anchors():
    return nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 2)), sizes=(0.5, 0.3), ratios=(1, 2))


def test_prior_matches_mxnet():
    np.testing.assert_array_equal(_anchors().asnumpy()[0], ANCHORS)
    out = nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 3)), sizes=(0.6,), ratios=(1, 3, 0.4),
                                   clip=True, steps=(0.3, 0.25), offsets=(0.2, 0.6))
    assert out.shape == (1, 18, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy()[0], PRIOR_CLIP, rtol=0, atol=1e-7)
    # only H and W matter; more axes are ignored as in MXNet
    assert nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 2, 5))).shape == (1, 4, 4)


@pytest.mark.parametrize('attrs, cls, loc', [
    ({}, TARGET_DEFAULT_CLS, TARGET_DEFAULT_LOC),
    (dict(negative_mining_ratio=2, negative_mining_thresh=0.3), TARGET_MINING_CLS,
     TARGET_MINING_LOC),
    (dict(overlap_threshold=0.2, ignore_label=-3, variances=(0.2, 0.2, 0.1, 0.1)),
     TARGET_LOW_CLS, TARGET_LOW_LOC),
])
def test_target_matches_mxnet(attrs, cls, loc):
    loc_target, loc_mask, cls_target = nd.contrib.MultiBoxTarget(
        _anchors(), nd.array(LABEL), nd.array(CLS_PRED), **attrs)
    np.testing.assert_array_equal(cls_target.asnumpy(), cls)
    positive = cls > 0
    np.testing.assert_array_equal(loc_mask.asnumpy().reshape(3, 12, 4),
                                  np.repeat(positive[..., None], 4, axis=-1))
    got = loc_target.asnumpy().reshape(3, 12, 4)
    np.testing.assert_allclose(got[positive], loc, rtol=3e-7, atol=1e-7)
    assert not got[~positive].any()


@pytest.mark.parametrize('attrs, expected', [
    ({}, DET_DEFAULT),
    (dict(nms_topk=4, threshold=0.3), DET_TOPK),
    (dict(force_suppress=True, nms_threshold=0.2, clip=False,
          variances=(0.2, 0.1, 0.3, 0.2)), DET_FORCE),
])
def test_detection_matches_mxnet(attrs, expected):
    out = nd.contrib.MultiBoxDetection(nd.array(DET_PROB), nd.array(DET_LOC), _anchors(),
                                       **attrs).asnumpy()
    np.testing.assert_array_equal(out[..., :2], expected[..., :2])
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize('attrs, kept, converted', [
    (dict(overlap_thresh=0.5), NMS_DEFAULT, None),
    (dict(id_index=0, overlap_thresh=0.2, topk=4), NMS_CLASS, None),
    (dict(id_index=0, background_id=1, out_format='center', valid_thresh=0.3), NMS_CENTER,
     NMS_CENTER_OUT),
    (dict(id_index=0, force_suppress=True, overlap_thresh=0.2), NMS_FORCE, None),
    (dict(in_format='center', overlap_thresh=0.5), NMS_IN_CENTER, NMS_IN_CENTER_OUT),
])
def test_box_nms_matches_mxnet(attrs, kept, converted):
    data = nd.array(NMS_DATA)
    data.attach_grad()
    with autograd.record():
        out = nd.contrib.box_nms(data, **attrs)
    out.backward(nd.arange(out.size).reshape(out.shape))
    out, grad = out.asnumpy(), data.grad.asnumpy().reshape(-1, 6)
    flat = np.array(NMS_DATA, dtype=np.float32).reshape(-1, 6)
    rows = []
    for b, sources in enumerate(kept):
        for r, i in enumerate(sources):
            # the output row came from input row i; its gradient went back there
            np.testing.assert_array_equal(grad[i], np.arange(6) + (b * 6 + r) * 6)
            rows.append(out[b, r])
            if converted is None:
                np.testing.assert_array_equal(out[b, r], flat[i])
        assert (out[b, len(sources):] == -1).all()
    assert np.count_nonzero(grad.any(axis=1)) == sum(map(len, kept))
    if converted is not None:
        np.testing.assert_allclose(np.array(rows), converted, rtol=0, atol=1e-7)


def test_box_iou_matches_mxnet():
    data = np.array(NMS_DATA, dtype=np.float32)
    out = nd.contrib.box_iou(nd.array(data[0, :, 2:]), nd.array(data[1, :3, 2:]),
                             format='center')
    np.testing.assert_allclose(out.asnumpy(), IOU_CENTER, rtol=0, atol=1e-7)


# -------------------------------------------------------------------------------------------------
# Conventions, symbols and errors
# -------------------------------------------------------------------------------------------------

def test_target_without_ground_truth_ignores_every_anchor():
    label = nd.array(np.full((1, 2, 5), -1.0))
    for attrs in ({}, dict(negative_mining_ratio=3)):
        _, mask, cls = nd.contrib.MultiBoxTarget(_anchors(), label, nd.zeros((1, 3, 12)),
                                                 ignore_label=-5, **attrs)
        assert (cls.asnumpy() == -5).all() and not mask.asnumpy().any()


def test_target_errors_as_mxnet():
    bad = nd.array([[[-1, 0.1, 0.1, 0.5, 0.6]]])
    with pytest.raises(MXNetError, match='class -1'):
        nd.contrib.MultiBoxTarget(_anchors(), bad, nd.zeros((1, 3, 12)))
    # MXNet: "Check failed: temp.size() >= num_negative (1 vs. 2)"
    anchors = nd.array([[[0, 0, 0.5, 0.5], [0.2, 0.2, 0.7, 0.7], [0.6, 0.6, 1, 1]]])
    label = nd.array([[[1, 0, 0, 0.5, 0.5]]])
    with pytest.raises(MXNetError, match='negative candidates'):
        nd.contrib.MultiBoxTarget(anchors, label, nd.zeros((1, 3, 3)), negative_mining_ratio=5,
                                  negative_mining_thresh=0.1)
    with pytest.raises(ShapeError, match='at least 5'):
        nd.contrib.MultiBoxTarget(_anchors(), nd.zeros((1, 2, 4)), nd.zeros((1, 3, 12)))
    with pytest.raises(ShapeError, match='cls_pred'):
        nd.contrib.MultiBoxTarget(_anchors(), nd.array(LABEL), nd.zeros((3, 3, 11)))
    with pytest.raises(AttributeParseError, match='variances'):
        nd.contrib.MultiBoxTarget(_anchors(), nd.array(LABEL), nd.zeros((3, 3, 12)),
                                  variances=(0.1, 0.2))


def test_prior_errors_as_mxnet():
    with pytest.raises(ShapeError, match='4-D'):
        nd.contrib.MultiBoxPrior(nd.zeros((2, 3, 4)))
    for attrs in (dict(steps=(0.1,)), dict(offsets=(1.5, 0.5)), dict(sizes=()),
                  dict(steps=(-1, 0.2))):
        with pytest.raises(AttributeParseError):
            nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 2)), **attrs)


def test_detection_and_nms_shape_errors():
    with pytest.raises(ShapeError):
        nd.contrib.MultiBoxDetection(nd.zeros((1, 3, 12)), nd.zeros((1, 44)), _anchors())
    with pytest.raises(ShapeError, match='at least 6'):
        nd.contrib.box_nms(nd.zeros((2, 5)), id_index=0)
    with pytest.raises(AttributeParseError, match='conflicts'):
        nd.contrib.box_nms(nd.zeros((2, 6)), score_index=3)


def test_symbols_as_mxnet():
    a, l, c = sym.var('a'), sym.var('l'), sym.var('c')
    target = sym.contrib.MultiBoxTarget(a, l, c, name='mbt')
    assert target.list_outputs() == ['mbt_loc_target', 'mbt_loc_mask', 'mbt_cls_target']
    assert target.infer_shape(a=(1, 5, 4), l=(2, 3, 6), c=(2, 4, 5))[1] == \
        [(2, 20), (2, 20), (2, 5)]
    det = sym.contrib.MultiBoxDetection(c, l, a, name='det', nms_topk=3)
    assert det.list_outputs() == ['det_output']
    assert det.infer_shape(c=(2, 3, 8), l=(2, 32), a=(1, 8, 4))[1] == [(2, 8, 6)]
    nms = sym.contrib.box_nms(sym.var('d'), name='nms')
    assert nms.list_outputs() == ['nms_output0']
    assert nms.infer_shape(d=(3, 2, 5, 6))[1] == [(3, 2, 5, 6)]
    # the hint is the called name, in lower case
    assert sym.contrib.box_non_maximum_suppression(sym.var('d')).name.startswith(
        'box_non_maximum_suppression')
    assert sym.contrib.MultiBoxPrior(sym.var('d')).name.startswith('multiboxprior')
    assert sym.contrib.box_iou(a, l).infer_shape(a=(2, 3, 4), l=(5, 4))[1] == [(2, 3, 5)]
    prior = sym.contrib.MultiBoxPrior(sym.var('x'), sizes=(0.5, 0.25), ratios=(1, 2, 0.5))
    assert prior.infer_shape(x=(2, 3, 4, 5))[1] == [(1, 80, 4)]


def test_no_gradient_reaches_the_multibox_inputs():
    anchors = _anchors()
    x, label, cls = nd.zeros((1, 1, 2, 2)), nd.array(LABEL), nd.array(CLS_PRED)
    for v in (x, label, cls):
        v.attach_grad()
    with autograd.record():
        prior = nd.contrib.MultiBoxPrior(x, sizes=(0.5, 0.3), ratios=(1, 2))
        outs = list(nd.contrib.MultiBoxTarget(prior, label, cls))
        outs.append(nd.contrib.MultiBoxDetection(nd.softmax(cls, axis=1),
                                                 nd.zeros((3, 48)), anchors))
    autograd.backward(outs, [nd.ones_like(o) for o in outs])
    for v in (x, label, cls):
        assert not v.grad.asnumpy().any()


def test_ssd_style_graph_hybridizes():
    """Anchors, targets and detections inside one hybridized block."""
    from hybridlib import gluon

    class Head(gluon.HybridBlock):
        def hybrid_forward(self, F, feat, label):
            anchors = F.contrib.MultiBoxPrior(feat, sizes=(0.5, 0.3), ratios=(1, 2))
            cls = F.reshape(F.sum(feat, axis=1, keepdims=True), shape=(0, 1, -1))
            cls = F.concat(cls, -cls, F.zeros_like(cls), dim=1)
            cls = F.repeat(cls, repeats=3, axis=2)
            targets = F.contrib.MultiBoxTarget(anchors, label, cls)
            det = F.contrib.MultiBoxDetection(F.softmax(cls, axis=1), targets[0], anchors)
            return [targets[2], det]

    feat = nd.array(np.random.default_rng(0).normal(size=(3, 2, 2, 2)))
    label = nd.array(LABEL)
    net = Head()
    expected = [o.asnumpy() for o in net(feat, label)]
    net.hybridize()
    for _ in range(2):
        for got, want in zip(net(feat, label), expected):
            np.testing.assert_array_equal(got.asnumpy(), want)


def test_box_nms_shortcuts_keep_the_per_box_numbers(monkeypatch):
    """box_nms sorts only the keys up to each row's top k, and compares candidates in blocks
    (all at once below _PAIRS_LIMIT): the kept rows are those of the full stable sort and the
    comparison box by box, with ties, NaN scores, classes and both formats."""
    from hybridlib.ops import contrib, registry
    rng = np.random.default_rng(5)
    for _ in range(60):
        key = rng.integers(0, 9, (2, int(rng.integers(1, 80)))).astype(np.float32)
        key[:, ::3] = np.inf
        key[0, ::4] = np.nan
        k = int(rng.integers(1, key.shape[1] + 1))
        np.testing.assert_array_equal(contrib._stable_top(np, key, k),
                                      contrib._stable_order(np, key)[:, :k])
    op = registry.get('_contrib_box_nms')
    for trial in range(60):
        data = rng.random((2, int(rng.integers(1, 120)), 6)).astype(np.float32)
        data[..., 0] = rng.integers(-1, 3, data.shape[:2])
        data[..., 1] = np.round(data[..., 1], 1)
        data[0, ::5, 1] = np.nan
        data[..., 4:] = data[..., 2:4] + rng.random(data.shape[:2] + (2,)) * 0.5
        attrs = op.parse_attrs(dict(
            overlap_thresh=0.4, valid_thresh=0.1, topk=[-1, 3, 40][trial % 3],
            id_index=[-1, 0][trial % 2], force_suppress=trial % 4 == 1,
            in_format=['corner', 'center'][trial % 5 == 0]))
        pairs = contrib._nms_rows(np, attrs, data)
        for limit in (0, 4):        # box by box; blocks that grow and shrink
            monkeypatch.setattr(contrib, '_PAIRS_LIMIT', limit)
            np.testing.assert_array_equal(pairs, contrib._nms_rows(np, attrs, data))
        monkeypatch.undo()
