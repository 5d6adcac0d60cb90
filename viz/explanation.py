"""Figures of the lesson "Is attention an explanation?": one output piece under every method, and the corpus
table of how well each method agrees with occlusion."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go

from .attention import SIGNED_COLORSCALE
from .escape import plotly_literal
from .tables import MAIN_COLUMN_PX
from .titles import TITLE_LINE_PX, column_labels, column_labels_px, wrap_title, wrapped_title
from .widths import display_width

# a space before or after a number
NUMBER_SPACE = re.compile(r"(?<=\S) (?=[-+]?\d)|(?<=\d) (?=\S)")
ROW_NAME_WIDTH = 28  # display columns of a method's name on one line (two lines fit a 34-px row)


def method_comparison(
    scores: np.ndarray, method_labels: list[str], word_labels: list[str], title: str, value_label: str, raw_label: str
) -> go.Figure:
    """scores (methods, words): each row scaled by its largest magnitude, so every method's strongest word is
    ±1 and the rows compare by order and sign (the raw value is on hover)."""
    scores = np.asarray(scores, dtype=float)
    scale = np.nanmax(np.abs(scores), axis=1, keepdims=True)
    shown = np.where(scale > 0, scores / np.where(scale > 0, scale, 1), 0.0)
    words, methods = plotly_literal(word_labels), plotly_literal(method_labels)
    custom = [[[methods[i], words[j], scores[i, j]] for j in range(len(words))] for i in range(len(methods))]
    fig = go.Figure(
        go.Heatmap(
            z=shown,
            x=list(range(len(words))),
            y=list(range(len(methods))),
            colorscale=SIGNED_COLORSCALE,
            zmin=-1,
            zmax=1,
            customdata=custom,
            xgap=1,
            ygap=1,
            texttemplate="%{z:.2f}" if len(words) <= 14 else None,
            colorbar=dict(title=value_label, thickness=12),
            hovertemplate=(
                f"%{{customdata[0]}}<br>%{{customdata[1]}}<br>{raw_label}: %{{customdata[2]:.4f}}<extra></extra>"
            ),
        )
    )
    text, lines = wrapped_title(plotly_literal([title])[0])
    # The methods' names on two lines where long ("occlusion: log-prob drop without the word (max 14.5)" took
    # half the column and left the map a third of it, its numbers 5 px on a projector).
    # A number stays with the words around it ("第 1 层" broke into "第 1" and "层", "最大 0.3" into "最大" and
    # "0.3）": a no-break space there.
    name_lines = [wrap_title(NUMBER_SPACE.sub("\u00a0", m), ROW_NAME_WIDTH) for m in methods]
    # The words on top: the map is the main column less the methods' names and the colour bar, and past a dozen
    # words only those that fit are written (19 words ran into each other; hover names each column).
    widest = max((display_width(line) for name in name_lines for line in name), default=0)
    plot_px = MAIN_COLUMN_PX - 20 - 7 * widest - 70
    shown, angle, font = column_labels(words, plot_px=max(plot_px, 150))
    labels_px = column_labels_px(shown, angle, font)
    top = 40 + labels_px + TITLE_LINE_PX * (lines - 1)
    fig.update_layout(
        title=dict(text=text, y=1 - TITLE_LINE_PX / (top + 34 * len(methods)), yanchor="bottom"),
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(len(words))),
            ticktext=shown,
            tickangle=angle,
            tickfont=dict(size=font),
            side="top",
        ),
        yaxis=dict(
            tickmode="array",
            tickvals=list(range(len(methods))),
            ticktext=["<br>".join(name) for name in name_lines],
            autorange="reversed",
        ),
        height=top + 34 * len(methods),
        margin=dict(l=10, r=10, t=top, b=10),
    )
    return fig


def faithfulness_bars(
    labels: list[str],
    spearman: list[float],
    title: str,
    axis_label: str,
    intervals: list[tuple[float, float]] | None = None,
) -> go.Figure:
    """One horizontal bar per method (and layer): its mean rank correlation with occlusion; intervals: each one's
    95 % bootstrap interval over sentences, drawn as an error bar (methods whose bars overlap are not told apart
    by these sentences)."""
    order = np.argsort(np.asarray(spearman, dtype=float))
    error = None
    if intervals is not None:
        error = dict(
            type="data",
            symmetric=False,
            array=[intervals[i][1] - spearman[i] for i in order],
            arrayminus=[spearman[i] - intervals[i][0] for i in order],
            color="#444",
            thickness=1.2,
            width=3,
        )
    fig = go.Figure(
        go.Bar(
            x=[spearman[i] for i in order],
            y=plotly_literal([labels[i] for i in order]),
            orientation="h",
            marker_color=["#c0392b" if spearman[i] < 0 else "#2e86c1" for i in order],
            error_x=error,
        )
    )
    # Each value beyond the end of its error bar, on the bar's side (as the bar's own text it sat where the error
    # bar crossed it).
    for i in order:
        value = float(spearman[i])
        low, high = intervals[i] if intervals is not None else (value, value)
        end = min(value, low) if value < 0 else max(value, high)
        fig.add_annotation(
            x=end,
            y=plotly_literal([labels[i]])[0],
            text=f"{value:.2f}",
            xanchor="right" if value < 0 else "left",
            xshift=-4 if value < 0 else 4,
            showarrow=False,
        )
    text, lines = wrapped_title(plotly_literal([title])[0])
    extra = TITLE_LINE_PX * (lines - 1)
    fig.update_layout(
        title=dict(text=text),
        xaxis=dict(title=axis_label, range=[-1, 1]),
        height=80 + 26 * len(labels) + extra,
        margin=dict(l=10, r=30, t=50 + extra, b=40),
    )
    return fig
