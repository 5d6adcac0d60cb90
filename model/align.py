"""Cross-attention heads scored as word aligners against hand-made gold alignments (alignment error rate).

Each gold pair is teacher-forced (its target as the model reads it), each method gives a (target pieces ×
source pieces) map per layer and head, pieces are mapped to the gold words by character offsets, and every
target word is linked to the source word with the highest score (the model's </s> is not a word: attention
parked there is left out, as every alignment-extraction paper does). AER (Och & Ney, 2003):
1 − (|A∩S| + |A∩P|) / (|A| + |S|), counted over the whole set, sure links counting as possible.

Which row of the cross-attention belongs to target word w (Chen et al., 2020, "Accurate word alignment
induction from neural machine translation"): ``attention`` reads the row that *predicts* w (decoder position t
writes piece t); ``shifted`` the row whose *input* is w (position t + 1), where the model has already seen w.
``norm`` and ``norm-shifted`` use the same rows of ‖α f(x)‖ (Kobayashi et al., 2020) instead of α;
``value-zeroing`` the predicting rows of Mohebbi et al.'s (2023) value-zeroing scores. The
whole-model methods of model.attribute (rollout, gradient × input) can be scored the same way, on the
predicting row.

    python -m model.align --checkpoint checkpoints/en-zh --gold tests/data/alignments/en-zh.tsv --json OUT
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .attribute import METHODS, record_for
from .decode import encode_source
from .tokenizer import EOS_ID, Tokenizer

GOLD_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "alignments"
# Per-head methods: (which attention account, which row of a target word).
HEAD_ALIGNERS = {
    "attention": ("attention", 0),
    "shifted": ("attention", 1),
    "norm": ("norm", 0),
    "norm-shifted": ("norm", 1),
    "value-zeroing": ("value-zeroing", 0),
}
WHOLE_MODEL_ALIGNERS = ("rollout", "gradient-x-input")
LINK = re.compile(r"^(\d+)([-?])(\d+)$")


@dataclass
class GoldPair:
    source: list[str]  # tokens
    target: list[str]
    sure: set[tuple[int, int]]  # (source index, target index)
    possible: set[tuple[int, int]]  # sure links included


def read_gold(path: Path | str, reverse: bool = False) -> list[GoldPair]:
    """A gold file's pairs; reverse: read it the other way round (en-zh.tsv as Chinese into English for zh-en),
    source and target swapped and each link i-j as j-i."""
    pairs = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected source TAB target TAB links, got {len(fields)} fields")
        source, target, links = fields[0].split(" "), fields[1].split(" "), fields[2].split()
        sure, possible = set(), set()
        for link in links:
            m = LINK.match(link)
            if not m:
                raise ValueError(f"{path}:{number}: bad link {link!r} (expected i-j or i?j)")
            i, j = int(m.group(1)), int(m.group(3))
            if i >= len(source) or j >= len(target):
                raise ValueError(f"{path}:{number}: link {link} outside {len(source)} x {len(target)} tokens")
            possible.add((i, j))
            if m.group(2) == "-":
                sure.add((i, j))
        if reverse:
            source, target = target, source
            sure, possible = ({(j, i) for i, j in links} for links in (sure, possible))
        pairs.append(GoldPair(source, target, sure, possible))
    return pairs


def gold_file_for(source_language: str, target_language: str) -> tuple[Path, bool]:
    """The gold file of a language pair and whether it is read reversed: every file is English into another
    language (en-zh.tsv, en-de.tsv), so zh-en reads en-zh.tsv the other way round."""
    if source_language.startswith("en"):
        return GOLD_DIR / f"en-{target_language[:2]}.tsv", False
    if target_language.startswith("en"):
        return GOLD_DIR / f"en-{source_language[:2]}.tsv", True
    raise ValueError(f"no gold alignments for {source_language} into {target_language}")


def alignment_error_rate(predicted: list[set[tuple[int, int]]], gold: list[GoldPair]) -> float:
    a = sum(len(p) for p in predicted)
    s = sum(len(g.sure) for g in gold)
    a_s = sum(len(p & g.sure) for p, g in zip(predicted, gold))
    a_p = sum(len(p & g.possible) for p, g in zip(predicted, gold))
    return 1.0 - (a_s + a_p) / (a + s) if a + s else 0.0


def detokenize(tokens: list[str], language: str) -> tuple[str, list[tuple[int, int]]]:
    """The text the model reads (Chinese characters joined without spaces, other languages with single spaces)
    and each token's character span in it."""
    joiner = "" if language.startswith("zh") else " "
    spans, pos = [], 0
    for k, token in enumerate(tokens):
        if k:
            pos += len(joiner)
        spans.append((pos, pos + len(token)))
        pos += len(token)
    return joiner.join(tokens), spans


