"""One teacher-forced pass, and its record: the one place that builds the decoder's input from a known output.

Teacher forcing (the paper's training, and every probe here): the decoder reads the output it should write,
shifted right by one — <s>, then every output piece but the last — so position t computes exactly what it
computed when the model chose output piece t. Every analysis that runs the model over a known translation
(attribution, the inside view, faithfulness, what-if, the query–key sample, confidence, probing, head roles,
training's batches) goes through `run_batch`, and a single sentence's arrays come back as one `PassRecord`
(`record_pass`), the same record a decoded `Translation` holds.

Indices inside model/ are 0-based; outputs end in </s> when the translation finished (a reference cut at the
model's length does not).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .tokenizer import BOS_ID, PAD_ID
from .transformer import ATTENTION_KINDS, AttentionOptions, DecoderOutput, EncoderOutput, Transformer


def pad_batch(sequences: list[list[int]], pad_id: int = PAD_ID) -> torch.Tensor:
    width = max(len(s) for s in sequences)
    return torch.tensor([list(s) + [pad_id] * (width - len(s)) for s in sequences], dtype=torch.long)


def teacher_forced_input(output_ids: list[int]) -> list[int]:
    """The decoder's input for a known output: <s>, then every output piece but the last. Position t reads what
    was written before piece t, so it computes what it computed when the model chose piece t."""
    return [BOS_ID] + list(output_ids[:-1])


@dataclass(frozen=True)
class Needs:
    """What a pass records beyond the logits: attention weights, queries/keys/values, every sub-layer's trace
    (residual stream, update, LayerNorm), the log-probabilities of the output layer."""

    attention: bool = True
    qkv: bool = False
    trace: bool = False
    log_probs: bool = False

    def __or__(self, other: Needs) -> Needs:
        return Needs(*(a or b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[bool, ...]:
        return (self.attention, self.qkv, self.trace, self.log_probs)


@dataclass
class BatchPass:
    """One teacher-forced pass over a batch, as tensors (gradients kept where the caller asked for them)."""

    encoded: EncoderOutput
    decoded: DecoderOutput
    decoder_input: torch.Tensor  # (batch, T): <s> + each output but its last piece, padded
    outputs: torch.Tensor  # (batch, T): the piece each position predicts, PAD past a row's end

    def output_log_probs(self) -> torch.Tensor:
        """(batch, T) log p(output piece t | source, pieces before t); 0 where the row has ended."""
        log_probs = self.decoded.logits.float().log_softmax(-1).gather(-1, self.outputs[..., None])[..., 0]
        return log_probs * (self.outputs != PAD_ID)


def run_batch(
    model: Transformer,
    sources: list[list[int]],
    outputs: list[list[int]],
    needs: Needs = Needs(attention=False),
    head_mask: dict[str, torch.Tensor] | None = None,
    uniform_cross: bool = False,
    embeddings: tuple[torch.Tensor, torch.Tensor] | None = None,
    logits_at: torch.Tensor | None = None,
) -> BatchPass:
    """The model over sources (ids ending in </s>) with the decoder fed each output shifted right. head_mask:
    kind -> (layers, heads) gates (0 switches a head off; a tensor with gradients measures importance).
    uniform_cross: cross-attention spread evenly over the source (a what-if). embeddings: (source, decoder input)
    vectors in place of the scaled embeddings (attribution by gradients). logits_at: one position per row to
    project onto the vocabulary (as Transformer.decode)."""
    head_mask = head_mask or {}
    options = {
        kind: AttentionOptions(
            need_weights=needs.attention,
            need_qkv=needs.qkv,
            head_mask=head_mask.get(kind),
            uniform=uniform_cross and kind == "cross",
        )
        for kind in ATTENTION_KINDS
    }
    decoder_input = pad_batch([teacher_forced_input(o) for o in outputs])
    source_embeddings, target_embeddings = embeddings if embeddings is not None else (None, None)
    encoded = model.encode(pad_batch(sources), options["encoder_self"], trace=needs.trace, embeddings=source_embeddings)
    decoded = model.decode(
        decoder_input,
        encoded,
        options["decoder_self"],
        options["cross"],
        trace=needs.trace,
        embeddings=target_embeddings,
        logits_at=logits_at,
    )
    return BatchPass(encoded, decoded, decoder_input, pad_batch(outputs))


@dataclass
class SublayerRecord:
    """One sub-layer of one layer, for one sentence: (positions, d_model) arrays; hidden (positions, d_ff) for the
    feed-forward sub-layer. See transformer.SublayerTrace."""

    stream: np.ndarray
    update: np.ndarray
    norm_input: np.ndarray
    norm_output: np.ndarray
    hidden: np.ndarray | None = None


@dataclass
class PassRecord:
    """What one teacher-forced pass over (source_ids, target_ids) computed, as numpy: per attention kind the
    weights (layers, heads, queries, keys) and "q"/"k"/"v" (layers, heads, positions, d_k); per stack and layer
    each sub-layer's trace; the output layer's log-probabilities (output positions, vocab). What was not asked
    for (Needs) is empty. A decoded Translation holds the same record, made while it decoded (equal to this pass
    over its output: tests/model/test_decode.py)."""

    source_ids: list[int]
    target_ids: list[int]  # the output pieces (ending in </s> when the translation finished)
    attention: dict[str, np.ndarray] = field(default_factory=dict)
    qkv: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    encoder: list[dict[str, SublayerRecord]] = field(default_factory=list)
    decoder: list[dict[str, SublayerRecord]] = field(default_factory=list)
    log_probs: np.ndarray | None = None
    # with the trace, how to read it: pre-norm (LayerNorm before each sub-layer) or the paper's post-norm
    norm_first: bool | None = None
    layer_norm_eps: float | None = None

    def stack(self, name: str) -> list[dict[str, SublayerRecord]]:
        return self.encoder if name == "encoder" else self.decoder

    def holds(self, needs: Needs) -> bool:
        """Whether this record has everything `needs` asks for."""
        return not (
            (needs.attention and not self.attention)
            or (needs.qkv and not self.qkv)
            or (needs.trace and not self.encoder)
            or (needs.log_probs and self.log_probs is None)
        )


def _array(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().numpy().copy()


def _sublayers(trace, row: int = 0) -> list[dict[str, SublayerRecord]]:
    def numpy(t):
        return None if t is None else _array(t[row])

    return [
        {
            name: SublayerRecord(
                numpy(s.stream), numpy(s.update), numpy(s.norm_input), numpy(s.norm_output), numpy(s.hidden)
            )
            for name, s in layer.items()
        }
        for layer in trace
    ]


@torch.inference_mode()
def record_pass(
    model: Transformer,
    source_ids: list[int],
    target_ids: list[int],
    needs: Needs = Needs(),
    uniform_cross: bool = False,
) -> PassRecord:
    """One sentence's teacher-forced pass, recorded: the batched pass on a batch of one."""
    passed = run_batch(model, [list(source_ids)], [list(target_ids)], needs, uniform_cross=uniform_cross)
    encoded, decoded = passed.encoded, passed.decoded
    record = PassRecord(list(source_ids), list(target_ids))
    if needs.attention:
        record.attention = {
            "encoder_self": _array(encoded.attention[0]),
            "decoder_self": _array(decoded.self_attention[0]),
            "cross": _array(decoded.cross_attention[0]),
        }
    if needs.qkv:
        record.qkv = {
            kind: {name: _array(t[0]) for name, t in qkv.items()}
            for kind, qkv in (
                ("encoder_self", encoded.qkv),
                ("decoder_self", decoded.self_qkv),
                ("cross", decoded.cross_qkv),
            )
        }
    if needs.trace:
        record.encoder, record.decoder = _sublayers(encoded.trace), _sublayers(decoded.trace)
        norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
        record.norm_first, record.layer_norm_eps = model.cfg.norm_first, norms[0].eps if norms else 1e-5
    if needs.log_probs:
        record.log_probs = _array(decoded.logits[0].float().log_softmax(-1))
    return record


def inputs(record: PassRecord) -> tuple[torch.Tensor, torch.Tensor]:
    """(1, S) source ids and (1, T) decoder inputs of a record, to run its pass again in pieces (a layer with
    values zeroed, embeddings with gradients)."""
    return torch.tensor([record.source_ids]), torch.tensor([teacher_forced_input(record.target_ids)])
