"""Reading the parallel corpora and splitting them deterministically.

Tatoeba lists some English sentences several times, once per Chinese translation. We split by *English
sentence*, so no English sentence is in two splits, and the test split keeps every reference of its sentences
(multi-reference BLEU).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
from dataclasses import dataclass
from pathlib import Path

# ../shared/data beside the repository, unless ATTENTION_EXPLORER_DATA points elsewhere.
DEFAULT_DATA_DIR = Path(
    os.environ.get("ATTENTION_EXPLORER_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


@dataclass
class Example:
    source: str
    references: list[str]  # one or more target sentences for this source


@dataclass
class Splits:
    train: list[Example]
    valid: list[Example]
    test: list[Example]

    def __getitem__(self, name: str) -> list[Example]:
        return getattr(self, name)


def read_tatoeba(path: Path) -> list[Example]:
    """cmn-eng.tsv: English <tab> Chinese <tab> attribution. Pairs sharing an English sentence are grouped."""
    grouped: dict[str, list[str]] = {}
    with open(path, encoding="utf-8-sig") as f:  # the file starts with a byte-order mark
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2 or not cols[0].strip() or not cols[1].strip():
                continue
            grouped.setdefault(cols[0].strip(), []).append(cols[1].strip())
    return [Example(src, refs) for src, refs in grouped.items()]


def _stable_order(examples: list[Example], seed: int) -> list[Example]:
    # Sort by a hash of the source so the split does not depend on file order, then shuffle with a fixed seed.
    ordered = sorted(examples, key=lambda e: hashlib.sha1(e.source.encode()).hexdigest())
    random.Random(seed).shuffle(ordered)
    return ordered


def split_grouped(examples: list[Example], n_valid: int, n_test: int, seed: int = 1234) -> Splits:
    ordered = _stable_order(examples, seed)
    return Splits(
        train=ordered[n_valid + n_test :],
        valid=ordered[:n_valid],
        test=ordered[n_valid : n_valid + n_test],
    )


def _read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def read_multi30k(directory: Path, split: str, src_lang: str = "en", tgt_lang: str = "de") -> list[Example]:
    def find(lang: str) -> Path:
        for name in (f"{split}.{lang}.gz", f"{split}.{lang}"):
            if (directory / name).exists():
                return directory / name
        raise FileNotFoundError(f"no {split}.{lang}[.gz] in {directory}")

    src, tgt = _read_lines(find(src_lang)), _read_lines(find(tgt_lang))
    if len(src) != len(tgt):
        raise ValueError(f"{split}: {len(src)} source lines but {len(tgt)} target lines")
    return [Example(s.strip(), [t.strip()]) for s, t in zip(src, tgt) if s.strip() and t.strip()]


CORPORA = {"tatoeba-en-zh": "tatoeba-en-zh", "multi30k-en-de": "multi30k"}  # corpus -> its folder in data_dir


def corpus_available(corpus: str, data_dir: Path = DEFAULT_DATA_DIR) -> bool:
    return (Path(data_dir) / CORPORA[corpus]).is_dir()


def load_splits(corpus: str, data_dir: Path = DEFAULT_DATA_DIR) -> Splits:
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    folder = Path(data_dir) / CORPORA[corpus]
    if corpus == "tatoeba-en-zh":
        examples = read_tatoeba(folder / "cmn-eng.tsv")
        # 1,000 valid and 1,500 test sentences from the full corpus; a tenth each from a small one (tests).
        tenth = max(1, len(examples) // 10)
        return split_grouped(examples, n_valid=min(1000, tenth), n_test=min(1500, tenth))
    return Splits(*(read_multi30k(folder, split) for split in ("train", "val", "test_2016_flickr")))


def training_pairs(examples: list[Example]) -> list[tuple[str, str]]:
    """Every (source, reference) pair: a sentence with three references gives three training pairs."""
    return [(e.source, ref) for e in examples for ref in e.references]
