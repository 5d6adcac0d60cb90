"""A padded batch: the token matrix with its padding, drawn as the model reads it. Pure: lists in, figure out."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .escape import plotly_literal

REAL_COLOR = "#c6dbef"
PAD_COLOR = "#bdbdbd"


def padded_tokens_figure(pieces: list[list[str]], real: np.ndarray, row_labels: list[str], labels: dict) -> go.Figure:
    """pieces: one padded row per sentence; real: (sentences, positions) True for a real piece, False for padding
    (what the padding mask lets a query see). Drawn with positions down and one column per sentence, so every
    piece stays legible however long the sentences are. labels: position, real, padding, title."""
    real = np.asarray(real, dtype=bool)
    n_rows, n_positions = real.shape
    text = np.array([plotly_literal(row) for row in pieces], dtype=object).T.tolist()  # (positions, sentences)
    state = [[labels["real"] if r else labels["padding"] for r in row] for row in real.T]
    fig = go.Figure(
        go.Heatmap(
            z=real.T.astype(np.float32),
            x=list(range(n_rows)),
            y=list(range(n_positions)),
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=13),
            customdata=state,
            colorscale=[[0, PAD_COLOR], [1, REAL_COLOR]],
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=3,
            ygap=2,
            hovertemplate=f"{labels['position']} %{{y}}: %{{text}} (%{{customdata}})<extra></extra>",
        )
    )
    title = html.escape(labels["title"], quote=False).replace("\n", "<br>")  # narrow: two lines
    lines = title.count("<br>") + 1
    fig.update_layout(
        # at the figure's top, the sentence labels (on top of the columns) below it
        title=dict(text=title, y=1.0, yref="container", yanchor="top", pad=dict(t=10 + 10 * (lines - 1))),
        xaxis=dict(tickmode="array", tickvals=list(range(n_rows)), ticktext=plotly_literal(row_labels), side="top"),
        yaxis=dict(title=labels["position"], autorange="reversed", dtick=1),
        height=50 + 22 * lines + 24 * n_positions + 40,
        width=140 + 170 * n_rows,
        margin=dict(l=10, r=10, t=50 + 22 * lines, b=10),
        plot_bgcolor="white",
    )
    return fig
