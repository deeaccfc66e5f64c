"""mx.metric against MXNet 1.9.1: values, running (local) and global totals, create/config,
errors. The expected numbers are MXNet's, printed by the oracle and pasted here; the cases
where hybridlib deliberately differs say so and check against numpy references."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd

NAN = float('nan')
P = [nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])]
L = [nd.array([0, 1, 1])]


def _close(a, b, rel):
    if isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and len(a) == len(b)
                and all(_close(x, y, rel) for x, y in zip(a, b)))
    if isinstance(b, str) or b is None:
        return a == b
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=rel)


class approx:
    """Equality with floats compared to 1e-6 (MXNet's float32 sums may add in another order),
    nan equal to nan, through nested tuples and lists with names."""

    def __init__(self, expected, rel=1e-6):
        self.expected, self.rel = expected, rel

    def __eq__(self, obtained):
        return _close(obtained, self.expected, self.rel)

    def __repr__(self):
        return 'approx(%r)' % (self.expected,)


def classification_batches(k=2, sizes=((7, 1), (5, 2), (9, 3))):
    """Random probabilities (rows sum to 1) and labels; RandomState streams are stable."""
    out = []
    for n, seed in sizes:
        r = np.random.RandomState(seed)
        p = r.rand(n, k).astype('float32')
        p /= p.sum(1, keepdims=True)
        out.append(([nd.array(r.randint(0, k, size=n).astype('float32'))], [nd.array(p)]))
    return out


def regression_batches():
    out = []
    for n, seed in ((6, 4), (4, 5), (8, 6)):
        r = np.random.RandomState(seed)
        label = r.randn(n).astype('float32')
        pred = (label + 0.5 * r.randn(n)).astype('float32')
        out.append(([nd.array(label)], [nd.array(pred)]))
    return out


def multiclass_batches():
    out = []
    for n, k, seed in ((6, 3, 7), (8, 5, 8)):
        r = np.random.RandomState(seed)
        p = r.rand(n, k).astype('float32')
        out.append(([nd.array(r.randint(0, k, size=n).astype('float32'))], [nd.array(p)]))
    return out


def run(metric, batches, reset_local_after=1):
    """What MXNet's test printed: (get, get_global, num_inst, global_num_inst) after each
    batch, get/get_global after reset_local (after the second batch) and after reset."""
    out = []
    for i, (label, pred) in enumerate(batches):
        metric.update(label, pred)
        out.append((metric.get()[1], metric.get_global()[1], metric.num_inst,
                    metric.global_num_inst))
        if i == reset_local_after:
            metric.reset_local()
            out.append(('reset_local', metric.get()[1], metric.get_global()[1]))
    metric.reset()
    out.append(('reset', metric.get()[1], metric.get_global()[1]))
    return out


def test_data_streams_are_the_oracles():
    (label, pred), = classification_batches(sizes=((7, 1),))
    assert label[0].asnumpy().tolist() == [1, 0, 0, 0, 1, 1, 1]
    assert pred[0].asnumpy()[0].tolist() == approx([0.3666622042655945, 0.6333377957344055])
    (label, pred), = regression_batches()[:1]
    assert label[0].asnumpy()[0] == pytest.approx(0.050561707466840744)
    assert pred[0].asnumpy()[-1] == pytest.approx(-1.6285706758499146)
    (label, pred), _ = multiclass_batches()
    assert label[0].asnumpy().tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 2.0]
    assert pred[0].asnumpy()[0, 0] == pytest.approx(0.07630828768014908)


# -- MXNet's docstring examples -----------------------------------------------------------------
@pytest.mark.parametrize('metric, name, value, num_inst, sum_metric', [
    (mx.metric.Accuracy(), 'accuracy', 0.6666666666666666, 3, 2.0),
    (mx.metric.F1(), 'f1', 0.8, 1, 0.8),
    (mx.metric.MCC(), 'mcc', 0.0, 1.0, 0.0),
    (mx.metric.CrossEntropy(), 'cross-entropy', 0.5715994834899902, 3, 1.7147984504699707),
    (mx.metric.NegativeLogLikelihood(), 'nll-loss', 0.5715994834899902, 3, 1.7147984504699707),
    (mx.metric.Perplexity(None), 'perplexity', 1.7710976285155853, 3, 1.7147984504699707),
    (mx.metric.Perplexity(-1), 'perplexity', 1.7710976285155853, 3.0, 1.7147984504699707),
    (mx.metric.Perplexity(1), 'perplexity', 3.3333333738044977, 1.0, 1.2039728164672852),
    (mx.metric.PCC(), 'pcc', NAN, 1.0, NAN),
    (mx.metric.Loss(), 'loss', 0.5, 6, 3.0),
])
def test_docstring_examples(metric, name, value, num_inst, sum_metric):
    metric.reset()
    metric.update(L, P)
    assert metric.get() == (name, approx(value))
    assert metric.get_global() == (name, approx(value))
    assert metric.get_name_value() == [(name, approx(value))]
    assert (metric.num_inst, metric.sum_metric) == approx((num_inst, sum_metric))
    # Python floats, so that printing looks as it did under MXNet and numpy 1
    assert type(metric.get()[1]) is float


def test_str_and_repr():
    m = mx.metric.Accuracy()
    assert str(m) == "EvalMetric: {'accuracy': nan}"
    m.update(L, P)
    assert str(m) == "EvalMetric: {'accuracy': 0.6666666666666666}"
    assert repr(m).startswith('<hybridlib.metric.Accuracy object at ')
    c = mx.metric.create(['acc', 'f1', mx.metric.MAE()])
    c.update(L, P)
    assert str(c) == "EvalMetric: {'accuracy': 0.6666666666666666, 'f1': 0.8, 'mae': 0.5}"


# -- running (local) and global totals over batches, as MXNet printed them ------------------------
CLASSIFICATION = [
    (lambda: mx.metric.Accuracy(), [
        (0.7142857142857143, 0.7142857142857143, 7, 7),
        (0.6666666666666666, 0.6666666666666666, 12, 12),
        ('reset_local', NAN, 0.6666666666666666),
        (0.4444444444444444, 0.5714285714285714, 9, 21)]),
    (lambda: mx.metric.F1(), [
        (0.8, 0.8, 1, 1), (0.65, 0.65, 2, 2), ('reset_local', NAN, 0.65),
        (0.5454545454545454, 0.6151515151515151, 1, 3)]),
    (lambda: mx.metric.F1(average='micro'), [
        (0.8, 0.8, 7, 7), (0.7142857142857143, 0.7142857142857143, 12, 12),
        ('reset_local', NAN, 0.7142857142857143), (0.5454545454545454, 0.64, 9, 21)]),
    (lambda: mx.metric.MCC(), [
        (0.47140452079103173, 0.47140452079103173, 1.0, 1.0),
        (0.4398264056274474, 0.4398264056274474, 2.0, 2.0),
        ('reset_local', NAN, 0.4398264056274474),
        (-0.05976143046671968, 0.27329712692939173, 1.0, 3.0)]),
    (lambda: mx.metric.MCC(average='micro'), [
        (0.47140452079103173, 0.47140452079103173, 7, 7),
        (0.3142857142857143, 0.3142857142857143, 12, 12),
        ('reset_local', NAN, 0.3142857142857143),
        (-0.05976143046671968, 0.13483997249264842, 9, 21)]),
    (lambda: mx.metric.CrossEntropy(), [
        (1.587517329624721, 1.587517329624721, 7, 7),
        (1.1344152688980103, 1.1344152688980103, 12, 12),
        ('reset_local', NAN, 1.1344152688980103),
        (1.1077162424723308, 1.1229728290012904, 9, 21)]),
    (lambda: mx.metric.create('nll_loss'), [
        (1.587517329624721, 1.587517329624721, 7, 7),
        (1.1344152688980103, 1.1344152688980103, 12, 12),
        ('reset_local', NAN, 1.1344152688980103),
        (1.1077162424723308, 1.1229728290012904, 9, 21)]),
    (lambda: mx.metric.Perplexity(None), [
        (4.891589636137181, 4.891589636137181, 7, 7),
        (3.1093548747386417, 3.1093548747386417, 12, 12),
        ('reset_local', NAN, 3.1093548747386417),
        (3.027436562512046, 3.073979047333548, 9, 21)]),
    (lambda: mx.metric.Perplexity(1), [
        (23.0840897749231, 23.0840897749231, 3.0, 3.0),
        (7.476040273626245, 7.476040273626245, 5.0, 5.0),
        ('reset_local', NAN, 7.476040273626245),
        (4.999799882752265, 6.113812663430873, 5.0, 10.0)]),
    (lambda: mx.metric.PCC(), [
        (0.47140452079103173, 0.47140452079103173, 1.0, 1.0),
        (0.3142857142857143, 0.3142857142857143, 2.0, 2.0),
        ('reset_local', NAN, 0.3142857142857143),
        (-0.05976143046671968, 0.13483997249264842, 1.0, 3.0)]),
    (lambda: mx.metric.Loss(), [
        (0.5, 0.5, 14, 14), (0.5, 0.5, 24, 24), ('reset_local', NAN, 0.5),
        (0.5, 0.5, 18, 42)]),
    (lambda: mx.metric.TopKAccuracy(2), [
        (1.0, 1.0, 7, 7), (1.0, 1.0, 12, 12), ('reset_local', NAN, 1.0), (1.0, 1.0, 9, 21)]),
    (lambda: mx.metric.MAE(), [
        (0.5, 0.5, 1, 1), (0.5, 0.5, 2, 2), ('reset_local', NAN, 0.5), (0.5, 0.5, 1, 3)]),
    (lambda: mx.metric.MSE(), [
        (0.3099798858165741, 0.3099798858165741, 1, 1),
        (0.30680373311042786, 0.30680373311042786, 2, 2),
        ('reset_local', NAN, 0.30680373311042786),
        (0.32090306282043457, 0.3115035096804301, 1, 3)]),
    (lambda: mx.metric.RMSE(), [
        (0.5567583441734314, 0.5567583441734314, 1, 1),
        (0.5538912415504456, 0.5538912415504456, 2, 2),
        ('reset_local', NAN, 0.5538912415504456),
        (0.5664830803871155, 0.5580885211626688, 1, 3)]),
]

REGRESSION = [
    (lambda: mx.metric.MAE(), [
        (0.28605541586875916, 0.28605541586875916, 1, 1),
        (0.3425877094268799, 0.3425877094268799, 2, 2),
        ('reset_local', NAN, 0.3425877094268799),
        (0.4447616636753082, 0.376645694176356, 1, 3)]),
    (lambda: mx.metric.MSE(), [
        (0.10814178735017776, 0.10814178735017776, 1, 1),
        (0.16947709396481514, 0.16947709396481514, 2, 2),
        ('reset_local', NAN, 0.16947709396481514),
        (0.3697422742843628, 0.23623215407133102, 1, 3)]),
    (lambda: mx.metric.RMSE(), [
        (0.328849196434021, 0.328849196434021, 1, 1),
        (0.4046392887830734, 0.4046392887830734, 2, 2),
        ('reset_local', NAN, 0.4046392887830734),
        (0.6080643534660339, 0.4724476436773936, 1, 3)]),
    (lambda: mx.metric.PearsonCorrelation(), [
        (0.9140919420413026, 0.9140919420413026, 1, 1),
        (0.91108145340992, 0.91108145340992, 2, 2),
        ('reset_local', NAN, 0.91108145340992),
        (0.9414253411035673, 0.9211960826411358, 1, 3)]),
    # MXNet: get() 0.9140919420413028, 0.9235348923821305 over the first batches (as here),
    # then 0.914117461103057 over all three (its micro moments ignore reset_local), and
    # get_global() 0.0 throughout. Here get() after reset_local is the third batch alone (its
    # macro value) and get_global() is MXNet's value over all batches.
    (lambda: mx.metric.PearsonCorrelation(average='micro'), [
        (0.9140919420413028, 0.9140919420413028, 1, 1),
        (0.9235348923821305, 0.9235348923821305, 2, 2),
        ('reset_local', NAN, 0.9235348923821305),
        (0.9414253411035673, 0.914117461103057, 1, 3)]),
]

MULTICLASS = [
    (lambda: mx.metric.PCC(), [
        (0.18181818181818182, 0.18181818181818182, 1.0, 1.0),
        (0.2675252036971711, 0.2675252036971711, 2.0, 2.0),
        ('reset_local', NAN, 0.2675252036971711)]),
    (lambda: mx.metric.TopKAccuracy(2), [
        (0.8333333333333334, 0.8333333333333334, 6, 6),
        (0.5714285714285714, 0.5714285714285714, 14, 14),
        ('reset_local', NAN, 0.5714285714285714)]),
    (lambda: mx.metric.create('top_k_acc', top_k=3), [
        (1.0, 1.0, 6, 6), (0.6428571428571429, 0.6428571428571429, 14, 14),
        ('reset_local', NAN, 0.6428571428571429)]),
    # MXNet fails in argpartition (top_k above the 3 classes); here every class is in the top
    (lambda: mx.metric.TopKAccuracy(10), [
        (1.0, 1.0, 6, 6), (1.0, 1.0, 14, 14), ('reset_local', NAN, 1.0)]),
    (lambda: mx.metric.Accuracy(), [
        (0.5, 0.5, 6, 6), (0.42857142857142855, 0.42857142857142855, 14, 14),
        ('reset_local', NAN, 0.42857142857142855)]),
    (lambda: mx.metric.Perplexity(None), [
        (2.472691647004142, 2.472691647004142, 6, 6),
        (2.215874523511178, 2.215874523511178, 14, 14),
        ('reset_local', NAN, 2.215874523511178)]),
]


@pytest.mark.parametrize('make, expected', CLASSIFICATION)
def test_running_and_global_classification(make, expected):
    assert run(make(), classification_batches()) == approx(expected + [('reset', NAN, NAN)])


@pytest.mark.parametrize('make, expected', REGRESSION)
def test_running_and_global_regression(make, expected):
    assert run(make(), regression_batches()) == approx(expected + [('reset', NAN, NAN)])


@pytest.mark.parametrize('make, expected', MULTICLASS)
def test_running_and_global_multiclass(make, expected):
    assert run(make(), multiclass_batches()) == approx(expected + [('reset', NAN, NAN)])


def test_eval_metric_without_global_stats_reads_local():
    class Count(mx.metric.EvalMetric):
        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += 1
    m = Count('count')
    m.update(L, P + P)
    assert m.get() == m.get_global() == ('count', 2.0)
    assert m.get_global_name_value() == [('count', 2.0)]
    m.reset_local()
    assert math.isnan(m.get_global()[1])
    with pytest.raises(NotImplementedError):
        mx.metric.EvalMetric('x').update(L, P)


# -- single cases, MXNet's values -----------------------------------------------------------------
P2 = np.array([[0.11827442795038223, 0.6399210095405579, 0.14335328340530396],
               [0.9446688890457153, 0.5218483209609985, 0.4146619439125061],
               [0.26455560326576233, 0.7742336988449097, 0.4561503231525421],
               [0.568433940410614, 0.018789799883961678, 0.6176354885101318]], dtype='float32')


def get_after(metric, labels, preds):
    metric.update(labels, preds)
    return metric.get(), metric.num_inst, metric.sum_metric


@pytest.mark.parametrize('metric, labels, preds, expected', [
    # class indices as predictions; float labels truncate
    (mx.metric.Accuracy(), [[0, 1, 1]], [[0, 1, 0]], (('accuracy', 2 / 3), 3, 2.0)),
    (mx.metric.Accuracy(), [[0.9, 1.2, 1.99]], [[0, 1, 1.5]], (('accuracy', 1.0), 3, 3.0)),
    (mx.metric.Accuracy(axis=0), [[0, 1]], [P[0].asnumpy()], (('accuracy', 0.5), 2, 1.0)),
    (mx.metric.Accuracy(), [[[0], [1], [1]]], [P[0].asnumpy()],
     (('accuracy', 2 / 3), 3, 2.0)),
    (mx.metric.Accuracy(axis=-1), [[[0, 2, 1], [1, 1, 0]]],
     [np.random.RandomState(0).rand(2, 3, 4)[:, :, :3]], (('accuracy', 0.5), 6, 3.0)),
    (mx.metric.Perplexity(None), [[0, 5, -1, 2]], [P2],
     (('perplexity', 3.3422693376824952), 4, 4.826600074768066)),
    (mx.metric.Perplexity(-1), [[0, 5, -1, 2]], [P2],
     (('perplexity', 3.207949952301612), 3.0, 3.496896266937256)),
    (mx.metric.Perplexity(5), [[0, 5, -1, 2]], [P2],
     (('perplexity', 3.726375795820141), 3.0, 3.9463083744049072)),
    (mx.metric.Perplexity(None), [[0, 2, 1, 1], [1, 1]], [P2, P2[:2]],
     (('perplexity', 4.016289745221501), 6, 8.342151165008545)),
    (mx.metric.CrossEntropy(), [[0, 2, 1, 1]], [P2],
     (('cross-entropy', 1.811340570449829), 4, 7.245362281799316)),
    (mx.metric.CrossEntropy(eps=0.1), [[0, 2, 1, 1]], [P2],
     (('cross-entropy', 1.1127636432647705), 4, 4.451054573059082)),
    (mx.metric.NegativeLogLikelihood(eps=0.1), [[[0], [2], [1], [1]]], [P2],
     (('nll-loss', 1.1127636432647705), 4, 4.451054573059082)),
    (mx.metric.TopKAccuracy(2), [[0, 2, 1, 1]], [P2], (('top_k_accuracy_2', 0.25), 4, 1.0)),
    (mx.metric.TopKAccuracy(2), [[0, 1, 1]], [[0.2, 0.5, 0.1]],
     (('top_k_accuracy_2', 1 / 3), 3, 1.0)),
    (mx.metric.PCC(), [[0, 2, 1, 1]], [P2], (('pcc', -0.2), 1.0, -0.2)),
    (mx.metric.PCC(), [[0, 3, 1, 3]], [[0, 3, 3, 1]], (('pcc', 0.2), 1.0, 0.2)),
    (mx.metric.MAE(), [P2], [P2 * 2], (('mae', 0.4568772315979004), 1, 0.4568772315979004)),
    (mx.metric.RMSE(), [P2[:, 0]], [P2[:, 1]],
     (('rmse', 0.5031830668449402), 1, 0.5031830668449402)),
    (mx.metric.PearsonCorrelation(), [P2], [P2 * P2],
     (('pearsonr', 0.9553793484453397), 1, 0.9553793484453397)),
    (mx.metric.F1(average='micro'), [[0, 0]], [[[0.6, 0.4], [0.7, 0.3]]], (('f1', 0.0), 2, 0.0)),
    (mx.metric.MCC(), [[0, 1, 1, 0]], [[[.3, .7], [.8, .2], [.4, .6], [.9, .1]]],
     (('mcc', 0.0), 1.0, 0.0)),
    (mx.metric.MCC(), [[1, 1, 1, 1]], [[[.3, .7], [.8, .2], [.4, .6], [.9, .1]]],
     (('mcc', 0.0), 1.0, 0.0)),
    (mx.metric.F1(), [[0, 0, 0, 0]], [[[.3, .7], [.8, .2], [.4, .6], [.9, .1]]],
     (('f1', 0.0), 1, 0.0)),
    (mx.metric.Loss(), None, [[1, 2], [[3.]]], (('loss', 2.0), 3, 6.0)),
    (mx.metric.Loss(), None, [P2], (('loss', 0.4568772315979004), 12, 5.482526779174805)),
])
def test_cases(metric, labels, preds, expected):
    labels = None if labels is None else [nd.array(np.array(x, dtype='float32'))
                                          for x in labels]
    preds = [nd.array(np.array(x, dtype='float32')) for x in preds]
    assert get_after(metric, labels, preds) == approx(expected)


def test_mse_three_dims():
    p3 = np.random.RandomState(0).rand(2, 3, 4).astype('float32')
    assert get_after(mx.metric.MSE(), [nd.array(p3)], [nd.array(p3 * 2)]) == approx(
        (('mse', 0.4460517466068268), 1, 0.4460517466068268))


def test_single_ndarrays_are_wrapped():
    for metric, value in ((mx.metric.Accuracy(), 2 / 3), (mx.metric.Loss(), 0.5),
                          (mx.metric.Perplexity(None), 1.7710976285155853),
                          (mx.metric.CustomMetric(lambda l, p: 1.0), 1.0)):
        metric.update(L[0], P[0])
        assert metric.get()[1] == pytest.approx(value)


def test_numpy_inputs_are_accepted():
    m = mx.metric.Accuracy()
    m.update([np.array([0, 1, 1])], [P[0].asnumpy()])
    assert m.get() == ('accuracy', pytest.approx(2 / 3))
    # Perplexity picks on the device for NDArrays, in numpy for numpy arrays
    labels = np.array([[0, 3, 1], [-1, 2, 7]], dtype='float32')
    preds = np.random.RandomState(0).rand(2, 4, 3).astype('float32')
    for axis in (1, -2):
        on_host, on_device = mx.metric.Perplexity(-1, axis), mx.metric.Perplexity(-1, axis)
        on_host.update(labels, preds)
        on_device.update(nd.array(labels), nd.array(preds))
        assert on_host.get() == approx(on_device.get()) and on_host.num_inst == 5


def test_perplexity_classes_on_any_axis():
    # MXNet checks the size against the last axis and its pick fails on 3-d predictions;
    # here the class axis is ``axis``: compare with a numpy reference
    r = np.random.RandomState(0)
    p3 = r.rand(2, 3, 4).astype('float32')
    l3 = np.array([[0, 3, 1], [-1, 2, 2]], dtype='float32')

    def reference(prob, label, ignore):
        keep = label != ignore if ignore is not None else np.ones(label.shape, bool)
        return math.exp(-np.log(np.maximum(prob[keep], 1e-10)).astype('float64').sum()
                        / keep.sum())
    index = np.clip(l3.astype(int), 0, 3)
    prob = np.take_along_axis(p3, index[..., None], axis=-1)[..., 0]
    for ignore in (None, -1, 2):
        m = mx.metric.Perplexity(ignore)
        m.update([nd.array(l3)], [nd.array(p3)])
        assert m.get()[1] == pytest.approx(reference(prob, l3, ignore), rel=1e-6)
        m = mx.metric.Perplexity(ignore, axis=1)
        m.update([nd.array(l3)], [nd.array(p3.transpose(0, 2, 1))])
        assert m.get()[1] == pytest.approx(reference(prob, l3, ignore), rel=1e-6)
    m = mx.metric.Perplexity(None, axis=0)
    m.update([nd.array([0, 2, 1])], [nd.array(P2)])
    assert m.get()[1] == pytest.approx(
        math.exp(-np.log([P2[0, 0], P2[2, 1], P2[1, 2]]).mean()), rel=1e-6)


def test_f1_column_labels_count_each_sample_once():
    # MXNet broadcasts an (N, 1) label against the (N,) predictions and reports 0.5 here
    m = mx.metric.F1()
    m.update([nd.array([[0], [1]])], [nd.array([[0.6, 0.4], [0.3, 0.7]])])
    assert m.get() == ('f1', 1.0)


def test_pcc_grows_with_classes_and_matches_mcc_for_two():
    m = mx.metric.PCC()
    m.update([nd.array([0, 4])], [nd.array([0, 4])])
    assert m.k == 5 and m.lcm.shape == (5, 5) and m.get() == ('pcc', 1.0)
    (label, pred), = classification_batches(sizes=((40, 9),))
    pcc, mcc = mx.metric.PCC(), mx.metric.MCC(average='micro')
    pcc.update(label, pred)
    mcc.update(label, pred)
    assert pcc.get()[1] == pytest.approx(mcc.get()[1])


# -- errors ---------------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(ValueError, match=r'^Shape of labels 1 does not match shape of '
                                         r'predictions 2$'):
        mx.metric.Accuracy().update(L, P + P)
    with pytest.raises(ValueError, match='Shape of labels 2 does not match shape of '
                                         'predictions 3'):
        mx.metric.Accuracy().update([nd.array([0, 1])], P)
    with pytest.raises(ValueError, match='only supports binary classification'):
        mx.metric.F1().update([nd.array([0, 1, 2])], [nd.array(np.eye(3))])
    with pytest.raises(ValueError, match=r'Shape of labels \(2,\) does not match shape of '
                                         r'predictions \(3,\)'):
        mx.metric.PearsonCorrelation().update([nd.array([0, 1])], [nd.array([0, 1, 2])])
    with pytest.raises(AssertionError, match=r'shape mismatch: \(2,\) vs. \(3, 2\)'):
        mx.metric.Perplexity(None).update([nd.array([0, 1])], P)
    with pytest.raises(AssertionError, match='got 1 labels for 2 predictions'):
        mx.metric.Perplexity(None).update(L, P + P)
    with pytest.raises(AssertionError, match='label count 2 does not match the 3'):
        mx.metric.CrossEntropy().update([nd.array([0, 1])], P)
    with pytest.raises(AssertionError, match='Predictions should be no more than 2 dims'):
        mx.metric.TopKAccuracy(2).update(L, [nd.zeros((1, 3, 3))])
    with pytest.raises(AssertionError, match='^Please use Accuracy if top_k is no more than 1$'):
        mx.metric.TopKAccuracy(1)
    with pytest.raises(ValueError, match='operands could not be broadcast'):
        mx.metric.MAE().update([nd.array([0, 1])], P)
    with pytest.raises(NotImplementedError, match='CustomMetric cannot be serialized'):
        mx.metric.CustomMetric(lambda l, p: 0).get_config()


# -- create, register, config ---------------------------------------------------------------------
@pytest.mark.parametrize('name, cls, metric_name', [
    ('acc', 'Accuracy', 'accuracy'), ('accuracy', 'Accuracy', 'accuracy'),
    ('f1', 'F1', 'f1'), ('mcc', 'MCC', 'mcc'), ('ce', 'CrossEntropy', 'cross-entropy'),
    ('crossentropy', 'CrossEntropy', 'cross-entropy'),
    ('nll_loss', 'NegativeLogLikelihood', 'nll-loss'),
    ('negativeloglikelihood', 'NegativeLogLikelihood', 'nll-loss'),
    ('pearsonr', 'PearsonCorrelation', 'pearsonr'), ('loss', 'Loss', 'loss'),
    ('mae', 'MAE', 'mae'), ('mse', 'MSE', 'mse'), ('RMSE', 'RMSE', 'rmse'), ('pcc', 'PCC', 'pcc'),
    ('composite', 'CompositeEvalMetric', 'composite'),
    ('compositeevalmetric', 'CompositeEvalMetric', 'composite'),
])
def test_create_by_name(name, cls, metric_name):
    m = mx.metric.create(name)
    assert type(m).__name__ == cls and m.name == metric_name


def test_modules_it_imports_are_attributes_as_in_mxnet():
    # GluonTS's trainer does ``from mxnet.metric import ndarray``
    from hybridlib.metric import ndarray, registry
    assert ndarray is mx.nd and registry is mx.registry


def test_get_config():
    assert mx.metric.create('acc').get_config() == {
        'axis': 1, 'metric': 'Accuracy', 'name': 'accuracy', 'output_names': None,
        'label_names': None}
    assert mx.metric.create('top_k_accuracy', 3).get_config() == {
        'top_k': 3, 'metric': 'TopKAccuracy', 'name': 'top_k_accuracy_3', 'output_names': None,
        'label_names': None}
    # MXNet would name the copy 'top_k_accuracy_3_3'
    assert mx.metric.create(mx.metric.TopKAccuracy(3).get_config()).name == 'top_k_accuracy_3'
    assert mx.metric.create('perplexity', None).get_config() == {
        'ignore_label': None, 'metric': 'Perplexity', 'name': 'perplexity',
        'output_names': None, 'label_names': None}
    assert mx.metric.create('ce').get_config()['eps'] == 1e-12
    assert mx.metric.F1(average='micro').get_config() == {
        'metric': 'F1', 'name': 'f1', 'output_names': None, 'label_names': None}
    assert mx.metric.create('acc', name='a2').get_config()['name'] == 'a2'
    assert mx.metric.EvalMetric('x', foo=3).get_config() == {
        'foo': 3, 'metric': 'EvalMetric', 'name': 'x', 'output_names': None,
        'label_names': None}
    composite = mx.metric.CompositeEvalMetric(
        [mx.metric.Accuracy(output_names=['out2']), 'mae'], output_names=['out2'],
        label_names=['lab'])
    config = composite.get_config()
    assert config == {
        'metric': 'CompositeEvalMetric', 'name': 'composite', 'output_names': ['out2'],
        'label_names': ['lab'], 'metrics': [
            {'axis': 1, 'metric': 'Accuracy', 'name': 'accuracy', 'output_names': ['out2'],
             'label_names': None},
            {'metric': 'MAE', 'name': 'mae', 'output_names': None, 'label_names': None}]}
    # a config creates an equal metric again
    assert mx.metric.create(config).get_config() == config


def test_create_other_spellings():
    assert mx.metric.create('["acc", {"axis": 0}]').axis == 0
    assert mx.metric.create('{"metric": "mae", "name": "m"}').name == 'm'
    assert mx.metric.create({'metric': 'acc', 'name': 'foo'}).name == 'foo'
    assert mx.metric.create(metric='acc', axis=0).axis == 0
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc
    composite = mx.metric.create(['acc', 'top_k_acc'], 3)   # arguments go to every child
    assert [m.get_config().get('axis', m.get_config().get('top_k'))
            for m in composite.metrics] == [3, 3]
    with pytest.raises(AssertionError, match='^foo is not registered. Please register with '
                                             'metric.register first$'):
        mx.metric.create('foo')
    with pytest.raises(AssertionError, match='metric is already an instance. Additional '
                                             'arguments are invalid'):
        mx.metric.create(acc, 3)
    with pytest.raises(AssertionError, match='metric must be of string type'):
        mx.metric.create(3)
    with pytest.raises(AssertionError, match='Can only register subclass of EvalMetric'):
        mx.metric.register(int)


def test_register_and_alias():
    @mx.metric.register
    @mx.metric.alias('my_metric_alias')
    class MyTestMetric(mx.metric.Loss):
        pass
    assert type(mx.metric.create('mytestmetric')) is MyTestMetric
    assert type(mx.metric.create('MY_METRIC_ALIAS')) is MyTestMetric
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        mx.metric.register(mx.metric.Loss, 'my_metric_alias')
    assert 'is overriding existing metric' in str(caught[0].message)
    assert type(mx.metric.create('my_metric_alias')) is mx.metric.Loss


# -- composite, custom, update_dict ---------------------------------------------------------------
def test_composite():
    c = mx.metric.create(['acc', 'f1', mx.metric.MAE()])
    assert isinstance(c, mx.metric.CompositeEvalMetric)
    assert c.get() == (['accuracy', 'f1', 'mae'], approx([NAN, NAN, NAN]))
    c.update(L, P)
    expected = (['accuracy', 'f1', 'mae'], [0.6666666666666666, 0.8, 0.5])
    assert c.get() == c.get_global() == expected
    assert c.get_name_value() == c.get_global_name_value() == list(zip(*expected))
    assert c.get_metric(1) is c.metrics[1]
    # MXNet returns this ValueError instead of raising it
    with pytest.raises(ValueError, match='^Metric index 5 is out of range 0 and 3$'):
        c.get_metric(5)
    c.reset_local()
    assert c.get()[1] == approx([NAN] * 3) and c.get_global() == expected
    c.add('mse')
    c.update(L, P)
    assert c.get() == (['accuracy', 'f1', 'mae', 'mse'],
                       approx([0.6666666666666666, 0.8, 0.5, 0.3499999940395355]))
    c.reset()
    assert c.get_global()[1] == approx([NAN] * 4)


def test_composite_of_composites_flattens():
    inner = mx.metric.create(['acc', 'mae'])
    outer = mx.metric.CompositeEvalMetric([inner, 'f1'])
    outer.update(L, P)
    assert outer.get() == (['accuracy', 'mae', 'f1'], approx([2 / 3, 0.5, 0.8]))


def test_update_dict():
    labels = OrderedDict(lab=L[0], other=nd.array([9, 9, 9]))
    preds = OrderedDict(out1=nd.array([[1, 0.]] * 3), out2=P[0])
    m = mx.metric.Accuracy(output_names=['out2'], label_names=['lab'])
    m.update_dict(labels, preds)
    assert m.get() == ('accuracy', 0.6666666666666666)
    with pytest.raises(ValueError, match='Shape of labels 1 does not match shape of '
                                         'predictions 2'):
        mx.metric.Accuracy().update_dict(OrderedDict(lab=L[0]), preds)
    c = mx.metric.CompositeEvalMetric([mx.metric.Accuracy(output_names=['out2']), 'mae'],
                                      output_names=['out2'], label_names=['lab'])
    c.update_dict(labels, preds)
    assert c.get() == (['accuracy', 'mae'], [0.6666666666666666, 0.5])


def myfeval(label, pred):
    return (label == pred.argmax(1)).sum(), label.size


def test_custom_metric():
    assert mx.metric.create(myfeval).name == 'myfeval'
    assert mx.metric.create(lambda l, p: 1.0).name == 'custom(<lambda>)'
    assert mx.metric.np(myfeval).name == 'myfeval'
    assert mx.metric.create(myfeval, name='zz').name == 'zz'
    cm = mx.metric.create(myfeval)
    cm.update(L, P)
    assert cm.get() == ('myfeval', 0.6666666666666666)
    assert cm._kwargs == {'feval': myfeval, 'allow_extra_outputs': False}
    cm = mx.metric.np(lambda l, p: float((l - p[:, 1]).mean()))
    cm.update(L, P)
    cm.update(L, P)
    assert cm.get() == ('custom(<lambda>)', approx(-0.10000000149011612))
    assert cm.num_inst == 2

    def fe(label, pred):
        return float(np.abs(label - pred).sum()), label.size
    cm = mx.metric.CustomMetric(fe, name='x', allow_extra_outputs=True)
    cm.update(L, [nd.array([1, 1, 1]), nd.array([5, 5])])
    assert cm.get() == cm.get_global() == ('x', approx(1 / 3))
    with pytest.raises(ValueError, match='Shape of labels 1 does not match shape of '
                                         'predictions 2'):
        mx.metric.CustomMetric(fe).update(L, [nd.array([1, 1, 1]), nd.array([5, 5])])
    with pytest.raises(NotImplementedError):
        mx.metric.create(['acc', fe]).get_config()


def test_check_label_shapes():
    assert mx.metric.check_label_shapes([1], [2]) == ([1], [2])
    labels, preds = mx.metric.check_label_shapes(L[0], L[0], wrap=True)
    assert labels == [L[0]] and preds == [L[0]]
    with pytest.raises(ValueError, match=r'Shape of labels \(3,\) does not match shape of '
                                         r'predictions \(3, 2\)'):
        mx.metric.check_label_shapes(L[0], P[0], shape=True)


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU and cupy')
def test_gpu_arrays():
    c = mx.metric.create(['acc', 'f1', 'mae', 'ce', mx.metric.Perplexity(None), 'loss',
                          'pcc', mx.metric.TopKAccuracy(2)])
    c.update([L[0].as_in_context(mx.gpu(0))], [P[0].as_in_context(mx.gpu(0))])
    assert c.get()[1] == approx([0.6666666666666666, 0.8, 0.5, 0.5715994834899902,
                                 1.7710976285155853, 0.5, NAN, 1.0])
