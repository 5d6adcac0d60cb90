"""Greedy and beam-search decoding.

``translate`` returns one ``Translation``: the output, per-step probabilities and alternatives, and the three
attention tensors (plus per-head Q, K, V) *recorded during the decoding run that produced the output*. Each
decoding step feeds the decoder one new position and reuses the keys and values of the earlier ones (a
DecoderCache); the step's attention rows are kept, and a hypothesis' maps are its steps' rows stacked: row t is
exactly what produced piece t. (``incremental=False`` re-runs the decoder over the whole prefix at every step
instead, as the model was trained; a test checks both give the same maps.)

``greedy_batch`` is the plain, batched greedy decoder used for evaluation and validation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .teacher_forcing import Needs, PassRecord, pad_batch, run_batch
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID, WORD_BOUNDARY, Tokenizer, visible
from .transformer import AttentionOptions, DecoderCache, Transformer

TOP_K_ALTERNATIVES = 5


def max_output_length(model: Transformer, src_len: int) -> int:
    # Enough room for any sane translation, and never past the positional table.
    return min(model.cfg.max_len - 1, int(src_len * 2) + 10)


def head_masks_to_tensors(model: Transformer, ablate: dict[str, list[tuple[int, int]]] | None):
    """{"cross": [(layer, head), ...], ...} -> {"cross": (layers, heads) 0/1 tensor, ...}."""
    if not ablate:
        return {}
    cfg = model.cfg
    masks = {}
    for kind, heads in ablate.items():
        mask = torch.ones(cfg.n_layers(kind), cfg.n_heads)
        for layer, head in heads:
            mask[layer, head] = 0.0
        masks[kind] = mask
    return masks


@torch.inference_mode()
def greedy_batch(
    model: Transformer, sources: list[list[int]], max_len: int | None = None, head_mask: dict | None = None
) -> list[list[int]]:
    """Source id lists (ending in </s>) -> output id lists (without <s>/</s>). head_mask as in Transformer.forward."""
    written = greedy_batch_tokens(model, sources, max_len, head_mask)
    return [tokens[:-1] if tokens[-1:] == [EOS_ID] else [t for t in tokens if t != PAD_ID] for tokens in written]


@torch.inference_mode()
def greedy_batch_tokens(
    model: Transformer,
    sources: list[list[int]],
    max_len: int | None = None,
    head_mask: dict | None = None,
    positional: bool = True,
    scale: bool = True,
) -> list[list[int]]:
    """Every id each sentence's greedy decoder wrote, as one greedy translation's target_ids: ending in </s> when
    it finished, cut at the length limit when not. positional=False leaves the positional encoding out of the
    encoder, scale=False the 1/sqrt(d_k) out of every attention: for models trained so (model.toy)."""
    head_mask = head_mask or {}
    src = pad_batch(sources)
    encoded = model.encode(src, AttentionOptions(head_mask=head_mask.get("encoder_self"), scale=scale), positional)
    self_opts = AttentionOptions(head_mask=head_mask.get("decoder_self"), scale=scale)
    cross_opts = AttentionOptions(head_mask=head_mask.get("cross"), scale=scale)
    # Each sentence gets the length limit it would get alone, so batching never changes a translation.
    limits = torch.tensor([max_len or max_output_length(model, len(s)) for s in sources])
    ys = torch.full((len(sources), 1), BOS_ID, dtype=torch.long)
    finished = torch.zeros(len(sources), dtype=torch.bool)
    lengths = limits.clone()  # ids written by each sentence, </s> included
    cache = DecoderCache([], [])
    for step in range(int(limits.max())):
        # A finished row goes on being fed padding; what it computes is never read.
        decoded = model.decode(ys[:, -1:], encoded, self_opts, cross_opts, cache)
        cache = decoded.cache
        next_token = decoded.logits[:, -1].argmax(-1).masked_fill(finished, PAD_ID)
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        ends = ~finished & ((next_token == EOS_ID) | (limits <= step + 1))
        lengths[ends] = step + 1
        finished |= ends
        if finished.all():
            break
    return [row[:n] for row, n in zip(ys[:, 1:].tolist(), lengths.tolist())]


@dataclass
class Hypothesis:
    tokens: list[int]  # output ids, ending in </s> when finished
    log_prob: float
    token_log_probs: list[float]
    alternatives: list[list[tuple[int, float]]]  # per step: top-k (id, probability)
    finished: bool = False
    record: dict | None = None  # attention/QKV of the passes that produced this hypothesis' pieces
    steps: list = field(default_factory=list)  # incremental decoding: (_StepRows, this hypothesis' row) per step

    def score(self, length_penalty: float) -> float:
        # GNMT length penalty (Wu et al., 2016): lp = ((5 + |Y|) / 6) ^ alpha; alpha = 0 is the raw log-probability.
        return self.log_prob / (((5 + len(self.tokens)) / 6) ** length_penalty)


@dataclass
class _StepRows:
    """The attention rows and queries one incremental decoder step computed, for every live hypothesis
    (batched): (beams, layers, heads, 1, keys) and (beams, layers, heads, 1, d_k)."""

    self_attention: torch.Tensor
    cross_attention: torch.Tensor
    self_q: torch.Tensor | None
    cross_q: torch.Tensor | None

    @classmethod
    def of(cls, decoded) -> "_StepRows":
        qkv = decoded.self_qkv is not None
        return cls(
            decoded.self_attention,
            decoded.cross_attention,
            decoded.self_qkv["q"] if qkv else None,
            decoded.cross_qkv["q"] if qkv else None,
        )


def _assemble_record(
    steps: list[tuple[_StepRows, int]], cache: DecoderCache, index: int, source_length: int | None = None
) -> dict:
    """One hypothesis' attention and QKV, stacked from the rows of its steps: row t of the decoder
    self-attention is the step-t row (t + 1 keys), zero beyond it, as the causal mask makes it in a full pass.
    Keys and values come from the cache after the last step (row `index`). In a batch of sentences the cache
    runs on past a sentence that has finished and the sources are padded: its own steps and source_length keys
    are kept (the padding keys' weights are exactly zero)."""
    first = steps[0][0].self_attention
    n_layers, n_heads, n = first.size(1), first.size(2), len(steps)
    keys = slice(0, source_length)
    self_attention = first.new_zeros(n_layers, n_heads, n, n)
    for t, (rows, row) in enumerate(steps):
        self_attention[:, :, t, : t + 1] = rows.self_attention[row, :, :, 0]
    rec = {
        "decoder_self": self_attention,
        "cross": torch.cat([rows.cross_attention[row, ..., keys] for rows, row in steps], dim=2),
    }
    if steps[0][0].self_q is not None:
        # (layers, heads, positions, d_k) of the cache's row `index`
        stack = lambda pairs, i, cut: torch.stack([kv[i][index, :, cut] for kv in pairs])  # noqa: E731
        rec["decoder_self_qkv"] = {
            "q": torch.cat([rows.self_q[row] for rows, row in steps], dim=2),
            "k": stack(cache.self_kv, 0, slice(0, n)),
            "v": stack(cache.self_kv, 1, slice(0, n)),
        }
        rec["cross_qkv"] = {
            "q": torch.cat([rows.cross_q[row] for rows, row in steps], dim=2),
            "k": stack(cache.cross_kv, 0, keys),
            "v": stack(cache.cross_kv, 1, keys),
        }
    return rec


def _slice_record(decoded, index: int) -> dict:
    """Take one hypothesis' attention and QKV out of a batched decoder pass."""
    rec = {
        "decoder_self": decoded.self_attention[index],
        "cross": decoded.cross_attention[index],
    }
    if decoded.self_qkv is not None:
        rec["decoder_self_qkv"] = {n: t[index] for n, t in decoded.self_qkv.items()}
        rec["cross_qkv"] = {n: t[index] for n, t in decoded.cross_qkv.items()}
    return rec


def _only_forced(totals: torch.Tensor, piece: int | None) -> torch.Tensor:
    """At a forced step only the forced piece may follow, from every hypothesis."""
    if piece is None:
        return totals
    allowed = torch.full_like(totals, -math.inf)
    allowed[:, piece] = totals[:, piece]
    return allowed


def _candidates(
    totals: torch.Tensor, log_probs: torch.Tensor, top: tuple, alive: list, beam_size: int, step_rows
) -> list[tuple[int, Hypothesis]]:
    """The best continuations of the live hypotheses, best first, as (parent beam, child): 2 × beam_size of them,
    an end counted only where it ranks among the best beam_size, none past a forced piece's candidates."""
    top_p, top_i = top
    cand_scores, cand_flat = totals.view(-1).topk(min(2 * beam_size, totals.numel()))
    vocab = log_probs.size(1)
    out = []
    for rank, (total, flat) in enumerate(zip(cand_scores.tolist(), cand_flat.tolist())):
        beam, token = divmod(flat, vocab)
        if total == -math.inf:
            break  # past the forced piece's candidates
        if token == EOS_ID and rank >= beam_size:
            continue  # an end only counts when it ranks among the best beam_size continuations
        parent = alive[beam]
        child = Hypothesis(
            parent.tokens + [token],
            total,
            parent.token_log_probs + [log_probs[beam, token].item()],
            parent.alternatives + [list(zip(top_i[beam].tolist(), top_p[beam].tolist()))],
            steps=parent.steps + [(step_rows, beam)] if step_rows is not None else [],
        )
        out.append((beam, child))
    return out


@torch.inference_mode()
def beam_search(
    model: Transformer,
    source: list[int],
    beam_size: int = 4,
    length_penalty: float = 0.6,
    max_len: int | None = None,
    record: bool = False,
    need_qkv: bool = False,
    head_mask: dict[str, torch.Tensor] | None = None,
    encoded=None,
    incremental: bool = True,
    uniform_cross: bool = False,
    forced: dict[int, int] | None = None,
) -> list[Hypothesis]:
    """Beam search for one source sentence. With beam_size=1 this is exactly greedy decoding.

    Returns the finished hypotheses, best first. With record=True each carries the attention of the decoder
    passes that produced it. incremental=False runs the decoder over the whole prefix at every step (no cache):
    slower, the same result; the pass that produced the last piece then holds every earlier step's rows.
    uniform_cross=True gives every cross-attention row equal weights (no attention: one fixed context).
    forced: {step: token id}: at those steps every hypothesis takes that piece, whatever the model prefers (what
    if it had written 追 here?); the other steps decode as usual. Probabilities and alternatives stay the model's.
    """
    forced = forced or {}
    head_mask = head_mask or {}
    if encoded is None:
        encoded = model.encode(torch.tensor([source]), AttentionOptions(head_mask=head_mask.get("encoder_self")))
    self_opts = AttentionOptions(need_weights=record, need_qkv=need_qkv, head_mask=head_mask.get("decoder_self"))
    cross_opts = AttentionOptions(
        need_weights=record, need_qkv=need_qkv, head_mask=head_mask.get("cross"), uniform=uniform_cross
    )
    limit = max_len or max_output_length(model, len(source))

    alive = [Hypothesis([], 0.0, [], [])]
    finished: list[Hypothesis] = []
    cache = DecoderCache([], []) if incremental else None

    def keep_record(child: Hypothesis, decoded, row: int) -> None:
        if record:
            child.record = (
                _assemble_record(child.steps, decoded.cache, row) if incremental else _slice_record(decoded, row)
            )
            child.steps = []

    for _ in range(limit):
        n, step = len(alive), len(alive[0].tokens)
        # with the cache, each hypothesis' newest piece; without, its whole prefix
        ys = torch.tensor(
            [[h.tokens[-1] if h.tokens else BOS_ID] if incremental else [BOS_ID] + h.tokens for h in alive]
        )
        memory = type(encoded)(encoded.memory.expand(n, -1, -1), encoded.src_mask.expand(n, -1, -1, -1))
        decoded = model.decode(ys, memory, self_opts, cross_opts, cache)
        step_rows = _StepRows.of(decoded) if record and incremental else None
        log_probs = decoded.logits[:, -1].float().log_softmax(-1)  # (beams, vocab)
        top_p, top_i = log_probs.exp().topk(TOP_K_ALTERNATIVES, dim=-1)

        totals = _only_forced(torch.tensor([h.log_prob for h in alive])[:, None] + log_probs, forced.get(step))
        next_alive, parents = [], []
        for beam, child in _candidates(totals, log_probs, (top_p, top_i), alive, beam_size, step_rows):
            if child.tokens[-1] == EOS_ID:
                child.finished = True
                keep_record(child, decoded, beam)
                finished.append(child)
            elif len(next_alive) < beam_size:
                next_alive.append(child)
                parents.append(beam)
            if len(next_alive) == beam_size:
                break
        if len(finished) >= beam_size or not next_alive:
            break
        alive = next_alive
        if incremental:
            cache = decoded.cache.select(torch.tensor(parents))
        elif record:
            for child, beam in zip(alive, parents):
                keep_record(child, decoded, beam)
    else:
        # Ran out of length: keep what we have, marked unfinished.
        for child, beam in zip(alive, parents):
            keep_record(child, decoded, beam)
        finished.extend(alive)
    if not finished:
        finished = alive
    return sorted(finished, key=lambda h: h.score(length_penalty), reverse=True)


@dataclass
class Translation:
    """Everything the app shows for one sentence, from one decoding run. Arrays are numpy, float32.

    Query/key axes: the encoder's are the source pieces (ending in </s>); the decoder's are its *inputs*,
    <s> followed by the output pieces except the last; decoder position t predicts output piece t.
    """

    source_text: str
    source_pieces: list[str]
    source_ids: list[int]
    target_text: str
    target_pieces: list[str]  # output pieces, ending in </s> when decoding finished
    target_ids: list[int]
    token_probs: list[float]  # probability the model gave each output piece when it chose it
    alternatives: list[list[tuple[str, float]]]  # per output piece: the top-k pieces and their probabilities
    # What the pass that wrote it computed: attention per kind (layers, heads, queries, keys), and Q/K/V per kind
    # (layers, heads, positions, d_k) when asked for; recorded while decoding, equal to a teacher-forced pass.
    record: PassRecord
    method: str = "greedy"
    beam_size: int = 1
    log_prob: float = 0.0
    truncated: bool = False  # the source was longer than the model's limit and was cut
    finished: bool = True  # False when decoding hit the length limit before </s>
    reference_truncated: bool = False  # teacher forcing: the reference was longer than the model reads, and cut
    forced: list[list[int]] = field(default_factory=list)  # what-if decoding: [step, piece id] pairs it had to take

    @property
    def decoder_input_pieces(self) -> list[str]:
        return ["<s>"] + self.target_pieces[:-1]

    @property
    def unknown_source_pieces(self) -> list[str]:
        """The source characters the tokenizer did not know (shown as "<unk:x>" pieces)."""
        return _unknown_characters(self.source_pieces, self.source_ids)

    @property
    def teacher_forced(self) -> bool:
        return self.method == "teacher forcing"

    @property
    def unknown_reference(self) -> list[str]:
        """Teacher forcing: the reference characters the target vocabulary has no piece for."""
        return _unknown_characters(self.target_pieces, self.target_ids) if self.teacher_forced else []

    def attention(self, kind: str) -> np.ndarray:
        """(layers, heads, queries, keys) of an attention kind."""
        return self.record.attention[kind]

    def axis_pieces(self, kind: str) -> tuple[list[str], list[str]]:
        """(query pieces, key pieces) for an attention kind."""
        if kind == "encoder_self":
            return self.source_pieces, self.source_pieces
        if kind == "decoder_self":
            return self.decoder_input_pieces, self.decoder_input_pieces
        return self.decoder_input_pieces, self.source_pieces


def _unknown_characters(pieces: list[str], ids: list[int]) -> list[str]:
    """The text of each unknown piece, which display_pieces labels "<unk:x>"."""
    return [p[len("<unk:") : -1] for p, i in zip(pieces, ids) if i == UNK_ID and p.startswith("<unk:")]


def display_pieces(tokenizer: Tokenizer, text: str) -> tuple[list[int], list[str]]:
    """Ids and the pieces to show: an unknown character is "<unk:x>", an invisible one "<U+XXXX>"."""
    ids, pieces = tokenizer.encode_with_pieces(text)
    return ids, [f"<unk:{visible(p)}>" if i == UNK_ID else visible(p) for i, p in zip(ids, pieces)]


def encode_source(tokenizer: Tokenizer, text: str, max_len: int) -> tuple[list[int], list[str], bool]:
    """Source ids and pieces ending in </s>, cut to max_len positions (truncated=True when cut). A character the
    tokenizer does not know becomes the unknown id, shown as "<unk:x>" so the reader sees both facts."""
    ids, pieces = display_pieces(tokenizer, text)
    truncated = len(ids) + 1 > max_len
    if truncated:
        ids, pieces = ids[: max_len - 1], pieces[: max_len - 1]
    return ids + [EOS_ID], pieces + ["</s>"], truncated


def _numpy(t: torch.Tensor) -> np.ndarray:
    # A copy, so the array owns exactly its own bytes: a view would keep alive the whole batched tensor it was
    # sliced from (every beam's record), several times its size. Read-only: one Translation is shared by every
    # browser session that asks for the same sentence.
    array = t.detach().float().cpu().numpy().copy()
    array.setflags(write=False)
    return array


@dataclass
class _EncoderRecord:
    """The encoder's attention and Q/K/V as numpy arrays, made once per source and shared (not copied) by every
    hypothesis of a beam: they all read the same encoder output."""

    attention: np.ndarray
    qkv: dict[str, np.ndarray]

    @classmethod
    def of(cls, encoded, need_qkv: bool, row: int = 0, length: int | None = None) -> "_EncoderRecord":
        """Row `row` of a batch, its first `length` positions (a padded batch's shorter source)."""
        cut = slice(0, length)
        return cls(
            _numpy(encoded.attention[row, :, :, cut, cut]),
            {n: _numpy(t[row, :, :, cut]) for n, t in encoded.qkv.items()} if need_qkv else {},
        )


def _translation(
    text: str,
    source: tuple[list[int], list[str], bool],
    target_tokenizer: Tokenizer,
    hypothesis: Hypothesis,
    encoder: _EncoderRecord,
    need_qkv: bool,
    method: str,
    beam_size: int,
    output_pieces: list[str] | None = None,
    reference_truncated: bool = False,
) -> Translation:
    source_ids, source_pieces, truncated = source
    rec = hypothesis.record
    output_ids = [t for t in hypothesis.tokens if t != EOS_ID]
    qkv = {}
    if need_qkv:
        qkv["encoder_self"] = encoder.qkv
        qkv["decoder_self"] = {n: _numpy(t) for n, t in rec["decoder_self_qkv"].items()}
        qkv["cross"] = {n: _numpy(t) for n, t in rec["cross_qkv"].items()}
    return Translation(
        source_text=text,
        source_pieces=source_pieces,
        source_ids=source_ids,
        target_text=target_tokenizer.decode(output_ids),
        target_pieces=(output_pieces or [visible(p) for p in target_tokenizer.pieces(output_ids)])
        + (["</s>"] if hypothesis.finished else []),
        target_ids=hypothesis.tokens,
        token_probs=[math.exp(lp) for lp in hypothesis.token_log_probs],
        alternatives=[[(visible(target_tokenizer.piece(i)), p) for i, p in alts] for alts in hypothesis.alternatives],
        record=PassRecord(
            list(source_ids),
            list(hypothesis.tokens),
            {
                "encoder_self": encoder.attention,
                "decoder_self": _numpy(rec["decoder_self"]),
                "cross": _numpy(rec["cross"]),
            },
            qkv,
        ),
        method=method,
        beam_size=beam_size,
        log_prob=hypothesis.log_prob,
        truncated=truncated,
        finished=hypothesis.finished,
        reference_truncated=reference_truncated,
    )


def _source_for_display(model, source_tokenizer, text) -> tuple[list[int], list[str], bool]:
    if not text or not text.strip():
        raise ValueError("the sentence is empty")
    return encode_source(source_tokenizer, text.strip(), model.cfg.max_len)


def _encode_for_display(model, source_tokenizer, text, need_qkv, head_mask):
    source = _source_for_display(model, source_tokenizer, text)
    encoded = model.encode(
        torch.tensor([source[0]]),
        AttentionOptions(need_weights=True, need_qkv=need_qkv, head_mask=head_mask.get("encoder_self")),
    )
    return source, encoded


@torch.inference_mode()
def translate_hypotheses(
    model: Transformer,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    text: str,
    beam_size: int = 1,
    length_penalty: float = 0.6,
    need_qkv: bool = True,
    ablate: dict[str, list[tuple[int, int]]] | None = None,
    uniform_cross: bool = False,
    forced: dict[int, int] | None = None,
) -> list[Translation]:
    """Every finished hypothesis of a beam search (one for greedy), best first, each with the attention of the
    run that produced it. ablate: {"cross": [(layer, head), ...], ...} switches those heads off (0-based);
    uniform_cross=True replaces every cross-attention row by equal weights over the source; forced: {step: id}
    makes the decoder take those pieces at those steps and decode on from there (beam_search)."""
    head_mask = head_masks_to_tensors(model, ablate)
    source, encoded = _encode_for_display(model, source_tokenizer, text, need_qkv, head_mask)
    hypotheses = beam_search(
        model,
        source[0],
        beam_size,
        length_penalty,
        record=True,
        need_qkv=need_qkv,
        head_mask=head_mask,
        encoded=encoded,
        uniform_cross=uniform_cross,
        forced=forced,
    )
    method = "greedy" if beam_size == 1 else "beam"
    encoder = _EncoderRecord.of(encoded, need_qkv)
    translations = [
        _translation(text, source, target_tokenizer, h, encoder, need_qkv, method, beam_size) for h in hypotheses
    ]
    for tr in translations:
        tr.forced = [[step, token] for step, token in sorted((forced or {}).items()) if step < len(tr.target_ids)]
    return translations


@torch.inference_mode()
def translate_batch(
    model: Transformer,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    texts: list[str],
    need_qkv: bool = True,
) -> list[Translation]:
    """Greedy translations of several sentences decoded together in one padded batch, each with the attention
    and Q/K/V of its own rows: what translate(text) gives for each, computed once for a class that types at the
    same moment (30 sentences of 3-14 words on the shipped en-zh: 0.84 s in one batch, 2.54 s one after another on
    one core). The bookkeeping is beam_search's with one hypothesis; a sentence's rows differ from a lone run's
    only by float rounding (other matrix shapes), and each sentence keeps the length limit it would get alone."""
    sources = []
    for text in texts:
        if not text or not text.strip():
            raise ValueError("the sentence is empty")
        sources.append(encode_source(source_tokenizer, text.strip(), model.cfg.max_len))
    options = AttentionOptions(need_weights=True, need_qkv=need_qkv)
    encoded = model.encode(pad_batch([ids for ids, _, _ in sources]), options)
    limits = [max_output_length(model, len(ids)) for ids, _, _ in sources]
    hypotheses = [Hypothesis([], 0.0, [], []) for _ in sources]
    live = list(range(len(sources)))  # sentences still decoding
    ys = torch.full((len(sources), 1), BOS_ID, dtype=torch.long)
    cache = DecoderCache([], [])
    for step in range(max(limits)):
        # A finished sentence goes on being fed padding (its row is never read again), as in greedy_batch_tokens.
        decoded = model.decode(ys, encoded, options, options, cache)
        cache = decoded.cache
        rows = _StepRows.of(decoded)
        log_probs = decoded.logits[:, -1].float().log_softmax(-1)  # (sentences, vocab)
        top_p, top_i = log_probs.exp().topk(TOP_K_ALTERNATIVES, dim=-1)
        next_ids = torch.full((len(sources),), PAD_ID, dtype=torch.long)
        for b in list(live):
            h = hypotheses[b]
            # the same arithmetic as beam_search's with one hypothesis: its total, then the best continuation
            totals = torch.tensor([h.log_prob])[:, None] + log_probs[b : b + 1]
            score, token = (v[0].item() for v in totals.view(-1).topk(min(2, totals.numel())))
            h.tokens.append(token)
            h.log_prob = score
            h.token_log_probs.append(log_probs[b, token].item())
            h.alternatives.append(list(zip(top_i[b].tolist(), top_p[b].tolist())))
            h.steps.append((rows, b))
            next_ids[b] = token
            if token == EOS_ID or len(h.tokens) >= limits[b]:
                h.finished = token == EOS_ID
                h.record = _assemble_record(h.steps, cache, b, len(sources[b][0]))
                h.steps = []
                live.remove(b)
        if not live:
            break
        ys = next_ids[:, None]
    translations = []
    for b, (text, source, h) in enumerate(zip(texts, sources, hypotheses)):
        encoder = _EncoderRecord.of(encoded, need_qkv, b, len(source[0]))
        tr = _translation(text, source, target_tokenizer, h, encoder, need_qkv, "greedy", 1)
        tr.forced = []
        translations.append(tr)
    return translations


def translate(
    model,
    source_tokenizer,
    target_tokenizer,
    text,
    beam_size=1,
    length_penalty=0.6,
    need_qkv=True,
    ablate=None,
    uniform_cross=False,
    forced=None,
) -> Translation:
    """Translate one sentence (the best hypothesis), recording every attention map of the run that produced it."""
    return translate_hypotheses(
        model,
        source_tokenizer,
        target_tokenizer,
        text,
        beam_size,
        length_penalty,
        need_qkv,
        ablate,
        uniform_cross,
        forced,
    )[0]


def forced_piece_ids(target_tokenizer: Tokenizer, piece: str) -> list[int]:
    """What "--force 2=追" forces: a piece of the target vocabulary as it is (its id), or else its text cut into
    pieces by the tokenizer (several ids, forced at consecutive steps). An unknown character raises ValueError."""
    piece_id = target_tokenizer.processor.PieceToId(piece)
    if piece and piece_id != UNK_ID and target_tokenizer.piece(piece_id) == piece:
        return [piece_id]
    ids = [i for i in target_tokenizer.encode(piece) if target_tokenizer.piece(i) != WORD_BOUNDARY] or []
    if not ids or UNK_ID in ids:
        raise ValueError(f"{piece!r} cannot be written with the target vocabulary")
    return ids


def forced_steps(target_tokenizer: Tokenizer, choices: list[tuple[int, str]]) -> dict[int, int]:
    """[(step, piece or text), ...] -> {step: id}; a text of several pieces fills the steps after its own."""
    forced: dict[int, int] = {}
    for step, piece in choices:
        if step < 0:
            raise ValueError(f"step {step}: steps are numbered from 0")
        for offset, piece_id in enumerate(forced_piece_ids(target_tokenizer, piece)):
            forced[step + offset] = piece_id
    return forced


@torch.inference_mode()
def teacher_force(
    model: Transformer,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    text: str,
    reference: str | None = None,
    reference_ids: list[int] | None = None,
    need_qkv: bool = True,
    ablate: dict[str, list[tuple[int, int]]] | None = None,
    uniform_cross: bool = False,
) -> Translation:
    """The model's attention and per-piece probabilities for a given translation (teacher forcing): the decoder
    is fed <s> + reference instead of its own output. Give the reference as text or as target ids. ablate and
    uniform_cross as in translate_hypotheses."""
    head_mask = head_masks_to_tensors(model, ablate)
    source = _source_for_display(model, source_tokenizer, text)
    output_pieces, truncated = None, False
    if reference_ids is None:
        if not reference or not reference.strip():
            raise ValueError("the reference translation is empty")
        ids, output_pieces = display_pieces(target_tokenizer, reference.strip())
        # A reference past the model's length is cut, and then it did not end there: no </s> after the cut.
        truncated = len(ids) + 1 > model.cfg.max_len
        if truncated:
            ids, output_pieces = ids[: model.cfg.max_len - 1], output_pieces[: model.cfg.max_len - 1]
            reference_ids = ids
        else:
            reference_ids = ids + [EOS_ID]
    passed = run_batch(model, [source[0]], [reference_ids], Needs(qkv=need_qkv), head_mask, uniform_cross)
    encoded, decoded = passed.encoded, passed.decoded
    log_probs = decoded.logits[0].float().log_softmax(-1)  # (tgt, vocab)
    chosen = log_probs[torch.arange(len(reference_ids)), torch.tensor(reference_ids)]
    top_p, top_i = log_probs.exp().topk(TOP_K_ALTERNATIVES, dim=-1)
    hypothesis = Hypothesis(
        tokens=list(reference_ids),
        log_prob=float(chosen.sum()),
        token_log_probs=chosen.tolist(),
        alternatives=[list(zip(i, p)) for i, p in zip(top_i.tolist(), top_p.tolist())],
        finished=reference_ids[-1] == EOS_ID,
        record=_slice_record(decoded, 0),
    )
    return _translation(
        text,
        source,
        target_tokenizer,
        hypothesis,
        _EncoderRecord.of(encoded, need_qkv),
        need_qkv,
        "teacher forcing",
        1,
        output_pieces,
        truncated,
    )
