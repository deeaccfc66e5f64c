"""Typed operator attributes that read and write MXNet's attribute strings.

In a ``-symbol.json`` every attribute value is a string: ``"(3, 3)"``, ``"True"``, ``"None"``,
``"1e-05"``. From Python the same attributes arrive as values (``(3, 3)``, ``True``, ``1e-5``).
Each ``Attr`` parses both to one typed value for ``compute`` and formats Python values the way
MXNet's frontend does (``str(value)``), so exported graphs read like MXNet's.
"""
import re

import numpy as np

from ..base import AttributeParseError, np_dtype
from ..context import Context

__all__ = ['INT32_MAX', 'UINT32_MAX', 'REQUIRED', 'Attr', 'Int', 'Count', 'Float', 'Bool',
           'BoolOrNone', 'Str', 'Shape', 'FloatTuple', 'DType', 'Ctx', 'Any', 'format_value']


class _Required:
    def __repr__(self):
        return '<required>'


REQUIRED = _Required()


def format_value(value):
    """MXNet's string form of a Python attribute value."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        kind = list if isinstance(value, list) else tuple     # MXNet writes str(value)
        return str(kind(format_scalar(v) for v in value))
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return str(format_scalar(value))


def format_scalar(value):
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, np.floating):
        return float(value)
    return value


class Attr:
    """One attribute: its default (``REQUIRED`` if none) and how to parse it.

    ``None`` (or the string ``"None"``) is accepted when the default is ``None``: that is how
    MXNet spells its optional attributes.
    """
    type_name = 'value'

    def __init__(self, default=REQUIRED, doc=''):
        self.default = default
        self.doc = doc

    @property
    def optional(self):
        return self.default is None

    def parse(self, value):
        if value is None or isinstance(value, str) and value == 'None':
            if self.optional:
                return None
            raise ValueError('None is not allowed')
        if isinstance(value, str):
            return self.parse_string(value.strip())
        return self.parse_value(value)

    def parse_string(self, text):
        return self.parse_value(_literal(text))

    def parse_value(self, value):
        return value

    def format(self, value):
        return format_value(value)

    def describe(self):
        default = 'required' if self.default is REQUIRED else f'default={self.format(self.default)}'
        return f'{self.type_name}, {default}'


# Attribute strings come from files: they are read by a small parser of the literals MXNet
# writes, bounded in length and nesting, never by Python's own (whose parser recursion and memory
# grow with the input).
_MAX_TEXT = 1 << 20
_MAX_DEPTH = 16
_TOKEN = re.compile(r"""\s*(?:(?P<punct>[()\[\],])
                         |(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[lL]?
                                   |[-+]?(?:inf|nan)\b)
                         |(?P<name>None|True|False)\b
                         |(?P<string>'[^'\\]*'|"[^"\\]*"))""", re.VERBOSE)
_NAMES = {'None': None, 'True': True, 'False': False}


def _literal(text):
    """The value of an attribute string: numbers, None/True/False, quoted strings, and tuples or
    lists of them (``"(3, 3)"``, ``"[1e-05, None]"``); ValueError for anything else."""
    if len(text) > _MAX_TEXT:
        raise ValueError(f'{len(text)} characters, more than an attribute may have')
    tokens = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            if text[pos:].strip():
                raise ValueError(f'cannot read {_shown(text)}')
            break
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        pos = match.end()
    value, end = _value(tokens, 0, 0, text)
    if end != len(tokens):
        raise ValueError(f'cannot read {_shown(text)}')
    return value


def _value(tokens, i, depth, text):
    if i >= len(tokens):
        raise ValueError(f'cannot read {_shown(text)}')
    kind, token = tokens[i]
    if kind == 'number':
        return _number(token), i + 1
    if kind == 'name':
        return _NAMES[token], i + 1
    if kind == 'string':
        return token[1:-1], i + 1
    if token not in '([' or depth >= _MAX_DEPTH:
        raise ValueError(f'cannot read {_shown(text)}' if token not in '(['
                         else f'nested deeper than {_MAX_DEPTH} levels')
    close = ')' if token == '(' else ']'
    items, comma, i = [], False, i + 1
    while i < len(tokens) and tokens[i][1] != close:
        item, i = _value(tokens, i, depth + 1, text)
        items.append(item)
        comma = i < len(tokens) and tokens[i][1] == ','
        if comma:
            i += 1
        elif i < len(tokens) and tokens[i][1] != close:
            raise ValueError(f'cannot read {_shown(text)}')
    if i >= len(tokens):
        raise ValueError(f'cannot read {_shown(text)}: {token} is not closed')
    if close == ']':
        return items, i + 1
    return (items[0] if len(items) == 1 and not comma else tuple(items)), i + 1


def _number(token):
    token = token.rstrip('lL')
    if any(c in token for c in '.eEna'):    # a float, inf or nan
        return float(token)
    return int(token)


def _shown(value, limit=80):
    """``value`` for an error message: its repr, a long string shortened."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f'... ({len(value)} characters)'
    return repr(value)


INT32_MAX = 2 ** 31 - 1     # MXNet's C++ int fields
UINT32_MAX = 2 ** 32 - 1    # and its 'int (non-negative)' ones
_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _integer(value, low=_INT64[0], high=_INT64[1]):
    """``value`` as a Python int within [low, high] (by default int64's range, as in MXNet's
    C++ fields); ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value) or float(value) != int(value):
            raise ValueError(f'{value!r} is not an integer')
    elif not isinstance(value, (int, np.integer)):
        raise ValueError(f'{value!r} is not an integer')
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f'{value} is out of range: it must be at least {low}'
                         if value < low else f'{value} is out of range: it must be at most {high}')
    return value


