"""``python -m hybridlib SCRIPT.py [ARGS]``: run an unmodified MXNet script on hybridlib.

Every ``import mxnet`` in the script, and in the packages it uses, gives hybridlib's modules
(``mxnet_alias.py``). As with ``python`` itself, ``-m MODULE`` runs a module (``python -m
hybridlib -m pytest tests/``) and ``-c CODE`` a string.
"""
import os
import runpy
import sys

from .libinfo import hybridlib_version
from .mxnet_alias import install_mxnet_alias

USAGE = """usage: python -m hybridlib SCRIPT.py [ARGS...]
       python -m hybridlib -m MODULE [ARGS...]
       python -m hybridlib -c CODE [ARGS...]

Runs MXNet code with every `import mxnet` answered by hybridlib."""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ('-h', '--help'):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == '--version':
        print(f'hybridlib {hybridlib_version} (serving the API of MXNet 1.9.1)')
        return 0
    if argv[0] in ('-m', '-c') and len(argv) < 2:
        print(f'{argv[0]} needs an argument\n\n{USAGE}', file=sys.stderr)
        return 2
    install_mxnet_alias()
    if argv[0] == '-m':
        sys.argv = [argv[1]] + argv[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name='__main__', alter_sys=True)
    elif argv[0] == '-c':
        sys.argv = ['-c'] + argv[2:]
        sys.path.insert(0, '')
        exec(compile(argv[1], '<string>', 'exec'), {'__name__': '__main__'})
    else:
        script = argv[0]
        sys.argv = argv
        # as `python SCRIPT.py`: the script's folder comes first on the path
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name='__main__')
    return 0


if __name__ == '__main__':
    sys.exit(main())
