"""The ``mxnet`` alias: ``python -m hybridlib SCRIPT.py`` and ``install_mxnet_alias()``.

Each case runs in a fresh interpreter, so that the alias (which changes ``sys.modules`` and
``sys.meta_path``) never leaks into the other tests.
"""
import os
import subprocess
import sys
import textwrap


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, cwd, env_path=(), check=True):
    # conftest.py puts this checkout on PYTHONPATH; env_path adds stand-in packages
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*env_path, os.environ['PYTHONPATH']]))
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_script_runs_unmodified(tmp_path):
    script = write(tmp_path / 'train.py', '''
        import sys
        import mxnet as mx
        import mxnet.gluon.nn
        from mxnet import gluon, nd, autograd
        from mxnet.gluon.block import HybridBlock
        from mxnet.gluon.nn import basic_layers
        import hybridlib

        assert mx is hybridlib and mxnet.gluon.nn is hybridlib.gluon.nn is hybridlib.nn
        assert HybridBlock is hybridlib.block.HybridBlock is gluon.nn.HybridBlock
        assert basic_layers is hybridlib.nn.basic_layers
        assert sys.modules['mxnet.ndarray'] is hybridlib.ndarray
        assert mx.__version__ == '1.9.1'

        class Net(gluon.nn.HybridBlock):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.fc = gluon.nn.Dense(2)

            def hybrid_forward(self, F, x):
                return F.relu(self.fc(x))

        net = Net()
        net.initialize()
        net.hybridize()
        print(net(nd.ones((3, 4))).shape, sys.argv[1:])
    ''')
    out = run(['-m', 'hybridlib', str(script), 'a', '--b'], cwd=tmp_path).stdout
    assert out.strip() == "(3, 2) ['a', '--b']"


def test_third_party_package_gets_hybridlib(tmp_path):
    # a library that imports mxnet in its own files, which its user cannot edit
    write(tmp_path / 'site' / 'thirdparty' / '__init__.py', '''
        import mxnet as mx
        from mxnet.gluon import nn
        from mxnet.gluon.parameter import Parameter
        from mxnet.ndarray import contrib as ndc
        from mxnet.symbol.contrib import box_nms

        class Block(nn.HybridBlock):
            def hybrid_forward(self, F, x):
                return x * 2

        ARRAY_TYPE = mx.nd.NDArray
    ''')
    script = write(tmp_path / 'use.py', '''
        import hybridlib
        import thirdparty
        assert thirdparty.ARRAY_TYPE is hybridlib.nd.NDArray
        b = thirdparty.Block()
        b.hybridize()
        print(b(hybridlib.nd.ones((2,))).asnumpy().tolist())
    ''')
    out = run(['-m', 'hybridlib', str(script)], cwd=tmp_path,
              env_path=[str(tmp_path / 'site')]).stdout
    assert out.strip() == '[2.0, 2.0]'


def test_module_and_code_modes(tmp_path):
    write(tmp_path / 'pkg' / '__init__.py', '')
    write(tmp_path / 'pkg' / 'main.py', '''
        import sys
        import mxnet
        print(mxnet.nd.ones((2,)).sum().asscalar(), sys.argv[1:])
    ''')
    assert run(['-m', 'hybridlib', '-m', 'pkg.main', 'x'], cwd=tmp_path).stdout.strip() == \
        "2.0 ['x']"
    out = run(['-m', 'hybridlib', '-c', 'import mxnet, sys; print(mxnet.__name__, sys.argv)',
               'y'], cwd=tmp_path).stdout
    assert out.strip() == "hybridlib ['-c', 'y']"
    usage = run(['-m', 'hybridlib'], cwd=tmp_path, check=False)
    assert usage.returncode == 2 and 'usage' in usage.stdout


def test_script_errors_propagate(tmp_path):
    script = write(tmp_path / 'fail.py', '''
        import mxnet as mx
        raise SystemExit(mx.nd.ones((1,)).asscalar() + 2)
    ''')
    assert run(['-m', 'hybridlib', str(script)], cwd=tmp_path, check=False).returncode == 1
    script = write(tmp_path / 'missing.py', 'import mxnet.no_such_module\n')
    proc = run(['-m', 'hybridlib', str(script)], cwd=tmp_path, check=False)
    assert "No module named 'mxnet.no_such_module'" in proc.stderr


def test_nothing_changes_without_the_alias(tmp_path):
    script = write(tmp_path / 'plain.py', '''
        import hybridlib
        try:
            import mxnet
        except ImportError:
            print('no mxnet')
        else:
            print('mxnet is', mxnet.__name__)
    ''')
    assert run([str(script)], cwd=tmp_path).stdout.strip() == 'no mxnet'