class Int(Attr):
    """An integer, within [low, high] where the operator declares them (MXNet's parameter
    bounds; a C++ ``int`` field is at most ``INT32_MAX``), else within int64."""
    type_name = 'int'

    def __init__(self, default=REQUIRED, doc='', *, low=_INT64[0], high=_INT64[1]):
        super().__init__(default, doc)
        self.low, self.high = low, high

    def parse_value(self, value):
        return _integer(value, self.low, self.high)


def Count(default=REQUIRED, doc='', high=INT32_MAX):
    """A number of things (units, filters, outputs, arguments): an ``Int`` of at least 1 and, as
    MXNet's C++ ``int`` fields, at most ``INT32_MAX`` (``high`` for its unsigned ones)."""
    return Int(default, doc, low=1, high=high)


class Float(Attr):
    """A float. Integers stay integers, so ``scalar=2`` prints back as ``"2"`` like MXNet."""
    type_name = 'float'

    def parse_string(self, text):
        low = text.lower()
        if low in ('inf', '+inf', 'infinity'):
            return float('inf')
        if low in ('-inf', '-infinity'):
            return float('-inf')
        if low == 'nan':
            return float('nan')
        return self.parse_value(_literal(text))

    def parse_value(self, value):
        if isinstance(value, (bool, np.bool_)):
            return float(value)
        if isinstance(value, (int, np.integer)):
            return int(value)
        return float(value)


class Bool(Attr):
    type_name = 'boolean'
    _STRINGS = {'true': True, 'false': False, '1': True, '0': False}

    def parse_string(self, text):
        try:
            return self._STRINGS[text.lower()]
        except KeyError:
            raise ValueError(f'{text!r} is not a boolean') from None

    def parse_value(self, value):
        if isinstance(value, (bool, np.bool_, int, np.integer)):
            return bool(value)
        raise ValueError(f'{value!r} is not a boolean')


class BoolOrNone(Bool):
    """MXNet's ``boolean or None`` attributes (softmax's ``use_length``, Dropout's
    ``cudnn_off``)."""

    @property
    def optional(self):
        return True


class Str(Attr):
    """A string, optionally one of ``choices``."""
    type_name = 'string'

    def __init__(self, default=REQUIRED, choices=None, doc=''):
        super().__init__(default, doc)
        self.choices = tuple(choices) if choices else None

    def parse_string(self, text):
        return self.parse_value(text)

    def parse_value(self, value):
        value = str(value)
        if self.choices and value not in self.choices:
            raise ValueError(f'{value!r} is not one of {", ".join(self.choices)}')
        return value

    def describe(self):
        if self.choices:
            return '{' + ', '.join(repr(c) for c in self.choices) + '}, ' + super().describe()
        return super().describe()


class Shape(Attr):
    """A tuple of ints: ``(3, 3)``, ``"(3, 3)"``, ``"[3, 3]"``, or one int ``3`` -> ``(3,)``."""
    type_name = 'Shape(tuple)'

    def parse_string(self, text):
        if text in ('', '()', '[]'):
            return ()
        return self.parse_value(_literal(text))

    def parse_value(self, value):
        if isinstance(value, (int, np.integer)):
            return (int(value),)
        try:
            items = tuple(value)
        except TypeError:
            raise ValueError(f'{value!r} is not a shape') from None
        try:
            return tuple(None if v is None else _integer(v) for v in items)
        except ValueError as e:
            raise ValueError(f'{value!r} is not a tuple of integers ({e})') from None


class FloatTuple(Attr):
    """A tuple of floats, e.g. MultiBoxPrior's ``sizes``."""
    type_name = 'tuple of float'

    def parse_value(self, value):
        if isinstance(value, (int, float, np.number)):
            return (float(value),)
        return tuple(float(v) for v in value)


class DType(Attr):
    """A dtype name: 'float32', np.float32 or np.dtype('float32') -> np.dtype."""
    type_name = 'dtype'

    def parse_string(self, text):
        return np_dtype(text)

    def parse_value(self, value):
        return np_dtype(value)


class Ctx(Attr):
    """A Context, as creation operators take it (``"cpu(0)"`` in JSON)."""
    type_name = 'Context'

    def parse_string(self, text):
        if not text:
            return None
        name, _, rest = text.partition('(')
        return Context(name, int(rest.rstrip(')') or 0))

    def parse_value(self, value):
        if not isinstance(value, Context):
            raise ValueError(f'{value!r} is not a Context')
        return value


class Any(Attr):
    """An attribute kept as given (literals are read from strings when possible)."""
    type_name = 'any'

    def parse_string(self, text):
        try:
            return _literal(text)
        except ValueError:
            return text


def parse_error(op_name, attr_name, value, attr, err):
    return AttributeParseError(
        f'operator {op_name}: attribute {attr_name!r} expects {attr.type_name}, '
        f'got {_shown(value)} ({err})')
