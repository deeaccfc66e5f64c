"""What an Executor's monitor callback reports, operator by operator, against MXNet 1.9.1:
tests/data/make_monitor_files.py, run there with MXNet into tests/data/monitor-*.json.

* forward: for every operator that runs with its default attributes on (2, 3) inputs and the
  cases with attributes, the names of what a forward pass reports, ``monitor_all`` off and on
  (an input is ``NODE_input0`` where MXNet does not name the operator's inputs; hidden outputs
  such as ``bn1_mean`` are reported by their names);
* backward: for one-operator cases and small networks (sums of gradients, a shared weight,
  several outputs), the names and statistics of what a forward and a backward pass report.

Known differences, each checked as such: a few MXNet operators keep scratch space in hidden
outputs that hybridlib's do not have; a variadic operator given no inputs gets one variable in
MXNet (``multi_all_finite``: ``op_array_0``) and none here; MXNet's BatchNorm writes 1 into
gamma (``fix_gamma``) in its forward.
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib.ops import registry
from hybridlib.ops.registry import BackwardNode

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_monitor_files', os.path.join(DATA, 'make_monitor_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

with open(os.path.join(DATA, 'monitor-forward.json'), encoding='utf-8') as _f:
    FORWARD = [r for r in json.load(_f) if registry.find(r['op']) is not None]
with open(os.path.join(DATA, 'monitor-backward.json'), encoding='utf-8') as _f:
    BACKWARD = json.load(_f)

# what MXNet reports and hybridlib does not: hidden outputs (scratch space) of MXNet's
# operators, and the variable MXNet makes for a variadic operator given no inputs
NOT_HERE = {
    'GridGenerator': {'op_grid_dst'},
    'BilinearSampler': {'op_tmp'},
    'SpatialTransformer': {'op_grid_dst', 'op_grid_src'},
    'ROIPooling': {'op_maxidx'},
    'Correlation': {'op_tmp1', 'op_tmp2'},
    '_linalg_det': {'op_output1', 'op_output2'},
    '_linalg_slogdet': {'op_output2', 'op_output3'},
    'multi_all_finite': {'op_array_0'},
}


def test_the_sweep_covers_the_operator_families():
    ops = {registry.find(r['op']).name for r in FORWARD}
    assert len(ops) > 300
    assert {'Activation', 'Flatten', 'Reshape', 'relu', 'sum', '_plus_scalar', 'BatchNorm',
            'Dropout', 'FullyConnected', 'Convolution', 'Pooling'} <= ops
    assert set(NOT_HERE) <= {r['op'] for r in FORWARD}


@pytest.mark.parametrize('record', FORWARD, ids=[f"{r['op']}-{i}" for i, r in enumerate(FORWARD)])
def test_forward_names_match_mxnet(record):
    ours = GEN.forward_names(mx, record['op'], record['attrs'], record['shapes'],
                             record['variables'])
    missing = NOT_HERE.get(record['op'], set())
    expected = [[name for name in names if name not in missing] for names in record['names']]
    assert ours == expected


def test_inputs_named_as_in_mxnet():
    by_op = {(r['op'], json.dumps(r['attrs'], sort_keys=True)): r['names'][1] for r in FORWARD}
    assert by_op[('Activation', '{"act_type": "relu"}')] == ['x0', 'op_input0', 'op_output']
    assert by_op[('FullyConnected', '{"num_hidden": 2}')] == [
        'x0', 'op_data', 'op_weight', 'op_weight', 'op_bias', 'op_bias', 'op_output']
    assert by_op[('Dropout', '{"p": 0.5}')][-2:] == ['op_output', 'op_mask']


# -------------------------------------------------------------------------------------------------
# Backward
# -------------------------------------------------------------------------------------------------

def _case(name):
    if name in GEN.BACKWARD_CASES:
        return GEN.case_symbol(mx, name)
    return GEN.graphs(mx)[name]


# BatchNorm with fix_gamma: gamma is 1 in MXNet once its forward ran
GAMMA = {('batchnorm', True): {'op_gamma', 'op_backward_input4'}}


def test_every_backward_case_is_recorded():
    assert set(BACKWARD) == set(GEN.BACKWARD_CASES) | set(GEN.graphs(mx))


@pytest.mark.parametrize('monitor_all', [False, True], ids=['outputs', 'all'])
@pytest.mark.parametrize('case', sorted(BACKWARD))
def test_backward_matches_mxnet(case, monitor_all):
    symbol, values = _case(case)
    ours = GEN.backward_report(mx, symbol, values, monitor_all)
    expected = BACKWARD[case][monitor_all]
    assert [(p, n) for p, n, _ in ours] == [(p, n) for p, n, _ in expected]
    differ = [(p, n, want) for (p, n, got), (_, _, want) in zip(ours, expected)
              if not np.isclose(got, want, rtol=1e-5, atol=5e-7)]
    gamma = GAMMA.get((case, monitor_all), set())
    assert {n for p, n, _ in differ} == gamma
    assert all(p == 'backward' and want == 1.0 for p, _, want in differ)


def test_backward_of_a_network_sums_and_copies_as_mxnet():
    names = [n for p, n, _ in BACKWARD['residual'][0] if p == 'backward']
    # elemwise_add passes its gradient on (no node); fc1's output gets it and relu1's: a sum
    assert names == ['_head_grad_0_id_output', 'fc2_backward_output0', 'fc2_backward_output1',
                     'fc2_backward_output2', 'relu1_backward_output', 'sum_grad_output',
                     'fc1_backward_output0', 'fc1_backward_output1', 'fc1_backward_output2']
    names = [n for p, n, _ in BACKWARD['clone_to_two'][0] if p == 'backward']
    assert names == ['_head_grad_0_id_output', '_head_grad_0_id_1_copy_output']


def test_backward_node_descriptions_are_checked():
    node = BackwardNode(('ograd0', 'in1', 'out0'), ('a', 'b', 'c'))
    assert node.inputs == (('ograd', 0), ('in', 1), ('out', 0))
    assert BackwardNode(('ograd0',)).input_names == ('input0',)
    with pytest.raises(TypeError, match="'grad0' is not"):
        BackwardNode(('grad0',))
    with pytest.raises(TypeError, match='1 names for 2 inputs'):
        BackwardNode(('ograd0', 'in0'), ('lhs',))
