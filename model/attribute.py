"""What flows, beside the attention weights: other accounts of which inputs an output depends on.

A raw attention weight α says how a head mixes the *value vectors* of its keys, not how much each key changes
the output. The methods here read the same teacher-forced pass of the model in other ways, one class per
method behind one interface (as inseq does), each tested on a property it must have:

- ``RawAttention``: α itself, per layer and head (what the maps show).
- ``NormWeighted`` (Kobayashi et al., 2020): ‖α_ij · f(x_j)‖, with f(x_j) = (x_j W_V + b_V) W_O the vector
  key j actually adds through that head. A key with a large weight but a tiny value vector moves nothing.
- ``ValueZeroing`` (Mohebbi et al., 2023): how far each query's layer output moves when key j's value vector
  is zeroed (in one head, or in all), counting the residual connection and the feed-forward layer.
- ``Rollout`` (Abnar & Zuidema, 2020): attention multiplied through the layers, each layer's mean over heads
  mixed half-and-half with the identity for the residual connection, so a row says how much of a position's
  stream came from each *input* piece rather than from the previous layer. Extended here to the decoder: the
  self-attention rows mix decoder inputs, the cross-attention rows bring in the encoder's rolled-out source.
- ``GradientTimesInput``: ∂ log p(piece) / ∂ embedding · embedding, summed over the features of each input piece.
- ``IntegratedGradients`` (Sundararajan et al., 2017): the same gradient averaged along the straight path from a
  baseline (all embeddings zero; positional encodings kept) to the input, times the input. Its attributions add
  up to log p(input) − log p(baseline) (completeness); the error of that sum is reported and the number of
  steps raised until it is at most 1 %.

Every method is one class behind one interface (`AttributionMethod`), in one registry (`METHODS`, in the order
the app offers them), and declares what it needs and what it gives: its granularity (a map per layer and head, the
layers up to one, or the whole model), the attention kinds it maps, whether its scores are signed, what it reads
(weights, value vectors, more forward passes, gradients) and what it costs. Callers branch on these declarations,
never on a method's name. All of them read one `PassRecord` of a teacher-forced pass; indices are 0-based here
(layer, head; head None for the layer's heads together), 1-based only where a person reads them. Every result is
returned, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .progress import Progress
from .teacher_forcing import Needs, PassRecord, inputs, record_pass, run_batch
from .transformer import ATTENTION_KINDS, Transformer

KINDS = ATTENTION_KINDS  # every kind a method may map


@dataclass
class HeadMaps:
    """A per-head method's maps for one sentence: kind -> (layers, heads, queries, keys); masked cells are 0.
    layer_maps: kind -> (layers, queries, keys), the whole layer's (for raw weights the mean over heads; for
    norms ‖Σ_h α_h f_h(x)‖, the norm of what all heads add together)."""

    method: str
    maps: dict[str, np.ndarray]
    layer_maps: dict[str, np.ndarray]


@dataclass
class StepAttribution:
    """A whole-model method's scores for each output step t (the decoder position that predicts target piece t):
    source (steps, source pieces) and target_prefix (steps, decoder inputs <s> + pieces before t; cells after
    step t are NaN: that input comes later). completeness_error: per step |Σ scores − Δ| / |Δ| (integrated
    gradients only)."""

    method: str
    source: np.ndarray
    target_prefix: np.ndarray
    completeness_error: np.ndarray | None = None
    steps_used: int | None = None
    extra: dict = field(default_factory=dict)


def output_projections(model: Transformer, kind: str) -> np.ndarray:
    """W_O of every layer of this attention kind, split per head: (layers, heads, d_k, d_model), so that head h
    adds v @ W[l, h] to the residual stream (plus the shared bias, which belongs to no key)."""
    layers = model.encoder_layers if kind == "encoder_self" else model.decoder_layers
    out = []
    for layer in layers:
        attn = layer.self_attention if kind != "cross" else layer.cross_attention
        w = attn.w_o.weight.detach().float().numpy()  # (d_model out, heads * d_k in)
        out.append(w.T.reshape(attn.n_heads, attn.d_k, -1))
    return np.stack(out)


class AttributionMethod:
    """One account of which inputs each output depends on. What a method declares (class attributes):

    granularity: "head" — a map per layer and head, and the layer's heads together (head None);
                 "layer" — through the layers up to the chosen one, heads together (the head does not apply);
                 "model" — one map for the whole model (layer and head do not apply).
    kinds: the attention kinds it gives a map for. signed: scores of either sign (else shares, ≥ 0).
    needs: what the record of the pass must hold (teacher_forcing.Needs: the weights; the value vectors too, or
           nothing where the method runs the model itself): methods that share a pass share one record.
    reruns: what it runs beyond that record: "forward passes" (layers again), "gradients" (backward passes).
    seconds: the whole result for a 20-word sentence on one core (benchmarks/method_costs.py, shipped en-zh,
             2026-12-02: 16 output pieces), the order of magnitude a caller plans with (compute ahead, on
             demand, or only when asked for); a view alone costs less where per_view says so.
    per_view: a view's map costs less computed on its own (view(), computed=None) than taken from compute().
    recorded: its maps are the attention the translation recorded while decoding (the views draw those arrays
              as they are; nothing to compute, no extra title or colour bar).

    And three ways to ask it, one interface for every method:
    compute(model, record, kinds) -> its whole result (HeadMaps or StepAttribution), for callers that reuse it;
    view(model, record, kind, layer, head, computed) -> (queries, keys) on the view's own axes;
    steps(model, record, layer, only_step) -> StepAttribution: per output step over (source, target prefix), or
    for one step only (a slow method then computes just that one).
    """

    name: str
    granularity: str = "head"
    kinds: tuple[str, ...] = KINDS
    signed: bool = False
    needs: Needs = Needs()
    reruns: frozenset[str] = frozenset()
    seconds: float = 0.0
    per_view: bool = False
    recorded: bool = False

    def compute(
        self, model: Transformer, p: PassRecord, kinds: tuple[str, ...] = KINDS, progress: Progress | None = None
    ):
        """kinds: the attention kinds wanted (a per-head method skips the others). progress: a method that takes
        long (seconds well over 1) reports to it between batches and stops when it says so; the others, done in
        about a second, ignore it."""
        raise NotImplementedError

    def view(
        self, model: Transformer, p: PassRecord, kind: str, layer: int, head: int | None, computed=None
    ) -> np.ndarray:
        """kind's map (queries, keys) at 0-based layer and head (None: the layer's heads together)."""
        maps = computed if computed is not None else self.compute(model, p)
        return maps.layer_maps[kind][layer] if head is None else maps.maps[kind][layer, head]

    def steps(
        self,
        model: Transformer,
        p: PassRecord,
        layer: int | None = None,
        only_step: int | None = None,
        head: int | None = None,
    ) -> StepAttribution:
        """Per output step: the cross-attention row over the source and the decoder self-attention row over the
        target prefix, of one decoder layer (0-based; default the last) and head (0-based; None: heads together;
        methods of another granularity ignore it)."""
        layer = model.cfg.n_decoder_layers - 1 if layer is None else layer
        maps = None if self.per_view else self.compute(model, p)
        cross, self_ = (self.view(model, p, kind, layer, head, maps) for kind in ("cross", "decoder_self"))
        return _only_step(StepAttribution(self.name, cross, _mask_future(self_)), only_step)


class RawAttention(AttributionMethod):
    """α itself: what the maps show. The record holds it; nothing is computed."""

    name = "attention"
    recorded = True

    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None) -> HeadMaps:
        return HeadMaps(self.name, {k: p.attention[k] for k in kinds}, {k: p.attention[k].mean(1) for k in kinds})


class NormWeighted(AttributionMethod):
    """‖α_ij f_h(x_j)‖ = α_ij ‖f_h(x_j)‖ per head; per layer ‖Σ_h α^h_ij f_h(x_j)‖. A view's rows are shares of
    their total (compute() keeps the norms themselves)."""

    name = "norm"
    needs = Needs(qkv=True)
    seconds, per_view = 0.02, True  # one view: 0.001 s

    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None) -> HeadMaps:
        maps, layer_maps = {}, {}
        for kind in kinds:
            w = p.attention[kind].astype(np.float64)  # (L, H, Q, K)
            f = np.einsum("lhkd,lhde->lhke", p.qkv[kind]["v"].astype(np.float64), output_projections(model, kind))
            maps[kind] = (w * np.linalg.norm(f, axis=-1)[:, :, None, :]).astype(np.float32)
            summed = np.einsum("lhqk,lhke->lqke", w, f)  # (L, Q, K, d_model): what the layer's heads add from key k
            layer_maps[kind] = np.linalg.norm(summed, axis=-1).astype(np.float32)
        return HeadMaps(self.name, maps, layer_maps)

    def view(self, model, p, kind, layer, head, computed=None) -> np.ndarray:
        """From one layer only, unless computed is given (compute() does every layer of every kind)."""
        if computed is not None:
            return _row_shares(super().view(model, p, kind, layer, head, computed), 1e-12)
        w = p.attention[kind][layer].astype(np.float64)  # (H, Q, K)
        f = np.einsum(
            "hkd,hde->hke", p.qkv[kind]["v"][layer].astype(np.float64), output_projections(model, kind)[layer]
        )
        if head is None:
            norms = np.linalg.norm(np.einsum("hqk,hke->qke", w, f), axis=-1)
        else:
            norms = w[head] * np.linalg.norm(f[head], axis=-1)[None, :]
        return _row_shares(norms.astype(np.float32), 1e-12)


class ValueZeroing(AttributionMethod):
    """Value zeroing (Mohebbi et al., 2023): set key j's value vector to zero in one attention layer (in one head,
    or in all heads for the layer's map), run the rest of that layer (residual, the later sub-layers, FFN) and
    measure how far each query's output moves: the cosine distance to the unchanged output, each row then
    scaled to sum to 1. Unlike the weights it counts what the value, the residual and the FFN make of the mix."""

    name = "value-zeroing"
    needs = Needs(attention=False)  # it runs the pass again, traced, and zeroes values there
    reruns = frozenset({"forward passes"})
    seconds, per_view = 1.0, True  # one view (a layer and head, or a layer): 0.02 s

    @torch.inference_mode()
    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None, per_head: bool = True) -> HeadMaps:
        """per_head=False: only the layers' maps (every key zeroed in all heads); the head maps are then zeros."""
        passes = self._passes(model, p)
        maps, layer_maps = {}, {}
        for kind in kinds:
            n_layers = model.cfg.n_layers(kind)
            results = [self._layer(model, passes, kind, i, per_head) for i in range(n_layers)]
            maps[kind] = np.stack([r[0] for r in results])
            layer_maps[kind] = np.stack([r[1] for r in results])
        return HeadMaps(self.name, maps, layer_maps)

    @torch.inference_mode()
    def view(self, model, p, kind, layer, head, computed=None) -> np.ndarray:
        """Unless computed is given: every head of the layer (head None) or one head zeroed, so only one zeroing
        per key is run, not one per key and head."""
        if computed is not None:
            return super().view(model, p, kind, layer, head, computed)
        run, n_heads, n_keys = self._runner(model, self._passes(model, p), kind, layer)
        masks = torch.ones(n_keys, n_heads, n_keys)
        for j in range(n_keys):
            if head is None:
                masks[j, :, j] = 0
            else:
                masks[j, head, j] = 0
        return _row_shares(self._distance(run, masks).numpy())

    def _runner(self, model, passes, kind, index):
        encoded, decoded, n_target = passes
        layers = model.encoder_layers if kind == "encoder_self" else model.decoder_layers
        traces = encoded.trace if kind == "encoder_self" else decoded.trace
        layer = layers[index]
        run = self._layer_runner(model, kind, layer, traces[index], encoded, n_target)
        return run, layer.self_attention.n_heads, run.n_keys

    @staticmethod
    def _distance(run, masks) -> torch.Tensor:
        """(queries, batch): cosine distance of each query's layer output with each row of masks applied."""
        base = run(None)  # (1, queries, d_model)
        out = run(masks)  # (batch, queries, d_model)
        distance = 1 - torch.nn.functional.cosine_similarity(out, base.expand_as(out), dim=-1)  # (batch, queries)
        # below 1e-6 is float32 rounding (a batched matmul sums in another order), not a change
        return torch.where(distance > 1e-6, distance, 0.0).T

    @staticmethod
    def _passes(model, p):
        passed = run_batch(model, [p.source_ids], [p.target_ids], Needs(attention=False, trace=True))
        return passed.encoded, passed.decoded, passed.decoder_input.size(1)

    def _layer(self, model, passes, kind, index, per_head: bool = True):
        run, n_heads, n_keys = self._runner(model, passes, kind, index)
        # every (head, key) zeroed once, then every key in all heads at once: one batch
        first = n_heads * n_keys if per_head else 0
        masks = torch.ones(first + n_keys, n_heads, n_keys)
        if per_head:
            for h in range(n_heads):
                for j in range(n_keys):
                    masks[h * n_keys + j, h, j] = 0
        for j in range(n_keys):
            masks[first + j, :, j] = 0
        distance = self._distance(run, masks)  # (queries, batch)
        whole = _row_shares(distance[:, first:].numpy())
        if not per_head:
            return np.zeros((n_heads,) + whole.shape, dtype=np.float32), whole
        heads = distance[:, :first].reshape(-1, n_heads, n_keys).permute(1, 0, 2)
        return _row_shares(heads.numpy()), whole

    @staticmethod
    def _layer_runner(model, kind, layer, trace, encoded, n_target):
        """A function of value masks (batch, heads, keys) -> the layer's output (batch, queries, d_model) with
        those values scaled (None: unchanged), everything else as in the pass."""
        from .transformer import feed_forward_sublayer, subsequent_mask

        if kind == "encoder_self":
            x = trace["self_attention"].stream
            h = layer.sublayer_attention.input(x)
            attn, mask, keys_from = layer.self_attention, encoded.src_mask, h
        elif kind == "decoder_self":
            x = trace["self_attention"].stream
            h = layer.sublayer_self.input(x)
            attn, mask, keys_from = layer.self_attention, subsequent_mask(n_target), h
        else:
            x = trace["cross_attention"].stream
            h = layer.sublayer_cross.input(x)
            attn, mask, keys_from = layer.cross_attention, encoded.src_mask, encoded.memory
        k = attn.split_heads(attn.w_k(keys_from))
        v = attn.split_heads(attn.w_v(keys_from))  # (1, heads, keys, d_k)

        def run(value_masks):
            b = 1 if value_masks is None else value_masks.size(0)
            vv = v if value_masks is None else v * value_masks[..., None]
            out = attn(
                h.expand(b, -1, -1), None, mask, fixed_kv=(k.expand(b, -1, -1, -1), vv.expand(b, -1, -1, -1))
            ).output
            if kind == "encoder_self":
                y = layer.sublayer_attention(x.expand(b, -1, -1), out)
                return feed_forward_sublayer(layer.sublayer_ffn, layer.feed_forward, y)[0]
            if kind == "decoder_self":
                y = layer.sublayer_self(x.expand(b, -1, -1), out)
                hc = layer.sublayer_cross.input(y)
                y = layer.sublayer_cross(
                    y, layer.cross_attention(hc, encoded.memory.expand(b, -1, -1), encoded.src_mask).output
                )
            else:
                y = layer.sublayer_cross(x.expand(b, -1, -1), out)
            return feed_forward_sublayer(layer.sublayer_ffn, layer.feed_forward, y)[0]

        run.n_keys = k.size(2)
        return run


