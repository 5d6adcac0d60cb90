"""Scaled dot-product attention for one query of one head, one step at a time, in the order of the paper's
equation: Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .attention import SIGNED_COLORSCALE
from .escape import plotly_literal
from .softmax import softmax
from .widths import display_width


@dataclass
class AttentionSteps:
    q: np.ndarray  # (d_k,)
    k: np.ndarray  # (keys, d_k)
    v: np.ndarray  # (keys, d_k)
    scores: np.ndarray  # (keys,) q·k
    scaled: np.ndarray  # (keys,) q·k / sqrt(d_k)
    masked: np.ndarray  # (keys,) bool, True where the query may not look
    weights: np.ndarray  # (keys,) softmax of the scaled, masked scores
    output: np.ndarray  # (d_k,) sum_j weights_j v_j

    @property
    def d_k(self) -> int:
        return self.q.shape[0]


def attention_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray, masked: np.ndarray | None = None) -> AttentionSteps:
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    masked = np.zeros(k.shape[0], dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    scores = k @ q
    scaled = scores / np.sqrt(q.shape[0])
    weights = softmax(scaled, masked)
    return AttentionSteps(q, k, v, scores, scaled, masked, weights, weights @ v)


def steps_table(steps: AttentionSteps, key_tokens: list[str], labels: dict) -> pd.DataFrame:
    """One row per key: the score, the scaled score, whether it is masked, and the softmax weight."""
    return pd.DataFrame(
        {
            labels["key"]: key_tokens,
            labels["scores"]: np.round(steps.scores, 4),
            labels["scaled"]: np.round(steps.scaled, 4),
            labels["mask"]: [labels["masked"] if m else "" for m in steps.masked],
            labels["weights"]: np.round(steps.weights, 4),
        }
    )


def vectors_figure(steps: AttentionSteps, query_token: str, key_tokens: list[str], labels: dict) -> go.Figure:
    """q (1 x d_k), K and V (keys x d_k) of one head, side by side."""
    keys = plotly_literal(key_tokens)
    # K's row labels stand between q and K: the gap is as wide as the longest label (a fixed 12 % of the main
    # column at 1024 px put "▁brother" over the q strip), at least 12 %.
    longest = max((display_width(k) for k in key_tokens), default=1)
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=[labels["q"], labels["k"], labels["v"]],
        row_heights=[1.0],
        horizontal_spacing=min(0.3, max(0.12, (7 * longest + 24) / 520)),
    )
    limit = float(max(np.abs(steps.k).max(), np.abs(steps.q).max(), np.abs(steps.v).max(), 1e-6))
    for col, (z, rows) in enumerate(
        ((steps.q[None, :], plotly_literal([query_token])), (steps.k, keys), (steps.v, keys)), start=1
    ):
        fig.add_trace(
            go.Heatmap(
                z=z,
                y=list(range(len(rows))),
                colorscale=SIGNED_COLORSCALE,
                zmid=0,
                zmin=-limit,
                zmax=limit,
                showscale=col == 3,
                customdata=[[r] * z.shape[1] for r in rows],
                hovertemplate="%{customdata}<br>" + labels.get("dimension", "dim") + " %{x}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        # V has the same rows as K; labelling them once keeps the panels from overlapping.
        fig.update_yaxes(
            tickmode="array",
            tickvals=list(range(len(rows))),
            ticktext=rows,
            autorange="reversed",
            showticklabels=col != 3,
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text="d_k", row=1, col=col)
    fig.update_layout(height=max(260, 80 + 24 * len(key_tokens)), margin=dict(l=10, r=10, t=40, b=10))
    return fig


def steps_figure(steps: AttentionSteps, key_tokens: list[str], labels: dict) -> go.Figure:
    """Three panels over the keys: q·k, then divided by sqrt(d_k) (masked keys marked), then the softmax."""
    x = list(range(len(key_tokens)))
    ticks = plotly_literal(key_tokens)
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[labels["scores"], labels["scaled"], labels["weights"]],
    )
    fig.add_trace(go.Bar(x=x, y=steps.scores, marker_color="#7f7f7f", name=labels["scores"]), row=1, col=1)
    colors = ["#c9c9c9" if m else "#1f77b4" for m in steps.masked]
    fig.add_trace(
        go.Bar(
            x=x,
            y=np.where(steps.masked, 0.0, steps.scaled),
            marker_color=colors,
            name=labels["scaled"],
            text=[labels["masked"] if m else "" for m in steps.masked],
            textposition="outside",
        ),
        row=2,
        col=1,
    )
    fig.add_trace(go.Bar(x=x, y=steps.weights, marker_color="#2ca02c", name=labels["weights"]), row=3, col=1)
    fig.update_yaxes(range=[0, 1], row=3, col=1)
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=ticks, row=3, col=1)
    fig.update_layout(height=560, showlegend=False, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def output_figure(steps: AttentionSteps, labels: dict) -> go.Figure:
    """The head's output for this query, sum_j w_j v_j, as a 1 x d_k strip."""
    fig = go.Figure(
        go.Heatmap(
            z=steps.output[None, :],
            colorscale=SIGNED_COLORSCALE,
            zmid=0,
            # The strip is 160 px high: its colour bar has room for three ticks, not Plotly's five, whose
            # labels overlapped.
            colorbar=dict(nticks=3, thickness=12),
            hovertemplate=labels.get("dimension", "dim") + " %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=labels["output"],
        height=160,
        yaxis=dict(showticklabels=False),
        xaxis_title="d_k",
        margin=dict(l=10, r=10, t=40, b=10),
    )
    return fig


QK_BINS = 48  # cells along the longer side of the query-key plane's shading


def square_bins(points: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges on both axes with one cell width, `bins` cells along the longer side (the plane's axes share a
    scale, so its cells are square)."""
    low, high = points.min(0), points.max(0)
    width = max(float((high - low).max()), 1e-6) / bins
    pad = width / 2
    edges = [np.arange(low[d] - pad, high[d] + pad + width, width) for d in range(2)]
    return edges[0], edges[1]


# The label placer's idea of the plot at its narrowest: the main column at 1024 px with the sidebar open leaves the
# plot area about 480 px wide (the figure is 600 px high); a wider page only gives labels more room.
QK_PLOT_PX = (480, 460)
LABEL_FONT_PX = 12  # Plotly's default text size


def label_width(text: str) -> float:
    """A generous guess of a word's width in pixels (a Latin character 0.6 of the font size, a Chinese one twice
    that), with a little room on each side: a guess too small lets words touch."""
    return display_width(text) * LABEL_FONT_PX * 0.6 + 4


def label_height() -> float:
    return LABEL_FONT_PX * 1.35 + 2  # a line of text, with a pixel of room above and below


def label_boxes(
    point: np.ndarray, text: str, scale: float, marker_px: float = 7.0
) -> dict[str, tuple[float, float, float, float]]:
    """The box (left, top, right, bottom, in pixels, y downwards) the word would take at each of the four places
    beside its point (data units; scale: pixels per data unit)."""
    width, height = label_width(text), label_height()
    x, y = point[0] * scale, -point[1] * scale
    return {
        "top center": (x - width / 2, y - marker_px - height, x + width / 2, y - marker_px),
        "bottom center": (x - width / 2, y + marker_px, x + width / 2, y + marker_px + height),
        "middle right": (x + marker_px, y - height / 2, x + marker_px + width, y + height / 2),
        "middle left": (x - marker_px - width, y - height / 2, x - marker_px, y + height / 2),
    }


def place_labels(
    points: np.ndarray, texts: list[str], order: list[int], scale: float, marker_px: float = 7.0
) -> list[str | None]:
    """Where each point's word goes (Plotly's textposition: "top center", "bottom center", "middle right",
    "middle left"), or None where every place would cover a word already placed or another point: those points
    are left unlabelled (their word shows on hover). points: (n, 2) in data units; scale: pixels per data unit;
    order: the points in the order they claim room (the ones that matter first)."""
    # every marker is room taken before any word (a word over another point hid it: "▁the" over a triangle)
    half = marker_px - 1
    placed: list[tuple[float, float, float, float]] = [
        (x * scale - half, -y * scale - half, x * scale + half, -y * scale + half) for x, y in points
    ]
    positions: list[str | None] = [None] * len(points)
    for i in order:
        for position, box in label_boxes(points[i], texts[i], scale, marker_px).items():
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                positions[i] = position
                placed.append(box)
                break
    return positions


def qk_space_figure(
    queries: np.ndarray,
    keys: np.ndarray,
    sample_queries: np.ndarray,
    sample_keys: np.ndarray,
    query_labels: list[str],
    key_labels: list[str],
    chosen: int,
    weights: np.ndarray,
    labels: dict,
) -> go.Figure:
    """One head's queries (circles) and keys (triangles) in 2-D: the held-out sample shaded, the current
    sentence's points coloured by position and labelled where a word fits (place_labels); lines from the chosen
    query to every key it sees, as thick and opaque as its weight. labels: query, key, sample_query, sample_key,
    x, y, title, weight."""
    fig = go.Figure()
    # The held-out sample as two shaded densities, not as points: a thousand SVG markers of each took Plotly
    # ~0.25 s to draw (in Chromium without a GPU; WebGL markers were slower still, 2 s to open the view), two
    # binned images ~0.01 s, and a cloud of 2,000 overlapping points reads no better than its density.
    everything = np.concatenate([queries, keys, sample_queries, sample_keys])
    x_edges, y_edges = square_bins(everything, QK_BINS)
    _sample_densities(fig, sample_queries, sample_keys, x_edges, y_edges, labels)
    weights = np.asarray(weights, dtype=float)
    _weight_lines(fig, queries[chosen], keys, weights)
    _sentence_points(fig, queries, keys, query_labels, key_labels, chosen, weights, everything, labels)
    fig.update_layout(
        title=dict(text=labels["title"]),
        xaxis_title=labels["x"],
        yaxis_title=labels["y"],
        height=600,
        # the legend at the figure's foot, below the x axis's name (at -0.12 of the plot it touched it)
        margin=dict(l=10, r=10, t=60, b=70),
        plot_bgcolor="white",
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0),
    )
    fig.update_yaxes(scaleanchor="x", constrain="domain")
    return fig


def _sample_densities(fig: go.Figure, sample_queries, sample_keys, x_edges, y_edges, labels: dict) -> None:
    """The held-out sample's queries and keys, each as a shaded density with a legend entry."""
    for points, rgb, name in (
        (sample_queries, "49,130,189", labels["sample_query"]),
        (sample_keys, "230,85,13", labels["sample_key"]),
    ):
        counts, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=[x_edges, y_edges])
        shade = np.sqrt(counts.T)  # rows are y; the square root keeps the sparse cells visible
        fig.add_trace(
            go.Heatmap(
                z=np.where(shade > 0, shade, np.nan),
                x=(x_edges[:-1] + x_edges[1:]) / 2,
                y=(y_edges[:-1] + y_edges[1:]) / 2,
                showscale=False,
                hoverinfo="skip",
                colorscale=[[0, f"rgba({rgb},0.10)"], [1, f"rgba({rgb},0.65)"]],
            )
        )
        # a heatmap has no legend entry: a square marker in its colour names it
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                hoverinfo="skip",
                marker=dict(symbol="square", size=12, color=f"rgba({rgb},0.45)"),
            )
        )


