"""Inside one layer: the residual stream, what each sub-layer adds to it, LayerNorm, the feed-forward ReLU layer,
and the output layer's distribution over the target vocabulary, recorded by one teacher-forced pass of the
model over a translation it produced (``teacher_forcing.record_pass`` with ``NEEDS``: values returned, not stored).

The numbers the lessons quote are computed here from those records, as plain numpy, so tests can check them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .teacher_forcing import Needs, PassRecord, SublayerRecord
from .transformer import Transformer

# Sub-layer names in the order they run, per stack.
SUBLAYERS = {
    "encoder": ("self_attention", "feed_forward"),
    "decoder": ("self_attention", "cross_attention", "feed_forward"),
}


# What these analyses read from the pass (teacher_forcing.record_pass): every sub-layer's trace and the output
# layer's log-probabilities.
NEEDS = Needs(attention=False, trace=True, log_probs=True)


def standardize(x: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm before its learned gain and bias: each position's features minus their mean, over their standard
    deviation. (x - mean) / sqrt(var + eps), over the last axis."""
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps)


def norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x.astype(np.float64), axis=-1)


@dataclass
class ResidualRow:
    """One sub-layer at one position."""

    layer: int  # 1-based
    sublayer: str
    stream_norm: float  # |x|, the residual stream entering the sub-layer
    update_norm: float  # |Sublayer(...)|, what it adds
    ratio: float  # update / stream
    input_mean: float  # LayerNorm's input, over the features of this position
    input_var: float
    standardized_mean: float  # after subtracting the mean and dividing by the standard deviation
    standardized_var: float
    output_mean: float  # after the learned gain and bias: what the model computed
    output_var: float


def residual_rows(records: list[dict[str, SublayerRecord]], position: int, eps: float) -> list[ResidualRow]:
    rows = []
    for layer, sublayers in enumerate(records, start=1):
        for name, r in sublayers.items():
            stream, update = norm(r.stream[position]), norm(r.update[position])
            z = standardize(r.norm_input[position], eps)
            rows.append(
                ResidualRow(
                    layer,
                    name,
                    float(stream),
                    float(update),
                    float(update / stream),
                    float(r.norm_input[position].mean()),
                    float(r.norm_input[position].var()),
                    float(z.mean()),
                    float(z.var()),
                    float(r.norm_output[position].mean()),
                    float(r.norm_output[position].var()),
                )
            )
    return rows


def relative_updates(records: list[dict[str, SublayerRecord]]) -> dict[str, np.ndarray]:
    """Sub-layer name -> (layers,) mean over positions of |update| / |stream|: how much each sub-layer changes
    the representation it reads."""
    names = records[0].keys()
    return {
        name: np.array([(norm(layer[name].update) / norm(layer[name].stream)).mean() for layer in records])
        for name in names
    }


def relu_zero_share(records: list[dict[str, SublayerRecord]]) -> np.ndarray:
    """(layers,) the share of the feed-forward ReLU layer's activations that are exactly 0, over all positions."""
    return np.array([float((layer["feed_forward"].hidden == 0).mean()) for layer in records])


def largest_step_difference(records: list[dict[str, SublayerRecord]], sublayer: str) -> float:
    """The largest difference, over every layer, feature and position, between what a sub-layer adds at a
    position and at position 0: 0 when it adds the same vector everywhere (one fixed context)."""
    return max(float(np.abs(layer[sublayer].update - layer[sublayer].update[0]).max()) for layer in records)


# --- Logit lens: what each decoder layer would predict if it were the last -----------------------------------


@dataclass
class LogitLens:
    """For every decoder layer (rows) and decoding step (columns): the rank (1 = top) and probability of the
    piece the model finally wrote at that step, when that layer's output is read by the model's final
    LayerNorm and output layer; and each cell's three most probable pieces (ids)."""

    rank: np.ndarray  # (layers, steps) int
    log_probability: np.ndarray  # (layers, steps)
    top_ids: np.ndarray  # (layers, steps, 3)
    top_probabilities: np.ndarray  # (layers, steps, 3)

    @property
    def probability(self) -> np.ndarray:
        return np.exp(self.log_probability)

    def decided_at(self) -> list[int | None]:
        """Per step, the first layer (1-based) from which the written piece ranks first in every later layer;
        None if not even the last layer ranks it first (teacher forcing on a piece the model would not pick)."""
        out = []
        for column in self.rank.T:
            top = column == 1
            first = None
            for layer in range(len(column) - 1, -1, -1):
                if not top[layer]:
                    break
                first = layer + 1
            out.append(first)
        return out


@torch.inference_mode()
def logit_lens(model: Transformer, passed: PassRecord, target_ids: list[int]) -> LogitLens:
    """From the record of one teacher-forced pass over a translation the model produced (record_pass with NEEDS;
    no pass of its own): each decoder layer's output goes through the final LayerNorm (pre-norm: the stack's last
    step) and the output layer. The last layer's row is exactly the model's own output distribution."""
    rows = []
    for layer in passed.decoder:
        ff = layer["feed_forward"]
        # the layer's output: pre-norm x + FFN(LN(x)); post-norm LN(x + FFN(x)), its LayerNorm's output
        out = ff.stream + ff.update if passed.norm_first else ff.norm_output
        rows.append(model.generator(model.decoder_norm(torch.from_numpy(out)[None]))[0].float().log_softmax(-1))
    log_probs = torch.stack(rows)  # (layers, steps, vocab)
    written = torch.tensor(target_ids)
    chosen = log_probs[:, torch.arange(len(target_ids)), written]  # (layers, steps)
    rank = (log_probs > chosen[..., None]).sum(-1) + 1
    top_p, top_i = log_probs.exp().topk(3, dim=-1)
    return LogitLens(rank.numpy(), chosen.numpy(), top_i.numpy(), top_p.numpy())
