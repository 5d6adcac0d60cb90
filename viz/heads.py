"""Per-head measurements as a layers x heads grid, so the interesting heads stand out at a glance."""

from __future__ import annotations

import html
import unicodedata

import numpy as np
import plotly.graph_objects as go

from .escape import plotly_literal


def _half_range(values: np.ndarray, middle: float) -> float:
    spread = np.nanmax(np.abs(values - middle)) if np.isfinite(values).any() else 0.0
    return float(spread) or 1.0


# Latin characters that fit on one title line of a grid in the main column at 1024 px with the sidebar open (564 px:
# 88 ran "... (corpus average)" off the figure), and the height of a title line in pixels.
TITLE_WIDTH = 72
TITLE_LINE_PX = 22


def display_width(text: str) -> int:
    """Width in Latin characters: a Chinese (wide or full-width) character counts two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_title(title: str, width: int = TITLE_WIDTH) -> list[str]:
    """A title in lines of at most `width` (display_width), broken at a space where there is one, so a long
    title wraps instead of running off the figure."""
    lines, line = [], ""
    for char in title:
        line += char
        if display_width(line) > width:
            cut = line.rfind(" ")
            head, line = (line[:cut], line[cut + 1 :]) if cut > 0 else (line[:-1], char)
            lines.append(head.rstrip())
    return lines + [line] if line else lines


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
        ),
        xaxis=dict(
            title=dict(text=head_label, standoff=4), tickmode="array", tickvals=list(range(1, n_heads + 1)), side="top"
        ),
        yaxis=dict(title=layer_label, tickmode="array", tickvals=list(range(1, n_layers + 1)), autorange="reversed"),
        height=height,
        margin=dict(l=10, r=10, t=110, b=10),
    )
    return fig
