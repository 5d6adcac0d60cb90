"""One decoding step: what the decoder looked at while choosing output piece t, and what it could have chosen."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .text import plotly_literal


def decoding_step_figure(
    step: int,
    decoder_row: np.ndarray,
    decoder_keys: list[str],
    cross_row: np.ndarray,
    source_keys: list[str],
    alternatives: list[tuple[str, float]],
    chosen: str,
    labels: dict,
    chosen_probability: float | None = None,
) -> go.Figure:
    """Three bar charts for step t: the decoder self-attention row of position t over the pieces written so far,
    the cross-attention row over the source pieces, and the top next-piece probabilities with the chosen (or,
    under teacher forcing, fed) piece in green. A chosen piece outside the top k gets a bar of its own at the
    end, with its probability. labels: self, cross, next, weight, probability."""
    visible = step + 1  # position t sees decoder inputs 0..t; the rest is masked
    fig = make_subplots(rows=1, cols=3, subplot_titles=[labels["self"], labels["cross"], labels["next"]],
                        horizontal_spacing=0.07)
    fig.add_trace(go.Bar(x=list(range(visible)), y=decoder_row[:visible], marker_color="#1f77b4",
                         hovertemplate="%{y:.3f}<extra></extra>"), row=1, col=1)
    fig.update_xaxes(tickmode="array", tickvals=list(range(visible)), ticktext=plotly_literal(decoder_keys[:visible]), row=1, col=1)
    fig.add_trace(go.Bar(x=list(range(len(source_keys))), y=cross_row, marker_color="#ff7f0e",
                         hovertemplate="%{y:.3f}<extra></extra>"), row=1, col=2)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(source_keys))), ticktext=plotly_literal(source_keys), row=1, col=2)
    pieces, probabilities = [p for p, _ in alternatives], [p for _, p in alternatives]
    if chosen not in pieces and chosen_probability is not None:
        pieces, probabilities = pieces + [chosen], probabilities + [chosen_probability]
    fig.add_trace(go.Bar(x=list(range(len(pieces))), y=probabilities,
                         marker_color=["#2ca02c" if p == chosen else "#9c9c9c" for p in pieces],
                         hovertemplate="%{y:.3f}<extra></extra>"), row=1, col=3)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(pieces))), ticktext=plotly_literal(pieces), row=1, col=3)
    for col, title in ((1, labels["weight"]), (2, labels["weight"]), (3, labels["probability"])):
        fig.update_yaxes(range=[0, 1], title_text=title, row=1, col=col)
    fig.update_layout(height=340, showlegend=False, margin=dict(l=10, r=10, t=40, b=10))
    return fig