def _row_shares(x: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Each row as shares of its total; a row whose total is below floor (nothing moved but rounding) is zero."""
    total = x.sum(-1, keepdims=True)
    return np.where(total > floor, x / np.maximum(total, floor), 0.0).astype(np.float32)


def residual_rollout(layer_means: np.ndarray) -> np.ndarray:
    """(layers, n, n) mean attention per layer -> (layers, n, n): row i of entry l is how much of position i's
    stream after layer l comes from each input position, with the residual counted as half (Â = ½A + ½I)."""
    n = layer_means.shape[-1]
    eye = np.eye(n)
    out, r = [], eye
    for a in layer_means.astype(np.float64):
        r = (0.5 * a + 0.5 * eye) @ r
        out.append(r)
    return np.stack(out).astype(np.float32)


class Rollout(AttributionMethod):
    """Through the encoder (source × source), and through the decoder: each output step's share from every
    decoder input (self-attention and the residual) and from every source piece (cross-attention, which reads the
    encoder's rolled-out output). Rows of (source, target_prefix) together sum to 1."""

    name = "rollout"
    granularity = "layer"
    seconds, per_view = 0.0005, True

    def encoder(self, p: PassRecord) -> np.ndarray:
        return residual_rollout(p.attention["encoder_self"].mean(1))

    def per_layer(self, p: PassRecord) -> tuple[np.ndarray, np.ndarray]:
        """-> (source (layers, steps, S), target_prefix (layers, steps, T)) after each decoder layer."""
        enc = self.encoder(p)[-1].astype(np.float64)
        self_mean = p.attention["decoder_self"].mean(1).astype(np.float64)
        cross_mean = p.attention["cross"].mean(1).astype(np.float64)
        t, s = cross_mean.shape[1:]
        dec, src = np.eye(t), np.zeros((t, s))
        src_out, dec_out = [], []
        for a_self, a_cross in zip(self_mean, cross_mean):
            mix = 0.5 * a_self + 0.5 * np.eye(t)
            dec, src = mix @ dec, mix @ src
            dec, src = 0.5 * dec, 0.5 * src + 0.5 * a_cross @ enc
            src_out.append(src)
            dec_out.append(dec)
        return np.stack(src_out).astype(np.float32), np.stack(dec_out).astype(np.float32)

    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None) -> StepAttribution:
        return self.steps(model, p)

    def steps(self, model, p, layer=None, only_step=None, head=None) -> StepAttribution:
        src, dec = self.per_layer(p)
        layer = -1 if layer is None else layer
        return _only_step(StepAttribution(self.name, src[layer], _mask_future(dec[layer])), only_step)

    def view(self, model, p, kind, layer, head=None, computed=None) -> np.ndarray:
        """Through the layers up to this one (0-based), heads averaged; the head does not apply."""
        if kind == "encoder_self":
            return self.encoder(p)[layer]
        source, prefix = self.per_layer(p)
        return source[layer] if kind == "cross" else prefix[layer]


def _only_step(result: StepAttribution, step: int | None) -> StepAttribution:
    """The row of one output step (as a one-row result), or every row (step None)."""
    if step is None:
        return result
    return StepAttribution(result.method, result.source[step : step + 1], result.target_prefix[step : step + 1])


def _mask_future(prefix: np.ndarray) -> np.ndarray:
    """(steps, decoder inputs) with NaN where row t would read an input after step t."""
    return _mask_future_rows(prefix, list(range(prefix.shape[0])))


def _log_probs_of(
    model: Transformer,
    src: torch.Tensor,
    tgt_in: torch.Tensor,
    src_emb: torch.Tensor,
    tgt_emb: torch.Tensor,
    steps: torch.Tensor,
    pieces: torch.Tensor,
) -> torch.Tensor:
    """Batch rows b: log p(pieces[b] | ...) at decoder position steps[b], from the given input embeddings."""
    encoded = model.encode(src, embeddings=src_emb)
    logits = model.decode(tgt_in, encoded, embeddings=tgt_emb, logits_at=steps).logits[:, 0]
    return logits.float().log_softmax(-1)[torch.arange(logits.size(0)), pieces]


def _embeddings(model: Transformer, p: PassRecord):
    src, tgt_in = inputs(p)
    with torch.no_grad():
        return src, tgt_in, model.src_embed(src).float(), model.tgt_embed(tgt_in).float()


class WholeModelGradients(AttributionMethod):
    """Gradient methods: one map per output step for the whole model; no encoder map (the encoder predicts
    nothing, so there is no log-probability to differentiate there)."""

    granularity = "model"
    kinds = ("decoder_self", "cross")
    signed = True
    needs = Needs(attention=False)
    reruns = frozenset({"forward passes", "gradients"})

    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None) -> StepAttribution:
        return self.steps(model, p)

    def view(self, model, p, kind, layer=None, head=None, computed=None) -> np.ndarray:
        if kind not in self.kinds:
            raise ValueError(f"{self.name} gives no {kind} map")
        steps = computed if computed is not None else self.compute(model, p)
        return steps.source if kind == "cross" else np.nan_to_num(steps.target_prefix)


