"""How a checkpoint does on tests/data/must_translate.tsv (greedy): right rows per group, every wrong row with
its output, and the still-wrong table that tests/model/test_must_translate.py keeps as strict xfails.

    python benchmarks/must_translate_report.py checkpoints/en-zh          # counts and wrong rows
    python benchmarks/must_translate_report.py checkpoints/en-de --table  # the EN_DE_STILL_WRONG entries
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.checkpoint import load_checkpoint  # noqa: E402
from model.data import must_translate_rows  # noqa: E402
from model.evaluate import translate_corpus, translated_right  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--table", action="store_true", help="print the wrong rows as the test's still-wrong table")
    args = p.parse_args(argv)
    loaded = load_checkpoint(args.checkpoint)
    language = loaded.metadata["target_language"]
    rows = [r for r in must_translate_rows(loaded.metadata["source_language"]) if r.language == language]
    outputs = translate_corpus(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [r.english for r in rows]
    )
    right = [translated_right(o, r.words, language) for r, o in zip(rows, outputs)]
    if args.table:
        for row, output, ok in zip(rows, outputs, right):
            if not ok:
                print(f"    {row.english!r}: {output!r},")
        return
    for group in dict.fromkeys(r.group for r in rows):
        n = sum(r.group == group for r in rows)
        k = sum(ok for ok, r in zip(right, rows) if r.group == group)
        print(f"{group}: {k} of {n} right ({k / n:.0%})")
    for row, output, ok in zip(rows, outputs, right):
        if not ok:
            print(f"  wrong [{row.group}] {row.english} -> {output}   (needs: {' '.join(row.words)})")


if __name__ == "__main__":
    main()
