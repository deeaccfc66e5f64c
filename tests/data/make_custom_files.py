"""Writes tests/data/custom-*: MXNet 1.9.1's numbers for operators written in Python.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_custom_files.py

The operators, the ``autograd.Function``s and the block are defined by the functions of this
file that take the ``mx`` module: run here with ``mxnet``, and by tests/test_operator.py,
tests/test_autograd_function.py and tests/ops/test_custom.py with ``hybridlib`` (the same
source, as a drop-in user would run it). Files:

* ``custom-values.npz``: inputs, outputs, gradients and auxiliary states of ``Custom`` calls
  (imperative, under autograd, in an executor), of the block (imperative and hybridized, with
  and without ``static_alloc``) and of the ``autograd.Function``s;
* ``custom-net-symbol.json``, ``custom-net-0000.params``: the block exported by MXNet (its
  graph holds two ``Custom`` nodes).
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth float32 values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape).astype(np.float32)


INPUTS = {
    'data': wave((3, 4)), 'weight': wave((4,), 1.0, 0.5, 1.5), 'count': np.zeros(1, np.float32),
    'head_output': wave((3, 4), 2.0), 'head_norm': wave((3,), 3.0),
    'loss_data': wave((2, 3), 0.5), 'loss_label': wave((2, 3), 1.5), 'loss_head': wave((2, 3), 4.0),
    'net_x': wave((2, 5), 0.7), 'net_label': wave((2, 3), 2.2), 'net_head': wave((2, 3), 0.3),
    'fn_x': wave((3,), 0.2, -2.0, 2.0), 'fn_y': wave((3,), 1.2, 0.5, 2.0),
    'fn_heads': wave((3, 3), 0.9),
}
SOFTMAX_KWARGS = dict(scale=1.5, tag='demo')     # ``tag`` only reaches the prop, as a string


def define_operators(mx):
    """Registers the Custom operators of the tests on ``mx`` (mxnet or hybridlib)."""
    nd = mx.nd

    class ScaledSoftmax(mx.operator.CustomOp):
        """softmax(scale * data * weight) and sum(data ** 2) per row; counts its forwards."""

        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def forward(self, is_train, req, in_data, out_data, aux):
            data, weight = in_data
            logits = nd.broadcast_mul(data, weight.reshape((1, -1))) * self.scale
            self.assign(out_data[0], req[0], nd.softmax(logits, axis=-1))
            self.assign(out_data[1], req[1], (data * data).sum(axis=-1))
            aux[0][:] = aux[0] + 1

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            data, weight = in_data
            y, dy, dnorm = out_data[0], out_grad[0], out_grad[1]
            dlogits = y * nd.broadcast_sub(dy, (dy * y).sum(axis=-1, keepdims=True)) * self.scale
            ddata = nd.broadcast_mul(dlogits, weight.reshape((1, -1)))
            ddata = ddata + 2 * nd.broadcast_mul(data, dnorm.reshape((-1, 1)))
            self.assign(in_grad[0], req[0], ddata)
            self.assign(in_grad[1], req[1], (dlogits * data).sum(axis=0))

    @mx.operator.register('test_scaled_softmax')
    class ScaledSoftmaxProp(mx.operator.CustomOpProp):
        def __init__(self, scale='1', tag=''):
            super().__init__(need_top_grad=True)
            assert isinstance(scale, str) and isinstance(tag, str)   # MXNet passes strings
            self.scale = float(scale)

        def list_arguments(self):
            return ['data', 'weight']

        def list_outputs(self):
            return ['output', 'norm']

        def list_auxiliary_states(self):
            return ['count']

        def infer_shape(self, in_shape):
            data = in_shape[0]
            return [data, [data[1]]], [data, [data[0]]], [[1]]

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return ScaledSoftmax(self.scale)

    class SquareLoss(mx.operator.CustomOp):
        """(data - label) ** 2, whose gradient ignores the head gradient (a loss layer)."""

        def __init__(self, grad_scale):
            super().__init__()
            self.grad_scale = grad_scale

        def forward(self, is_train, req, in_data, out_data, aux):
            diff = in_data[0] - in_data[1]
            self.assign(out_data[0], req[0], diff * diff)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            diff = in_data[0] - in_data[1]
            self.assign(in_grad[0], req[0], diff * (2 * self.grad_scale))
            self.assign(in_grad[1], req[1], diff * (-2 * self.grad_scale))

    @mx.operator.register('test_square_loss')
    class SquareLossProp(mx.operator.CustomOpProp):
        def __init__(self, grad_scale='1'):
            super().__init__(need_top_grad=False)
            self.grad_scale = float(grad_scale)

        def list_arguments(self):
            return ['data', 'label']

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return SquareLoss(self.grad_scale)

    class Smooth(mx.operator.CustomOp):
        """(1 - epsilon) * x + epsilon / n along the last axis (GluonNLP's label smoothing)."""

        def __init__(self, epsilon):
            super().__init__()
            self.epsilon = epsilon

        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0]
            self.assign(out_data[0], req[0],
                        (1 - self.epsilon) * x + self.epsilon / float(x.shape[-1]))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], (1 - self.epsilon) * out_grad[0])

    @mx.operator.register('test_smooth')
    class SmoothProp(mx.operator.CustomOpProp):
        """Its backward reads the output gradient only, unless ``deps='all'``."""

        def __init__(self, epsilon='0.1', deps='out_grad'):
            super().__init__(True)
            self.epsilon = float(epsilon)
            self.deps = deps

        def infer_shape(self, in_shape):
            return (in_shape[0],), (in_shape[0],), ()

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            if self.deps == 'out_grad':
                return out_grad
            return super().declare_backward_dependency(out_grad, in_data, out_data)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Smooth(self.epsilon)


