"""``mx.contrib.text``: counting tokens (``utils``), indexing them (``vocab.Vocabulary``) and
token embeddings (``embedding``: GloVe, fastText, files of one's own, and concatenations),
as MXNet 1.9.1's."""
from . import utils
from . import vocab
from . import embedding

__all__ = ['utils', 'vocab', 'embedding']
