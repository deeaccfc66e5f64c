"""``mx.viz``: ``print_summary`` and ``plot_network`` against MXNet 1.9.1, character for character.

tests/data/make_visualization_files.py builds the networks (the reference models of
tests/data/reference/ and some hand-built symbols), lists the calls and writes each call's
transcript (printed text, warnings, errors, DOT source); run with MXNet it wrote
tests/data/viz-summary.txt and viz-plot.txt. Here the same functions run on hybridlib. The
``plot_network`` cases need the graphviz Python package and are skipped without it.
"""
import importlib.util
import os
import sys

import pytest

import hybridlib as mx
from hybridlib import visualization

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_visualization_files', os.path.join(DATA, 'make_visualization_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

NETWORKS = GEN.load_networks(mx)
CALLS = GEN.calls(list(NETWORKS))


def _recorded(function):
    """``{call line: transcript}`` that MXNet wrote for ``function``'s calls."""
    with open(os.path.join(DATA, GEN.FILES[function])) as f:
        text = f.read()
    out = {}
    for chunk in text.split('\n>>> '):
        chunk = chunk if chunk.startswith('>>> ') else '>>> ' + chunk
        head = chunk.split('\n', 1)[0]
        out[head] = chunk.rstrip('\n') + '\n'
    return out


RECORDED = {function: _recorded(function) for function in GEN.FILES}


def _ids(calls):
    return [GEN.call_line(*call)[len('>>> mx.viz.'):] for call in calls]


def _check(function, name, kwargs):
    actual = GEN.transcript(visualization, NETWORKS, function, name, kwargs)
    expected = RECORDED[function][actual.split('\n', 1)[0]]
    assert actual == expected


def test_every_recorded_call_is_run():
    for function, recorded in RECORDED.items():
        lines = {GEN.call_line(function, name, GEN.resolve(NETWORKS, name, kwargs)[1])
                 for f, name, kwargs in CALLS if f == function}
        assert lines == set(recorded)


SUMMARY_CALLS = [call for call in CALLS if call[0] == 'print_summary']
PLOT_CALLS = [call for call in CALLS if call[0] == 'plot_network']


@pytest.mark.parametrize('function,name,kwargs', SUMMARY_CALLS, ids=_ids(SUMMARY_CALLS))
def test_print_summary_matches_mxnet(function, name, kwargs):
    _check(function, name, kwargs)


@pytest.mark.parametrize('function,name,kwargs', PLOT_CALLS, ids=_ids(PLOT_CALLS))
def test_plot_network_matches_mxnet(function, name, kwargs):
    pytest.importorskip('graphviz')
    _check(function, name, kwargs)


def test_print_summary_goes_to_stdout(capsys):
    net, shapes = NETWORKS['hand_mlp']
    assert visualization.print_summary(net, shape=shapes) is None
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == '_' * 120 and lines[-2] == 'Total params: 109386'


def test_plot_network_returns_a_digraph():
    graphviz = pytest.importorskip('graphviz')
    net, shapes = NETWORKS['hand_lenet']
    dot = visualization.plot_network(net, title='lenet', save_format='svg', shape=shapes)
    assert isinstance(dot, graphviz.Digraph)
    assert (dot.name, dot.format) == ('lenet', 'svg')


def test_plot_network_does_not_change_its_arguments():
    pytest.importorskip('graphviz')
    net, shapes = NETWORKS['hand_bn_concat']
    node_attrs = {'shape': 'oval'}
    before = (dict(shapes), dict(node_attrs))
    visualization.plot_network(net, shape=shapes, node_attrs=node_attrs)
    visualization.plot_network(net)
    assert (shapes, node_attrs) == before
    assert visualization.plot_network.__defaults__[-2] == {}


def test_plot_network_without_graphviz_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, 'graphviz', None)     # import graphviz now fails
    with pytest.raises(ImportError, match=r'hybridlib\[viz\]'):
        visualization.plot_network(NETWORKS['hand_mlp'][0])


def test_module_names():
    assert visualization.__all__ == ['print_summary', 'plot_network']
    assert mx.viz is visualization and mx.visualization is visualization
