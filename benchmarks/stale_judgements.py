"""The hand-judged translations of confidence_labels.tsv that a checkpoint's weights no longer write, with what
they write now: the rows to judge again before `python -m model.confidence` can run.

    python benchmarks/stale_judgements.py checkpoints/en-zh            # lists them
    python benchmarks/stale_judgements.py checkpoints/en-zh --write    # also puts the new translations in the
                                                                       # file, judged "unjudged": edit each by hand
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.checkpoint import load_checkpoint  # noqa: E402
from model.confidence import LABELS, greedy_with_confidence  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    loaded = load_checkpoint(args.checkpoint)
    path = args.checkpoint / LABELS
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [(i, line.split("\t")) for i, line in enumerate(lines) if line.strip() and not line.startswith("#")]
    now = greedy_with_confidence(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [cols[1] for _, cols in rows]
    )
    stale = 0
    for (i, (split, english, before, judgement, *_note)), (translation, _) in zip(rows, now):
        if translation != before:
            stale += 1
            print(f"{split}\t{english}\n    was ({judgement}): {before}\n    now: {translation}")
            lines[i] = "\t".join((split, english, translation, "unjudged"))
    print(f"{stale} of {len(rows)} judged translations changed")
    if args.write and stale:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
