"""A padded batch: the token matrix with its padding, drawn as the model reads it. Pure: lists in, figure out."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .text import plotly_literal

REAL_COLOR = "#c6dbef"
PAD_COLOR = "#bdbdbd"


def padded_tokens_figure(pieces: list[list[str]], real: np.ndarray, row_labels: list[str], labels: dict) -> go.Figure:
    """pieces: one padded row per sentence; real: (sentences, positions) True for a real token, False for padding
    (what the padding mask lets a query see). labels: position, real, padding, title."""
    real = np.asarray(real, dtype=bool)
    n_rows, n_positions = real.shape
    text = [plotly_literal(row) for row in pieces]
    state = [[labels["real"] if r else labels["padding"] for r in row] for row in real]
    fig = go.Figure(go.Heatmap(
        z=real.astype(np.float32), x=list(range(n_positions)), y=list(range(n_rows)), text=text,
        texttemplate="%{text}", customdata=state, colorscale=[[0, PAD_COLOR], [1, REAL_COLOR]], zmin=0, zmax=1,
        showscale=False, xgap=2, ygap=2,
        hovertemplate=f"{labels['position']} %{{x}}: %{{text}} (%{{customdata}})<extra></extra>",
    ))
    fig.update_layout(
        title=dict(text=html.escape(labels["title"], quote=False), y=0.98, yanchor="top"),
        xaxis=dict(title=dict(text=labels["position"], standoff=2), side="top", dtick=1),
        yaxis=dict(tickmode="array", tickvals=list(range(n_rows)), ticktext=plotly_literal(row_labels),
                   autorange="reversed"),
        height=150 + 48 * n_rows, margin=dict(l=10, r=10, t=110, b=10), plot_bgcolor="white",
    )
    return fig
