"""The checkpoints the app offers: where they are, what each is called in the menu, its example sentences."""

from __future__ import annotations

import os
from pathlib import Path

from ui.words import language_name

SHIPPED_ROOT = Path(__file__).resolve().parent.parent / "checkpoints"
# Offered when a checkpoint folder has no examples.txt (one sentence per line, from that checkpoint's domain; the
# page opens on the first). The seeds' own example first, then their pair whose words swap places.
DEFAULT_EXAMPLES = [
    "Tom chases Jerry.",
    "The cat chases the dog.",
    "The dog chases the cat.",
    "Tom is reading a book.",
    "I don't know what to do.",
    "She bought a red car yesterday.",
    "The cat is sleeping on the sofa.",
]
PREFERRED_CHECKPOINT = "en-zh"  # the first one a visitor sees, when it is there


def checkpoint_root() -> Path:
    """The folder of checkpoint folders: ATTENTION_EXPLORER_CHECKPOINTS, read on every run (tests and a server's
    operator may point it elsewhere), or the shipped checkpoints/."""
    return Path(os.environ.get("ATTENTION_EXPLORER_CHECKPOINTS", SHIPPED_ROOT))


def examples_for(name: str) -> list[str]:
    path = checkpoint_root() / name / "examples.txt"
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return DEFAULT_EXAMPLES
    return [line for line in lines if line] or DEFAULT_EXAMPLES


def checkpoint_label(name: str, meta: dict, lang: str) -> str:
    """ "en-de · English → German", from the folder's config.json metadata (just the name without languages)."""
    if "source_language" not in meta or "target_language" not in meta:
        return name
    source, target = (language_name(meta[k], lang) for k in ("source_language", "target_language"))
    return f"{name} · {source} → {target}"
