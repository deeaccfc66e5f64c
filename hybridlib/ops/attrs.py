"""Typed operator attributes that read and write MXNet's attribute strings.

In a ``-symbol.json`` every attribute value is a string: ``"(3, 3)"``, ``"True"``, ``"None"``,
``"1e-05"``. From Python the same attributes arrive as values (``(3, 3)``, ``True``, ``1e-5``).
Each ``Attr`` parses both to one typed value for ``compute`` and formats Python values the way
MXNet's frontend does (``str(value)``), so exported graphs read like MXNet's.
"""
import ast

import numpy as np

from ..base import AttributeParseError, np_dtype
from ..context import Context

__all__ = ['REQUIRED', 'Attr', 'Int', 'Float', 'Bool', 'Str', 'Shape', 'FloatTuple', 'DType',
           'Ctx', 'Any', 'format_value']


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


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f'cannot read {text!r}') from None


class Int(Attr):
    type_name = 'int'

    def parse_value(self, value):
        if isinstance(value, (bool, np.bool_)):
            return int(value)
        if isinstance(value, (float, np.floating)) and float(value) != int(value):
            raise ValueError(f'{value!r} is not an integer')
        return int(value)


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
        out = []
        for v in items:
            if v is None:
                out.append(None)
            elif isinstance(v, (int, np.integer)) or float(v) == int(v):
                out.append(int(v))
            else:
                raise ValueError(f'{value!r} is not a tuple of integers')
        return tuple(out)


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
    """An attribute kept as given (Python literals are read from strings when possible)."""
    type_name = 'any'

    def parse_string(self, text):
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text


def parse_error(op_name, attr_name, value, attr, err):
    return AttributeParseError(
        f'operator {op_name}: attribute {attr_name!r} expects {attr.type_name}, '
        f'got {value!r} ({err})')
