"""GluonNLP's models for the model-zoo tier (zoo.py): each a dict of ``zoo.add``'s arguments.

Small but real configurations built in code (vocabularies of a few dozen tokens, two layers,
units of 16 to 32, sequences of 5 to 8 steps, batch 2), so nothing is downloaded. Token ids
are float32, MXNet's default dtype. Dropout is set wherever a model takes it: the tier runs in
predict mode, where it must be the identity.

Models whose forward takes nested states (lists of [h, c] per layer) are wrapped in a block
whose forward takes them as flat positional arrays, so the tier can feed them and MXNet can
export them. Plain Blocks (NMTModel, BigRNN, the samplers' drivers) are not exportable in
MXNet: their cases say export=False, and the hybridized run hybridizes their children.
"""
import numpy as np

import mxnet as mx
from mxnet.gluon import Block, HybridBlock, nn, rnn

BATCH = 2
CASES = []


def add(name, family, build, inputs, **options):
    CASES.append(dict(name=name, family=family, build=build, inputs=inputs, **options))


def ids(high, *shape):
    """Token ids in [1, high), as float32."""
    return lambda rng: rng.randint(1, high, shape).astype('float32')


def normal(*shape):
    return lambda rng: rng.standard_normal(shape).astype('float32')


def constant(value, dtype='float32'):
    return lambda rng: np.array(value, dtype=dtype)


def arrays(*makers):
    """A case's inputs: one array per maker, all drawn from the case's generator in order."""
    return lambda rng: [make(rng) for make in makers]


def vocabulary(size):
    """A gluonnlp.Vocab of ``size`` tokens: <unk>, <pad>, <bos>, <eos> and made-up words."""
    import gluonnlp
    counts = {f'w{i}': size - i for i in range(size - 4)}
    return gluonnlp.Vocab(gluonnlp.data.Counter(counts))


def nest(like, arrays):
    """``arrays`` (a flat sequence) in the structure of ``like`` (nested lists)."""
    items = iter(arrays)

    def build(shape):
        if isinstance(shape, (list, tuple)):
            return [build(s) for s in shape]
        return next(items)
    return build(like)


class FlatStates(HybridBlock):
    """Calls ``net(*inputs, states)`` with ``states`` nested like ``structure`` and given as
    the trailing positional arrays; ``mask`` (an index into ``inputs``) goes after them."""

    def __init__(self, net, num_inputs, structure, mask=None, **kwargs):
        super().__init__(**kwargs)
        self.net = net
        self._num_inputs, self._structure, self._mask = num_inputs, structure, mask

    def hybrid_forward(self, F, *args):
        inputs, states = list(args[:self._num_inputs]), args[self._num_inputs:]
        states = nest(self._structure, states)
        if self._mask is None:
            return self.net(*inputs, states)
        mask = inputs.pop(self._mask)
        return self.net(*inputs, states, mask)


class PlainStates(Block):
    """For a plain Block whose states are a flat list (BigRNN): ``net(inputs, states)``
    from ``forward(inputs, *states)``."""

    def __init__(self, net, **kwargs):
        super().__init__(**kwargs)
        self.net = net

    def forward(self, inputs, *states):
        return self.net(inputs, list(states))


# -------------------------------------------------------------------------------------------------
# BERT: self-attention through the interleaved products, masked-LM decoder, pooler, classifier
# -------------------------------------------------------------------------------------------------

BERT_VOCAB, BERT_LENGTH, BERT_MASKED = 30, 8, 3


def bert_model(output_attention=False, output_all_encodings=False, **options):
    import gluonnlp
    encoder = gluonnlp.model.BERTEncoder(
        num_layers=2, units=32, hidden_size=64, max_length=16, num_heads=4, dropout=0.1,
        output_attention=output_attention, output_all_encodings=output_all_encodings)
    return gluonnlp.model.BERTModel(encoder, vocab_size=BERT_VOCAB, token_type_vocab_size=2,
                                    units=32, embed_size=32, **options)


