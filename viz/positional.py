"""Sinusoidal positional encoding (Section 3.5 of the paper): the matrix, a few of its curves, and how
similar the encodings of two positions are."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .attention import SIGNED_COLORSCALE


def positional_heatmap(
    pe: np.ndarray, position_axis: str = "position", dimension_axis: str = "dimension", title: str = ""
) -> go.Figure:
    """(positions, d_model) -> heatmap, positions down, dimensions across, values in [-1, 1]."""
    fig = go.Figure(
        go.Heatmap(
            z=pe,
            colorscale=SIGNED_COLORSCALE,
            zmin=-1,
            zmax=1,
            colorbar=dict(title="PE", thickness=12),
            hovertemplate=f"{position_axis} %{{y}}<br>{dimension_axis} %{{x}}<br>PE = %{{z:.3f}}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title or None,
        xaxis_title=dimension_axis,
        yaxis=dict(title=position_axis, autorange="reversed"),
        height=420,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
    )
    return fig


def positional_curves(
    pe: np.ndarray,
    dimensions: list[int],
    position_axis: str = "position",
    title: str = "",
    dimension_label: str = "dim",
) -> go.Figure:
    """PE value against position for the chosen dimensions: even ones are sines, odd ones cosines, and the
    wavelength grows with the dimension index."""
    positions = np.arange(pe.shape[0])
    fig = go.Figure()
    for d in dimensions:
        kind = "sin" if d % 2 == 0 else "cos"
        fig.add_trace(go.Scatter(x=positions, y=pe[:, d], mode="lines", name=f"{dimension_label} {d} ({kind})"))
    fig.update_layout(
        title=title or None,
        xaxis_title=position_axis,
        yaxis=dict(title="PE", range=[-1.1, 1.1]),
        height=360,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
    )
    return fig


def position_similarity(pe: np.ndarray) -> np.ndarray:
    """Dot product between the encodings of every pair of positions: (positions, positions).

    It depends only on the distance between the two positions (sum_i cos(w_i (p - q))), which is why
    attention can learn to use relative position."""
    return pe @ pe.T


def position_similarity_heatmap(pe: np.ndarray, position_axis: str = "position", title: str = "") -> go.Figure:
    sim = position_similarity(pe)
    fig = go.Figure(
        go.Heatmap(
            z=sim,
            colorscale="Viridis",
            colorbar=dict(title="PE·PE", thickness=12),
            hovertemplate=f"{position_axis} %{{y}} · {position_axis} %{{x}} = %{{z:.2f}}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title or None,
        # square cells: the plot area shrinks to a square (constrain="domain"), the axes keep the positions' range
        xaxis=dict(title=position_axis, constrain="domain"),
        yaxis=dict(title=position_axis, autorange="reversed", scaleanchor="x", constrain="domain"),
        height=420,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
    )
    return fig
