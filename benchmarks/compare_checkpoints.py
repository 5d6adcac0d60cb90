"""Two checkpoints of one language pair, side by side on each test set: greedy BLEU and chrF, whether the
difference is significant (sacrebleu's paired bootstrap resampling, 1,000 samples, as `sacrebleu --paired-bs`),
and the share of outputs that stutter (one piece three or more times in a row).

    python benchmarks/compare_checkpoints.py OLD_CHECKPOINT NEW_CHECKPOINT [--splits everyday test ml_test]

Both checkpoints' test sets are read from the newer one's corpus (an older corpus may lack ml_test), or from the
corpus a set names before a colon, as eval.json's other sets are (en-de: `tatoeba-en-de:test`,
`multi30k-en-de:test`). One JSON line per set, then a Markdown table for a model card.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sacrebleu  # noqa: E402
from sacrebleu.significance import PairedTest  # noqa: E402

from model.checkpoint import load_checkpoint  # noqa: E402
from model.data import DEFAULT_DATA_DIR, load_splits, read_everyday  # noqa: E402
from model.evaluate import bleu_tokenizer_for, reference_streams, stutter_share, translate_corpus_ids  # noqa: E402


def paired_bootstrap(
    old: list[str], new: list[str], references: list[list[str | None]], tokenize: str, samples: int = 1000
) -> dict:
    """p-values of BLEU and chrF for new against old (the baseline): the share of resamples in which the
    difference is not in the direction observed, as sacrebleu computes it."""
    metrics = {"BLEU": sacrebleu.BLEU(tokenize=tokenize), "chrF": sacrebleu.CHRF()}
    _, results = PairedTest([("baseline", old), ("new", new)], metrics, references, test_type="bs", n_samples=samples)()
    scored = [results[key] for key in results if key != "System"]  # keyed by signature name: "chrF2", not "chrF"
    return {
        name.lower(): {"old": round(pair[0].score, 2), "new": round(pair[1].score, 2), "p": pair[1].p_value}
        for name, pair in zip(metrics, scored)
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--splits", nargs="+", default=["everyday", "test", "ml_test"])
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    old, new = load_checkpoint(args.old), load_checkpoint(args.new)
    language = new.metadata["target_language"]
    corpora = {}  # corpus -> its splits, each loaded once

    def examples_of(split: str) -> list:
        if split == "everyday":
            return read_everyday(language, source_language=new.metadata.get("source_language", "en"))
        corpus, _, name = split.rpartition(":")
        corpus = corpus or new.metadata["corpus"]
        if corpus not in corpora:
            corpora[corpus] = load_splits(corpus, args.data_dir)
        return corpora[corpus][name]

    tokenize = bleu_tokenizer_for(language)
    rows = []
    for split in args.splits:
        examples = examples_of(split)
        outputs = {}
        for name, loaded in (("old", old), ("new", new)):
            ids = translate_corpus_ids(loaded.model, loaded.source_tokenizer, [e.source for e in examples])
            outputs[name] = ([loaded.target_tokenizer.decode(i) for i in ids], stutter_share(ids))
        row = {
            "split": split,
            "sentences": len(examples),
            **paired_bootstrap(outputs["old"][0], outputs["new"][0], reference_streams(examples), tokenize),
            "stutter": {"old": round(outputs["old"][1], 4), "new": round(outputs["new"][1], 4)},
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    print("\n| set | sentences | BLEU old → new (p) | chrF old → new (p) | stutter old → new |\n|---|---|---|---|---|")
    for r in rows:
        b, c, s = r["bleu"], r["chrf"], r["stutter"]
        print(
            f"| {r['split']} | {r['sentences']} | {b['old']} → {b['new']} (p = {b['p']:.3f}) | "
            f"{c['old']} → {c['new']} (p = {c['p']:.3f}) | {s['old']:.1%} → {s['new']:.1%} |"
        )


if __name__ == "__main__":
    main()