def bert_inputs(masked=True):
    def make(rng):
        tokens = rng.randint(1, BERT_VOCAB, (BATCH, BERT_LENGTH)).astype('float32')
        types = (np.arange(BERT_LENGTH) >= 5).astype('float32')[None].repeat(BATCH, 0)
        valid_length = np.array([BERT_LENGTH, 5], dtype='float32')
        out = [tokens, types, valid_length]
        if masked:
            out.append(rng.randint(0, 5, (BATCH, BERT_MASKED)).astype('float32'))
        return out
    return make


def bert_classifier():
    import gluonnlp
    bert = bert_model(use_decoder=False, use_classifier=False)
    return gluonnlp.model.BERTClassifier(bert, num_classes=3, dropout=0.1)


add('nlp_bert', 'gluonnlp bert', bert_model, bert_inputs())
add('nlp_bert_all_encodings', 'gluonnlp bert',
    lambda: bert_model(output_attention=True, output_all_encodings=True, use_decoder=False),
    bert_inputs(masked=False))
add('nlp_bert_classifier', 'gluonnlp bert', bert_classifier, bert_inputs(masked=False))
add('nlp_bert_no_valid_length', 'gluonnlp bert', lambda: bert_model(use_decoder=False),
    lambda rng: bert_inputs(masked=False)(rng)[:2])


def roberta():
    import gluonnlp
    encoder = gluonnlp.model.BERTEncoder(
        num_layers=2, units=32, hidden_size=64, max_length=16, num_heads=4, dropout=0.1,
        layer_norm_eps=1e-5)
    return gluonnlp.model.RoBERTaModel(encoder, vocab_size=BERT_VOCAB, units=32, embed_size=32)


def distilbert():
    import gluonnlp
    encoder = gluonnlp.model.BERTEncoder(
        num_layers=2, units=32, hidden_size=64, max_length=16, num_heads=4, dropout=0.1)
    return gluonnlp.model.DistilBERTModel(encoder, vocab_size=BERT_VOCAB, units=32,
                                          embed_size=32)


# RoBERTa gives its BERTModel no token types (an empty list in their place)
add('nlp_roberta', 'gluonnlp bert', roberta,
    lambda rng: [bert_inputs()(rng)[i] for i in (0, 2, 3)])
add('nlp_distilbert', 'gluonnlp bert', distilbert,
    lambda rng: [bert_inputs()(rng)[i] for i in (0, 2)])


# -------------------------------------------------------------------------------------------------
# The Transformer in an NMTModel, and beam search over its one-step decoder
# -------------------------------------------------------------------------------------------------

SRC_VOCAB, TGT_VOCAB = 24, 20


def transformer_nmt():
    import gluonnlp
    from gluonnlp.model.transformer import get_transformer_encoder_decoder
    encoder, decoder, one_step = get_transformer_encoder_decoder(
        num_layers=2, num_heads=4, units=32, hidden_size=64, dropout=0.1,
        max_src_length=16, max_tgt_length=16)
    return gluonnlp.model.translation.NMTModel(
        vocabulary(SRC_VOCAB), vocabulary(TGT_VOCAB), encoder, decoder, one_step,
        embed_size=32, embed_dropout=0.1, prefix='transformer_')


TRANSLATION_INPUTS = arrays(ids(SRC_VOCAB, BATCH, 7), ids(TGT_VOCAB, BATCH, 6),
                            constant([7, 4]), constant([6, 3]))
add('nlp_transformer_nmt', 'gluonnlp transformer', transformer_nmt, TRANSLATION_INPUTS,
    export=False)


class TransformerSeq2Seq(HybridBlock):
    """The Transformer as one HybridBlock, so it exports: NMTModel's forward with the memory
    mask built from F's operators (init_state_from_encoder uses nd's); attention weights of
    the encoder and of both decoder attentions are outputs too."""

    def __init__(self, attention_cell, scaled=True, **kwargs):
        super().__init__(**kwargs)
        from gluonnlp.model.transformer import TransformerDecoder, TransformerEncoder
        config = dict(attention_cell=attention_cell, num_layers=2, units=32, hidden_size=64,
                      max_length=16, num_heads=4, scaled=scaled, dropout=0.1,
                      output_attention=True)
        with self.name_scope():
            self.src_embed = nn.Embedding(SRC_VOCAB, 32)
            self.tgt_embed = nn.Embedding(TGT_VOCAB, 32)
            self.encoder = TransformerEncoder(prefix='enc_', **config)
            self.decoder = TransformerDecoder(prefix='dec_', **config)
            self.tgt_proj = nn.Dense(TGT_VOCAB, flatten=False, in_units=32)

    def hybrid_forward(self, F, src, tgt, src_valid_length, tgt_valid_length):
        memory, encoder_attention = self.encoder(self.src_embed(src),
                                                 valid_length=src_valid_length)
        steps = F.contrib.arange_like(src, axis=1)
        mem_mask = F.broadcast_lesser(steps.reshape((1, -1)), src_valid_length.reshape((-1, 1)))
        out, _, decoder_attention = self.decoder(self.tgt_embed(tgt), [memory, mem_mask],
                                                 tgt_valid_length)
        return self.tgt_proj(out), encoder_attention, decoder_attention