def piece_word_overlap(tokenizer: Tokenizer, text: str, word_spans: list[tuple[int, int]]) -> np.ndarray:
    """(pieces, words) 0/1: which words each piece's characters (spaces aside) fall in. A piece may cover several
    words (我昨天 is one piece of three gold characters) and a word several pieces (chase + s)."""
    proto = tokenizer.processor.encode(text, return_type="proto")
    byte_to_char = []
    for c, ch in enumerate(text):
        byte_to_char += [c] * len(ch.encode("utf-8"))
    byte_to_char.append(len(text))
    overlap = np.zeros((len(proto.pieces), len(word_spans)))
    for p, piece in enumerate(proto.pieces):
        begin, end = byte_to_char[piece.begin], byte_to_char[piece.end]
        chars = {c for c in range(begin, end) if not text[c].isspace()}
        for w, (ws, we) in enumerate(word_spans):
            if chars & set(range(ws, we)):
                overlap[p, w] = 1.0
    return overlap


@dataclass
class PreparedPair:
    gold: GoldPair
    source_ids: list[int]  # ending in </s>
    target_ids: list[int]  # ending in </s>
    source_overlap: np.ndarray  # (source pieces without </s>, source words)
    target_overlap: np.ndarray  # (target pieces without </s>, target words)


def prepare(
    pair: GoldPair,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    languages: tuple[str, str],
    max_len: int,
) -> PreparedPair:
    source_language, target_language = languages
    source_text, source_spans = detokenize(pair.source, source_language)
    target_text, target_spans = detokenize(pair.target, target_language)
    source_ids, _, _ = encode_source(source_tokenizer, source_text, max_len)
    target_ids = target_tokenizer.encode(target_text)[: max_len - 1] + [EOS_ID]
    return PreparedPair(
        pair,
        source_ids,
        target_ids,
        piece_word_overlap(source_tokenizer, source_text, source_spans)[: len(source_ids) - 1],
        piece_word_overlap(target_tokenizer, target_text, target_spans)[: len(target_ids) - 1],
    )


def word_scores(piece_map: np.ndarray, pp: PreparedPair, shift: int) -> np.ndarray:
    """(decoder positions, source pieces incl. </s>) -> (target words, source words): a target word's score for
    a source word is the mean, over the word's pieces' rows (row t + shift for piece t), of the summed scores of
    the source word's pieces. </s> is dropped."""
    n_t = pp.target_overlap.shape[0]
    rows = np.nan_to_num(piece_map[shift : shift + n_t, : pp.source_overlap.shape[0]].astype(np.float64))
    per_source_word = rows @ pp.source_overlap  # (target pieces, source words)
    counts = pp.target_overlap.sum(0)
    return (pp.target_overlap.T @ per_source_word) / np.maximum(counts, 1)[:, None]


def links_from_scores(scores: np.ndarray, target_overlap: np.ndarray) -> set[tuple[int, int]]:
    """Each target word (that some piece covers) linked to its highest-scoring source word."""
    covered = target_overlap.sum(0) > 0
    return {(int(np.argmax(scores[j])), j) for j in range(scores.shape[0]) if covered[j] and scores.shape[1]}


@dataclass
class AlignmentResults:
    sentences: int
    rows: list[dict]  # {"method", "layer" (1-based), "head" (1-based or "mean"), "aer"}
    links: dict[tuple[str, int, int | str], list[set[tuple[int, int]]]]

    def best(self, method: str) -> dict:
        return best_row(self.rows, method)

    def grid(self, method: str, n_layers: int, n_heads: int) -> np.ndarray:
        return aer_grid(self.rows, method, n_layers, n_heads)


def aer_grid(rows: list[dict], method: str, n_layers: int, n_heads: int) -> np.ndarray:
    """(layers, heads) AER of each head under a method, from alignment.json's rows (NaN where not computed)."""
    out = np.full((n_layers, n_heads), np.nan)
    for r in rows:
        if r["method"] == method and isinstance(r["head"], int) and r["layer"] <= n_layers and r["head"] <= n_heads:
            out[r["layer"] - 1, r["head"] - 1] = r["aer"]
    return out


def aer_of(rows: list[dict], method: str, layer: int, head: int | str) -> float | None:
    """One head's (or, head "mean", one layer's) AER; None if not in the table."""
    head = head if head == "mean" else int(head)
    return next((r["aer"] for r in rows if r["method"] == method and r["layer"] == layer and r["head"] == head), None)


