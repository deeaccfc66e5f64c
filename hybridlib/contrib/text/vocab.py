"""Indexing text tokens: ``Vocabulary``."""
import collections

from ...base import MXNetAssertionError
from . import _constants as C

__all__ = ['Vocabulary']


class Vocabulary:
    """Indices for the unknown token, the reserved tokens and the keys of a counter.

    Index 0 is ``unknown_token``, then come ``reserved_tokens`` in order, then the keys of
    ``counter`` by decreasing frequency (ties in the keys' sort order), those at least
    ``min_freq`` frequent, at most ``most_freq_count`` of them.

    Parameters
    ----------
    counter : collections.Counter or None, default None
        Token frequencies of the text data. Its keys, ``unknown_token`` and the reserved tokens
        must be of one hashable type (str, int, tuple, ...).
    most_freq_count : int or None, default None
        The most keys of ``counter`` to index (reserved tokens not counted); all if None.
    min_freq : int, default 1
        The least frequency of an indexed key of ``counter``.
    unknown_token : hashable, default '<unk>'
        What every token not indexed maps to (index 0).
    reserved_tokens : list or None, default None
        Tokens always indexed (padding, sentence marks, ...): no duplicates, and not
        ``unknown_token``.

    Attributes
    ----------
    token_to_idx : dict
        Token -> index.
    idx_to_token : list
        Index -> token.
    unknown_token : hashable
    reserved_tokens : list or None
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token='<unk>',
                 reserved_tokens=None):
        if not min_freq > 0:
            raise MXNetAssertionError('`min_freq` must be set to a positive value.')
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            if unknown_token in reserved:
                raise MXNetAssertionError('`reserved_token` cannot contain `unknown_token`.')
            if len(reserved) != len(reserved_tokens):
                raise MXNetAssertionError(
                    '`reserved_tokens` cannot contain duplicate reserved tokens.')
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count,
                                     min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token, reserved_tokens):
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]          # C.UNKNOWN_IDX is 0
        if reserved_tokens is None:
            self._reserved_tokens = None
        else:
            self._reserved_tokens = reserved_tokens[:]
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count,
                            min_freq):
        if not isinstance(counter, collections.Counter):
            raise MXNetAssertionError('`counter` must be an instance of collections.Counter.')
        special = set(reserved_tokens) if reserved_tokens is not None else set()
        special.add(unknown_token)
        # by decreasing frequency; equal frequencies in the keys' order (a stable sort)
        token_freqs = sorted(counter.items(), key=lambda x: x[0])
        token_freqs.sort(key=lambda x: x[1], reverse=True)
        token_cap = len(special) + (len(counter) if most_freq_count is None
                                    else most_freq_count)
        for token, freq in token_freqs:
            if freq < min_freq or len(self._idx_to_token) == token_cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self):
        return len(self.idx_to_token)

    @property
    def token_to_idx(self):
        """dict: each indexed token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: the indexed tokens, in index order."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (0, the unknown
        token's, for tokens not indexed)."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        indices = [self.token_to_idx.get(token, C.UNKNOWN_IDX) for token in tokens]
        return indices[0] if single else indices

    def to_tokens(self, indices):
        """The token at an index, or the list of tokens at a list of indices; ValueError for
        an index that is not a valid int."""
        single = not isinstance(indices, list)
        indices = [indices] if single else indices
        max_idx = len(self.idx_to_token) - 1
        tokens = []
        for idx in indices:
            if not isinstance(idx, int) or idx > max_idx:
                raise ValueError(f'Token index {idx} in the provided `indices` is invalid.')
            tokens.append(self.idx_to_token[idx])
        return tokens[0] if single else tokens