for cell, scaled in [('multi_head', False), ('scaled_luong', True), ('cosine', True),
                     ('normed_mlp', True)]:
    add(f'nlp_transformer_{cell}', 'gluonnlp transformer',
        lambda cell=cell, scaled=scaled: TransformerSeq2Seq(cell, scaled=scaled),
        TRANSLATION_INPUTS)


class TransformerBeamSearch(Block):
    """Translates a source batch by beam search: GluonNLP's machine-translation recipe
    (encode, decoder states from the encoder, BeamSearchSampler over log_softmax of
    decode_step)."""

    def __init__(self, beam_size=3, max_length=6, **kwargs):
        super().__init__(**kwargs)
        import gluonnlp
        with self.name_scope():
            self.model = transformer_nmt()
        self._bos = self.model.tgt_vocab.token_to_idx[self.model.tgt_vocab.bos_token]
        eos = self.model.tgt_vocab.token_to_idx[self.model.tgt_vocab.eos_token]
        self._sampler = gluonnlp.model.BeamSearchSampler(
            beam_size=beam_size, decoder=self._decode_logprob, eos_id=eos,
            scorer=gluonnlp.model.BeamSearchScorer(alpha=0.6, K=5), max_length=max_length)

    def _decode_logprob(self, step_input, states):
        out, states, _ = self.model.decode_step(step_input, states)
        return mx.nd.log_softmax(out), states

    def forward(self, src, src_valid_length):
        encoded, _ = self.model.encode(src, valid_length=src_valid_length)
        states = self.model.decoder.init_state_from_encoder(encoded, src_valid_length)
        start = mx.nd.full((src.shape[0],), self._bos, dtype='float32')
        return self._sampler(start, states)


add('nlp_transformer_beam_search', 'gluonnlp beam search', TransformerBeamSearch,
    arrays(ids(SRC_VOCAB, BATCH, 7), constant([7, 4])), export=False)


# -------------------------------------------------------------------------------------------------
# Samplers over a small LSTM decoder with an output Dense
# -------------------------------------------------------------------------------------------------

RNN_VOCAB, RNN_UNITS, EOS = 16, 16, 2


class RNNDecoder(HybridBlock):
    """One step of a language model: embedding, LSTM cell, output Dense (log-probabilities
    when ``log_probs``, scores otherwise). ``eos_bias``, a constant the tier does not draw,
    is added to the score of EOS, so that a case decides whether the beams finish whatever
    values the other parameters get."""

    def __init__(self, log_probs=True, eos_bias=None, **kwargs):
        super().__init__(**kwargs)
        self._vocab_size, self._log_probs = RNN_VOCAB, log_probs
        with self.name_scope():
            self.embed = nn.Embedding(RNN_VOCAB, RNN_UNITS)
            self.cell = rnn.LSTMCell(RNN_UNITS, input_size=RNN_UNITS)
            self.out = nn.Dense(RNN_VOCAB, in_units=RNN_UNITS)
            if eos_bias is not None:
                bias = np.zeros((1, RNN_VOCAB), dtype='float32')
                bias[0, EOS] = eos_bias
                self.eos_bias = self.params.get_constant('eos_bias', bias)

    def hybrid_forward(self, F, step_input, states, eos_bias=None):
        output, states = self.cell(self.embed(step_input), states)
        scores = self.out(output)
        if eos_bias is not None:
            scores = F.broadcast_add(scores, eos_bias)
        return (F.log_softmax(scores) if self._log_probs else scores), states


