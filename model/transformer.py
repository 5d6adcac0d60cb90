"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), written to be read beside the paper.

Section numbers in comments refer to the paper. Every attention layer can hand back its post-softmax weights
(and, on request, its per-head queries, keys and values) as *return values*: the model object is shared by
every browser session of the app, so nothing about a particular input is ever stored on a module.

Decoding one piece at a time can reuse the keys and values of earlier positions (a ``DecoderCache``; not in the
paper, but what every production decoder does): by the causal mask, earlier positions never change, so their
keys and values are computed once instead of at every step. A test checks the weights it returns equal a
full recomputation's.

Two attention paths compute the same function:
- the explicit path (``need_weights=True``) writes out softmax(QK^T / sqrt(d_k)) V so the weights can be returned;
- the fast path calls ``torch.nn.functional.scaled_dot_product_attention`` and is used for training.
A test checks they agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")


@dataclass
class TransformerConfig:
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 256
    n_heads: int = 8
    d_ff: int = 1024
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    dropout: float = 0.1
    max_len: int = 256  # longest sequence (in pieces, incl. <s>/</s>) the positional table covers
    pad_id: int = 0
    bos_id: int = 2
    eos_id: int = 3
    tie_target_embeddings: bool = True  # Section 3.4: decoder input embedding shares weights with the output layer
    # Section 3.4 in full: one vocabulary for both languages (source.model and target.model are the same
    # tokenizer) and one matrix for both embeddings and the output layer. A name is then the same pieces on both
    # sides, so copying it (Tom -> Tom) is reading and writing the same rows. Needs src_vocab_size == tgt_vocab_size.
    share_source_target_embeddings: bool = False
    # False: the paper's post-norm, LayerNorm(x + Sublayer(x)). True: pre-norm, x + Sublayer(LayerNorm(x)), with a
    # final LayerNorm after each stack (Xiong et al., 2020), which trains deep stacks more reliably.
    norm_first: bool = False
    # The decoder stack alone, as GPT keeps it: no encoder (n_encoder_layers 0) and no cross-attention. The source
    # becomes the start of one sequence, "source <sep> target", in one vocabulary (tgt_vocab_size), and the
    # decoder's masked self-attention reads it where an encoder-decoder's cross-attention would.
    decoder_only: bool = False

    def __post_init__(self):
        if self.decoder_only and self.n_encoder_layers:
            raise ValueError("a decoder-only model has no encoder layers: n_encoder_layers must be 0")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.share_source_target_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"a shared vocabulary needs src_vocab_size ({self.src_vocab_size}) = tgt_vocab_size "
                f"({self.tgt_vocab_size})"
            )

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def n_layers(self, kind: str) -> int:
        """Layers that hold attention of this kind: "encoder_self", "decoder_self" or "cross"."""
        if kind not in ATTENTION_KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; expected one of {ATTENTION_KINDS}")
        if kind == "encoder_self":
            return self.n_encoder_layers
        return 0 if kind == "cross" and self.decoder_only else self.n_decoder_layers


# --------------------------------------------------------------------------------------------------------------
# Masks. Convention everywhere: a boolean tensor, True where a query MAY attend to a key, broadcastable to
# (batch, heads, queries, keys). This is also what scaled_dot_product_attention expects of a boolean mask.


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(batch, len) token ids -> (batch, 1, 1, len): keys that are real tokens, not padding."""
    return (ids != pad_id)[:, None, None, :]


def subsequent_mask(size: int, device=None) -> torch.Tensor:
    """(1, 1, size, size) lower-triangular mask: position i may attend to positions <= i (Section 3.2.3)."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()[None, None]


# --------------------------------------------------------------------------------------------------------------
# Section 3.5: positional encoding.