def _weight_lines(fig: go.Figure, query: np.ndarray, keys: np.ndarray, weights: np.ndarray) -> None:
    """A line from the chosen query to every key it gives 2 % or more, as thick and opaque as its weight."""
    for j, w in enumerate(weights):
        if w >= 0.02:
            fig.add_trace(
                go.Scatter(
                    x=[query[0], keys[j, 0]],
                    y=[query[1], keys[j, 1]],
                    mode="lines",
                    line=dict(color="#d62728", width=1 + 6 * w),
                    opacity=min(1.0, 0.2 + w),
                    showlegend=False,
                    hoverinfo="skip",
                )
            )


def _sentence_points(fig, queries, keys, query_labels, key_labels, chosen: int, weights, everything, labels) -> None:
    """The sentence's queries (circles) and keys (triangles), coloured by position, labelled where a word fits."""
    q_text, k_text = plotly_literal(query_labels), plotly_literal(key_labels)
    # Words beside the points where they fit, the chosen query's and then its heaviest keys' first; a word that
    # would cover another is left off (hover the point), since a heap of overlapping words reads as none.
    # Pixels per unit as drawn: Plotly pads each axis's range beyond the points (about a tenth), and a browser
    # that shows its scroll bar narrows the plot by 10 px; a scale guessed larger let "because" and "▁the" touch.
    span = (everything.max(0) - everything.min(0)) * 1.1
    scale = min((QK_PLOT_PX[0] - 10) / max(span[0], 1e-9), QK_PLOT_PX[1] / max(span[1], 1e-9))
    n_queries = len(queries)
    points = np.concatenate([queries, keys])
    texts = list(query_labels) + list(key_labels)
    order = [chosen] + [n_queries + j for j in np.argsort(-weights, kind="stable")]
    order += [i for i in range(n_queries) if i != chosen]
    positions = place_labels(points, texts, order, scale)
    q_positions, k_positions = positions[:n_queries], positions[n_queries:]
    fig.add_trace(
        go.Scatter(
            x=queries[:, 0],
            y=queries[:, 1],
            mode="markers+text",
            name=labels["query"],
            text=[w if at else "" for w, at in zip(q_text, q_positions)],
            textposition=[at or "top center" for at in q_positions],
            hovertext=q_text,
            marker=dict(
                symbol="circle",
                size=11,
                color=list(range(len(queries))),
                colorscale="Blues",
                line=dict(width=1, color="#08306b"),
            ),
            hovertemplate=f"{labels['query']} %{{customdata}}: %{{hovertext}}<extra></extra>",
            customdata=list(range(len(queries))),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=keys[:, 0],
            y=keys[:, 1],
            mode="markers+text",
            name=labels["key"],
            text=[w if at else "" for w, at in zip(k_text, k_positions)],
            textposition=[at or "bottom center" for at in k_positions],
            hovertext=k_text,
            marker=dict(
                symbol="triangle-up",
                size=12,
                color=list(range(len(keys))),
                colorscale="Oranges",
                line=dict(width=1, color="#7f2704"),
            ),
            customdata=np.stack([np.arange(len(keys)), weights], -1),
            hovertemplate=(
                f"{labels['key']} %{{customdata[0]:.0f}}: %{{hovertext}}<br>{labels['weight']}: "
                "%{customdata[1]:.3f}<extra></extra>"
            ),
        )
    )
