"""Word level for a Chinese source (issue 58): how well each way of cutting a sentence into words matches our
hand segmentation (tests/data/zh_segmented.txt), as the precision, recall and F1 of the word boundaries it puts
between characters.

    python benchmarks/chinese_word_level.py checkpoints/zh-en      # or a tokenizer file (a run's source.model)

- pieces: the checkpoint's source pieces, each its own unit (model.tokenizer.group_pieces_into_words for
  Chinese: the grouping the app uses, as on the Chinese target side);
- jieba: jieba.lcut's words (pip install jieba; not a dependency of the app), where it is installed.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.tokenizer import Tokenizer, group_pieces_into_words  # noqa: E402

HAND = Path(__file__).resolve().parents[1] / "tests" / "data" / "zh_segmented.txt"


def boundaries(words: list[str]) -> set[int]:
    """Character offsets between two words (not the sentence's ends)."""
    cuts, at = set(), 0
    for word in words[:-1]:
        at += len(word)
        cuts.add(at)
    return cuts


def score(guessed: list[list[str]], hand: list[list[str]]) -> dict[str, float]:
    right = found = wanted = 0
    for g, h in zip(guessed, hand):
        same = unicodedata.normalize("NFKC", "".join(g)) == unicodedata.normalize("NFKC", "".join(h))
        assert same, (g, h)  # the source tokenizer reads NFKC (？ as ?): one character for one
        cut_g, cut_h = boundaries(g), boundaries(h)
        right, found, wanted = right + len(cut_g & cut_h), found + len(cut_g), wanted + len(cut_h)
    precision, recall = right / found, right / wanted
    return {"precision": precision, "recall": recall, "f1": 2 * precision * recall / (precision + recall)}


def piece_words(tokenizer: Tokenizer, sentence: str) -> list[str]:
    pieces = [p for p in tokenizer.processor.encode_as_pieces(sentence)]
    words = ["".join(pieces[i] for i in g).replace("\u2581", "") for g in group_pieces_into_words(pieces, "zh")]
    return [w for w in words if w]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tokenizer", type=Path, help="a checkpoint folder (its source.model) or a .model file")
    args = p.parse_args(argv)
    path = args.tokenizer / "source.model" if args.tokenizer.is_dir() else args.tokenizer
    tokenizer = Tokenizer.load(path)
    hand = [line.split() for line in HAND.read_text(encoding="utf-8").splitlines() if line and line[0] != "#"]
    sentences = ["".join(words) for words in hand]
    ways = {"pieces": [piece_words(tokenizer, s) for s in sentences]}
    try:
        import jieba

        jieba.setLogLevel(60)
        ways["jieba"] = [[w for w in jieba.lcut(s) if w.strip()] for s in sentences]
    except ImportError:
        print("(jieba not installed: pip install jieba)")
    print(f"{len(hand)} hand-segmented sentences, {sum(len(h) for h in hand)} words")
    print("| cut by | boundary precision | recall | F1 |\n|---|---|---|---|")
    for name, guessed in ways.items():
        s = score(guessed, hand)
        print(f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} |")
    for g, h in zip(ways["pieces"], hand):
        if boundaries(g) != boundaries(h):
            print("  pieces:", " ".join(g), "   hand:", " ".join(h))
    return 0


if __name__ == "__main__":
    sys.exit(main())
