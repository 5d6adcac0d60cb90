"""What does each head do? Statistics of attention maps, averaged over a corpus, and single-head ablation.

    python -m model.probe --checkpoint checkpoints/en-zh --split test --n 500          # -> head_stats.csv
    python -m model.probe --checkpoint checkpoints/en-zh --split test --ablate --n 200 # -> head_ablation.csv

Statistics of one (layers, heads, queries, keys) attention tensor, per layer and head, each averaged over the
query rows:
- entropy: of each row, in nats (0 = all weight on one key);
- distance: expected |query position - key position| under the row's weights;
- same / previous / next: the weight on key position q, q-1, q+1 (whether that makes a head *positional* is
  decided in one place, model.roles: its largest weight at one fixed offset in at least 90 % of the queries);
- boundary: the weight on the sentence-boundary key (</s> among source keys, <s> among decoder keys), where
  heads with nothing to do often park their attention;
- punctuation: the weight on punctuation keys;
- max_weight: the largest weight of each row.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from .checkpoint import shown
from .cli import check_output, corpus_of, open_checkpoint, positive_int
from .data import CORPORA, DEFAULT_DATA_DIR, load_splits
from .decode import Translation, encode_source, greedy_batch, head_masks_to_tensors, translate
from .evaluate import bleu_tokenizer_for, score
from .teacher_forcing import run_batch
from .tokenizer import EOS_ID, group_pieces_into_words, is_punctuation
from .transformer import ATTENTION_KINDS as KINDS

# Statistics that compare a query's position with a key's position: they only mean something when both index the
# same sequence (self-attention). A decoder index and a source index of different lengths and word orders are not
# comparable, so cross-attention gets none of them; and in masked self-attention key t+1 is hidden by
# construction, so "next" is always 0 there and is not reported.
POSITION_STATISTICS = {
    "encoder_self": ("distance", "same", "previous", "next"),
    "decoder_self": ("distance", "same", "previous"),
    "cross": (),
}


def head_statistics(
    attention: np.ndarray, key_pieces: list[str], boundary_key: int, kind: str = "encoder_self"
) -> dict[str, np.ndarray]:
    """attention (layers, heads, queries, keys) -> {statistic: (layers, heads)}.

    Rows whose choice is forced are left out: a query that can see a single key (decoder row 0 sees only <s>)
    puts weight 1 on it whatever the head does, which would count as "same position", "boundary" and entropy 0.
    A statistic with no qualifying row is NaN (undefined), never 0."""
    a = np.asarray(attention, dtype=np.float64)
    n_q, n_k = a.shape[-2:]
    visible_keys = (np.arange(n_q) + 1) if kind == "decoder_self" else np.full(n_q, n_k)
    rows = visible_keys > 1
    undefined = np.full(a.shape[:2], np.nan)
    if not rows.any():
        names = ("entropy", *POSITION_STATISTICS[kind], "boundary", "punctuation", "max_weight")
        return {name: undefined.copy() for name in names}
    a = a[..., rows, :]
    q_pos, k_pos = np.arange(n_q)[rows][:, None], np.arange(n_k)[None, :]
    offset = k_pos - q_pos  # (queries, keys)
    punct = np.array([is_punctuation(p) for p in key_pieces], dtype=np.float64)
    safe = np.where(a > 0, a, 1.0)
    stats = {"entropy": (-(a * np.log(safe)).sum(-1)).mean(-1)}
    position = {
        "distance": lambda: (a * np.abs(offset)).sum(-1).mean(-1),
        "same": lambda: _mean_on_offset(a, offset, 0),
        "previous": lambda: _mean_on_offset(a, offset, -1),
        "next": lambda: _mean_on_offset(a, offset, 1),
    }
    stats.update({name: position[name]() for name in POSITION_STATISTICS[kind]})
    stats.update(
        boundary=a[..., boundary_key].mean(-1),
        punctuation=(a * punct).sum(-1).mean(-1),
        max_weight=a.max(-1).mean(-1),
    )
    return stats


def _mean_on_offset(a: np.ndarray, offset: np.ndarray, k: int) -> np.ndarray:
    """Mean over the query rows that have a key at offset k of the weight on that key; NaN when none has."""
    cells = offset == k
    rows = cells.any(-1)
    if not rows.any():
        return np.full(a.shape[:2], np.nan)
    return (a * cells).sum(-1)[..., rows].mean(-1)


def translation_statistics(tr: Translation) -> dict[str, dict[str, np.ndarray]]:
    """{kind: {statistic: (layers, heads)}} for one translation."""
    out = {}
    for kind in KINDS:
        _, keys = tr.axis_pieces(kind)
        boundary = len(keys) - 1 if kind in ("encoder_self", "cross") else 0  # </s> of the source; <s> of decoder
        out[kind] = head_statistics(tr.attention(kind), keys, boundary, kind)
    out["cross"]["alignment_agreement"] = alignment_agreement(tr.attention("cross"))
    out["cross"]["source_order"] = source_order(tr.attention("cross"))
    return out


def source_order(cross: np.ndarray) -> np.ndarray:
    """Correlation between the decoder position and the position of each row's strongest source key:
    near 1 for a head that walks through the source in order. NaN where undefined (fewer than 2 rows, or a
    head whose strongest key never moves). (layers, heads, tgt, src) -> (layers, heads)"""
    strongest = cross.argmax(-1).astype(np.float64)  # (layers, heads, tgt)
    steps = np.arange(strongest.shape[-1], dtype=np.float64)
    if steps.size < 2:
        return np.full(strongest.shape[:2], np.nan)
    centred = strongest - strongest.mean(-1, keepdims=True)
    steps = steps - steps.mean()
    norm = np.sqrt((centred**2).sum(-1) * (steps**2).sum())
    return np.where(norm > 0, (centred * steps).sum(-1) / np.where(norm > 0, norm, 1.0), np.nan)


def alignment_agreement(cross: np.ndarray) -> np.ndarray:
    """How often each cross-attention head's strongest source key is the strongest key of the last layer's
    head-averaged map (a common proxy for a word alignment). (layers, heads, tgt, src) -> (layers, heads)"""
    reference = cross[-1].mean(0).argmax(-1)  # (tgt,)
    return (cross.argmax(-1) == reference).mean(-1)


def statistics_frame(stats: dict[str, dict[str, np.ndarray]]) -> pd.DataFrame:
    """-> one row per (kind, layer, head), 1-based layer and head, one column per statistic."""
    rows = []
    for kind, per_stat in stats.items():
        n_layers, n_heads = next(iter(per_stat.values())).shape
        for layer in range(n_layers):
            for head in range(n_heads):
                row = {"kind": kind, "layer": layer + 1, "head": head + 1}
                row.update({name: float(values[layer, head]) for name, values in per_stat.items()})
                rows.append(row)
    return pd.DataFrame(rows)


ROLE_THRESHOLD = 0.5  # share of weight (or of agreeing rows) that names a role
SOURCE_ORDER_THRESHOLD = 0.7  # correlation that names a cross-attention head "follows the source order"


def name_heads(frame: pd.DataFrame, threshold: float = ROLE_THRESHOLD) -> pd.DataFrame:
    """Label heads whose average behaviour is clear-cut: boundary sink, and (cross) heads that follow the
    alignment or the source order. Undefined (NaN) statistics never name a role. A positional head is not named
    here: the one definition of it is model.roles's (largest weight at one offset in ≥ 90 % of the queries); a
    mean weight on q − 1 above one half, which this table used to call "previous-token", is a weaker and other
    claim, and the page showed both."""

    def above(row, name, limit):
        value = row.get(name, np.nan)
        return bool(value > limit) if pd.notna(value) else False

    labels = []
    for _, row in frame.iterrows():
        found = [
            role
            for name, role in (
                ("boundary", "boundary sink"),
                ("alignment_agreement", "follows the alignment"),
            )
            if above(row, name, threshold)
        ]
        if above(row, "source_order", SOURCE_ORDER_THRESHOLD):
            found.append("follows the source order")
        labels.append(", ".join(found))
    return frame.assign(role=labels)


LOWER_IS_STRONGER = {"entropy", "distance"}

# The columns the app reads from a checkpoint's probe results, and which of them must be numbers.
HEAD_TABLES = {
    "head_stats.csv": (("kind", "layer", "head"), ("layer", "head")),
    "head_ablation.csv": (
        ("kind", "layer", "head", "bleu", "bleu_drop", "log_prob_drop"),
        ("layer", "head", "bleu", "bleu_drop", "log_prob_drop"),
    ),
}


class HeadTableError(ValueError):
    """A probe CSV that the app cannot use; the message names the file and what is wrong."""


def read_head_table(path: Path) -> pd.DataFrame:
    """Read head_stats.csv or head_ablation.csv, checking it has the columns the app reads, with numbers where
    numbers belong and known attention kinds."""
    path = Path(path)
    name = shown(path)
    required, numeric = HEAD_TABLES[path.name]
    try:
        frame = pd.read_csv(path, encoding="utf-8")
    except UnicodeDecodeError:
        raise HeadTableError(f"{name} is not UTF-8 text") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError) as e:
        raise HeadTableError(f"{name} is not a readable CSV table ({str(e).splitlines()[0][:80]})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise HeadTableError(f"{name} lacks the column(s) {', '.join(missing)}")
    if frame.empty:
        raise HeadTableError(f"{name} has no rows")
    for column in numeric:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise HeadTableError(f"{name}: column {column} holds something other than numbers")
    unknown = sorted(set(frame["kind"].astype(str)) - set(KINDS))
    if unknown:
        raise HeadTableError(f"{name}: unknown attention kind(s) {', '.join(unknown)[:60]}")
    if "role" in frame.columns:
        frame["role"] = frame["role"].fillna("").astype(str)
    return frame


def strongest_heads(frame: pd.DataFrame) -> pd.DataFrame:
    """For every statistic and attention kind, the head where it is most pronounced (lowest entropy and
    distance, highest of the rest): a named role needs a threshold, this shows the runner-up patterns too."""
    rows = []
    for kind, group in frame.groupby("kind", sort=False):
        for name in [c for c in group.columns if c not in ("kind", "layer", "head", "role")]:
            values = group[name].dropna()
            if values.empty:
                continue
            best = group.loc[values.idxmin() if name in LOWER_IS_STRONGER else values.idxmax()]
            rows.append(
                {
                    "statistic": name,
                    "kind": kind,
                    "layer": int(best["layer"]),
                    "head": int(best["head"]),
                    "value": round(float(best[name]), 3),
                }
            )
    return pd.DataFrame(rows)


def word_level(
    weights: np.ndarray,
    query_pieces: list[str],
    key_pieces: list[str],
    query_language: str = "en",
    key_language: str = "en",
    masked: np.ndarray | None = None,
):
    """Attention between words instead of pieces: sum over a word's key pieces (the weight the word receives),
    mean over its query pieces (rows still sum to 1). A word cell is masked only when every piece cell in it is.
    -> (weights, query words, key words, masked words or None)"""
    q_groups = group_pieces_into_words(query_pieces, query_language)
    k_groups = group_pieces_into_words(key_pieces, key_language)
    w = np.asarray(weights, dtype=np.float64)
    summed = np.stack([w[:, g].sum(-1) for g in k_groups], axis=-1)  # (queries, key words)
    out = np.stack([summed[g].mean(0) for g in q_groups], axis=0)  # (query words, key words)
    join = lambda pieces, groups: ["".join(pieces[i] for i in g) for g in groups]  # noqa: E731
    masked_words = None
    if masked is not None:
        masked_words = np.array([[masked[np.ix_(qg, kg)].all() for kg in k_groups] for qg in q_groups])
    return out, join(query_pieces, q_groups), join(key_pieces, k_groups), masked_words


def corpus_statistics(loaded, sentences: list[str], progress: bool = True) -> pd.DataFrame:
    """Statistics averaged over many sentences, each translated greedily. -> statistics_frame + role."""
    per_sentence = []
    for sentence in tqdm(sentences, desc="head statistics", disable=not progress):
        tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence, need_qkv=False)
        per_sentence.append(translation_statistics(tr))
    # The mean over the sentences where a statistic is defined (a one-piece output has no decoder statistics).
    mean = {
        kind: {name: _nanmean([stats[kind][name] for stats in per_sentence]) for name in d}
        for kind, d in per_sentence[0].items()
    }
    return name_heads(statistics_frame(mean))


def _nanmean(arrays: list[np.ndarray]) -> np.ndarray:
    stacked = np.stack(arrays)
    defined = ~np.isnan(stacked)
    total = np.where(defined, stacked, 0.0).sum(0)
    count = defined.sum(0)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


@torch.no_grad()
def reference_log_prob(model, sources: list[list[int]], references: list[list[int]], head_mask=None) -> float:
    """Mean per-sentence log-probability of the references under teacher forcing."""
    passed = run_batch(model, sources, [r + [EOS_ID] for r in references], head_mask=head_mask)
    return float(passed.output_log_probs().sum(-1).mean())


def ablation_ranking(loaded, examples, progress: bool = True) -> pd.DataFrame:
    """Switch off one head at a time; the drop in BLEU and in reference log-probability on the examples."""
    model, src_tok, tgt_tok = loaded.model, loaded.source_tokenizer, loaded.target_tokenizer
    tokenize = bleu_tokenizer_for(loaded.metadata.get("target_language", "zh"))
    sources = [encode_source(src_tok, e.source, model.cfg.max_len)[0] for e in examples]
    references = [tgt_tok.encode(e.references[0])[: model.cfg.max_len - 1] for e in examples]

    def evaluate(ablate):
        head_mask = head_masks_to_tensors(model, ablate)
        hyps = [tgt_tok.decode(o) for o in greedy_batch(model, sources, head_mask=head_mask)]
        return score(hyps, examples, tokenize)["bleu"], reference_log_prob(model, sources, references, head_mask)

    base_bleu, base_lp = evaluate(None)
    cfg = model.cfg
    heads = [
        (kind, layer, head) for kind in KINDS for layer in range(cfg.n_layers(kind)) for head in range(cfg.n_heads)
    ]
    rows = []
    for kind, layer, head in tqdm(heads, desc="ablating heads", disable=not progress):
        bleu, lp = evaluate({kind: [(layer, head)]})
        rows.append(
            {
                "kind": kind,
                "layer": layer + 1,
                "head": head + 1,
                "bleu": bleu,
                "bleu_drop": base_bleu - bleu,
                "log_prob_drop": base_lp - lp,
            }
        )
    frame = pd.DataFrame(rows).sort_values(["bleu_drop", "log_prob_drop"], ascending=False)
    frame.attrs.update(baseline_bleu=base_bleu, baseline_log_prob=base_lp)
    return frame


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--split", default="test", choices=["train", "valid", "test"])
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument(
        "--n", type=positive_int, default=None, help="sentences (default 500 for statistics, 200 for --ablate)"
    )
    p.add_argument("--corpus", choices=sorted(CORPORA), help="read this corpus's split instead of the checkpoint's own")
    p.add_argument("--ablate", action="store_true", help="rank single heads by the damage done by switching them off")
    p.add_argument(
        "--output", type=Path, help="CSV path (default: head_stats.csv / head_ablation.csv in the checkpoint)"
    )
    args = p.parse_args(argv)

    check_output(args.output)
    loaded = open_checkpoint(args.checkpoint)
    examples = load_splits(corpus_of(loaded, args.corpus, args.data_dir), args.data_dir)[args.split]
    if args.ablate:
        frame = ablation_ranking(loaded, examples[: args.n or 200])
        output = args.output or args.checkpoint / "head_ablation.csv"
        print(
            f"baseline BLEU {frame.attrs['baseline_bleu']}, reference log-prob {frame.attrs['baseline_log_prob']:.3f}"
        )
        print(frame.head(10).to_string(index=False))
    else:
        frame = corpus_statistics(loaded, [e.source for e in examples[: args.n or 500]])
        output = args.output or args.checkpoint / "head_stats.csv"
        print(frame[frame["role"] != ""][["kind", "layer", "head", "role"]].to_string(index=False))
    frame.to_csv(output, index=False, float_format="%.4f")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
