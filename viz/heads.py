"""Per-head measurements as a layers x heads grid, so the interesting heads stand out at a glance."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .escape import plotly_literal
from .titles import TITLE_LINE_PX, wrap_title


def _half_range(values: np.ndarray, middle: float) -> float:
    spread = np.nanmax(np.abs(values - middle)) if np.isfinite(values).any() else 0.0
    return float(spread) or 1.0


def statistic_grid(
    values: np.ndarray,
    title: str,
    layer_label: str = "layer",
    head_label: str = "head",
    colorscale: str = "Viridis",
    roles: list[list[str]] | None = None,
    zmid: float | None = None,
    value_label: str | None = None,
) -> go.Figure:
    """values (layers, heads) -> heatmap with layers down and heads across, numbered from 1, value in each cell.
    roles: optional (layers, heads) text shown on hover (e.g. "previous-token"). zmid: the value at the middle of
    a diverging colour scale (0 for differences), with the scale symmetric around it. value_label: the colour
    bar's title (what the numbers are)."""
    values = np.asarray(values, dtype=float)
    n_layers, n_heads = values.shape
    half_range = _half_range(values, zmid) if zmid is not None else None
    custom = roles if roles is not None else [[""] * n_heads for _ in range(n_layers)]
    custom = [plotly_literal(row) for row in custom]
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=list(range(1, n_heads + 1)),
            y=list(range(1, n_layers + 1)),
            colorscale=colorscale,
            zmid=zmid,
            **({} if zmid is None else dict(zmin=zmid - half_range, zmax=zmid + half_range)),
            texttemplate="%{z:.2f}",
            textfont=dict(size=10),
            colorbar=dict(title=html.escape(value_label, quote=False)) if value_label else None,
            customdata=custom,
            hovertemplate=f"{layer_label} %{{y}}, {head_label} %{{x}}: %{{z:.3f}}<br>%{{customdata}}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    lines = wrap_title(title)
    height = 110 + 42 * n_layers
    fig.update_layout(
        # The head axis sits on top, like the attention maps; the title goes above it with room to spare. Plotly
        # places a several-line title by its first line's baseline whatever the anchor ("top" pushed that line out
        # of the figure), so the first baseline is put one line below the top and the others follow downwards.
        title=dict(
            text="<br>".join(html.escape(line, quote=False) for line in lines),
            y=1 - TITLE_LINE_PX / height,
            yanchor="bottom",
            # 14 px as the maps' titles: TITLE_WIDTH is counted for it (at Plotly's 17 px a wrapped Chinese line
            # ran past the figure's right edge)
            font=dict(size=14),
        ),
        xaxis=dict(
            title=dict(text=head_label, standoff=4), tickmode="array", tickvals=list(range(1, n_heads + 1)), side="top"
        ),
        yaxis=dict(title=layer_label, tickmode="array", tickvals=list(range(1, n_layers + 1)), autorange="reversed"),
        height=height,
        margin=dict(l=10, r=10, t=110, b=10),
    )
    return fig