def test_real_mxnet_is_left_alone(tmp_path):
    # a stand-in for a real MXNet installation beside hybridlib
    write(tmp_path / 'site' / 'mxnet' / '__init__.py', '__version__ = "real"\n')
    site = [str(tmp_path / 'site')]
    script = write(tmp_path / 'real.py', '''
        import mxnet
        print(mxnet.__version__)
        import hybridlib
        try:
            hybridlib.install_mxnet_alias()
        except RuntimeError as error:
            print('refused:', 'already imported' in str(error))
    ''')
    assert run([str(script)], cwd=tmp_path, env_path=site).stdout.split('\n')[:2] == \
        ['real', 'refused: True']
    script = write(tmp_path / 'alias.py', '''
        import hybridlib
        hybridlib.install_mxnet_alias()
        import mxnet
        print(mxnet.__version__, mxnet is hybridlib)
        hybridlib.uninstall_mxnet_alias()
        import mxnet
        print(mxnet.__version__)
    ''')
    assert run([str(script)], cwd=tmp_path, env_path=site).stdout.split() == \
        ['1.9.1', 'True', 'real']


def test_mxnet_paths_are_hybridlib_modules():
    # hybridlib's own names for MXNet's module paths are the same module objects
    import hybridlib.gluon.block
    import hybridlib.gluon.trainer
    import hybridlib.ndarray.ndarray
    import hybridlib.symbol.symbol
    assert hybridlib.gluon.block is hybridlib.block
    assert hybridlib.gluon.trainer is hybridlib.trainer
    assert hybridlib.ndarray.ndarray is hybridlib.ndarray
    assert hybridlib.symbol.symbol is hybridlib.symbol
    from hybridlib.gluon.nn import conv_layers
    assert conv_layers is hybridlib.nn.conv_layers


def test_late_submodules_load_once(tmp_path):
    # a submodule first imported through an MXNet path (gluon.contrib is hybridlib.contrib) is
    # loaded once, under its own name, with its relative imports working
    write(tmp_path / 'extra' / 'latemod.py', '''
        from ..nn import Dense
        LOADS = []
        LOADS.append(__name__)
    ''')
    proc = run(['-c', textwrap.dedent(f'''
        import sys, hybridlib
        hybridlib.contrib.__path__.append({str(tmp_path / 'extra')!r})
        import hybridlib.gluon.contrib.latemod as m
        import hybridlib.contrib.latemod as n
        hybridlib.install_mxnet_alias()
        import mxnet.gluon.contrib.latemod as o
        print(m is n is o, m.__name__, m.LOADS, m.Dense is hybridlib.nn.Dense)
    ''')], cwd=ROOT)
    assert proc.stdout.split() == ['True', 'hybridlib.contrib.latemod',
                                   "['hybridlib.contrib.latemod']", 'True']


def test_hybridize_tutorial_runs_unmodified(tmp_path):
    # MXNet's hybridize tutorial, run as is; MXNet 1.9.1 printed hybridnet.expected (F is the
    # module that serves mxnet.ndarray, which here is named hybridlib.ndarray)
    folder = os.path.join(ROOT, 'tests', 'data', 'tutorials')
    out = run(['-m', 'hybridlib', os.path.join(folder, 'hybridnet.py')], cwd=tmp_path).stdout
    with open(os.path.join(folder, 'hybridnet.expected')) as f:
        expected = f.read()
    assert out.replace('F: hybridlib.', 'F: mxnet.') == expected


def test_numpy1_names_come_back_with_the_alias(tmp_path):
    script = write(tmp_path / 'old_numpy.py', '''
        import numpy as np
        import mxnet
        anchors = np.array([1, 2], dtype=np.float) / 2      # GluonCV's rpn anchors
        print(anchors.dtype, np.Inf, np.float_ is np.float64, np.bool is np.bool_)
    ''')
    out = run(['-m', 'hybridlib', str(script)], cwd=tmp_path).stdout
    assert out.split() == ['float64', 'inf', 'True', 'True']
    # one-element arrays as numbers (Dive into Deep Learning prints losses this way)
    script = write(tmp_path / 'd2l_loss.py', '''
        from mxnet import nd
        l = nd.array([0.25, 0.75])
        print('epoch %d, loss %f' % (1, l.mean().asnumpy()), float(l[0].asnumpy()),
              type(l.asnumpy()).__module__)
    ''')
    out = run(['-m', 'hybridlib', str(script)], cwd=tmp_path).stdout
    assert out.split() == ['epoch', '1,', 'loss', '0.500000', '0.25', 'numpy']
    plain = run(['-c', 'import numpy as np, hybridlib; print(hasattr(np, "float_"))'],
                cwd=tmp_path).stdout
    assert plain.strip() == 'False'
