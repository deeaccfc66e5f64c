"""Logging helpers (``mx.log``): loggers with MXNet's compact, coloured format."""
import logging
import warnings

__all__ = ['getLogger', 'get_logger', 'CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG', 'NOTSET']

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: 'C', ERROR: 'E', WARNING: 'W', INFO: 'I', DEBUG: 'D'}


class _Formatter(logging.Formatter):
    """``W0505 00:29:47 3525 file.py:function:12] message``, coloured by level."""

    def __init__(self):
        super().__init__(datefmt='%m%d %H:%M:%S')

    def format(self, record):
        level = record.levelno
        color = '\x1b[31m' if level >= WARNING else '\x1b[32m' if level >= INFO else '\x1b[34m'
        self._style._fmt = (color + _LABELS.get(level, 'U') + '%(asctime)s %(process)d '
                            '%(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m %(message)s')
        return super().format(record)


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Deprecated name of ``get_logger``."""
    warnings.warn('getLogger is deprecated, Use get_logger instead.', DeprecationWarning,
                  stacklevel=2)
    return get_logger(name, filename, filemode, level)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """A logger that writes to ``filename`` (mode ``filemode``, default 'a') or, without one,
    to stderr in MXNet's format. Set up once per name; the root logger is left as it is."""
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, '_init_done', None):
        logger._init_done = True
        if filename:
            handler = logging.FileHandler(filename, filemode or 'a')
        else:
            handler = logging.StreamHandler()
            handler.setFormatter(_Formatter())
        logger.addHandler(handler)
        logger.setLevel(level)
    return logger
