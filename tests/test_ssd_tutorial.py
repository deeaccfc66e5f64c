"""The gist of Gluon's SSD tutorial ("Single Shot MultiBox Detector", the straight dope), unchanged
apart from the import: a toy SSD built from nn.Sequential containers of HybridBlocks, anchors from
MultiBoxPrior, training targets from MultiBoxTarget, a focal loss and a smooth L1 loss, a few
SGD steps, and detections from MultiBoxDetection; imperative and hybridized, with the shapes
MXNet 1.9.1 gives (pasted below).
"""
import warnings

import numpy as np
import pytest

import hybridlib as mx                                    # was: import mxnet as mx
from hybridlib import autograd, gluon, nd
from hybridlib.gluon import nn

MultiBoxPrior = nd.contrib.MultiBoxPrior
MultiBoxTarget = nd.contrib.MultiBoxTarget
MultiBoxDetection = nd.contrib.MultiBoxDetection

# --- the tutorial's model ------------------------------------------------------------------------


def class_predictor(num_anchors, num_classes):
    """Return a layer to predict classes"""
    return nn.Conv2D(num_anchors * (num_classes + 1), 3, padding=1)


def box_predictor(num_anchors):
    """Return a layer to predict delta locations"""
    return nn.Conv2D(num_anchors * 4, 3, padding=1)


def down_sample(num_filters):
    """Stack two Conv-BatchNorm-Relu blocks and then a pooling layer to halve the feature
    size"""
    out = nn.HybridSequential()
    for _ in range(2):
        out.add(nn.Conv2D(num_filters, 3, strides=1, padding=1))
        out.add(nn.BatchNorm(in_channels=num_filters))
        out.add(nn.Activation('relu'))
    out.add(nn.MaxPool2D(2))
    return out


def flatten_prediction(pred):
    return pred.transpose(axes=(0, 2, 3, 1)).flatten()


def concat_predictions(preds):
    return nd.concat(*preds, dim=1)


def body():
    out = nn.HybridSequential()
    for nfilters in [16, 32, 64]:
        out.add(down_sample(nfilters))
    return out


def toy_ssd_model(num_anchors, num_classes):
    downsamplers = nn.Sequential()
    for _ in range(3):
        downsamplers.add(down_sample(32))
    class_predictors = nn.Sequential()
    box_predictors = nn.Sequential()
    for _ in range(5):
        class_predictors.add(class_predictor(num_anchors, num_classes))
        box_predictors.add(box_predictor(num_anchors))
    model = nn.Sequential()
    model.add(body(), downsamplers, class_predictors, box_predictors)
    return model


def toy_ssd_forward(x, model, sizes, ratios):
    body, downsamplers, class_predictors, box_predictors = model
    anchors, class_preds, box_preds = [], [], []
    x = body(x)
    for i in range(5):
        anchors.append(MultiBoxPrior(x, sizes=sizes[i], ratios=ratios[i]))
        class_preds.append(flatten_prediction(class_predictors[i](x)))
        box_preds.append(flatten_prediction(box_predictors[i](x)))
        if i < 3:
            x = downsamplers[i](x)
        elif i == 3:
            # simply use the pooling layer
            x = nd.Pooling(x, global_pool=True, pool_type='max',
                           kernel=(x.shape[2], x.shape[3]))
    return anchors, class_preds, box_preds


class ToySSD(gluon.Block):
    def __init__(self, num_classes, **kwargs):
        super(ToySSD, self).__init__(**kwargs)
        # anchor box sizes for 4 feature scales
        self.anchor_sizes = [[.2, .272], [.37, .447], [.54, .619], [.71, .79], [.88, .961]]
        # anchor box ratios for 4 feature scales
        self.anchor_ratios = [[1, 2, .5]] * 5
        self.num_classes = num_classes
        with self.name_scope():
            num_anchors = len(self.anchor_sizes[0]) + len(self.anchor_ratios[0]) - 1
            self.model = toy_ssd_model(num_anchors, num_classes)

    def forward(self, x):
        anchors, class_preds, box_preds = toy_ssd_forward(x, self.model, self.anchor_sizes,
                                                          self.anchor_ratios)
        # it is better to have class predictions reshaped for softmax computation
        anchors = concat_predictions(anchors)
        box_preds = concat_predictions(box_preds)
        class_preds = concat_predictions(class_preds)
        class_preds = nd.reshape(class_preds, shape=(0, -1, self.num_classes + 1))
        return anchors, class_preds, box_preds


def training_targets(default_anchors, class_predicts, labels):
    class_predicts = nd.transpose(class_predicts, axes=(0, 2, 1))
    z = MultiBoxTarget(*[default_anchors, labels, class_predicts])
    box_target = z[0]  # box offset target for (x, y, width, height)
    box_mask = z[1]  # mask is used to ignore box offsets we don't want to penalize, e.g. negative
    cls_target = z[2]  # cls_target is an array of labels for all anchors boxes
    return box_target, box_mask, cls_target