class GradientTimesInput(WholeModelGradients):
    """∂ log p(piece) / ∂ embedding · embedding, summed over each input piece's features."""

    name = "gradient-x-input"
    seconds = 0.13

    def steps(self, model, p, layer=None, only_step=None, head=None) -> StepAttribution:
        src, tgt_in, src_emb, tgt_emb = _embeddings(model, p)
        t = len(p.target_ids)
        # One batch row per step, each its own copy of the inputs, so one backward pass gives every step's own
        # gradient. (Cutting the rows into chunks, each to its own prefix, was slower: the encoder then runs once
        # per chunk.)
        src_b, tgt_b = src.expand(t, -1), tgt_in.expand(t, -1)
        se = src_emb.expand(t, -1, -1).clone().requires_grad_(True)
        te = tgt_emb.expand(t, -1, -1).clone().requires_grad_(True)
        with torch.enable_grad():
            lp = _log_probs_of(model, src_b, tgt_b, se, te, torch.arange(t), torch.tensor(p.target_ids))
            g_src, g_tgt = torch.autograd.grad(lp.sum(), (se, te))
        source = (g_src * se).sum(-1).detach().numpy()
        prefix = (g_tgt * te).sum(-1).detach().numpy()
        return _only_step(StepAttribution(self.name, source, _mask_future(prefix)), only_step)