class SamplerDriver(Block):
    """Runs a GluonNLP sampler (a plain callable) over an RNNDecoder from arrays:
    forward(start tokens, h, c) gives samples, scores and valid lengths."""

    def __init__(self, make_sampler, log_probs=True, eos_bias=None, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.decoder = RNNDecoder(log_probs=log_probs, eos_bias=eos_bias)
        self._sampler = make_sampler(self.decoder)

    def forward(self, start, h, c):
        return self._sampler(start, [h, c])


# EOS scores: at -30 no beam ends before max_length (15 other words beat it at every step);
# at +3 EOS is every step's best word, so the beams end within a few steps, at different ones
NEVER_ENDS, ENDS_EARLY = -30.0, 3.0


def beam_search_rnn(eos_bias):
    def build():
        import gluonnlp
        return SamplerDriver(lambda decoder: gluonnlp.model.BeamSearchSampler(
            beam_size=4, decoder=decoder, eos_id=EOS, max_length=8), eos_bias=eos_bias)
    return build


def sequence_sampler_rnn():
    import gluonnlp
    # the sampler draws even in predict mode; at temperature 1e-6 the best word has
    # probability 1 (the exp of the others underflows once they trail it by 1e-4), so MXNet's
    # and hybridlib's generators (which differ) draw the same words, while the scores stay
    # the log-probabilities at temperature 1
    return SamplerDriver(lambda decoder: gluonnlp.model.SequenceSampler(
        beam_size=3, decoder=decoder, eos_id=EOS, max_length=8, temperature=1e-6),
        log_probs=False)


class HybridBeamSearch(HybridBlock):
    """HybridBeamSearchSampler (contrib.while_loop and cond) over an RNNDecoder."""

    def __init__(self, eos_bias, **kwargs):
        super().__init__(**kwargs)
        import gluonnlp
        with self.name_scope():
            self.decoder = RNNDecoder(eos_bias=eos_bias)
            self.sampler = gluonnlp.model.HybridBeamSearchSampler(
                batch_size=BATCH, beam_size=4, decoder=self.decoder, eos_id=EOS, max_length=8,
                vocab_size=RNN_VOCAB)

    def hybrid_forward(self, F, start, h, c):
        return self.sampler(start, [h, c])


RNN_START = arrays(ids(RNN_VOCAB, BATCH), normal(BATCH, RNN_UNITS), normal(BATCH, RNN_UNITS))
add('nlp_beam_search_rnn', 'gluonnlp beam search', beam_search_rnn(NEVER_ENDS), RNN_START,
    export=False)
add('nlp_sequence_sampler_rnn', 'gluonnlp beam search', sequence_sampler_rnn, RNN_START,
    export=False)
add('nlp_hybrid_beam_search_rnn', 'gluonnlp beam search',
    lambda: HybridBeamSearch(NEVER_ENDS), RNN_START)
# every beam ends early: BeamSearchSampler returns before max_length, the while_loop's
# condition fails and cond takes its then-branch
add('nlp_beam_search_rnn_finished', 'gluonnlp beam search', beam_search_rnn(ENDS_EARLY),
    RNN_START, export=False)
add('nlp_hybrid_beam_search_rnn_finished', 'gluonnlp beam search',
    lambda: HybridBeamSearch(ENDS_EARLY), RNN_START)


# -------------------------------------------------------------------------------------------------
# Attention cells, masked
# -------------------------------------------------------------------------------------------------

def attention_inputs(key_dim=8):
    def make(rng):
        query = rng.standard_normal((BATCH, 4, 8)).astype('float32')
        key = rng.standard_normal((BATCH, 5, key_dim)).astype('float32')
        value = rng.standard_normal((BATCH, 5, 6)).astype('float32')
        # the second sample sees 3 memory slots; its last query row sees none
        mask = np.ones((BATCH, 4, 5), dtype='float32')
        mask[1, :, 3:] = 0
        mask[1, 3] = 0
        return [query, key, value, mask]
    return make


def attention(cell, **kwargs):
    def build():
        from gluonnlp.model import attention_cell
        if cell == 'MultiHeadAttentionCell':
            base = attention_cell.DotProductAttentionCell(scaled=True, dropout=0.1)
            return attention_cell.MultiHeadAttentionCell(base, **kwargs)
        return getattr(attention_cell, cell)(**kwargs)
    return build


add('nlp_attention_dot', 'gluonnlp attention',
    attention('DotProductAttentionCell', scaled=False), attention_inputs())
add('nlp_attention_dot_scaled', 'gluonnlp attention',
    attention('DotProductAttentionCell', units=16, scaled=True, dropout=0.1),
    attention_inputs())
add('nlp_attention_dot_luong', 'gluonnlp attention',
    attention('DotProductAttentionCell', units=12, luong_style=True, scaled=False),
    attention_inputs(key_dim=12))
add('nlp_attention_cosine', 'gluonnlp attention',
    attention('DotProductAttentionCell', units=16, normalized=True, scaled=False),
    attention_inputs())
add('nlp_attention_mlp', 'gluonnlp attention', attention('MLPAttentionCell', units=16),
    attention_inputs())
add('nlp_attention_mlp_normalized', 'gluonnlp attention',
    attention('MLPAttentionCell', units=16, normalized=True), attention_inputs())
add('nlp_attention_multi_head', 'gluonnlp attention',
    attention('MultiHeadAttentionCell', query_units=16, key_units=16, value_units=12,
              num_heads=4), attention_inputs())


# -------------------------------------------------------------------------------------------------
# ELMo: character CNN with highway, LSTMPCellWithClip bidirectional LM (contrib.foreach);
# the bidirectional encoder with LSTM cells, the convolutional encoder with a mask
# -------------------------------------------------------------------------------------------------

ELMO_CHARS, ELMO_TOKEN_CHARS, ELMO_LENGTH = 40, 6, 5
ELMO = dict(output_size=16, filters=[[1, 8], [2, 8], [3, 16]], char_embed_size=8,
            num_highway=2, conv_layer_activation='relu', max_chars_per_token=ELMO_TOKEN_CHARS,
            char_vocab_size=ELMO_CHARS)
ELMO_LAYERS, ELMO_HIDDEN, ELMO_PROJ = 2, 24, 16


def elmo_character_encoder():
    from gluonnlp.model.elmo import ELMoCharacterEncoder
    return ELMoCharacterEncoder(**ELMO)


def elmo_bilm():
    from gluonnlp.model import ELMoBiLM
    net = ELMoBiLM('lstmpc', input_size=ELMO['output_size'], hidden_size=ELMO_HIDDEN,
                   proj_size=ELMO_PROJ, num_layers=ELMO_LAYERS, cell_clip=3, proj_clip=3,
                   **ELMO)
    # states: (forward, backward), each per layer [h (proj), c (hidden)]
    structure = [[['h', 'c']] * ELMO_LAYERS] * 2
    return FlatStates(net, 2, structure, mask=1)


def elmo_states(rng):
    layer = [rng.standard_normal((BATCH, ELMO_PROJ)).astype('float32'),
             rng.standard_normal((BATCH, ELMO_HIDDEN)).astype('float32')]
    return [a * 0.5 for a in layer * (2 * ELMO_LAYERS)]


def elmo_inputs(rng):
    chars = rng.randint(1, ELMO_CHARS, (BATCH, ELMO_LENGTH, ELMO_TOKEN_CHARS))
    chars[:, :, 4:] = 0                                   # padded characters
    mask = np.ones((BATCH, ELMO_LENGTH), dtype='float32')
    mask[1, 3:] = 0
    return [chars.astype('float32'), mask] + elmo_states(rng)


# MXNet's oneDNN convolutions reject saving parameters after set_data (IsDefaultData)
add('nlp_elmo_character_encoder', 'gluonnlp elmo', elmo_character_encoder,
    lambda rng: elmo_inputs(rng)[:1], onednn=False)
add('nlp_elmo_bilm', 'gluonnlp elmo', elmo_bilm, elmo_inputs, onednn=False)


def sequence_and_states(length, units, count):
    """A (TNC) sequence and ``count`` states of shape (batch, units)."""
    def make(rng):
        out = [rng.standard_normal((length, BATCH, units)).astype('float32')]
        return out + [rng.standard_normal((BATCH, units)).astype('float32') * 0.5
                      for _ in range(count)]
    return make


def bilm_lstm():
    from gluonnlp.model import BiLMEncoder
    net = BiLMEncoder('lstm', num_layers=2, input_size=16, hidden_size=16, dropout=0.1,
                      skip_connection=True)
    return FlatStates(net, 1, [[['h', 'c']] * 2] * 2)


add('nlp_bilm_lstm', 'gluonnlp elmo', bilm_lstm, sequence_and_states(6, 16, 8))


def convolutional_encoder():
    from gluonnlp.model import ConvolutionalEncoder
    return ConvolutionalEncoder(embed_size=8, num_filters=(6, 10), ngram_filter_sizes=(2, 3),
                                conv_layer_activation='tanh', num_highway=1, output_size=12)


def masked_sequence(rng):
    inputs = rng.standard_normal((7, BATCH, 8)).astype('float32')
    mask = np.ones((7, BATCH), dtype='float32')
    mask[5:, 1] = 0
    return [inputs, mask]


add('nlp_convolutional_encoder', 'gluonnlp elmo', convolutional_encoder, masked_sequence,
    onednn=False)


# -------------------------------------------------------------------------------------------------
# Language models: StandardRNN, AWDRNN (one LSTM per layer), GluonNLP's stacked cells,
# BigRNN (LSTMPCell) for inference and for training (importance sampling)
# -------------------------------------------------------------------------------------------------

LM_VOCAB, LM_LENGTH, LM_UNITS = 32, 6, 16


def standard_rnn(mode):
    def build():
        from gluonnlp.model import StandardRNN
        # dropout 0: StandardRNN calls nd.Dropout in hybrid_forward, which a Symbol rejects
        net = StandardRNN(mode, LM_VOCAB, LM_UNITS, LM_UNITS, num_layers=2, dropout=0.0,
                          tie_weights=True)
        return FlatStates(net, 1, ['h', 'c'] if mode == 'lstm' else ['h'])
    return build


def awd_rnn(mode):
    def build():
        from gluonnlp.model import AWDRNN
        net = AWDRNN(mode, LM_VOCAB, LM_UNITS, 24, num_layers=2, tie_weights=True,
                     dropout=0.4, weight_drop=0.5, drop_h=0.2, drop_i=0.65, drop_e=0.1)
        return FlatStates(net, 1, [['h', 'c'] if mode == 'lstm' else ['h']] * 2)
    return build


def lm_inputs(*state_shapes):
    def make(rng):
        tokens = rng.randint(0, LM_VOCAB, (LM_LENGTH, BATCH)).astype('float32')
        return [tokens] + [rng.standard_normal(s).astype('float32') * 0.5 for s in state_shapes]
    return make


add('nlp_standard_lstm', 'gluonnlp language model', standard_rnn('lstm'),
    lm_inputs((2, BATCH, LM_UNITS), (2, BATCH, LM_UNITS)))
add('nlp_standard_gru', 'gluonnlp language model', standard_rnn('gru'),
    lm_inputs((2, BATCH, LM_UNITS)))
# AWDRNN's last layer has embed_size units so that the decoder ties to the embedding
add('nlp_awd_lstm', 'gluonnlp language model', awd_rnn('lstm'),
    lm_inputs((1, BATCH, 24), (1, BATCH, 24), (1, BATCH, LM_UNITS), (1, BATCH, LM_UNITS)))
add('nlp_awd_gru', 'gluonnlp language model', awd_rnn('gru'),
    lm_inputs((1, BATCH, 24), (1, BATCH, LM_UNITS)))


def lm_without_states(kind):
    """A language model called with no begin_state: it makes zeros (hybridized: sym.zeros of
    batch size 0, which shape inference completes from the RNN operator)."""
    def build():
        from gluonnlp.model import AWDRNN, StandardRNN
        if kind == 'standard':
            return StandardRNN('lstm', LM_VOCAB, LM_UNITS, LM_UNITS, num_layers=2,
                               dropout=0.0, tie_weights=True)
        return AWDRNN('lstm', LM_VOCAB, LM_UNITS, 24, num_layers=2, tie_weights=True,
                      dropout=0.4, weight_drop=0.5, drop_h=0.2, drop_i=0.65, drop_e=0.1)
    return build


add('nlp_standard_lstm_zero_state', 'gluonnlp language model', lm_without_states('standard'),
    lm_inputs())
add('nlp_awd_lstm_zero_state', 'gluonnlp language model', lm_without_states('awd'),
    lm_inputs())


class UnrolledCells(HybridBlock):
    """``cells.unroll`` over a (TNC) sequence from the given flat begin states."""

    def __init__(self, make_cells, length, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cells = make_cells()
        self._length = length

    def hybrid_forward(self, F, inputs, *states):
        return self.cells.unroll(self._length, inputs, list(states), layout='TNC',
                                 merge_outputs=True)


def rnn_cells(mode):
    """GluonNLP's stacked cells (model.utils._get_rnn_cell): residual connections, dropout
    between layers, dropped h2h weights and variational dropout on all three channels."""
    def make():
        from gluonnlp.model.utils import _get_rnn_cell
        return _get_rnn_cell(mode, num_layers=2, input_size=LM_UNITS, hidden_size=LM_UNITS,
                             dropout=0.2, weight_dropout=0.3, var_drop_in=0.1,
                             var_drop_state=0.1, var_drop_out=0.1, skip_connection=True)
    return lambda: UnrolledCells(make, LM_LENGTH)


add('nlp_rnn_cells_lstm', 'gluonnlp language model', rnn_cells('lstm'),
    sequence_and_states(LM_LENGTH, LM_UNITS, 4))
add('nlp_rnn_cells_gru', 'gluonnlp language model', rnn_cells('gru'),
    sequence_and_states(LM_LENGTH, LM_UNITS, 2))

BIG_LAYERS, BIG_HIDDEN, BIG_PROJ, BIG_SAMPLED = 2, 24, 12, 6


def big_rnn():
    from gluonnlp.model import BigRNN
    net = BigRNN(LM_VOCAB, LM_UNITS, BIG_HIDDEN, BIG_LAYERS, BIG_PROJ, embed_dropout=0.1,
                 encode_dropout=0.1)
    # a sequential cell's states are flat: [h, c] of each layer in turn
    return PlainStates(net)


class SampledBigRNN(Block):
    """The training BigRNN (importance-sampled ISDense decoder) with the sampled classes
    and their expected counts given as arrays, so that no candidate sampler runs. Its weights
    are dense: row_sparse ones are read through a Trainer, and not by Parameter.data()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from gluonnlp.model.train import BigRNN
        with self.name_scope():
            self.net = BigRNN(LM_VOCAB, LM_UNITS, BIG_HIDDEN, BIG_LAYERS, BIG_PROJ, BIG_SAMPLED,
                              embed_dropout=0.1, encode_dropout=0.1, sparse_weight=False,
                              sparse_grad=False)

    def forward(self, inputs, label, sampled, count_sampled, count_true, *states):
        sampled_values = [sampled, count_sampled, count_true]
        return self.net(inputs, label, list(states), sampled_values)


def big_states(rng):
    layer = [(BATCH, BIG_PROJ), (BATCH, BIG_HIDDEN)]
    return [rng.standard_normal(s).astype('float32') * 0.5 for s in layer * BIG_LAYERS]


def sampled_inputs(rng):
    tokens = rng.randint(0, LM_VOCAB, (LM_LENGTH, BATCH)).astype('float32')
    # labels and samples apart: an accidental hit scores -1e37, which would set the scale
    # against which the tier measures the other scores
    label = rng.randint(0, LM_VOCAB // 2, (LM_LENGTH, BATCH)).astype('float32')
    sampled = rng.choice(np.arange(LM_VOCAB // 2, LM_VOCAB), BIG_SAMPLED, replace=False)
    count_sampled = rng.uniform(0.1, 1.0, BIG_SAMPLED).astype('float32')
    count_true = rng.uniform(0.1, 1.0, (LM_LENGTH, BATCH)).astype('float32')
    return [tokens, label, sampled.astype('float32'), count_sampled, count_true] + \
        big_states(rng)


add('nlp_big_rnn', 'gluonnlp language model', big_rnn,
    lambda rng: lm_inputs()(rng) + big_states(rng), export=False)
add('nlp_big_rnn_sampled', 'gluonnlp language model', SampledBigRNN,
    sampled_inputs, export=False)
