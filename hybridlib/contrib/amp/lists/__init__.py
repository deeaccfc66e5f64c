"""MXNet 1.9.1's operator lists for automatic mixed precision: ``symbol_fp16`` (float16, what
``amp.init()`` uses) and ``symbol_bf16`` (bfloat16). The float16 lists are also here, as the
names ``amp.py`` reads (``lists.FP16_FUNCS``, ...)."""
from . import symbol_fp16, symbol_bf16
from .symbol_fp16 import *      # noqa: F401,F403
from .symbol_fp16 import __all__ as _fp16_all

__all__ = ['symbol_fp16', 'symbol_bf16'] + list(_fp16_all)