def sinusoidal_positional_encoding(length: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    -> (length, d_model)"""
    position = torch.arange(length, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (length, d_model/2)
    pe = torch.zeros(length, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.float()


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to the (already scaled) embeddings, then dropout."""

    def __init__(self, d_model: int, max_len: int, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # A buffer, not a parameter: the paper's encoding is fixed. Not saved: it is recomputed from the formula.
        self.register_buffer("table", sinusoidal_positional_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """offset: the position of x's first element (incremental decoding feeds one position at a time)."""
        end = offset + x.size(1)
        if end > self.table.size(0):
            raise ValueError(f"sequence of {end} positions is longer than the model's limit of {self.table.size(0)}")
        return self.dropout(x + self.table[offset:end])


class Embeddings(nn.Module):
    """Section 3.4: token embedding multiplied by sqrt(d_model)."""

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        self.lookup = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lookup(ids) * self.scale


# --------------------------------------------------------------------------------------------------------------
# Section 3.2: scaled dot-product attention and multi-head attention.


@dataclass
class AttentionOutput:
    output: torch.Tensor  # (batch, queries, d_model)
    weights: torch.Tensor | None = None  # (batch, heads, queries, keys), post-softmax
    qkv: dict[str, torch.Tensor] | None = None  # "q": (batch, heads, queries, d_k); "k", "v": (batch, heads, keys, d_k)
    kv: tuple[torch.Tensor, torch.Tensor] | None = None  # all keys and values used, for a DecoderCache


def uniform_weights(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Equal weight on every key a query may see, whatever the scores: attention that cannot choose. Each row
    averages the values it sees, so every query gets the same summary (the fixed context vector C of an
    encoder-decoder without attention)."""
    allowed = torch.ones_like(scores) if mask is None else mask.expand_as(scores).to(scores.dtype)
    return allowed / allowed.sum(-1, keepdim=True)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)."""

    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        # All heads' projections in one matrix each; head i owns columns [i*d_k, (i+1)*d_k).
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_k).transpose(1, 2)  # (batch, heads, length, d_k)

    def forward(
        self,
        query: torch.Tensor,  # (batch, queries, d_model)
        # (batch, keys, d_model): the same tensor for self-attention, the encoder output for cross-attention
        key_value: torch.Tensor,
        mask: torch.Tensor | None,  # bool, True = may attend, broadcastable to (batch, heads, queries, keys)
        need_weights: bool = False,
        need_qkv: bool = False,
        head_mask: torch.Tensor | None = None,  # (heads,) 1 keeps a head's output, 0 switches it off (ablation)
        scale: bool = True,  # False drops the 1/sqrt(d_k): only for teaching what the scaling is for
        uniform: bool = False,  # True replaces the softmax weights by uniform ones: only for teaching
        past_kv: tuple[torch.Tensor, torch.Tensor] | None = None,  # self-attention: keys, values of earlier positions
        fixed_kv: tuple[torch.Tensor, torch.Tensor] | None = None,  # cross-attention: the memory's, projected already
    ) -> AttentionOutput:
        q = self.split_heads(self.w_q(query))
        if fixed_kv is not None:
            k, v = fixed_kv
        else:
            k = self.split_heads(self.w_k(key_value))
            v = self.split_heads(self.w_v(key_value))
            if past_kv is not None:
                k, v = torch.cat([past_kv[0], k], dim=2), torch.cat([past_kv[1], v], dim=2)
        dropout_p = self.dropout if self.training else 0.0

        weights = None
        if need_weights or not scale or uniform:
            scores = q @ k.transpose(-2, -1)  # (batch, heads, queries, keys)
            if scale:
                scores = scores / math.sqrt(self.d_k)
            if mask is not None:
                # exp(-inf) = 0, so a masked key gets exactly zero weight, not merely a small one.
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = uniform_weights(scores, mask) if uniform else scores.softmax(dim=-1)
            heads = F.dropout(weights, dropout_p, self.training) @ v
        else:
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        # heads: (batch, heads, queries, d_k)

        if head_mask is not None:
            heads = heads * head_mask.to(heads.dtype).view(1, -1, 1, 1)
        batch, _, n_queries, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(batch, n_queries, self.n_heads * self.d_k)
        qkv = {"q": q, "k": k, "v": v} if need_qkv else None
        return AttentionOutput(self.w_o(concat), weights if need_weights else None, qkv, (k, v))


class PositionwiseFeedForward(nn.Module):
    """Section 3.3: FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position separately."""

    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, return_hidden: bool = False):
        """-> output, or (output, the ReLU layer's activations (..., d_ff)) with return_hidden."""
        hidden = F.relu(self.w_1(x))
        output = self.w_2(self.dropout(hidden))
        return (output, hidden) if return_hidden else output


@dataclass
class SublayerTrace:
    """What one residual sub-layer did at every position, each (batch, positions, d_model): the residual stream
    it read, what it added to it, and its LayerNorm's input and output (the sub-layer's input in pre-norm, the
    sum x + Sublayer in post-norm). For the feed-forward sub-layer also its ReLU layer, (batch, positions, d_ff)."""

    stream: torch.Tensor
    update: torch.Tensor
    norm_input: torch.Tensor
    norm_output: torch.Tensor
    hidden: torch.Tensor | None = None


class SublayerConnection(nn.Module):
    """Section 3.1 / 5.4: the paper's post-norm residual LayerNorm(x + Dropout(Sublayer(x))), or, with
    norm_first, the pre-norm variant x + Dropout(Sublayer(LayerNorm(x))).

    Used in two steps so a layer can keep its attention weights: sublayer(connection.input(x)), then
    connection(x, sublayer_output)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool = False):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def input(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) if self.norm_first else x

    def forward(self, x: torch.Tensor, sublayer_output: torch.Tensor) -> torch.Tensor:
        x = x + self.dropout(sublayer_output)
        return x if self.norm_first else self.norm(x)

    def trace(self, x, sublayer_input, sublayer_output, result, hidden=None) -> SublayerTrace:
        """The record of one pass: x -> sublayer_input = input(x) -> sublayer_output -> result = self(x, ...)."""
        if self.norm_first:
            return SublayerTrace(x, sublayer_output, x, sublayer_input, hidden)
        return SublayerTrace(x, sublayer_output, x + sublayer_output, result, hidden)


def feed_forward_sublayer(connection: SublayerConnection, feed_forward: PositionwiseFeedForward, x: torch.Tensor):
    """The last sub-layer of every encoder and decoder layer. -> (output, its SublayerTrace: a record of tensors
    already computed, so keeping it costs nothing)"""
    h = connection.input(x)
    update, hidden = feed_forward(h, return_hidden=True)
    out = connection(x, update)
    return out, connection.trace(x, h, update, out, hidden)


@dataclass
class AttentionOptions:
    """What to ask of every attention layer of one kind: record weights/QKV, switch heads off, drop the scaling."""

    need_weights: bool = False
    need_qkv: bool = False
    head_mask: torch.Tensor | None = None  # (layers, heads) of 0/1 for this attention kind
    scale: bool = True
    uniform: bool = False  # every weight row uniform over the keys it may see (no attention: one fixed context)

    def for_layer(self, i: int) -> dict:
        return dict(
            need_weights=self.need_weights,
            need_qkv=self.need_qkv,
            head_mask=None if self.head_mask is None else self.head_mask[i],
            scale=self.scale,
            uniform=self.uniform,
        )


class EncoderLayer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.feed_forward = PositionwiseFeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.sublayer_attention = SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)
        self.sublayer_ffn = SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)

    def forward(self, x, src_mask, trace: bool = False, **attention_kwargs):
        """-> (output, self-attention, {"self_attention": SublayerTrace, "feed_forward": ...} if trace else None)"""
        h = self.sublayer_attention.input(x)
        attn = self.self_attention(h, h, src_mask, **attention_kwargs)
        y = self.sublayer_attention(x, attn.output)
        z, ffn_trace = feed_forward_sublayer(self.sublayer_ffn, self.feed_forward, y)
        traced = None
        if trace:
            traced = {"self_attention": self.sublayer_attention.trace(x, h, attn.output, y), "feed_forward": ffn_trace}
        return z, attn, traced


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        # a decoder-only layer has two sub-layers: masked self-attention and the FFN
        self.cross_attention = None if cfg.decoder_only else MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.feed_forward = PositionwiseFeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.sublayer_self = SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)
        self.sublayer_cross = None if cfg.decoder_only else SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)
        self.sublayer_ffn = SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first)

    def forward(
        self,
        y,
        memory,
        tgt_mask,
        src_mask,
        self_kwargs: dict,
        cross_kwargs: dict,
        past_kv: tuple | None = None,
        memory_kv: tuple | None = None,
        trace: bool = False,
    ):
        """past_kv, memory_kv: this layer's entries of a DecoderCache (incremental decoding), else None.
        -> (output, self-attention, cross-attention (None decoder-only), {sub-layer: SublayerTrace} if trace else
        None)"""
        h_self = self.sublayer_self.input(y)
        self_attn = self.self_attention(h_self, h_self, tgt_mask, past_kv=past_kv, **self_kwargs)
        y_self = self.sublayer_self(y, self_attn.output)
        traced = {"self_attention": self.sublayer_self.trace(y, h_self, self_attn.output, y_self)} if trace else None
        cross_attn, y_cross = None, y_self
        if self.cross_attention is not None:
            # Queries come from the decoder, keys and values from the encoder output ("memory").
            h_cross = self.sublayer_cross.input(y_self)
            cross_attn = self.cross_attention(h_cross, memory, src_mask, fixed_kv=memory_kv, **cross_kwargs)
            y_cross = self.sublayer_cross(y_self, cross_attn.output)
            if trace:
                traced["cross_attention"] = self.sublayer_cross.trace(y_self, h_cross, cross_attn.output, y_cross)
        out, ffn_trace = feed_forward_sublayer(self.sublayer_ffn, self.feed_forward, y_cross)
        if trace:
            traced["feed_forward"] = ffn_trace
        return out, self_attn, cross_attn, traced


@dataclass
class EncoderOutput:
    memory: torch.Tensor  # (batch, src, d_model)
    src_mask: torch.Tensor  # (batch, 1, 1, src)
    attention: torch.Tensor | None = None  # (batch, layers, heads, src, src)
    qkv: dict[str, torch.Tensor] | None = None  # each (batch, layers, heads, src, d_k)
    trace: list[dict[str, SublayerTrace]] | None = None  # per layer, with encode(trace=True)


@dataclass
class DecoderCache:
    """Incremental decoding: every decoder layer's self-attention keys and values for the positions decoded so
    far, and its cross-attention keys and values of the encoder output (the same at every step, so projected
    once). Each tensor is (batch, heads, positions, d_k). Never changed in place: decode returns a new one."""

    self_kv: list[tuple[torch.Tensor, torch.Tensor]]
    cross_kv: list[tuple[torch.Tensor, torch.Tensor]]

    @property
    def length(self) -> int:
        return self.self_kv[0][0].size(2) if self.self_kv else 0

    def select(self, rows: torch.Tensor) -> "DecoderCache":
        """The cache of these batch rows, in this order (the surviving hypotheses of a beam)."""
        pick = lambda kv: (kv[0].index_select(0, rows), kv[1].index_select(0, rows))  # noqa: E731
        return DecoderCache([pick(kv) for kv in self.self_kv], [pick(kv) for kv in self.cross_kv])


@dataclass
class DecoderOutput:
    logits: torch.Tensor  # (batch, tgt, tgt_vocab)
    self_attention: torch.Tensor | None = None  # (batch, layers, heads, tgt, tgt)
    cross_attention: torch.Tensor | None = None  # (batch, layers, heads, tgt, src)
    self_qkv: dict[str, torch.Tensor] | None = None  # each (batch, layers, heads, n, d_k)
    cross_qkv: dict[str, torch.Tensor] | None = None  # q: (batch, layers, heads, tgt, d_k); k, v: (..., src, d_k)
    cache: DecoderCache | None = None  # keys and values up to this pass's last position, to decode the next one
    trace: list[dict[str, SublayerTrace]] | None = None  # per layer, with decode(trace=True)


def _stack(per_layer: list[AttentionOutput], names=("q", "k", "v")) -> tuple[torch.Tensor | None, dict | None]:
    weights = None
    if not per_layer or per_layer[0] is None:  # no such attention (a decoder-only model's cross-attention)
        return None, None
    if per_layer[0].weights is not None:
        weights = torch.stack([a.weights for a in per_layer], dim=1)
    qkv = None
    if per_layer[0].qkv is not None:
        qkv = {name: torch.stack([a.qkv[name] for a in per_layer], dim=1) for name in names}
    return weights, qkv


class Transformer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        # a decoder-only model reads one sequence in one vocabulary: it has no source embedding
        self.src_embed = None if cfg.decoder_only else Embeddings(cfg.src_vocab_size, cfg.d_model)
        self.tgt_embed = Embeddings(cfg.tgt_vocab_size, cfg.d_model)
        self.positional = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_decoder_layers))
        # Pre-norm stacks end in a LayerNorm (their residual stream is never normalised otherwise).
        self.encoder_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self._init_weights()
        if cfg.share_source_target_embeddings and not cfg.decoder_only:
            self.tgt_embed.lookup.weight = self.src_embed.lookup.weight
        if cfg.tie_target_embeddings:
            self.generator.weight = self.tgt_embed.lookup.weight

    def _init_weights(self):
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        # Embeddings are multiplied by sqrt(d_model); a N(0, d_model^-1/2) start keeps them on the scale of the PE.
        for emb in (self.src_embed, self.tgt_embed):
            if emb is not None:
                nn.init.normal_(emb.lookup.weight, mean=0.0, std=self.cfg.d_model**-0.5)

    def encode(
        self,
        src: torch.Tensor,
        options: AttentionOptions | None = None,
        positional: bool = True,
        trace: bool = False,
        embeddings: torch.Tensor | None = None,
    ) -> EncoderOutput:
        """src: (batch, src) ids ending in </s>, padded with pad_id. positional=False leaves the positional
        encoding out (only to show what it is for: the model was trained with it). trace=True records every
        sub-layer's residual stream, update and LayerNorm (EncoderOutput.trace). embeddings: (batch, src,
        d_model) to use instead of src's scaled embeddings (attribution by gradients: src still gives the mask)."""
        options = options or AttentionOptions()
        src_mask = padding_mask(src, self.cfg.pad_id)
        x = self.src_embed(src) if embeddings is None else embeddings
        x = self.positional(x) if positional else self.positional.dropout(x)
        per_layer, traces = [], []
        for i, layer in enumerate(self.encoder_layers):
            x, attn, traced = layer(x, src_mask, trace, **options.for_layer(i))
            per_layer.append(attn)
            traces.append(traced)
        weights, qkv = _stack(per_layer)
        return EncoderOutput(self.encoder_norm(x), src_mask, weights, qkv, traces if trace else None)

    def decode(
        self,
        tgt_in: torch.Tensor,
        encoded: EncoderOutput | None,
        self_options: AttentionOptions | None = None,
        cross_options: AttentionOptions | None = None,
        cache: DecoderCache | None = None,
        trace: bool = False,
        embeddings: torch.Tensor | None = None,
        logits_at: torch.Tensor | None = None,
    ) -> DecoderOutput:
        """tgt_in: (batch, tgt) decoder inputs, starting with <s>. Position t predicts token t+1. encoded: None for
        a decoder-only model, whose tgt_in holds the source, the separator and the target in one sequence.

        With a cache (DecoderCache([], []) to start), tgt_in holds only the positions after the cached ones
        (usually one), and the returned attention and queries ("q" only: the keys and values are in the returned
        cache; stacking them at every step would copy the whole prefix) cover those rows. The cached prefix must
        hold no padding. trace=True records every sub-layer (DecoderOutput.trace). embeddings: (batch, tgt,
        d_model) to use instead of tgt_in's scaled embeddings (tgt_in still gives the mask). logits_at: (batch,)
        one position per row to project onto the vocabulary (logits then (batch, 1, vocab)): attribution by
        gradients reads one step per row, and the output layer is the largest matrix of the model."""
        self_options = self_options or AttentionOptions()
        cross_options = cross_options or AttentionOptions()
        offset, n = (cache.length if cache else 0), tgt_in.size(1)
        if cache is None:
            # Decoder self-attention uses both masks: no future positions, no padding.
            tgt_mask = subsequent_mask(n, tgt_in.device) & padding_mask(tgt_in, self.cfg.pad_id)
        else:
            # New rows of the causal mask; one new position may see all earlier ones and itself: no mask at all.
            tgt_mask = subsequent_mask(offset + n, tgt_in.device)[:, :, offset:] if n > 1 else None
        y = self.positional(self.tgt_embed(tgt_in) if embeddings is None else embeddings, offset)
        self_layers, cross_layers, traces = [], [], []
        for i, layer in enumerate(self.decoder_layers):
            past_kv = cache.self_kv[i] if cache and cache.self_kv else None
            memory_kv = cache.cross_kv[i] if cache and cache.cross_kv else None
            y, self_attn, cross_attn, traced = layer(
                y,
                encoded.memory if encoded is not None else None,
                tgt_mask,
                encoded.src_mask if encoded is not None else None,
                self_options.for_layer(i),
                cross_options.for_layer(i),
                past_kv,
                memory_kv,
                trace,
            )
            self_layers.append(self_attn)
            cross_layers.append(cross_attn)
            traces.append(traced)
        names = ("q",) if cache is not None else ("q", "k", "v")
        self_weights, self_qkv = _stack(self_layers, names)
        cross_weights, cross_qkv = _stack(cross_layers, names)
        new_cache = DecoderCache([a.kv for a in self_layers], [a.kv for a in cross_layers if a is not None])
        if logits_at is not None:
            y = y[torch.arange(y.size(0)), logits_at][:, None]
        return DecoderOutput(
            self.generator(self.decoder_norm(y)),
            self_weights,
            cross_weights,
            self_qkv,
            cross_qkv,
            new_cache,
            traces if trace else None,
        )

    def forward(
        self,
        src: torch.Tensor,
        tgt_in: torch.Tensor,
        need_weights: bool = False,
        need_qkv: bool = False,
        head_mask: dict[str, torch.Tensor] | None = None,
    ) -> tuple[EncoderOutput, DecoderOutput]:
        """Teacher-forced pass. head_mask maps an attention kind ("encoder_self", "decoder_self", "cross") to a
        (layers, heads) 0/1 tensor; heads set to 0 have their output zeroed before W^O."""
        head_mask = head_mask or {}
        opts = {kind: AttentionOptions(need_weights, need_qkv, head_mask.get(kind)) for kind in ATTENTION_KINDS}
        encoded = self.encode(src, opts["encoder_self"])
        return encoded, self.decode(tgt_in, encoded, opts["decoder_self"], opts["cross"])


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
