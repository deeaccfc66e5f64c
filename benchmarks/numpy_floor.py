"""Straight-line numpy for the MLP workloads: the floor a numpy-backed executor can reach.

usage: python benchmarks/numpy_floor.py [--only NAMES] [--repeat N] [--quick] [--memory]

Every array a call needs is allocated once, before timing, and written with ``out=``: what is
left is the arithmetic and one numpy call per operation. Training is the forward, softmax
cross-entropy, the backward of the summed loss and an SGD step with the gradient scaled by
1 / batch, as ``trainer.step(batch)`` does.
"""
import numpy as np

import common

MODES = ('floor',)
LAYERS = {'mlp': (784, 256, 2), 'deep20': (32, 32, 20)}  # inputs, width, hidden layers


def mlp_params(rng, inputs, width, depth, classes):
    """(weight, bias) per layer, weights He-scaled so 20 layers neither vanish nor blow up."""
    params = []
    for units in [width] * depth + [classes]:
        weight = rng.standard_normal((units, inputs), dtype=np.float32) * np.sqrt(2 / inputs)
        params.append((weight.astype(np.float32), np.zeros(units, np.float32)))
        inputs = units
    return params


def forward(params, x, outputs):
    """Dense layers with ReLU between them, each written into its buffer in ``outputs``."""
    h = x
    for i, (weight, bias) in enumerate(params):
        out = outputs[i]
        np.matmul(h, weight.T, out=out)
        out += bias
        if i < len(params) - 1:
            np.maximum(out, 0, out=out)
        h = out
    return h


def infer_step(params, x):
    outputs = [np.empty((x.shape[0], w.shape[0]), np.float32) for w, _ in params]
    return lambda: forward(params, x, outputs)


def train_step(params, x, labels, lr):
    batch = x.shape[0]
    rows = np.arange(batch)
    outputs = [np.empty((batch, w.shape[0]), np.float32) for w, _ in params]
    d_outputs = [np.empty_like(out) for out in outputs]
    grads = [(np.empty_like(w), np.empty_like(b)) for w, b in params]
    probs = np.empty_like(outputs[-1])
    one_hot = np.zeros_like(outputs[-1])
    one_hot[rows, labels] = 1
    inputs = [x] + outputs[:-1]

    def step():
        logits = forward(params, x, outputs)
        np.subtract(logits, logits.max(axis=1, keepdims=True), out=probs)
        np.exp(probs, out=probs)
        np.divide(probs, probs.sum(axis=1, keepdims=True), out=probs)
        loss = -np.log(probs[rows, labels])
        grad = d_outputs[-1]
        np.subtract(probs, one_hot, out=grad)
        grad *= 1 / batch
        for i in reversed(range(len(params))):
            weight, bias = params[i]
            d_weight, d_bias = grads[i]
            np.matmul(grad.T, inputs[i], out=d_weight)
            np.sum(grad, axis=0, out=d_bias)
            if i:
                d_input = d_outputs[i - 1]
                np.matmul(grad, weight, out=d_input)
                d_input *= inputs[i] > 0
                grad = d_input
            d_weight *= lr
            weight -= d_weight
            d_bias *= lr
            bias -= d_bias
        return loss
    return step


def make_step(workload, mode, quick=False):
    rng = np.random.default_rng(0)
    shape = workload.input_shape(quick)
    inputs, width, depth = LAYERS[workload.model]
    params = mlp_params(rng, inputs, width, depth, workload.classes)
    x = rng.random(shape, dtype=np.float32)
    if not workload.train:
        return infer_step(params, x), None
    labels = np.arange(shape[0]) % common.LABEL_CLASSES
    return train_step(params, x, labels, common.LEARNING_RATE), None


def main():
    args = common.parse_worker_args(__doc__.splitlines()[0], MODES)
    common.worker_main(args, 'numpy', f'numpy {np.__version__}', make_step,
                       supports=lambda workload: workload.model in LAYERS)


if __name__ == '__main__':
    main()
