"""Tables (pandas) for the app: the output pieces with their probabilities, and attention as CSV."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .widths import grid_text_px

# The data grid (st.dataframe) draws on a canvas and cuts a heading or value longer than its column; these widths
# keep a table's headings whole and the table inside the main column: the text's width in the grid's font
# (viz.widths.grid_text_px) and the cell's padding on both sides.
GRID_CELL_PADDING_PX = 18
MAIN_COLUMN_PX = 564  # the main column at 1024 px with the sidebar open
GRID_PX = MAIN_COLUMN_PX - 4  # what a grid's columns may take there (its inner width, measured: 562)


def column_width_px(heading: str, values: list[str]) -> int:
    """The width that shows a column's heading and every value whole."""
    return math.ceil(max([grid_text_px(heading), *map(grid_text_px, values)]) + GRID_CELL_PADDING_PX)


@dataclass(frozen=True)
class GridColumn:
    """How the data grid shows one column of a table."""

    name: str  # the column's name in the table (also the heading's tooltip where the heading is shorter)
    heading: str
    number_format: str | None  # printf-style, for a number column; None: shown as its text
    width_px: int


def grid_columns(
    frame: pd.DataFrame, headings: dict[str, str] | None = None, number_formats: dict[str, str] | None = None
) -> list[GridColumn]:
    """Each column as wide as its heading (headings: column -> a shorter heading) and its values as shown."""
    headings, number_formats = headings or {}, number_formats or {}
    columns = []
    for name in frame.columns:
        heading, fmt = headings.get(name, str(name)), number_formats.get(name)
        values = frame[name].dropna()
        texts = [fmt % v for v in values] if fmt else values.astype(str).tolist()
        columns.append(GridColumn(name, heading, fmt, column_width_px(heading, texts)))
    return columns


def probability_text(p: float) -> str:
    """Four decimals; below 0.0001 "< 0.0001", so a tiny probability never reads as 0 beside its neighbours."""
    return "< 0.0001" if p < 0.00005 else f"{p:.4f}"


def token_table(
    pieces: list[str],
    probabilities: list[float],
    alternatives: list[list[tuple[str, float]]],
    labels: dict,
    alternatives_px: float | None = None,
) -> pd.DataFrame:
    """One row per output piece: its step (numbered from 0 like the decoder positions, so step t is the piece that
    decoder position t chose), the piece, its probability, and the other pieces the model rated most likely at
    that step, most likely first: as many as fit alternatives_px (the grid would cut the rest mid-word; selecting
    a row lists them all), all of them when None."""

    def others(piece: str, alts: list[tuple[str, float]]) -> str:
        text = ""
        for other, p in alts:
            if other == piece:
                continue
            longer = f"{text}  {other} {probability_text(p)}" if text else f"{other} {probability_text(p)}"
            if alternatives_px is not None and grid_text_px(longer) + GRID_CELL_PADDING_PX > alternatives_px:
                break
            text = longer
        return text

    return pd.DataFrame(
        {
            labels["position"]: list(range(len(pieces))),
            labels["piece"]: pieces,
            labels["probability"]: [probability_text(p) for p in probabilities],
            labels["alternatives"]: [others(piece, alts) for piece, alts in zip(pieces, alternatives)],
        }
    )


def attention_frame(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> pd.DataFrame:
    """(queries, keys) -> DataFrame with "position:token" labels, so repeated tokens stay distinct (and a
    token such as "=1+1" cannot start a spreadsheet formula)."""
    return pd.DataFrame(
        np.asarray(weights, dtype=float),
        index=[f"{i}:{t}" for i, t in enumerate(query_tokens)],
        columns=[f"{j}:{t}" for j, t in enumerate(key_tokens)],
    )


def attention_csv(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], query_axis: str) -> str:
    frame = attention_frame(weights, query_tokens, key_tokens)
    frame.index.name = query_axis
    return frame.to_csv(float_format="%.6f")


def localized_head_table(frame: pd.DataFrame, t, lang: str, kind_names: dict[str, str]) -> pd.DataFrame:
    """A probe table (head statistics, named heads, strongest heads, ablation ranking) for a reader: every column
    name, attention kind, statistic and role in the interface language. t: words.t; kind_names: kind -> the
    name of its view in that language. Numbers are rounded to 3 places."""

    def known(key: str) -> bool:
        try:
            t(key, lang)
            return True
        except KeyError:
            return False

    def column(name: str) -> str:
        for key in (f"col_{name}", f"short_{name}"):
            if known(key):
                return t(key, lang)
        return name

    def role(text: str) -> str:
        separator = "、" if lang == "zh" else ", "
        return (
            separator.join(t(f"role_{r}", lang) if known(f"role_{r}") else r for r in text.split(", ")) if text else ""
        )

    shown = frame.copy()
    if "kind" in shown:
        shown["kind"] = shown["kind"].map(lambda k: kind_names.get(k, k))
    if "role" in shown:
        shown["role"] = shown["role"].fillna("").map(role)
    if "statistic" in shown:
        shown["statistic"] = shown["statistic"].map(lambda n: t(f"short_{n}", lang) if known(f"short_{n}") else n)
    return shown.round(3).rename(columns=column)
