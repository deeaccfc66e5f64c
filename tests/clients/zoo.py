"""The model-zoo tier: GluonCV and GluonNLP models under MXNet 1.9.1 and under hybridlib.

The same file runs in both interpreters (MXNet 1.9.1 needs numpy<2 and cannot share
hybridlib's); under hybridlib it runs through the alias, so ``import mxnet`` is hybridlib:

    # MXNet 1.9.1: build each model, give it parameters, record outputs (tests/clients/data/zoo)
    .oracle/bin/python tests/clients/zoo.py record [NAME...]
    # hybridlib: the same models, imperative and hybridized, compared; each one exported
    python -m hybridlib tests/clients/zoo.py check OUT_DIR [NAME...]
    # MXNet 1.9.1: load hybridlib's exports from OUT_DIR and compare with the recordings
    .oracle/bin/python tests/clients/zoo.py imports OUT_DIR [NAME...]

Parameters. Each model is initialised, run once (deferred shapes), and then every parameter
but the constants (anchors and the like) gets values drawn by numpy from a seed derived from
its name: weights N(0, 1/fan_in), biases and betas N(0, 0.1), gammas U(0.8, 1.2), running
means N(0, 0.1) and running variances U(0.5, 1.5), so the statistics are sane. Names are
deterministic because each model is built in a fresh NameManager. ``record`` also saves the
parameters with MXNet into ``$HYBRIDLIB_ZOO_PARAMS`` (default ``~/.cache/hybridlib-zoo``);
``check`` loads that file with ``load_parameters`` when it is there and draws the same values
otherwise. Either way the recorded per-parameter sums say whether both sides hold the same.

Outputs are compared relative to the largest magnitude of the recorded output:
``max|ours - mxnet| <= TOLERANCE * max|mxnet|``, NaN where MXNet has NaN. Outputs larger than
``KEPT`` values are recorded as an evenly strided sample of them.
"""
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import traceback
import zlib

import numpy as np

import mxnet as mx
import zoo_nlp

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, 'data', 'zoo')
PARAMS = os.environ.get('HYBRIDLIB_ZOO_PARAMS',
                        os.path.join(os.path.expanduser('~'), '.cache', 'hybridlib-zoo'))
TOLERANCE = 1e-3
KEPT = 8192


# -------------------------------------------------------------------------------------------------
# The models
# -------------------------------------------------------------------------------------------------

class Case:
    """One model: how to build it, what to feed it, and whether it can be exported."""

    def __init__(self, name, family, build, inputs, export=True, onednn=True, scale=None,
                 mxnet_fix=None, view=None, nan_at=None):
        self.name, self.family, self.build, self.inputs = name, family, build, inputs
        self.export = export
        # the part of the outputs compared: a function of the list of numpy outputs
        self.view = view
        # {parameter name: flat index} of drawn values replaced by NaN
        self.nan_at = nan_at or {}
        # a context manager that corrects a bug of MXNet's CPU kernels while recording
        self.mxnet_fix = mxnet_fix
        # {regex: factor} for the drawn values of the parameters whose names match
        self.scale = scale or {}
        # MXNet's oneDNN fails on 5-d convolutions after set_data/load (IsDefaultData):
        # those models are recorded with its plain CPU kernels
        self.onednn = onednn


def image(*shape):
    return lambda rng: [rng.standard_normal((1,) + shape).astype('float32')]


