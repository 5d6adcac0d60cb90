"""Non-words: how many of a German model's output words never occur in the German training text, per 1,000
output words, on the held-out Tatoeba test split (greedy). A model whose pieces were learnt on other text
strings pieces into words no one writes ("Entschaft", "Vergleidung").

    python benchmarks/non_words.py checkpoints/en-de [--corpus tatoeba-extra-en-de] [--show 20]

The German training text is that of --corpus (every target sentence, name and term it trains on); a word is
compared case-sensitively, as written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.checkpoint import load_checkpoint  # noqa: E402
from model.data import DEFAULT_DATA_DIR, load_splits, training_pairs  # noqa: E402
from model.evaluate import translate_corpus  # noqa: E402

WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")  # letters, hyphenated compounds kept whole


def words(text: str) -> list[str]:
    return WORD.findall(text)


def non_words_per_thousand(outputs: list[str], known: set[str]) -> tuple[float, list[str]]:
    """(unknown words per 1,000 output words, the unknown words in order of appearance)."""
    written = [w for o in outputs for w in words(o)]
    unknown = [w for w in written if w not in known]
    return 1000 * len(unknown) / max(len(written), 1), unknown


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--corpus", default="tatoeba-extra-en-de", help="whose German training text counts as known")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--show", type=int, default=20, help="print this many of the unknown words")
    args = p.parse_args(argv)
    splits = load_splits(args.corpus, args.data_dir)
    known = {w for _, de in training_pairs(splits.train) + splits.lexicon for w in words(de)}
    test = load_splits("tatoeba-en-de", args.data_dir).test
    loaded = load_checkpoint(args.checkpoint)
    outputs = translate_corpus(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [e.source for e in test])
    rate, unknown = non_words_per_thousand(outputs, known)
    print(
        json.dumps(
            {
                "checkpoint": str(args.checkpoint),
                "sentences": len(test),
                "non_words_per_1000": round(rate, 1),
                "examples": unknown[: args.show],
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
