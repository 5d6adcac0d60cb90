"""What the command-line tools share: argument types that reject bad values before any work starts, and one
clear line (with a non-zero exit code) for every failure a user can cause."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from .checkpoint import CheckpointError, LoadedModel, load_checkpoint
from .data import CORPORA, DEFAULT_DATA_DIR, corpus_available


def fail(message: str) -> NoReturn:
    sys.exit(f"error: {message}")


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file; fails with one line when it is missing, a folder, binary or empty."""
    if not path.exists():
        fail(f"input file not found: {path}")
    if not path.is_file():
        fail(f"input is not a file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"input file is not UTF-8 text: {path}")
    if "\x00" in text:
        fail(f"input file is not text (it holds NUL bytes): {path}")
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        fail(f"input file holds no sentences: {path}")
    return lines


def check_output(path: Path | None) -> None:
    """Before any translating: the output's folder must exist and the output must not be a folder."""
    if path is None:
        return
    if path.is_dir():
        fail(f"output is a folder, not a file: {path}")
    if not path.parent.is_dir():
        fail(f"output folder does not exist: {path.parent}")


def open_checkpoint(path: Path) -> LoadedModel:
    try:
        return load_checkpoint(path)
    except CheckpointError as e:
        fail(str(e))


def corpus_of(loaded: LoadedModel, override: str | None, data_dir: Path) -> str:
    """The corpus to read: --corpus, else the checkpoint's own; its folder must exist under data_dir."""
    corpus = override or loaded.metadata.get("corpus")
    if not corpus:
        fail(f"{loaded.name}/config.json names no corpus (metadata.corpus): pass --corpus")
    if corpus not in CORPORA:
        fail(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    if not corpus_available(corpus, data_dir):
        hint = "" if Path(data_dir) != DEFAULT_DATA_DIR else " (set --data-dir or ATTENTION_EXPLORER_DATA)"
        fail(f"the {corpus} data is not under {data_dir}{hint}")
    return corpus