class IntegratedGradients(WholeModelGradients):
    """Baseline: every source and decoder-input embedding zero (the positional encodings stay). A midpoint sum over
    `steps` intervals of the path (placed where the log-probability changes, see _partition), doubled until every
    step's completeness error is ≤ tolerance (or max_steps is reached: the error is then reported as it is)."""

    name = "integrated-gradients"
    seconds = 60.0

    # 1,024: on the shipped en-zh model the last piece of "Tom chases Jerry." misses by 2.5, 4.0, 1.8, 1.1 % at
    # 64-512 intervals (a gradient that jumps where a ReLU or a softmax switches converges slowly and not
    # monotonically) and by 0.13 % at 1,024. Only the pieces still off go that far.
    # rows_per_batch 64: a 20-word sentence took 22.6 s on two cores against 31.3 s with 256 (2026-12-03), and a
    # batch is short enough to report progress and notice a cancel about every 0.3 s.
    def __init__(self, steps: int = 32, max_steps: int = 1024, tolerance: float = 0.01, rows_per_batch: int = 64):
        self.first_steps, self.max_steps, self.tolerance, self.rows_per_batch = (
            steps,
            max_steps,
            tolerance,
            rows_per_batch,
        )

    def compute(self, model: Transformer, p: PassRecord, kinds=KINDS, progress=None) -> StepAttribution:
        return self.steps(model, p, progress=progress)

    def steps(
        self,
        model: Transformer,
        p: PassRecord,
        layer: int | None = None,
        only_step: int | None = None,
        head: int | None = None,
        progress: Progress | None = None,
    ) -> StepAttribution:
        """progress: told the gradient evaluations done and planned so far (one per piece and interval), asked
        between batches whether to stop (then model.progress.Cancelled is raised)."""
        progress = progress or Progress()
        src, tgt_in, src_emb, tgt_emb = _embeddings(model, p)
        wanted = list(range(len(p.target_ids))) if only_step is None else [only_step]
        pieces = torch.tensor([p.target_ids[s] for s in wanted])
        with torch.no_grad():
            b = len(wanted)
            ends = _log_probs_of(
                model,
                src.expand(b, -1),
                tgt_in.expand(b, -1),
                src_emb.expand(b, -1, -1),
                tgt_emb.expand(b, -1, -1),
                torch.tensor(wanted),
                pieces,
            )
            starts = _log_probs_of(
                model,
                src.expand(b, -1),
                tgt_in.expand(b, -1),
                torch.zeros_like(src_emb).expand(b, -1, -1),
                torch.zeros_like(tgt_emb).expand(b, -1, -1),
                torch.tensor(wanted),
                pieces,
            )
        delta = (ends - starts).numpy().astype(np.float64)
        source = np.zeros((len(wanted), src_emb.size(1)))
        prefix = np.zeros((len(wanted), tgt_emb.size(1)))
        error = np.full(len(wanted), np.inf)
        used = np.zeros(len(wanted), dtype=int)
        n, todo = self.first_steps, list(range(len(wanted)))
        done = 0
        while todo:  # refine only the steps whose sum is still off
            rows = torch.tensor(todo)
            planned = done + len(todo) * n

            def report(rows_done: int, base=done, planned=planned) -> None:
                progress.report(base + rows_done, planned)
                progress.check()

            s_, p_ = self._integrate(
                model, src, tgt_in, src_emb, tgt_emb, [wanted[i] for i in todo], pieces[rows], n, report
            )
            done = planned
            source[todo], prefix[todo], used[todo] = s_, p_, n
            error[todo] = np.abs(s_.sum(1) + p_.sum(1) - delta[todo]) / np.maximum(np.abs(delta[todo]), 1e-6)
            todo = [i for i in todo if error[i] > self.tolerance]
            n *= 2
            if n > self.max_steps:
                break
        return StepAttribution(
            self.name,
            source.astype(np.float32),
            _mask_future_rows(prefix, wanted),
            error.astype(np.float32),
            int(used.max()),
            {"delta": delta, "steps": wanted, "steps_per_piece": used},
        )

    def _integrate(self, model, src, tgt_in, src_emb, tgt_emb, wanted, pieces, n, report=lambda rows_done: None):
        """report(rows done) after each batch of gradient evaluations (it may raise Cancelled)."""
        edges = self._partition(model, src, tgt_in, src_emb, tgt_emb, wanted, pieces, n, 2 * n + 1, report)
        mids = torch.tensor((edges[:, 1:] + edges[:, :-1]) / 2, dtype=torch.float32)
        widths = torch.tensor(np.diff(edges, axis=1), dtype=torch.float32)
        grad_src = torch.zeros(len(wanted), src_emb.size(1), src_emb.size(2))
        grad_tgt = torch.zeros(len(wanted), tgt_emb.size(1), tgt_emb.size(2))
        rows = [(w, a) for w in range(len(wanted)) for a in range(n)]
        for start in range(0, len(rows), self.rows_per_batch):
            chunk = rows[start : start + self.rows_per_batch]
            which = torch.tensor([w for w, _ in chunk])
            point = torch.tensor([a for _, a in chunk])
            scale = mids[which, point][:, None, None]
            se = (src_emb * scale).requires_grad_(True)
            te = (tgt_emb * scale).requires_grad_(True)
            with torch.enable_grad():
                lp = _log_probs_of(
                    model,
                    src.expand(len(chunk), -1),
                    tgt_in.expand(len(chunk), -1),
                    se,
                    te,
                    torch.tensor(wanted)[which],
                    pieces[which],
                )
                g_src, g_tgt = torch.autograd.grad(lp.sum(), (se, te))
            weight = widths[which, point][:, None, None]
            grad_src.index_add_(0, which, g_src * weight)
            grad_tgt.index_add_(0, which, g_tgt * weight)
            report(start + len(chunk))
        source = (grad_src * src_emb).sum(-1).numpy().astype(np.float64)
        prefix = (grad_tgt * tgt_emb).sum(-1).numpy().astype(np.float64)
        return source, prefix

    def _partition(
        self, model, src, tgt_in, src_emb, tgt_emb, wanted, pieces, n, probes: int = 65, report=lambda rows_done: None
    ):
        """Where to put the n intervals of each step's path. The log-probability along the path can jump within
        a few hundredths of α (a softmax switching over), and a sum over equal intervals misses the jump;
        so the path is first probed at `probes` equal points (forward passes only), and half of the intervals
        are spread evenly, half in proportion to how much the log-probability changes there. It is the same
        integral, summed over unequal intervals (midpoint rule)."""
        grid = np.linspace(0.0, 1.0, probes)
        rows = [(w, g) for w in range(len(wanted)) for g in range(probes)]
        values = np.zeros((len(wanted), probes))
        with torch.no_grad():
            for start in range(0, len(rows), self.rows_per_batch * 2):
                report(0)  # forward passes only, before the pass's gradients: none done yet (it may raise Cancelled)
                chunk = rows[start : start + self.rows_per_batch * 2]
                which = torch.tensor([w for w, _ in chunk])
                scale = torch.tensor(grid[[g for _, g in chunk]], dtype=torch.float32)[:, None, None]
                lp = _log_probs_of(
                    model,
                    src.expand(len(chunk), -1),
                    tgt_in.expand(len(chunk), -1),
                    src_emb * scale,
                    tgt_emb * scale,
                    torch.tensor(wanted)[which],
                    pieces[which],
                )
                for (w, g), v in zip(chunk, lp.numpy()):
                    values[w, g] = v
        change = np.abs(np.diff(values, axis=1))  # (steps, probes - 1)
        share = change / np.maximum(change.sum(1, keepdims=True), 1e-12)
        density = 0.5 / (probes - 1) + 0.5 * share  # mass of each probe interval, sums to 1
        cdf = np.concatenate([np.zeros((len(wanted), 1)), np.cumsum(density, 1)], 1)
        targets = np.linspace(0.0, 1.0, n + 1)
        return np.stack([np.interp(targets, c, grid) for c in cdf])


