"""Draw the held-out sentences whose translations are judged by hand for the unsure note, and write them, with a
checkpoint's greedy translations, as a `confidence_labels.tsv` to be judged (every row "unjudged"):

    python benchmarks/judgement_sample.py checkpoints/en-de --n 40    # writes checkpoints/en-de/confidence_labels.tsv
    python benchmarks/judgement_sample.py checkpoints/zh-en --more test --n 150 --seed 7   # adds 150 to judge

N random sentences of the checkpoint's validation split and N of its test split (random.Random(5), as the
en-zh labels were drawn); with --more, N more of one split among those not yet in the file, appended. Judge
each row good or bad by hand (bad: the meaning is wrong or the output is not a sentence of the language), then
`python -m model.confidence --checkpoint CK` chooses the threshold.
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


def draw_more(splits, split: str, n: int, seed: int, taken: set[str]) -> list[tuple[str, str]]:
    """(split, source) for n more random sentences of one split, none of them already judged."""
    rest = [e.source for e in getattr(splits, split) if e.source not in taken]
    return [(split, source) for source in random.Random(seed).sample(rest, n)]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--n", type=int, default=40, help="sentences of each split")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--more", choices=["valid", "test"], help="append N more sentences of this split to judge")
    p.add_argument("--seed", type=int, default=6, help="with --more: the draw's seed (say it in the file)")
    args = p.parse_args(argv)
    path = args.checkpoint / LABELS
    if args.more:
        add_more(args, path)
        return
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


def add_more(args, path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    taken = {line.split("\t")[1] for line in lines if line.strip() and not line.startswith("#")}
    loaded = open_checkpoint(args.checkpoint)
    splits = load_splits(corpus_of(loaded, None, args.data_dir), args.data_dir)
    drawn = draw_more(splits, args.more, args.n, args.seed, taken)
    translations = greedy_with_confidence(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [source for _, source in drawn]
    )
    header = next(i for i, line in enumerate(lines) if line.startswith("# split"))
    lines.insert(
        header,
        f"# Then {args.n} more {args.more} sentences (random.Random({args.seed}) among those not drawn), to judge.",
    )
    lines += [
        f"{split}\t{source}\t{translation}\tunjudged" for (split, source), (translation, _) in zip(drawn, translations)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"added {len(drawn)} rows to {path}: judge each good or bad")


if __name__ == "__main__":
    main()