def define_net(mx):
    """A block whose graph holds two Custom nodes (the label-smoothing and the loss). The
    smoothing declares every dependency: MXNet keeps one process-wide set of declared
    dependencies (that of the prop parsed last), so a graph mixing declarations breaks there."""
    gluon = mx.gluon

    class CustomNet(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense = gluon.nn.Dense(3, in_units=5)

        def hybrid_forward(self, F, x, label):
            h = F.Custom(self.dense(x), op_type='test_smooth', epsilon=0.2, deps='all')
            return F.Custom(h, label, op_type='test_square_loss', grad_scale=0.5)

    net = CustomNet(prefix='customnet_')
    net.dense.weight.initialize(mx.init.Constant(mx.nd.array(wave((3, 5), 0.4))))
    net.dense.bias.initialize(mx.init.Constant(mx.nd.array(wave((3,), 1.1))))
    return net


def define_functions(mx):
    """Two autograd.Functions: a stable sigmoid, and one of two inputs and three outputs."""
    nd = mx.nd

    class Sigmoid(mx.autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    class ProductSum(mx.autograd.Function):
        def forward(self, a, b):
            self.save_for_backward(a, b)
            return a * b, a + b, nd.exp(a)

        def backward(self, d_prod, d_sum, d_exp):
            a, b = self.saved_tensors
            return d_prod * b + d_sum + d_exp * nd.exp(a), d_prod * a + d_sum

    return Sigmoid, ProductSum


def custom_numbers(mx):
    """Custom calls imperatively, under autograd and in an executor."""
    nd, out = mx.nd, {}
    data, weight = nd.array(INPUTS['data']), nd.array(INPUTS['weight'])
    count = nd.array(INPUTS['count'])
    output, norm = nd.Custom(data, weight, count, op_type='test_scaled_softmax',
                             **SOFTMAX_KWARGS)
    out.update(imperative_output=output, imperative_norm=norm, imperative_count=count)

    data.attach_grad()
    weight.attach_grad()
    count = nd.array(INPUTS['count'])
    with mx.autograd.record():
        output, norm = nd.Custom(data, weight, count, op_type='test_scaled_softmax',
                                 **SOFTMAX_KWARGS)
    mx.autograd.backward([output, norm], [nd.array(INPUTS['head_output']),
                                          nd.array(INPUTS['head_norm'])])
    out.update(autograd_data_grad=data.grad, autograd_weight_grad=weight.grad)

    sym = mx.sym.Custom(mx.sym.var('data'), mx.sym.var('weight'), op_type='test_scaled_softmax',
                        name='softmax', **SOFTMAX_KWARGS)
    exe = sym.simple_bind(mx.cpu(), data=(3, 4))
    exe.arg_dict['data'][:] = INPUTS['data']
    exe.arg_dict['weight'][:] = INPUTS['weight']
    for _ in range(2):
        exe.forward(is_train=True)
    exe.backward([nd.array(INPUTS['head_output']), nd.array(INPUTS['head_norm'])])
    out.update(executor_output=exe.outputs[0], executor_norm=exe.outputs[1],
               executor_count=exe.aux_dict['softmax_count'],
               executor_data_grad=exe.grad_dict['data'],
               executor_weight_grad=exe.grad_dict['weight'])

    # the backward reads the output gradient only (run before any other prop is parsed, see
    # define_net)
    smooth = mx.sym.Custom(mx.sym.var('x'), op_type='test_smooth', epsilon=0.3, name='smooth')
    exe = smooth.simple_bind(mx.cpu(), x=(3, 4))
    exe.arg_dict['x'][:] = INPUTS['data']
    exe.forward(is_train=True)
    exe.backward([nd.array(INPUTS['head_output'])])
    out.update(smooth_output=exe.outputs[0], smooth_x_grad=exe.grad_dict['x'])

    x, label = nd.array(INPUTS['loss_data']), nd.array(INPUTS['loss_label'])
    x.attach_grad()
    label.attach_grad()
    with mx.autograd.record():
        loss = nd.Custom(x, label, op_type='test_square_loss', grad_scale=0.25)
    loss.backward(nd.array(INPUTS['loss_head']))     # a loss layer: the head is ignored
    out.update(loss_output=loss, loss_data_grad=x.grad, loss_label_grad=label.grad)
    return out


def net_numbers(mx, prefix):
    """The block imperatively and hybridized: outputs and gradients."""
    out = {}
    for mode in ('imperative', 'hybrid', 'static'):
        net = define_net(mx)
        if mode != 'imperative':
            net.hybridize(static_alloc=mode == 'static', static_shape=mode == 'static')
        x, label = mx.nd.array(INPUTS['net_x']), mx.nd.array(INPUTS['net_label'])
        x.attach_grad()
        for _ in range(2):
            with mx.autograd.record():
                loss = net(x, label)
            loss.backward(mx.nd.array(INPUTS['net_head']))
        out.update({f'net_{mode}_output': loss, f'net_{mode}_x_grad': x.grad,
                    f'net_{mode}_weight_grad': net.dense.weight.grad(),
                    f'net_{mode}_bias_grad': net.dense.bias.grad()})
        if mode == 'hybrid':
            net.export(prefix)
    return out


def function_numbers(mx):
    """The autograd.Functions: values, gradients by backward and by autograd.grad."""
    nd, out = mx.nd, {}
    Sigmoid, ProductSum = define_functions(mx)
    heads = INPUTS['fn_heads']
    x, y = nd.array(INPUTS['fn_x']), nd.array(INPUTS['fn_y'])
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        s = Sigmoid()(x)
        p, q, e = ProductSum()(s, y)
    mx.autograd.backward([p, q, e], [nd.array(h) for h in heads])
    out.update(fn_sigmoid=s, fn_prod=p, fn_sum=q, fn_exp=e, fn_x_grad=x.grad, fn_y_grad=y.grad)
    with mx.autograd.record():
        p, q, _ = ProductSum()(x, y)
    gx, gy = mx.autograd.grad([p, q], [x, y], head_grads=[nd.array(h) for h in heads[:2]])
    out.update(fn_grad_x=gx, fn_grad_y=gy)
    return out


def main():
    import mxnet as mx
    define_operators(mx)
    values = {f'input_{k}': v for k, v in INPUTS.items()}
    results = {}
    results.update(custom_numbers(mx))
    results.update(net_numbers(mx, os.path.join(HERE, 'custom-net')))
    results.update(function_numbers(mx))
    for mode in ('hybrid', 'static'):          # MXNet agrees with itself
        for what in ('output', 'x_grad', 'weight_grad', 'bias_grad'):
            np.testing.assert_allclose(results[f'net_{mode}_{what}'].asnumpy(),
                                       results[f'net_imperative_{what}'].asnumpy(), 1e-6, 1e-7)
    values.update({k: v.asnumpy() for k, v in results.items()})
    np.savez(os.path.join(HERE, 'custom-values.npz'), **values)
    print(f'wrote {len(values)} arrays to custom-values.npz and the custom-net files')


if __name__ == '__main__':
    main()
