"""MXNet 1.9.1's module layout: every module path and public name, or a documented omission.

``data/mxnet_layout.json`` records the public names of each module of MXNet 1.9.1's Python
package (``data/make_layout_files.py``, run with MXNet). Every recorded module must exist as
``hybridlib.<path>`` and hold every recorded name, unless the name is one of the deliberate
omissions below, each with its reason, or belongs to the later work listed in ``LATER``.

Run this file directly to print the coverage per module:
``python tests/test_mxnet_layout.py`` (``--all`` also lists the missing names).
"""
import fnmatch
import importlib
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# Work not built yet, by module pattern and by name within a module: empty now that the
# classic APIs are in (kept so that a later gap is written down, not left silent)
LATER = {}
LATER_NAMES = {}

# Deliberate omissions, whole modules: {module pattern: reason}
_NUMPY = ("MXNet's optional NumPy-compatible interface (mx.np, mx.npx); hybridlib serves the "
          "classic mx.nd/mx.sym API, and mx.util's switches say it is off")
_SPARSE = ('sparse storage (csr, row_sparse): arrays are dense; stype="default" is accepted '
           'everywhere and the sparse types raise a clear error')
_NATIVE = ('a feature of MXNet\'s native library: C++ operator libraries (library), CUDA C '
           'kernels compiled at run time (rtc; cupy.RawKernel serves), TVM operators (tvmop, '
           'space), the Torch7 plugin (torch), the parameter server (kvstore_server), C++ '
           'operator docs (ndarray_doc, symbol_doc)')
OMITTED_MODULES = {
    'numpy*': _NUMPY, 'numpy_extension*': _NUMPY, 'ndarray.numpy*': _NUMPY,
    'symbol.numpy*': _NUMPY, 'numpy_dispatch_protocol': _NUMPY, 'numpy_op_fallback': _NUMPY,
    'numpy_op_signature': _NUMPY,
    'ndarray.sparse': _SPARSE, 'symbol.sparse': _SPARSE, 'ndarray.gen_sparse': _SPARSE,
    'symbol.gen_sparse': _SPARSE,
    'library': _NATIVE, 'rtc': _NATIVE, 'tvmop': _NATIVE, 'space': _NATIVE, 'torch': _NATIVE,
    'cython': _NATIVE, 'api': _NATIVE, 'kvstore.kvstore_server': _NATIVE,
    'ndarray_doc': _NATIVE, 'symbol_doc': _NATIVE,
    'onnx*': 'ONNX conversion (needs the onnx package; not built yet)',
    'contrib.onnx*': 'ONNX conversion (needs the onnx package; not built yet)',
    'contrib.quantization': 'int8 quantization (MXNet\'s oneDNN/cuDNN int8 kernels)',
    'contrib.tensorboard': 'the TensorBoard callback of the Module API (needs mxboard)',
    'contrib.autograd': 'the pre-1.0 autograd API, replaced by mx.autograd in MXNet 0.11',
}

# Deliberate omissions, single names: (module patterns, name patterns, reason)
OMITTED_NAMES = [
    (['', 'util', 'ndarray', 'symbol'], ['np', 'npx', 'numpy', 'numpy_extension', 'np_symbol',
                    'numpy_dispatch_protocol', 'numpy_op_fallback', 'numpy_op_signature'],
     _NUMPY),
    (['', 'contrib', 'kvstore'], ['library', 'rtc', 'tvmop', 'torch', 'th', 'cython', 'api',
                                  'space', 'ndarray_doc', 'symbol_doc', 'onnx', 'tensorboard',
                                  'autograd', 'KVStoreServer', 'kvstore_server'],
     'the modules omitted above'),
    (['ndarray', 'symbol', 'ndarray.op', 'symbol.op', '*contrib', 'contrib.ndarray',
      'contrib.symbol', 'ndarray.gen_*', 'symbol.gen_*', 'test_utils', 'ndarray.ndarray',
      'symbol.symbol'],
     ['sparse', 'gen_sparse', 'CSRNDArray', 'RowSparseNDArray', 'BaseSparseNDArray',
      'csr_matrix', 'row_sparse_array', 'getnnz', 'edge_id', 'dgl_*', 'create_sparse_array*',
      'rand_sparse_ndarray', 'shuffle_csr_column_indices'], _SPARSE),
    (['*contrib', 'contrib.ndarray', 'contrib.symbol', 'ndarray.op', 'symbol.op'],
     ['quantize*', 'quantized_*', 'requantize', 'dequantize', 'calibrate_entropy',
      'quantization', 'quant'],
     'int8 quantization (MXNet\'s oneDNN/cuDNN int8 kernels)'),
    (['base'],
     ['c_array', 'c_array_buf', 'c_handle_array', 'c_str', 'c_str_array', 'check_call',
      'ctypes2buffer', 'ctypes2numpy_shared', 'mx_float_p', 'get_last_ffi_error', 'c2pyerror',
      'MXCallbackList'],
     "MXNet's C API helpers (ctypes handles and calls): hybridlib has no native library"),
    (['test_utils'], ['get_im2rec_path', 'has_tvm_ops'], "MXNet's im2rec tool and TVM operators"),
    (['gluon.data.dataloader'], ['rebuild_np_ndarray', 'reduce_np_ndarray'], _NUMPY),
    (['ndarray', 'ndarray.ndarray'],
     ['DLContext', 'DLDataType', 'DLManagedTensor', 'DLTensor', 'check_boolean_array_dimension',
      'get_indexing_dispatch_code', 'get_oshape_of_gather_nd_op',
      'indexing_key_expand_implicit_axes'],
     "internals of MXNet's NDArray: ctypes structures of its DLPack exchange (hybridlib uses "
     "the DLPack protocol) and helpers of its C++ indexing (hybridlib indexes through numpy)"),
]