def best_row(rows: list[dict], method: str) -> dict | None:
    """alignment.json's lowest-AER row of one method (a head, a layer's mean, or the whole model); None if none."""
    return min((r for r in rows if r["method"] == method), key=lambda r: r["aer"], default=None)


def best_rows(rows: list[dict]) -> list[dict]:
    """The lowest-AER row of each method, in the order the methods first appear."""
    return [best_row(rows, m) for m in dict.fromkeys(r["method"] for r in rows)]


def score_heads(
    model,
    source_tokenizer,
    target_tokenizer,
    languages: tuple[str, str],
    gold: list[GoldPair],
    whole_model: tuple[str, ...] = (),
) -> AlignmentResults:
    """languages: (source, target), e.g. ("en", "zh")."""
    prepared = [prepare(g, source_tokenizer, target_tokenizer, languages, model.cfg.max_len) for g in gold]
    links: dict = {}
    for pp in prepared:
        fp = record_for(model, pp.source_ids, pp.target_ids, [*(a for a, _ in HEAD_ALIGNERS.values()), *whole_model])
        # every head of each account the aligners read, computed whole (value zeroing of cross-attention only)
        maps = {name: METHODS[name].compute(model, fp, ("cross",)) for name, _ in HEAD_ALIGNERS.values()}
        for method, (account, shift) in HEAD_ALIGNERS.items():
            hm = maps[account]
            n_layers, n_heads = hm.maps["cross"].shape[:2]
            for layer in range(n_layers):
                for head in list(range(n_heads)) + ["mean"]:
                    m = hm.layer_maps["cross"][layer] if head == "mean" else hm.maps["cross"][layer, head]
                    key = (method, layer + 1, head if head == "mean" else head + 1)
                    links.setdefault(key, []).append(links_from_scores(word_scores(m, pp, shift), pp.target_overlap))
        for method in whole_model:
            steps = METHODS[method].steps(model, fp)
            key = (method, 0, "model")
            links.setdefault(key, []).append(links_from_scores(word_scores(steps.source, pp, 0), pp.target_overlap))
    rows = [
        {"method": k[0], "layer": k[1], "head": k[2], "aer": round(alignment_error_rate(v, gold), 4)}
        for k, v in links.items()
    ]
    return AlignmentResults(len(gold), rows, links)


def write_links(path: Path, predicted: list[set[tuple[int, int]]]) -> None:
    path.write_text("".join(" ".join(f"{i}-{j}" for i, j in sorted(p)) + "\n" for p in predicted), encoding="utf-8")


def main(argv=None):
    from .cli import open_checkpoint

    p = argparse.ArgumentParser(description="Score every cross-attention head as a word aligner (AER).")
    p.add_argument("--checkpoint", required=True)
    p.add_argument(
        "--gold",
        type=Path,
        help="gold file, English source (default: tests/data/alignments/en-<other language>.tsv, reversed for zh-en)",
    )
    p.add_argument("--json", dest="json_out", type=Path, required=True)
    p.add_argument("--links-out", type=Path, help="write each method's best head's links as DIR/METHOD.links")
    p.add_argument(
        "--whole-model",
        nargs="*",
        default=list(WHOLE_MODEL_ALIGNERS),
        choices=WHOLE_MODEL_ALIGNERS,
        help="also score these whole-model attributions (predicting row)",
    )
    args = p.parse_args(argv)

    loaded = open_checkpoint(Path(args.checkpoint))
    languages = (loaded.metadata.get("source_language", "en"), loaded.metadata.get("target_language", "zh"))
    default_gold, reverse = gold_file_for(*languages)
    gold_path = args.gold or default_gold
    gold = read_gold(gold_path, reverse)
    results = score_heads(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, languages, gold, tuple(args.whole_model)
    )
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(
        json.dumps(
            {"sentences": results.sentences, "gold": gold_path.name, "reversed": reverse, "results": results.rows},
            indent=1,
        ),
        encoding="utf-8",
    )
    methods = list(HEAD_ALIGNERS) + list(args.whole_model)
    print(f"{results.sentences} sentences of {gold_path.name}; best per method (layer, head; AER):")
    for method in methods:
        b = results.best(method)
        where = "whole model" if b["head"] == "model" else f"layer {b['layer']}, head {b['head']}"
        print(f"  {method:18s} {where:22s} AER {b['aer']:.3f}")
        if args.links_out:
            args.links_out.mkdir(parents=True, exist_ok=True)
            write_links(args.links_out / f"{method}.links", results.links[(method, b["layer"], b["head"])])


if __name__ == "__main__":
    main()
