"""Which explanation agrees with the model? Each method's scores against what removing a source word does.

For every output piece of the model's own (greedy) translation of held-out sentences: remove one source word at
a time (its pieces taken out of the input; the same output teacher-forced) and measure how much the piece's
log-probability drops (occlusion). A faithful account of that piece ranks the source words as the drops do:
the Spearman correlation per piece (over the sentence's source words), averaged over pieces. Raw and
norm-weighted attention are scored per decoder layer (mean over heads / the layer's summed vectors), the
whole-model methods once. Each row also carries the method's AER on the gold alignments (alignment.json).

    python -m model.faithfulness --checkpoint checkpoints/en-zh --n 300

writes checkpoints/<ck>/faithfulness.csv: method, layer (0 for a whole-model method), spearman, aer, sentences.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .attribute import METHODS, record_for
from .decode import translate
from .teacher_forcing import run_batch
from .tokenizer import group_pieces_into_words

COLUMNS = ["method", "layer", "spearman", "aer", "sentences"]
MIN_WORDS = 3  # a rank correlation over fewer source words says little
# Methods that take longer than this on a sentence (their declared seconds) are scored on a few sentences, or, in
# the app, on the one output piece asked for: integrated gradients (hundreds of passes).
SLOW_SECONDS = 5.0


@dataclass
class SentenceScores:
    """One sentence: occlusion drops and each method's scores, (output pieces, source words)."""

    drops: np.ndarray
    methods: dict[tuple[str, int], np.ndarray]  # (method, layer or 0) -> scores


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation (ties averaged); NaN when either side is constant."""
    ra, rb = pd.Series(a).rank().to_numpy(), pd.Series(b).rank().to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


@functools.lru_cache(maxsize=None)
def chance_correlation(n: int, level: float = 0.05) -> tuple[float | None, float]:
    """How large a Spearman rho over n words is by chance alone: every order of n ranks equally likely (no
    relation at all). -> (the smallest |rho| that random orders reach at most `level` of the time, None when even
    rho = +-1 is more common than that; the chance of rho = +-1). Exact over all n! orders up to n = 8; from 9
    words on the normal approximation 1.96 / sqrt(n - 1)."""
    perfect = 2 / math.factorial(n) if n >= 2 else 1.0
    if n > 8:
        return round(1.96 / math.sqrt(n - 1), 2), perfect
    ranks = np.array(list(itertools.permutations(range(n))), dtype=np.float64)
    rho = 1 - 6 * ((ranks - np.arange(n)) ** 2).sum(1) / (n * (n * n - 1))
    values = np.unique(np.round(np.abs(rho), 9))
    reached = [v for v in values if np.mean(np.abs(rho) >= v - 1e-9) <= level]
    return (round(float(min(reached)), 2) if reached else None), perfect


def source_words(pieces: list[str], language: str = "en") -> list[list[int]]:
    """The source words' piece indices, </s> left out (it is not a word one can remove); language: the source's
    (a Chinese source's pieces are its words: model.tokenizer.group_pieces_into_words)."""
    return group_pieces_into_words(pieces[:-1], language)


def word_matrix(n_pieces: int, words: list[list[int]]) -> np.ndarray:
    """(pieces, words) 0/1: scores over pieces @ this = scores over words (a word's pieces summed)."""
    to_words = np.zeros((n_pieces, len(words)))
    for w, pieces in enumerate(words):
        to_words[pieces, w] = 1.0
    return to_words


@torch.inference_mode()
def occlusion_drops(model, source_ids: list[int], target_ids: list[int], words: list[list[int]]) -> np.ndarray:
    """(output pieces, words): log p(piece | full source) − log p(piece | source without that word)."""
    variants = [source_ids] + [[i for k, i in enumerate(source_ids) if k not in removed] for removed in map(set, words)]
    chosen = run_batch(model, variants, [target_ids] * len(variants)).output_log_probs()  # (variants, steps)
    return (chosen[0:1] - chosen[1:]).T.numpy()


def sentence_scores(
    model, source_ids, source_pieces, target_ids, methods: tuple[str, ...], language: str = "en"
) -> SentenceScores:
    words = source_words(source_pieces, language)
    fp = record_for(model, source_ids, target_ids, methods)
    return SentenceScores(
        occlusion_drops(model, source_ids, target_ids, words),
        method_scores(model, fp, word_matrix(len(source_ids), words), methods),
    )


def method_scores(model, fp, to_words: np.ndarray, methods: tuple[str, ...]) -> dict[tuple[str, int], np.ndarray]:
    """(method, layer or 0) -> (output pieces, words): the per-head methods per decoder layer (its cross-attention,
    heads together: row shares, so each rank correlation is that of the layer's own scores), the others once, for
    the whole model (rollout through every layer)."""
    out = {}
    for name in methods:
        method = METHODS[name]
        if method.granularity == "head":
            for layer in range(model.cfg.n_decoder_layers):
                out[(name, layer + 1)] = method.view(model, fp, "cross", layer, None).astype(np.float64) @ to_words
        else:
            out[(name, 0)] = method.steps(model, fp).source.astype(np.float64) @ to_words
    return out


@dataclass
class StepComparison:
    """Every method's scores for one sentence's output pieces over its source words, beside occlusion."""

    words: list[str]  # the source words, as text
    drops: np.ndarray  # (output pieces, words)
    scores: dict[str, np.ndarray]  # method -> (output pieces, words); raw and norm at the given layer
    ig_steps: list[int]  # which output pieces integrated gradients was computed for (it is slow)

    def correlations(self, step: int) -> dict[str, float]:
        return {m: spearman(s[step], self.drops[step]) for m, s in self.scores.items() if not np.isnan(s[step]).all()}


def compare_step(
    model, source_ids, source_pieces, target_ids, layer: int, ig_step: int | None = None, language: str = "en"
) -> StepComparison:
    """The current sentence under every method (raw and norm attention of one decoder layer, 1-based, heads
    together), and occlusion; integrated gradients only for ig_step."""
    fast = tuple(name for name, m in METHODS.items() if m.seconds <= SLOW_SECONDS)
    words = source_words(source_pieces, language)
    to_words = word_matrix(len(source_ids), words)
    fp = record_for(model, source_ids, target_ids, METHODS)  # one pass for every method
    scores = {
        name: values for (name, at), values in method_scores(model, fp, to_words, fast).items() if at in (0, layer)
    }
    if ig_step is not None:  # the slow methods, for one output piece
        for name, method in METHODS.items():
            if method.seconds > SLOW_SECONDS:
                one = method.steps(model, fp, only_step=ig_step)
                full = np.full((len(target_ids), len(words)), np.nan)
                full[ig_step] = one.source[0].astype(np.float64) @ to_words
                scores[name] = full
    text = ["".join(source_pieces[i] for i in w).replace("\u2581", " ").strip() for w in words]
    drops = occlusion_drops(model, source_ids, target_ids, words)
    return StepComparison(text, drops, scores, [] if ig_step is None else [ig_step])


def piece_correlations(s: SentenceScores, key: tuple[str, int]) -> list[float]:
    """key's rank correlation with occlusion at each output piece of one sentence (none under MIN_WORDS words)."""
    if key not in s.methods or s.drops.shape[1] < MIN_WORDS:
        return []
    rs = (spearman(s.methods[key][t], s.drops[t]) for t in range(s.drops.shape[0]))
    return [r for r in rs if not np.isnan(r)]


def mean_correlation(per_sentence: list[SentenceScores], key: tuple[str, int]) -> float:
    """The mean over every output piece of every sentence: the number faithfulness.csv reports."""
    values = [r for s in per_sentence for r in piece_correlations(s, key)]
    return float(np.mean(values)) if values else float("nan")


SENTENCE_COLUMNS = ["sentence", "method", "layer", "rho_sum", "pieces"]
BOOTSTRAP_RESAMPLES = 1000


def sentence_correlations(per_sentence: list[SentenceScores]) -> pd.DataFrame:
    """One row per sentence and method: the sum of its pieces' correlations and how many pieces, so the corpus
    mean (sum of sums / sum of pieces) can be resampled over sentences (faithfulness_sentences.csv)."""
    keys = list(dict.fromkeys(key for s in per_sentence for key in s.methods))
    rows = []
    for k, s in enumerate(per_sentence):
        for method, layer in keys:
            rs = piece_correlations(s, (method, layer))
            if rs:
                rows.append({"sentence": k, "method": method, "layer": layer, "rho_sum": sum(rs), "pieces": len(rs)})
    return pd.DataFrame(rows, columns=SENTENCE_COLUMNS)


def bootstrap_interval(
    rho_sums: np.ndarray, pieces: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile interval of the corpus mean (sum of rho over pieces / pieces) over sentences drawn with
    replacement: how much the reported mean would move on another sample of sentences like these."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rho_sums), size=(resamples, len(rho_sums)))
    means = rho_sums[draws].sum(1) / pieces[draws].sum(1)
    low, high = np.percentile(means, [2.5, 97.5])
    return round(float(low), 4), round(float(high), 4)


def with_intervals(table: pd.DataFrame, sentences: pd.DataFrame) -> pd.DataFrame:
    """table with each method's 95 % bootstrap interval over sentences (ci_low, ci_high)."""
    table = table.copy()
    bounds = []
    for method, layer in zip(table["method"], table["layer"]):
        rows = sentences[(sentences["method"] == method) & (sentences["layer"] == layer)]
        ok = len(rows) > 1
        bounds.append(bootstrap_interval(rows["rho_sum"].to_numpy(), rows["pieces"].to_numpy()) if ok else (None, None))
    table["ci_low"], table["ci_high"] = [b[0] for b in bounds], [b[1] for b in bounds]
    return table


def aer_for(alignment: dict | None, method: str, layer: int) -> float | None:
    if not alignment:
        return None
    rows = alignment["results"]
    if layer:
        return next(
            (r["aer"] for r in rows if r["method"] == method and r["layer"] == layer and r["head"] == "mean"), None
        )
    return next((r["aer"] for r in rows if r["method"] == method and r["head"] == "model"), None)


def faithfulness_table(
    model,
    source_tokenizer,
    target_tokenizer,
    sentences: list[str],
    methods: tuple[str, ...],
    slow_sentences: int,
    alignment: dict | None = None,
    progress: bool = False,
    language: str = "en",
) -> pd.DataFrame:
    """slow_sentences: integrated gradients only on this many of the sentences (it costs hundreds of passes);
    language: the sentences' (how they are cut into words)."""
    scored = score_sentences(
        model, source_tokenizer, target_tokenizer, sentences, methods, slow_sentences, progress, language
    )
    return summarize(scored, alignment)


def score_sentences(
    model,
    source_tokenizer,
    target_tokenizer,
    sentences: list[str],
    methods,
    slow_sentences: int,
    progress=False,
    language: str = "en",
) -> list[SentenceScores]:
    """Occlusion and every method's scores on each sentence's greedy translation (integrated gradients on the
    first slow_sentences only)."""
    fast = tuple(m for m in methods if METHODS[m].seconds <= SLOW_SECONDS)
    scored = []
    for k, sentence in enumerate(sentences):
        tr = translate(model, source_tokenizer, target_tokenizer, sentence, need_qkv=False)
        chosen = methods if k < slow_sentences else fast
        scored.append(sentence_scores(model, tr.source_ids, tr.source_pieces, tr.target_ids, chosen, language))
        if progress and (k + 1) % 25 == 0:
            print(f"  {k + 1}/{len(sentences)} sentences", flush=True)
    return scored


def summarize(scored: list[SentenceScores], alignment: dict | None = None) -> pd.DataFrame:
    """faithfulness.csv: each method's mean correlation over every piece, its AER, its sentences."""
    keys = list(dict.fromkeys(key for s in scored for key in s.methods))
    rows = []
    for method, layer in keys:
        n = sum(1 for s in scored if (method, layer) in s.methods)
        rows.append(
            {
                "method": method,
                "layer": layer,
                "spearman": round(mean_correlation(scored, (method, layer)), 4),
                "aer": aer_for(alignment, method, layer),
                "sentences": n,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def sentences_path(table: Path) -> Path:
    """Where the per-sentence correlations lie beside a faithfulness table."""
    return table.with_name(table.stem + "_sentences.csv")


def read_faithfulness(path: Path | str) -> pd.DataFrame:
    """faithfulness.csv; with ci_low and ci_high when it was written with its per-sentence correlations (older
    tables have neither: the interval columns are then absent)."""
    frame = pd.read_csv(path)
    missing = set(COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return frame


def main(argv=None):
    from .cli import open_checkpoint, positive_int
    from .data import load_splits

    p = argparse.ArgumentParser(description="Mean Spearman correlation of each method's scores with occlusion.")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--n", type=positive_int, default=300, help="held-out (test split) sentences")
    p.add_argument("--ig-sentences", type=int, default=30, help="of those, how many also get integrated gradients")
    p.add_argument("--out", type=Path, help="default: CHECKPOINT/faithfulness.csv")
    p.add_argument("--sentences-file", type=Path, help="one English sentence per line instead of the test split")
    p.add_argument(
        "--refresh-aer",
        action="store_true",
        help="only fill the existing table's aer column again from alignment.json (after model.align)",
    )
    args = p.parse_args(argv)
    if args.refresh_aer:
        out = args.out or Path(args.checkpoint) / "faithfulness.csv"
        table = read_faithfulness(out)
        alignment = json.loads((Path(args.checkpoint) / "alignment.json").read_text())
        table["aer"] = [aer_for(alignment, m, int(layer)) for m, layer in zip(table["method"], table["layer"])]
        table.to_csv(out, index=False)
        print(table.to_string(index=False))
        return
    torch.set_num_threads(max(1, torch.get_num_threads()))

    loaded = open_checkpoint(Path(args.checkpoint))
    if args.sentences_file:
        sentences = [s for s in args.sentences_file.read_text(encoding="utf-8").splitlines() if s.strip()][: args.n]
    else:
        sentences = [e.source for e in load_splits(loaded.metadata["corpus"]).test[: args.n]]
    alignment_path = Path(args.checkpoint) / "alignment.json"
    alignment = json.loads(alignment_path.read_text()) if alignment_path.is_file() else None
    scored = score_sentences(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        sentences,
        tuple(METHODS),
        args.ig_sentences,
        progress=True,
        language=loaded.metadata.get("source_language", "en"),
    )
    per_sentence = sentence_correlations(scored)
    table = with_intervals(summarize(scored, alignment), per_sentence)
    out = args.out or Path(args.checkpoint) / "faithfulness.csv"
    table.to_csv(out, index=False)
    per_sentence.to_csv(sentences_path(out), index=False)
    print(table.to_string(index=False))
    print(f"-> {out}, {sentences_path(out)}")


if __name__ == "__main__":
    main()
