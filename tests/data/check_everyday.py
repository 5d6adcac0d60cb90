#!/usr/bin/env python3
"""Check the everyday-sentence evaluation set (everyday.tsv) against the training corpora.

For every English sentence in everyday.tsv this reports whether it occurs in one of the corpora the
models are trained on, either exactly (after stripping surrounding whitespace) or loosely (ignoring
case, surrounding whitespace and final punctuation). It then verifies the in_corpus column: only the
required demo sentences listed in REQUIRED may be marked "yes", and the mark must agree with the
corpora. Exits with status 1 if anything is wrong.

Corpora are read from ../shared/data beside the repository root, or from the folder named by the
environment variable ATTENTION_EXPLORER_DATA. Standard library only.

Usage: python tests/data/check_everyday.py [path/to/everyday.tsv]
"""

import gzip
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DATA_DIR = Path(os.environ.get("ATTENTION_EXPLORER_DATA", REPO_ROOT.parent / "shared" / "data"))

HEADER = ["english", "chinese", "german", "in_corpus"]
MIN_ROWS = 110

# Sentences the demo needs verbatim; these may occur in a corpus (and are then marked in_corpus=yes).
REQUIRED = [
    "I am a student.",
    "Can you help me with my homework?",
    "He does not like coffee.",
    "I bought a new computer yesterday.",
    "Attention is all you need.",
    "We will go to Beijing next week.",
    "I love you.",
    "Machine translation is difficult.",
    "The dog is chasing the cat.",
    "Tom chased Jerry.",
    "The cat chases the dog.",
    "The dog chases the cat.",
]

# name -> (relative path, kind): "tsv" = tab-separated with English in column 1, "lines" = one per line.
CORPORA = {
    "tatoeba-en-zh": ("tatoeba-en-zh/cmn-eng.tsv", "tsv"),
    "tatoeba-en-de": ("tatoeba-en-de/deu-eng.tsv.gz", "tsv"),
    "multi30k-train": ("multi30k/train.en.gz", "lines"),
    "multi30k-val": ("multi30k/val.en.gz", "lines"),
    "multi30k-test2016": ("multi30k/test_2016_flickr.en.gz", "lines"),
}

FINAL_PUNCT = ".!?…。！？,;:\"'"


def loose(sentence):
    """Case-insensitive key ignoring surrounding whitespace and final punctuation."""
    s = sentence.strip().replace("\u2019", "'").casefold()
    return s.rstrip(FINAL_PUNCT + " ").strip()


def read_english(path, kind):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8-sig") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line:
                continue
            yield line.split("\t", 1)[0].strip() if kind == "tsv" else line.strip()


def load_corpora():
    corpora = {}
    for name, (rel, kind) in CORPORA.items():
        path = DATA_DIR / rel
        if not path.exists():
            sys.exit(f"missing corpus file: {path} (set ATTENTION_EXPLORER_DATA to the data folder)")
        exact, loose_keys = set(), set()
        for sentence in read_english(path, kind):
            exact.add(sentence)
            loose_keys.add(loose(sentence))
        corpora[name] = (exact, loose_keys)
    return corpora


def main(argv):  # noqa: C901 (a data check, read top to bottom)
    tsv = Path(argv[1]) if len(argv) > 1 else HERE / "everyday.tsv"
    errors = []

    raw = tsv.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit(f"{tsv}: not UTF-8 ({e})")
    if text.startswith("\ufeff"):
        errors.append("file starts with a BOM")
        text = text[1:]

    lines = text.splitlines()
    if not lines or lines[0].split("\t") != HEADER:
        errors.append(f"header must be {HEADER!r}, got {lines[0].split(chr(9)) if lines else None!r}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            errors.append(f"line {number}: empty line")
            continue
        fields = line.split("\t")
        if len(fields) != len(HEADER):
            errors.append(f"line {number}: expected {len(HEADER)} tab-separated fields, got {len(fields)}")
            continue
        if any(not field.strip() or field != field.strip() for field in fields):
            errors.append(f"line {number}: empty field or surrounding whitespace")
        if fields[3] not in ("yes", "no"):
            errors.append(f"line {number}: in_corpus must be yes or no, got {fields[3]!r}")
        rows.append((number, fields))

    print(f"{tsv}: {len(rows)} rows")
    if len(rows) < MIN_ROWS:
        errors.append(f"only {len(rows)} rows, need at least {MIN_ROWS}")

    english = [fields[0] for _, fields in rows]
    seen = {}
    for number, fields in rows:
        key = loose(fields[0])
        if key in seen:
            errors.append(f"line {number}: duplicate of line {seen[key]}: {fields[0]!r}")
        seen.setdefault(key, number)
    for sentence in REQUIRED:
        if sentence not in english:
            errors.append(f"required sentence missing: {sentence!r}")

    corpora = load_corpora()
    found_any = 0
    for number, (en, zh, de, mark) in rows:
        hits = []
        for name, (exact, loose_keys) in corpora.items():
            if en.strip() in exact:
                hits.append(f"{name} (exact)")
            elif loose(en) in loose_keys:
                hits.append(f"{name} (case/punctuation)")
        in_corpus = bool(hits)
        if in_corpus:
            found_any += 1
            print(f"  line {number}: {en!r} occurs in: {', '.join(hits)}")
        if in_corpus and en not in REQUIRED:
            errors.append(f"line {number}: {en!r} is not a required sentence but occurs in a corpus")
        if mark != ("yes" if in_corpus else "no"):
            errors.append(
                f"line {number}: in_corpus is {mark!r} but the sentence is "
                f"{'' if in_corpus else 'not '}in a corpus: {en!r}"
            )
    print(f"{found_any} of {len(rows)} English sentences occur in a training corpus")

    if errors:
        print(f"FAILED ({len(errors)} problems):")
        for error in errors:
            print("  " + error)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