def image_with_nan(*shape):
    """An image with one NaN pixel (MXNet's CPU runs the first relu in oneDNN, which maps NaN
    to 0: the NaN must end there)."""
    def inputs(rng):
        x = rng.standard_normal((1,) + shape).astype('float32')
        x[0, :, shape[1] // 3, shape[2] // 4] = np.nan
        return [x]
    return inputs


def gluoncv(model, **kwargs):
    def build():
        from gluoncv import model_zoo
        return model_zoo.get_model(model, pretrained=False, **kwargs)
    return build


CASES = {}


def add(name, family, build, inputs, **options):
    CASES[name] = Case(name, family, build, inputs, **options)


def add_gluoncv(family, models, inputs, options=None, **kwargs):
    for model in models:
        add(model, family, gluoncv(model, **kwargs), inputs, **(options or {}))


NO_BASE = dict(pretrained_base=False)
add_gluoncv('resnet v1/v2', ['resnet18_v1', 'resnet50_v1', 'resnet18_v2', 'resnet50_v2'],
            image(3, 64, 64))
add_gluoncv('resnet v1b', ['resnet18_v1b', 'resnet50_v1b', 'resnet50_v1c', 'resnet50_v1d',
                           'resnet50_v1s', 'resnet50_v1b_gn'], image(3, 64, 64))
add_gluoncv('resnext', ['resnext50_32x4d'], image(3, 64, 64))
add_gluoncv('se', ['se_resnet18_v1', 'se_resnet18_v2', 'se_resnext50_32x4d'], image(3, 64, 64))
add_gluoncv('mobilenet', ['mobilenet1.0', 'mobilenet0.25', 'mobilenetv2_1.0',
                          'mobilenetv2_0.25', 'mobilenetv3_large', 'mobilenetv3_small'],
            image(3, 64, 64))
add_gluoncv('shufflenet', ['shufflenet_v1', 'shufflenet_v2'], image(3, 64, 64))
add_gluoncv('squeezenet', ['squeezenet1.0', 'squeezenet1.1'], image(3, 224, 224))
add_gluoncv('densenet', ['densenet121'], image(3, 224, 224))
add_gluoncv('vgg', ['vgg11', 'vgg11_bn', 'alexnet'], image(3, 64, 64))
add_gluoncv('inception', ['googlenet', 'xception'], image(3, 224, 224))
add_gluoncv('inception', ['inceptionv3'], image(3, 299, 299))
add_gluoncv('darknet', ['darknet53'], image(3, 64, 64))
add_gluoncv('resnest', ['resnest14', 'resnest26'], image(3, 64, 64))
add_gluoncv('cifar', ['cifar_resnet20_v1', 'cifar_resnet20_v2', 'cifar_wideresnet16_10',
                      'cifar_resnext29_32x4d', 'cifar_residualattentionnet56'],
            image(3, 32, 32))
add_gluoncv('other classification', ['residualattentionnet56', 'hrnet_w18_small_v1_c', 'dla34',
                                     'nasnet_4_1056'], image(3, 224, 224))
add_gluoncv('ssd', ['ssd_300_vgg16_atrous_voc', 'ssd_300_mobilenet0.25_voc'],
            image(3, 300, 300), **NO_BASE)
# Its random class predictors saturate the softmax at 1 - 1e-7, where float32 rounding decides
# the order of the detections: their weights are scaled down to trained logits' range.
add_gluoncv('ssd', ['ssd_300_resnet34_v1b_voc'], image(3, 300, 300),
            dict(scale={r'convpredictor\d*[02468]_conv0_weight$': 0.1}), **NO_BASE)
add_gluoncv('ssd', ['ssd_512_resnet50_v1_voc', 'ssd_512_mobilenet1.0_voc'], image(3, 256, 256),
            **NO_BASE)
# NaN in the detectors: an input pixel (oneDNN's relu, which MXNet's CPU runs, maps it to 0),
# and a class score and a box offset of the first anchors (softmax, NMS and decoding)
add('ssd_300_mobilenet0.25_voc_nan_pixel', 'nan', gluoncv('ssd_300_mobilenet0.25_voc', **NO_BASE),
    image_with_nan(3, 300, 300))
for model, size, nan_at in [
        ('ssd_300_mobilenet0.25_voc', 300, {'ssd0_convpredictor0_conv0_bias': 5,
                                            'ssd0_convpredictor1_conv0_bias': 2}),
        ('ssd_512_resnet50_v1_voc', 256, {'ssd0_convpredictor2_conv0_bias': 30,
                                          'ssd0_convpredictor3_conv0_bias': 7}),
        ('yolo3_mobilenet0.25_voc', 128, {'yolov30_yolooutputv32_conv0_bias': 9})]:
    add(model + '_nan_score', 'nan', gluoncv(model, **NO_BASE), image(3, size, size),
        nan_at=nan_at)
add_gluoncv('yolo3', ['yolo3_darknet53_voc', 'yolo3_mobilenet0.25_voc'], image(3, 128, 128),
            **NO_BASE)
def first_rows(rows, per_class=None):
    """The first ``rows`` detections (axis 1) of each output, or of each class's block of
    ``per_class`` rows (Faster R-CNN's outputs hold one block per class)."""
    def view(outputs):
        if per_class:
            outputs = [o.reshape((o.shape[0], -1, per_class) + o.shape[2:]) for o in outputs]
            return [o[:, :, :rows] for o in outputs]
        return [o[:, :rows] for o in outputs]
    return view


# Random RPN box deltas (std 1.3) stretch proposals 45-fold, where float32 rounding (1e-6)
# becomes 1e-3 of a pixel, and through ROIAlign decides which detections rank first; trained
# RPNs predict deltas of about 0.1, as these do. And only the best detections are compared:
# further down a list of 1000, scores lie within float32 rounding of each other.
RCNN = dict(scale={r'rpn0_(rpnhead0_)?conv2_weight$': 0.1}, view=first_rows(100))


@contextlib.contextmanager
def roialign_zeroing_masked_rois():
    """MXNet's CPU ROIAlign, for a ROI whose batch index is negative, writes 0 into element n
    of the whole output (a value of ROI 0) where its GPU kernel zeroes ROI n. FPN R-CNNs mask
    the ROIs of the other levels that way, so on the CPU MXNet corrupts ROI 0's features; the
    recording takes the GPU's result, which hybridlib gives."""
    original = mx.nd.contrib.ROIAlign

    def ROIAlign(data, rois, *args, **kwargs):
        masked = (rois.slice_axis(axis=1, begin=0, end=1) < 0)
        out = original(data, mx.nd.broadcast_mul(rois, 1 - masked), *args, **kwargs)
        return mx.nd.broadcast_mul(out, (1 - masked).reshape((-1, 1, 1, 1)))
    mx.nd.contrib.ROIAlign = ROIAlign
    try:
        yield
    finally:
        mx.nd.contrib.ROIAlign = original


RCNN_FPN = dict(RCNN, mxnet_fix=roialign_zeroing_masked_rois)
add_gluoncv('r-cnn', ['faster_rcnn_resnet50_v1b_voc'], image(3, 128, 128),
            dict(RCNN, view=first_rows(10, per_class=300)), **NO_BASE)
add_gluoncv('r-cnn', ['faster_rcnn_fpn_resnet50_v1b_coco'], image(3, 128, 128),
            dict(RCNN_FPN, view=first_rows(10, per_class=1000)), **NO_BASE)
add_gluoncv('r-cnn', ['mask_rcnn_fpn_resnet18_v1b_coco'], image(3, 128, 128), RCNN_FPN,
            **NO_BASE)
# at 128² it has fewer anchors than its 1000 proposals, which MXNet rejects too
add_gluoncv('r-cnn', ['mask_rcnn_resnet18_v1b_coco'], image(3, 256, 256), RCNN, **NO_BASE)
add_gluoncv('centernet', ['center_net_resnet18_v1b_voc', 'center_net_resnet18_v1b_dcnv2_voc',
                          'center_net_mobilenetv3_small_duc_voc'], image(3, 128, 128),
            **NO_BASE)
SEGMENTATION = dict(pretrained_base=False, base_size=64, crop_size=64)
add_gluoncv('segmentation', ['fcn_resnet50_voc', 'psp_resnet50_ade', 'deeplab_resnet50_ade'],
            image(3, 64, 64), **SEGMENTATION)
add_gluoncv('pose', ['simple_pose_resnet18_v1b', 'mobile_pose_mobilenetv3_small'],
            image(3, 64, 48), **NO_BASE)
VIDEO = dict(onednn=False)
add_gluoncv('video', ['i3d_resnet50_v1_kinetics400'], image(3, 8, 64, 64), VIDEO, **NO_BASE)
add_gluoncv('video', ['slowfast_4x16_resnet50_kinetics400'], image(3, 36, 64, 64), VIDEO,
            **NO_BASE)
add_gluoncv('video', ['r2plus1d_resnet18_kinetics400'], image(3, 8, 64, 64), VIDEO)

for nlp_case in zoo_nlp.CASES:
    add(**nlp_case)


# -------------------------------------------------------------------------------------------------
# Parameters, inputs, outputs
# -------------------------------------------------------------------------------------------------

def _name_seed(name):
    return zlib.crc32(name.encode())


def draw(name, shape, dtype):
    """The value the tier gives parameter ``name``, the same in both interpreters."""
    rng = np.random.RandomState(_name_seed(name))
    shape = tuple(shape)
    tail = name.rsplit('_', 1)[-1]
    if name.endswith(('running_var', 'moving_var')):
        value = rng.uniform(0.5, 1.5, shape)
    elif name.endswith(('running_mean', 'moving_mean')) or tail in ('bias', 'beta'):
        value = rng.normal(0, 0.1, shape)
    elif tail == 'gamma':
        value = rng.uniform(0.8, 1.2, shape)
    else:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        value = rng.normal(0, np.sqrt(1.0 / max(fan_in, 1)), shape)
    return value.astype(dtype)


def drawn_parameters(net):
    """The parameters the tier sets (all but constants), by name."""
    return {name: p for name, p in net.collect_params().items()
            if type(p).__name__ != 'Constant'}


def fill(net, case):
    for name, p in drawn_parameters(net).items():
        value = draw(name, p.shape, p.dtype)
        for pattern, factor in case.scale.items():
            if re.search(pattern, name):
                value *= value.dtype.type(factor)
        if name in case.nan_at:
            value.flat[case.nan_at[name]] = np.nan
        p.set_data(mx.nd.array(value, dtype=p.dtype))


def as_numpy(out):
    """Every NDArray in a (nested) output, in order."""
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in as_numpy(o)]
    return [] if out is None else [out.asnumpy()]


