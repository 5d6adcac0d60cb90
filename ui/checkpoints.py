"""The checkpoints the app offers: where they are, what each is called in the menu, its example sentences and
minimal pairs (both in the language it reads)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from model.checkpoint import read_metadata
from words import language_name

SHIPPED_ROOT = Path(__file__).resolve().parent.parent / "checkpoints"
# Offered when a checkpoint folder has no examples.txt (one sentence per line, from that checkpoint's domain; the
# page opens on the first), in its source language. The seeds' own example first, then their pair whose words
# swap places (written in Chinese in the seeds: 猫追狗 and 狗追猫 hold the same characters in another order).
DEFAULT_EXAMPLES = {
    "en": [
        "Tom chases Jerry.",
        "The cat chases the dog.",
        "The dog chases the cat.",
        "Tom is reading a book.",
        "I don't know what to do.",
        "She bought a red car yesterday.",
        "The cat is sleeping on the sofa.",
    ],
    "zh": ["汤姆追逐杰瑞。", "猫追狗。", "狗追猫。", "我是一名学生。", "早上好。"],
}
PREFERRED_CHECKPOINT = "en-zh"  # the first one a visitor sees, when it is there


@dataclass(frozen=True)
class MinimalPair:
    """Two sentences that differ in one thing, for the two-sentence view."""

    name: str  # its name's key in words/words.toml
    first: str
    second: str
    # the words it is about: the query, the word that fits the first sentence, the one that fits the second (the
    # two-sentence view's head ranking starts on them)
    tracked: tuple[str, str, str]


# By the language a checkpoint reads. Every sentence is a row of tests/data/must_translate*.tsv (never trained on).
MINIMAL_PAIRS = {
    "en": (
        MinimalPair(
            "pair_coreference",
            "The animal didn't cross the street because it was too tired.",
            "The animal didn't cross the street because it was too wide.",
            ("it", "animal", "street"),
        ),
        MinimalPair("pair_word_order", "The dog chases the cat.", "The cat chases the dog.", ("chases", "dog", "cat")),
        MinimalPair(
            "pair_coreference_size",
            "The trophy didn't fit in the suitcase because it was too big.",
            "The trophy didn't fit in the suitcase because it was too small.",
            ("it", "trophy", "suitcase"),
        ),
        MinimalPair("pair_roles", "She gave him a book.", "He gave her a book.", ("gave", "she", "he")),
    ),
    # the seeds' own pair, written as they write it
    "zh": (
        MinimalPair("pair_word_order", "狗追猫。", "猫追狗。", ("追", "狗", "猫")),
        MinimalPair("pair_roles", "她给了他一本书。", "他给了她一本书。", ("给", "她", "他")),
    ),
}


def checkpoint_root() -> Path:
    """The folder of checkpoint folders: ATTENTION_EXPLORER_CHECKPOINTS, read on every run (tests and a server's
    operator may point it elsewhere), or the shipped checkpoints/."""
    return Path(os.environ.get("ATTENTION_EXPLORER_CHECKPOINTS", SHIPPED_ROOT))


def source_language(name: str) -> str:
    """The language a checkpoint reads (its config.json's metadata; English where it does not say)."""
    return read_metadata(checkpoint_root() / name).get("source_language", "en")


def examples_for(name: str) -> list[str]:
    defaults = DEFAULT_EXAMPLES.get(source_language(name), DEFAULT_EXAMPLES["en"])
    path = checkpoint_root() / name / "examples.txt"
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return defaults
    return [line for line in lines if line] or defaults


def checkpoint_label(name: str, meta: dict, lang: str) -> str:
    """ "en-de · English → German", from the folder's config.json metadata (just the name without languages)."""
    if "source_language" not in meta or "target_language" not in meta:
        return name
    source, target = (language_name(meta[k], lang) for k in ("source_language", "target_language"))
    return f"{name} · {source} → {target}"


def minimal_pairs(name: str) -> tuple[MinimalPair, ...]:
    """The minimal pairs offered with a checkpoint, in the language it reads (English where none are written)."""
    return MINIMAL_PAIRS.get(source_language(name), MINIMAL_PAIRS["en"])