class FocalLoss(gluon.loss.Loss):
    def __init__(self, axis=-1, alpha=0.25, gamma=2, batch_axis=0, **kwargs):
        super(FocalLoss, self).__init__(None, batch_axis, **kwargs)
        self._axis = axis
        self._alpha = alpha
        self._gamma = gamma

    def hybrid_forward(self, F, output, label):
        output = F.softmax(output)
        pt = F.pick(output, label, axis=self._axis, keepdims=True)
        loss = -self._alpha * ((1 - pt) ** self._gamma) * F.log(pt)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SmoothL1Loss(gluon.loss.Loss):
    def __init__(self, batch_axis=0, **kwargs):
        super(SmoothL1Loss, self).__init__(None, batch_axis, **kwargs)

    def hybrid_forward(self, F, output, label, mask):
        loss = F.smooth_l1((output - label) * mask, scalar=1.0)
        return F.mean(loss, self._batch_axis, exclude=True)


# --- the tutorial's loop, on two synthetic 64x64 images -----------------------------------------

LABELS = np.array([[[0, 0.1, 0.15, 0.45, 0.6], [1, 0.5, 0.4, 0.9, 0.95], [-1] * 5],
                   [[1, 0.3, 0.2, 0.75, 0.7], [-1] * 5, [-1] * 5]], dtype=np.float32)
IMAGES = np.random.default_rng(0).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32)

# shapes printed by MXNet 1.9.1 for this input: 4 anchors on 8x8, 4x4, 2x2, 1x1 and 1x1 maps
MXNET_SHAPES = {'anchors': (1, 344, 4), 'class_predictions': (2, 344, 3),
                'box_predictions': (2, 1376), 'box_target': (2, 1376), 'box_mask': (2, 1376),
                'cls_target': (2, 344), 'loss': (2,), 'detections': (2, 344, 6)}


def run_tutorial(hybridize, steps=3):
    mx.random.seed(42)
    net = ToySSD(num_classes=2)
    net.initialize(mx.init.Xavier(magnitude=2))
    if hybridize:
        with warnings.catch_warnings():
            # "All children of this Sequential layer are HybridBlocks...", as MXNet says
            warnings.simplefilter('ignore', UserWarning)
            net.hybridize()
    cls_loss, box_loss = FocalLoss(), SmoothL1Loss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'wd': 5e-4})
    x, y = nd.array(IMAGES), nd.array(LABELS)
    shapes, losses = {}, []
    for _ in range(steps):
        with autograd.record():
            default_anchors, class_predictions, box_predictions = net(x)
            box_target, box_mask, cls_target = training_targets(default_anchors,
                                                                class_predictions, y)
            loss1 = cls_loss(class_predictions, cls_target)
            loss2 = box_loss(box_predictions, box_target, box_mask)
            loss = loss1 + loss2
        loss.backward()
        trainer.step(x.shape[0])
        losses.append(loss.asnumpy())
    for name, value in [('anchors', default_anchors), ('class_predictions', class_predictions),
                        ('box_predictions', box_predictions), ('box_target', box_target),
                        ('box_mask', box_mask), ('cls_target', cls_target), ('loss', loss)]:
        shapes[name] = value.shape
    # detection
    anchors, cls_preds, box_preds = net(x)
    cls_probs = nd.SoftmaxActivation(nd.transpose(cls_preds, (0, 2, 1)), mode='channel')
    output = MultiBoxDetection(*[cls_probs, box_preds, anchors], force_suppress=True,
                               clip=False)
    shapes['detections'] = output.shape
    return shapes, losses, output.asnumpy(), cls_target.asnumpy()


@pytest.fixture(scope='module')
def imperative():
    return run_tutorial(hybridize=False)


def test_tutorial_runs_with_mxnet_shapes(imperative):
    shapes, losses, detections, cls_target = imperative
    assert shapes == MXNET_SHAPES
    assert all(np.isfinite(loss).all() for loss in losses)
    # the objects got positive anchors of their classes, the rest is background
    for b, n in enumerate([2, 1]):
        assert set(np.unique(cls_target[b])) == {0.0} | set(LABELS[b, :n, 0] + 1)
    # detections: valid rows first, as [class, score, box]; the rest -1
    valid = detections[..., 0] >= 0
    assert valid.any()
    assert set(np.unique(detections[..., 0])) <= {-1.0, 0.0, 1.0}
    scores = detections[..., 1]
    assert ((scores >= 0.01) & (scores <= 1))[valid].all()


def test_tutorial_hybridized_gives_the_same_numbers(imperative):
    shapes, losses, detections, cls_target = run_tutorial(hybridize=True)
    assert shapes == imperative[0]
    for mine, theirs in zip(losses, imperative[1]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(cls_target, imperative[3])
    np.testing.assert_allclose(detections, imperative[2], rtol=1e-4, atol=1e-5)
