"""Draw the held-out sentences whose translations are judged by hand for the unsure note, and write them, with a
checkpoint's greedy translations, as a `confidence_labels.tsv` to be judged (every row "unjudged"):

    python benchmarks/judgement_sample.py checkpoints/en-de --n 40    # writes checkpoints/en-de/confidence_labels.tsv

N random sentences of the checkpoint's validation split and N of its test split (random.Random(5), as the
en-zh labels were drawn). Judge each row good or bad by hand (bad: the meaning is wrong or the output is not a
sentence of the language), then `python -m model.confidence --checkpoint CK` chooses the threshold.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.cli import corpus_of, open_checkpoint  # noqa: E402
from model.confidence import LABELS, greedy_with_confidence  # noqa: E402
from model.data import DEFAULT_DATA_DIR, load_splits  # noqa: E402


def draw(splits, n: int, seed: int = 5) -> list[tuple[str, str]]:
    """(split, English) for n random sentences of valid and n of test, one reproducible draw."""
    rng = random.Random(seed)
    return [(split, e.source) for split in ("valid", "test") for e in rng.sample(getattr(splits, split), n)]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--n", type=int, default=40, help="sentences of each split")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    path = args.checkpoint / LABELS
    if path.exists():
        sys.exit(f"{path} exists: judge its stale rows with benchmarks/stale_judgements.py instead")
    loaded = open_checkpoint(args.checkpoint)
    drawn = draw(load_splits(corpus_of(loaded, None, args.data_dir), args.data_dir), args.n)
    translations = greedy_with_confidence(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [english for _, english in drawn]
    )
    lines = [
        f"# Greedy translations of the shipped {args.checkpoint.name} checkpoint, judged by hand (bad: the meaning is",
        "# wrong or the output is not a sentence of the language). "
        f"{args.n} random sentences of each split (random.Random(5),",
        "# benchmarks/judgement_sample.py); model.confidence reads this file.",
        "# split\tenglish\ttranslation\tjudgement",
    ]
    lines += [
        f"{split}\t{english}\t{translation}\tunjudged"
        for (split, english), (translation, _) in zip(drawn, translations)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(drawn)} rows to {path}: judge each good or bad")


if __name__ == "__main__":
    main()
