"""Tables (pandas) for the app: the output pieces with their probabilities, and attention as CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd


def token_table(pieces: list[str], probabilities: list[float], alternatives: list[list[tuple[str, float]]],
                labels: dict) -> pd.DataFrame:
    """One row per output piece: its step (numbered from 0 like the decoder positions, so step t is the piece that
    decoder position t chose), the piece, its probability, the top alternatives at that step."""
    return pd.DataFrame(
        {
            labels["position"]: list(range(len(pieces))),
            labels["piece"]: pieces,
            labels["probability"]: [round(p, 4) for p in probabilities],
            labels["alternatives"]: ["  ".join(f"{piece} {p:.2f}" for piece, p in alts) for alts in alternatives],
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
