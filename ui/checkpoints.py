"""The checkpoints the app offers: where they are, what each is called in the menu, its example sentences."""

from __future__ import annotations

import os
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
