"""Counting the tokens of a text."""
import collections
import re

__all__ = ['count_tokens_from_str']


def count_tokens_from_str(source_str, token_delim=' ', seq_delim='\n', to_lower=False,
                          counter_to_update=None):
    """Counts the tokens of ``source_str``.

    Tokens are separated by ``token_delim`` and sequences by ``seq_delim``, both regular
    expressions (escape special characters: ``'\\\\*'``); empty tokens are not counted.

    Parameters
    ----------
    source_str : str
        The text.
    token_delim : str, default ' '
        The token delimiter (a regular expression).
    seq_delim : str, default '\\\\n'
        The sequence delimiter (a regular expression).
    to_lower : bool, default False
        Count the tokens in lower case.
    counter_to_update : collections.Counter or None
        A counter to add the counts to; a new one if None.

    Returns
    -------
    collections.Counter
        ``counter_to_update`` updated, or a new counter.

    Examples
    --------
    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', ' ', '\\n', True)
    Counter({'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    """
    tokens = filter(None, re.split(token_delim + '|' + seq_delim, source_str))
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