def forward(net, arrays):
    return as_numpy(net(*[mx.nd.array(a, dtype=a.dtype) for a in arrays]))


def outputs_of(case, net, arrays):
    outputs = forward(net, arrays)
    return case.view(outputs) if case.view else outputs


def kept(value):
    flat = value.reshape(-1)
    step = max(1, -(-flat.size // KEPT))
    return flat[::step]


def inputs_of(case):
    return case.inputs(np.random.RandomState(_name_seed(case.name) ^ 12345))


def build(case):
    with mx.name.NameManager():
        net = case.build()
    net.initialize()
    return net


def relative_error(ours, ref):
    """max|ours - ref| / max|ref| over the kept values; inf where shapes or NaNs differ."""
    ours = kept(np.asarray(ours, dtype=np.float64))
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape or not np.array_equal(np.isnan(ours), np.isnan(ref)):
        return float('inf')
    finite = ~np.isnan(ref)
    if not finite.any():
        return 0.0
    scale = np.abs(ref[finite]).max() or 1.0
    return float(np.abs(ours[finite] - ref[finite]).max() / scale)


def compare(outputs, fixture):
    """The largest relative error over all outputs (inf if their number or shapes differ)."""
    shapes = json.loads(str(fixture['shapes']))
    if [list(o.shape) for o in outputs] != shapes:
        return float('inf')
    return max([relative_error(o, fixture[f'out{i}']) for i, o in enumerate(outputs)] or [0.0])


def param_sums(net):
    return {name: float(np.abs(p.data().asnumpy().astype(np.float64)).sum())
            for name, p in sorted(drawn_parameters(net).items())}


def params_path(name):
    return os.path.join(PARAMS, f'{name}.params')


# -------------------------------------------------------------------------------------------------
# The three steps
# -------------------------------------------------------------------------------------------------

def record(names):
    """MXNet 1.9.1: build, fill, run in predict mode; save the outputs and the parameters."""
    os.makedirs(FIXTURES, exist_ok=True)
    os.makedirs(PARAMS, exist_ok=True)
    for name in names:
        try:
            _record_one(CASES[name])
        except Exception:
            print(f'{name}: FAILED in MXNet\n{traceback.format_exc(limit=-12)}', flush=True)


def _record_one(case):
    name = case.name
    start = time.time()
    net = build(case)
    arrays = inputs_of(case)
    forward(net, arrays)                     # resolves deferred shapes
    fill(net, case)
    net.save_parameters(params_path(name))
    # a fresh net loads them (oneDNN's 5-d layouts reject set_data after a forward)
    net = build(case)
    net.load_parameters(params_path(name))
    sums = param_sums(net)         # before MXNet's forward writes 1 into fix_gamma's gammas
    with case.mxnet_fix() if case.mxnet_fix else contextlib.nullcontext():
        outputs = outputs_of(case, net, arrays)
    fixture = {f'out{i}': kept(o) for i, o in enumerate(outputs)}
    fixture['shapes'] = json.dumps([list(o.shape) for o in outputs])
    fixture['param_sums'] = json.dumps(sums)
    np.savez_compressed(os.path.join(FIXTURES, f'{name}.npz'), **fixture)
    print(f'{name}: {len(outputs)} outputs {[o.shape for o in outputs]} '
          f'({time.time() - start:.1f} s)', flush=True)


def prepared(case):
    """(net, inputs, where its parameters came from): built, run once (deferred shapes),
    given MXNet's saved parameters, or the same values drawn where that file is missing."""
    net = build(case)
    arrays = inputs_of(case)
    forward(net, arrays)
    if os.path.exists(params_path(case.name)):
        net.load_parameters(params_path(case.name))
        return net, arrays, 'loaded from MXNet'
    fill(net, case)
    return net, arrays, 'drawn'


def _check_one(case, out_dir):
    fixture = np.load(os.path.join(FIXTURES, f'{case.name}.npz'))
    net, arrays, params = prepared(case)
    result = {'params': params}
    recorded = json.loads(str(fixture['param_sums']))
    sums = param_sums(net)
    if sorted(sums) != sorted(recorded):
        missing = sorted(set(recorded) - set(sums))[:3]
        extra = sorted(set(sums) - set(recorded))[:3]
        raise AssertionError(f'parameter names differ from MXNet: missing {missing}, '
                             f'extra {extra}')
    bad = [n for n in sums if not np.isclose(sums[n], recorded[n], rtol=1e-5, equal_nan=True)]
    if bad:
        raise AssertionError(f'parameters differ from MXNet: {bad[:3]}')
    start = time.perf_counter()
    result['imperative'] = compare(outputs_of(case, net, arrays), fixture)
    result['imperative_s'] = time.perf_counter() - start
    net.hybridize()
    forward(net, arrays)
    start = time.perf_counter()
    result['hybridized'] = compare(outputs_of(case, net, arrays), fixture)
    result['hybridized_s'] = time.perf_counter() - start
    if case.export:
        net.export(os.path.join(out_dir, case.name))
        result['exported'] = True
    return result


def check(out_dir, names):
    """hybridlib: results per model into OUT_DIR/check.json (errors as text)."""
    os.makedirs(out_dir, exist_ok=True)
    results = {'tolerance': TOLERANCE}
    for name in names:
        try:
            results[name] = _check_one(CASES[name], out_dir)
        except Exception:                        # one model's failure is its row, not the run's
            results[name] = {'error': traceback.format_exc(limit=-6)}
        print(name, {k: v for k, v in results[name].items() if k != 'error'} or
              results[name]['error'].strip().splitlines()[-1], flush=True)
        with open(os.path.join(out_dir, 'check.json'), 'w') as f:
            json.dump(results, f, indent=1)


def imports(out_dir, names):
    """MXNet 1.9.1: load hybridlib's exports, compare with the recordings: OUT_DIR/imports.json
    (merged with what is there, as the models without oneDNN run in another interpreter)."""
    path = os.path.join(out_dir, 'imports.json')
    results = {}
    for name in names:
        case = CASES[name]
        if not case.export:
            continue
        prefix = os.path.join(out_dir, name)
        try:
            fixture = np.load(os.path.join(FIXTURES, f'{name}.npz'))
            arrays = inputs_of(case)
            data = ['data'] if len(arrays) == 1 else [f'data{i}' for i in range(len(arrays))]
            net = mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', data,
                                               prefix + '-0000.params')
            results[name] = {'mxnet': compare(outputs_of(case, net, arrays), fixture)}
        except Exception:
            results[name] = {'error': traceback.format_exc(limit=-4)}
        print(name, results[name], flush=True)
        merged = {}
        if os.path.exists(path):
            with open(path) as f:
                merged = json.load(f)
        merged.update(results)
        with open(path, 'w') as f:
            json.dump(merged, f, indent=1)


def serve():
    """Time hybridized forwards for benchmarks/model_zoo.py: reads ``NAME REPEAT`` lines, answers
    each with a JSON line {name, ms (median per call), samples} or {name, error}."""
    for line in sys.stdin:
        name, repeat = line.split()
        try:
            net, arrays, _ = prepared(CASES[name])
            arrays = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
            net.hybridize(static_alloc=True, static_shape=True)
            samples = []
            for i in range(int(repeat) + 2):             # two warm-up calls
                start = time.perf_counter()
                as_numpy(net(*arrays))
                samples.append((time.perf_counter() - start) * 1e3)
            reply = {'name': name, 'ms': float(np.median(samples[2:])), 'samples': samples[2:]}
        except Exception as exc:
            reply = {'name': name, 'error': f'{type(exc).__name__}: {str(exc)[:300]}'}
        print('RESULT ' + json.dumps(reply), flush=True)


def in_mxnet(step, args, names):
    """Run ``step`` here, except the models MXNet runs without oneDNN: a second interpreter
    (the switch is read when MXNet loads)."""
    plain = [n for n in names if not CASES[n].onednn]
    if plain and os.environ.get('MXNET_MKLDNN_ENABLED') != '0':
        env = dict(os.environ, MXNET_MKLDNN_ENABLED='0')
        subprocess.run([sys.executable, __file__, step] + args + plain, env=env, check=True)
        names = [n for n in names if n not in plain]
    if names:
        {'record': record, 'imports': imports}[step](*args, names)


def main(argv):
    step = argv[0] if argv else None
    if step == 'record':
        in_mxnet(step, [], argv[1:] or list(CASES))
    elif step == 'imports':
        in_mxnet(step, argv[1:2], argv[2:] or list(CASES))
    elif step == 'check':
        check(argv[1], argv[2:] or list(CASES))
    elif step == 'serve':
        serve()
    else:
        raise SystemExit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