def load_layout():
    with open(os.path.join(HERE, 'data', 'mxnet_layout.json')) as f:
        return json.load(f)['modules']


def _matches(path, patterns):
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def _name_rules(path):
    """(name patterns, reason) that apply to module ``path`` (relative to the package)."""
    rules = [(names, reason) for modules, names, reason in OMITTED_NAMES
             if _matches(path, modules)]
    later = [names for pattern, names in LATER_NAMES.items() if _matches(path, [pattern])]
    rules += [(names, 'later') for names in later]
    return rules


def module_status(path):
    """'omitted: reason', 'later: what' or None (expected) for a module path."""
    for pattern, reason in OMITTED_MODULES.items():
        if _matches(path, [pattern]):
            return f'omitted: {reason}'
    for pattern, what in LATER.items():
        if _matches(path, [pattern]):
            return f'later: {what}'
    return None


def coverage(layout):
    """{path: (module or the import error, expected names, present names, missing names)}."""
    import hybridlib
    report = {}
    for full, names in sorted(layout.items()):
        path = full[len('mxnet.'):] if full != 'mxnet' else ''
        try:
            module = importlib.import_module('hybridlib' + (f'.{path}' if path else ''))
        except Exception as error:  # noqa: BLE001 - reported by the module's own test
            module = error
        present = [n for n in names if not isinstance(module, Exception) and hasattr(module, n)]
        rules = _name_rules(path)
        missing = [n for n in names if n not in present
                   and not any(_matches(n, patterns) for patterns, _ in rules)]
        report[path] = (module, names, present, missing)
    assert hybridlib
    return report


LAYOUT = load_layout()
REPORT = coverage(LAYOUT)
EXPECTED = [p for p in REPORT if module_status(p) is None]


@pytest.mark.parametrize('path', EXPECTED)
def test_module_has_mxnet_names(path):
    module, names, present, missing = REPORT[path]
    assert not isinstance(module, Exception), \
        f'hybridlib.{path} (mxnet.{path}) cannot be imported: {module!r}'
    assert not missing, (f'hybridlib.{path} lacks {len(missing)} of MXNet\'s public names '
                         f'(neither present nor a documented omission): {missing}')


def test_omissions_are_not_silently_present():
    """An omission whose module exists after all is stale: the list must be kept honest."""
    stale = [p for p in REPORT if module_status(p) and module_status(p).startswith('omitted')
             and not isinstance(REPORT[p][0], Exception) and REPORT[p][2] == REPORT[p][1]
             and REPORT[p][1]]
    assert not stale, f'omitted modules that are complete now: {stale}'


def main(argv):
    total = have = 0
    for path, (module, names, present, missing) in REPORT.items():
        status = module_status(path) or ''
        total += len(names)
        have += len(present)
        shown = f'mxnet.{path}' if path else 'mxnet'
        line = f'{shown:55s} {len(present):4d}/{len(names):<4d} {status[:60]}'
        if missing and not status:
            line += f'  MISSING {len(missing)}'
            if '--all' in argv:
                line += ': ' + ' '.join(missing)
        print(line)
    print(f'{have} of {total} names present in {len(REPORT)} modules')


if __name__ == '__main__':
    main(sys.argv[1:])
