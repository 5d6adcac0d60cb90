#!/usr/bin/env python3
"""Check a gold word-alignment file (alignments/*.tsv) for format and against every training corpus.

Each line: source TAB target TAB links. Both sides are space-tokenized (one space between tokens; a Chinese
side has a space between every character); links are space-separated "i-j" (sure) or "i?j" (possible),
0-based, source index first. Checked here: three fields, no empty side, tokens separated by single spaces,
every index in range, no link given twice, every token of both sides either linked or deliberately left
unaligned (reported, not an error), and no English sentence (joined with single spaces, or in its written
form) found in a training corpus, the everyday set, the must-translate list or another line of the file.

Corpora are read from ../shared/data beside the repository root, or from ATTENTION_EXPLORER_DATA.
Standard library only. Exits 1 on any error.

Usage: python tests/data/check_alignments.py tests/data/alignments/en-zh.tsv [...]
"""

import gzip
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DATA_DIR = Path(os.environ.get("ATTENTION_EXPLORER_DATA", REPO_ROOT.parent / "shared" / "data"))
MIN_SENTENCES = 100

# (relative path, kind): "tsv" = English in column 1, "lines" = one English sentence per line.
CORPORA = [
    ("tatoeba-en-zh/cmn-eng.tsv", "tsv"),
    ("tatoeba-en-de/deu-eng.tsv.gz", "tsv"),
    ("multi30k/train.en.gz", "lines"),
    ("multi30k/val.en.gz", "lines"),
    ("multi30k/test_2016_flickr.en.gz", "lines"),
    ("en-zh-extra/tatoeba-cmn-eng-2024.tsv", "tsv"),
    ("en-zh-extra/jec-basic-sentences.tsv", "tsv"),
    ("en-zh-extra/wiktionary-examples.tsv", "tsv"),
    ("en-zh-extra/global-asp-stories.tsv", "tsv"),
    ("en-zh-extra/xsid.tsv", "tsv"),
]
LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def key(sentence: str) -> str:
    """Case, spacing before punctuation, curly quotes and final punctuation ignored."""
    s = sentence.replace("\u2019", "'").replace("\u2018", "'").casefold()
    s = re.sub(r"\s+([.,!?;:])", r"\1", s)  # "gesehen ." -> "gesehen."
    s = re.sub(r"\s+('s|n't|'re|'m|'ll|'ve|'d)\b", r"\1", s)  # "did n't" -> "didn't"
    s = re.sub(r"\s+", " ", s).strip()
    return s.rstrip(".!?;:,。！？ \"'").strip()


def read_english(path: Path, kind: str):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8-sig") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line:
                yield line.split("\t", 1)[0].strip() if kind == "tsv" else line.strip()


def protected_keys() -> dict[str, str]:
    keys = {}
    for rel, kind in CORPORA:
        path = DATA_DIR / rel
        if not path.exists():
            sys.exit(f"missing corpus file: {path} (set ATTENTION_EXPLORER_DATA to the data folder)")
        for sentence in read_english(path, kind):
            keys.setdefault(key(sentence), rel)
    for rel in ("tests/data/everyday.tsv", "tests/data/must_translate.tsv"):
        for line in (REPO_ROOT / rel).read_text(encoding="utf-8").splitlines()[1:]:
            if line.strip() and not line.startswith("#"):
                keys.setdefault(key(line.split("\t")[0]), rel)
    return keys


def check(path: Path, keys: dict[str, str]) -> list[str]:
    errors, seen, unaligned = [], {}, 0
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            errors.append(f"{path.name}:{number}: expected 3 tab-separated fields, got {len(fields)}")
            continue
        source, target, links = fields
        for side, text in (("source", source), ("target", target)):
            if not text.strip() or text != text.strip() or "  " in text:
                errors.append(f"{path.name}:{number}: {side} side empty, padded or with double spaces")
        src, tgt = source.split(" "), target.split(" ")
        pairs = set()
        for link in links.split():
            m = LINK.match(link)
            if not m:
                errors.append(f"{path.name}:{number}: bad link {link!r}")
                continue
            i, j = int(m.group(1)), int(m.group(3))
            if i >= len(src) or j >= len(tgt):
                errors.append(f"{path.name}:{number}: link {link} out of range ({len(src)} x {len(tgt)} tokens)")
            if (i, j) in pairs:
                errors.append(f"{path.name}:{number}: link {i},{j} given twice")
            pairs.add((i, j))
        if not pairs:
            errors.append(f"{path.name}:{number}: no links")
        unaligned += len(set(range(len(src))) - {i for i, _ in pairs}) + len(
            set(range(len(tgt))) - {j for _, j in pairs}
        )
        k = key(source)
        if k in seen:
            errors.append(f"{path.name}:{number}: same English as line {seen[k]}")
        seen.setdefault(k, number)
        if k in keys:
            errors.append(f"{path.name}:{number}: English found in {keys[k]}: {source!r}")
    print(f"{path}: {len(lines)} sentences, {unaligned} unaligned tokens")
    if len(lines) < MIN_SENTENCES:
        errors.append(f"{path.name}: only {len(lines)} sentences, need at least {MIN_SENTENCES}")
    return errors


def main(argv):
    keys = protected_keys()
    errors = [e for p in argv[1:] for e in check(Path(p), keys)]
    for e in errors:
        print("ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
