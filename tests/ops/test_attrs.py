"""Attribute strings (hybridlib/ops/attrs.py): the bounded parser of the literals MXNet writes,
and the declared ranges of integer attributes; parsed attributes (registry.Params)."""
import copy
import pickle

import pytest

from hybridlib.ops.attrs import INT32_MAX, Int, Shape, _literal
from hybridlib.ops.registry import Params

READ = [
    ('(3, 3)', (3, 3)), ('[3,3]', [3, 3]), ('()', ()), ('[]', []), ('(1,)', (1,)), ('(3)', 3),
    ('1e-05', 1e-05), ('-2', -2), ('+3', 3), ('.5', 0.5), ('1.', 1.0), ('None', None),
    ('True', True), ('False', False), ("'abc'", 'abc'), ('"x y"', 'x y'),
    ('(None, 3)', (None, 3)), ('((1, 2), (3, 4))', ((1, 2), (3, 4))), ('[1L, 2L]', [1, 2]),
    (' ( 1 , 2 , ) ', (1, 2)), ("('a', 1.5)", ('a', 1.5)), ('-inf', float('-inf')),
]
REFUSED = ['0x10', '1_000', '(1 2)', '(1,,2)', '(', ')', '[1,2)', 'abc', '', '2**40', '1j',
           '__import__("os")', "'a\\'b'", '(' * 17 + ')' * 17]


@pytest.mark.parametrize('text, value', READ)
def test_literals_are_read(text, value):
    assert _literal(text) == value


@pytest.mark.parametrize('text', REFUSED)
def test_other_text_is_refused(text):
    with pytest.raises(ValueError):
        _literal(text)


def test_nesting_and_length_are_bounded():
    assert _literal('(' * 16 + ')' * 16) == ()
    with pytest.raises(ValueError, match='nested deeper than 16 levels'):
        _literal('(' * 100000)
    with pytest.raises(ValueError, match='more than an attribute may have'):
        _literal('1' * (2 ** 20 + 1))


def test_integer_ranges():
    assert Int().parse('-5') == -5 and Int().parse(2 ** 63 - 1) == 2 ** 63 - 1
    for value in ('1e999', 'nan', 2 ** 63, '1.5'):
        with pytest.raises(ValueError):
            Int().parse(value)
    size = Int(low=1, high=INT32_MAX)
    assert size.parse('7') == 7
    with pytest.raises(ValueError, match='it must be at least 1'):
        size.parse('0')
    with pytest.raises(ValueError, match='it must be at most 2147483647'):
        size.parse(2 ** 31)
    assert Shape().parse('(2, None, 3.0)') == (2, None, 3)
    with pytest.raises(ValueError, match='not a tuple of integers'):
        Shape().parse('(1e999, 1)')


def test_params_attribute_access():
    # attributes are the keys; dict's own names stay dict's; a missing one is an AttributeError
    params = Params(axis=1, get=5, lr=0.5)
    assert (params.axis, params.lr, params['get']) == (1, 0.5, 5)
    assert params.get('axis') == 1 and sorted(params.keys()) == ['axis', 'get', 'lr']
    with pytest.raises(AttributeError, match='missing'):
        params.missing
    assert getattr(params, 'missing', None) is None
    assert copy.deepcopy(params) == params and pickle.loads(pickle.dumps(params)) == params