def _mask_future_rows(prefix: np.ndarray, steps: list[int]) -> np.ndarray:
    out = prefix.astype(np.float32).copy()
    for row, step in enumerate(steps):
        out[row, step + 1 :] = np.nan
    return out


# The registry, in the order the app offers them: the raw weights first (the default), then the accounts that
# add more of the model, then gradients.
METHODS: dict[str, AttributionMethod] = {
    m.name: m
    for m in (RawAttention(), NormWeighted(), ValueZeroing(), Rollout(), GradientTimesInput(), IntegratedGradients())
}
RAW = "attention"  # the weights as they are: what every map shows unless another method is chosen


def record_for(
    model: Transformer, source_ids: list[int], target_ids: list[int], methods, held: PassRecord | None = None
) -> PassRecord:
    """The record these methods read: `held` (the one a Translation made while decoding) when it holds all they
    declare they need, else one teacher-forced pass recording just that, shared by all of them."""
    needs = Needs(attention=False)
    for name in methods:
        needs = needs | METHODS[name].needs
    if held is not None and held.holds(needs):
        return held
    return record_pass(model, source_ids, target_ids, needs)


def main(argv=None):
    import argparse
    import json

    from .cli import check_output, fail, open_checkpoint, positive_int
    from .decode import translate

    p = argparse.ArgumentParser(
        description="Attribute each output piece of a translation to the source and the target prefix by one method."
    )
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("sentence")
    p.add_argument("--method", choices=sorted(METHODS), default="integrated-gradients")
    p.add_argument(
        "--layer", type=positive_int, default=None, help="per-layer methods: 1-based decoder layer (default: the last)"
    )
    p.add_argument(
        "--head", default="mean", help="per-head methods: 1-based head, or 'mean' (the layer's heads together)"
    )
    p.add_argument("--json", dest="json_out", type=Path, required=True)
    args = p.parse_args(argv)
    check_output(args.json_out)
    loaded = open_checkpoint(args.checkpoint)
    cfg = loaded.model.cfg
    if args.layer is not None and args.layer > cfg.n_decoder_layers:
        fail(f"--layer {args.layer}: the decoder has {cfg.n_decoder_layers} layers")
    if args.head != "mean" and not (args.head.isdigit() and 1 <= int(args.head) <= cfg.n_heads):
        fail(f"--head {args.head}: give 'mean' or a head from 1 to {cfg.n_heads}")
    tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, args.sentence, need_qkv=False)
    forced = record_for(loaded.model, tr.source_ids, tr.target_ids, [args.method], tr.record)
    layer = (args.layer or loaded.model.cfg.n_decoder_layers) - 1
    head = None if args.head == "mean" else int(args.head) - 1
    result = METHODS[args.method].steps(loaded.model, forced, layer, head=head)
    out = {
        "method": args.method,
        "source_pieces": tr.source_pieces,
        "target_pieces": tr.target_pieces,
        "decoder_inputs": tr.decoder_input_pieces,
        "steps": [],
    }
    for t, piece in enumerate(tr.target_pieces):
        step = {
            "piece": piece,
            "source": [float(x) for x in result.source[t]],
            "target_prefix": [float(x) for x in result.target_prefix[t][: t + 1]],
        }
        if result.completeness_error is not None:
            step["completeness_error"] = float(result.completeness_error[t])
        out["steps"].append(step)
    if result.steps_used:
        out["integration_steps"] = result.steps_used
    with open(args.json_out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    print(f"{args.method}: {len(out['steps'])} steps -> {args.json_out}")
    if result.completeness_error is not None:
        print(f"completeness error: max {result.completeness_error.max():.4f} with {result.steps_used} steps")


if __name__ == "__main__":
    main()
