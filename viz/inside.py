"""Inside a layer: the residual stream and what each sub-layer adds, LayerNorm's axis and effect, the share of
attention and feed-forward updates, and the output layer's distribution over the vocabulary.

Pure functions: numbers (from model.inside) and labels in, Plotly figures out. User text is HTML-escaped.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .attention import SIGNED_COLORSCALE
from .escape import plotly_literal
from .titles import TITLE_LINE_PX, wrapped_title

STREAM_COLOR = "#9ecae1"
UPDATE_COLOR = "#3182bd"
RATIO_COLOR = "#e6550d"
SUBLAYER_COLORS = {"self_attention": "#3182bd", "cross_attention": "#31a354", "feed_forward": "#e6550d"}
SUBLAYER_ORDER = tuple(SUBLAYER_COLORS)  # the order a decoder layer runs them, for the legend


def _title(text: str) -> dict:
    return dict(text=html.escape(text, quote=False))


def residual_figure(steps: list[str], stream_norms, update_norms, ratios, labels: dict) -> go.Figure:
    """Per sub-layer in the order they run (steps: "L1 attention", ...): the norm of the residual stream it
    reads, the norm of what it adds (bars), and their ratio (line, right axis).
    labels: stream, update, ratio, norm, title."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    x = plotly_literal(steps)
    fig.add_trace(
        go.Bar(x=x, y=list(stream_norms), name=labels["stream"], marker_color=STREAM_COLOR), secondary_y=False
    )
    fig.add_trace(
        go.Bar(x=x, y=list(update_norms), name=labels["update"], marker_color=UPDATE_COLOR), secondary_y=False
    )
    fig.add_trace(
        go.Scatter(x=x, y=list(ratios), name=labels["ratio"], mode="lines+markers", line=dict(color=RATIO_COLOR)),
        secondary_y=True,
    )
    fig.update_layout(
        title=_title(labels["title"]),
        barmode="group",
        height=430,
        margin=dict(l=10, r=10, t=90, b=10),
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0),
        xaxis=dict(tickangle=-60),
    )
    fig.update_yaxes(title_text=labels["norm"], secondary_y=False, rangemode="tozero")
    fig.update_yaxes(
        title_text=labels["ratio"],
        secondary_y=True,
        rangemode="tozero",
        showgrid=False,
        tickformat=".0%",
        tickmode="auto",
        nticks=6,
    )
    return fig


def layer_norm_figure(
    norm_input: np.ndarray, standardized: np.ndarray, norm_output: np.ndarray, labels: dict
) -> go.Figure:
    """One position's d_model features at one LayerNorm: as it came in, after subtracting their mean and dividing
    by their standard deviation, and after the learned gain and bias (what the model computed). Each panel's title
    says its mean and variance. labels: input, standardized, output, feature_value, count, title, and stats (a
    template with {mean} and {var})."""
    panels = [(labels["input"], norm_input), (labels["standardized"], standardized), (labels["output"], norm_output)]
    # A third of the main column at 1024 px (the sidebar open) holds about 22 Latin characters: each panel's name
    # and its statistics wrap at that width, so neighbouring titles never run into each other.
    titles = [
        wrapped_title(html.escape(f"{name}: {labels['stats'].format(mean=np.mean(v), var=np.var(v))}", quote=False), 22)
        for name, v in panels
    ]
    title, title_lines = wrapped_title(html.escape(labels["title"], quote=False))
    panel_lines = max(n for _, n in titles)
    fig = make_subplots(rows=1, cols=3, subplot_titles=[text for text, _ in titles], horizontal_spacing=0.07)
    for col, (name, values) in enumerate(panels, start=1):
        fig.add_trace(
            go.Histogram(
                x=np.asarray(values, dtype=np.float32),
                nbinsx=40,
                name=name,
                marker_color=UPDATE_COLOR if col == 2 else STREAM_COLOR,
                showlegend=False,
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text=labels["feature_value"], row=1, col=col)
    fig.update_annotations(font_size=12)  # the panel titles
    fig.update_yaxes(title_text=labels["count"], row=1, col=1)
    top = 16 + TITLE_LINE_PX * (title_lines + panel_lines)
    fig.update_layout(
        title=dict(text=title, y=1.0, yref="container", yanchor="top", pad=dict(t=8)),
        height=230 + top,
        margin=dict(l=10, r=10, t=top, b=10),
    )
    return fig


def norm_axes_figure(matrix: np.ndarray, tokens: list[str], position: int, feature: int, labels: dict) -> go.Figure:
    """Which numbers each normalisation averages over, on a real (tokens, features) slice: LayerNorm one token's
    features (a row, the same for every sentence and batch), BatchNorm one feature across the tokens of a batch
    (a column). labels: layer_norm, batch_norm, token, feature, value, title."""
    matrix = np.asarray(matrix, dtype=np.float32)
    n_tokens, n_features = matrix.shape
    # Each panel's title wraps at its half of the main column; the second panel shares the first's rows, so only
    # the first names them (the second's labels stood over the first map).
    panel_titles = [wrapped_title(html.escape(labels[k], quote=False), 30) for k in ("layer_norm", "batch_norm")]
    title, title_lines = wrapped_title(html.escape(labels["title"], quote=False))
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=[text for text, _ in panel_titles], horizontal_spacing=0.05, shared_yaxes=True
    )
    ticks = plotly_literal(tokens)
    bound = float(np.abs(matrix).max()) or 1.0
    for col in (1, 2):
        fig.add_trace(
            go.Heatmap(
                z=matrix,
                x=list(range(n_features)),
                y=list(range(n_tokens)),
                colorscale=SIGNED_COLORSCALE,
                zmid=0.0,
                zmin=-bound,
                zmax=bound,
                showscale=col == 2,
                colorbar=dict(title=labels["value"], thickness=10),
                hovertemplate=f"{labels['token']} %{{y}}<br>{labels['feature']} %{{x}}: %{{z:.3f}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(
            tickmode="array",
            tickvals=list(range(n_tokens)),
            ticktext=ticks,
            autorange="reversed",
            showticklabels=col == 1,
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text=labels["feature"], row=1, col=col)
    box = dict(type="rect", line=dict(color="black", width=3), fillcolor="rgba(0,0,0,0)")
    fig.add_shape(x0=-0.5, x1=n_features - 0.5, y0=position - 0.5, y1=position + 0.5, row=1, col=1, **box)
    fig.add_shape(x0=feature - 0.5, x1=feature + 0.5, y0=-0.5, y1=n_tokens - 0.5, row=1, col=2, **box)
    fig.update_annotations(font_size=12)
    top = 24 + TITLE_LINE_PX * (title_lines + max(n for _, n in panel_titles))
    fig.update_layout(
        title=dict(text=title, y=1.0, yref="container", yanchor="top", pad=dict(t=16)),
        height=max(300, top + 60 + 22 * n_tokens),
        margin=dict(l=10, r=10, t=top, b=10),
    )
    return fig


def sublayer_updates_figure(
    updates: dict[str, dict[str, np.ndarray]], zero_share: dict[str, np.ndarray], labels: dict
) -> go.Figure:
    """updates: stack ("encoder", "decoder") -> sub-layer name -> (layers,) mean |update| / |stream|;
    zero_share: stack -> (layers,) share of the ReLU layer's activations that are 0. Two rows (the stacks), the
    relative updates by sub-layer on the left, the zero share on the right.
    labels: stacks (stack -> name), sublayers (name -> label), layer, relative, zeros, title, and subplot (a
    template with {stack} and {what})."""
    stacks = list(updates)
    titles = []
    for stack in stacks:
        titles += [
            labels["subplot"].format(stack=labels["stacks"][stack], what=labels[what]) for what in ("relative", "zeros")
        ]
    fig = make_subplots(
        rows=len(stacks),
        cols=2,
        subplot_titles=[html.escape(t, quote=False) for t in titles],
        column_widths=[0.65, 0.35],
        vertical_spacing=0.18,
        horizontal_spacing=0.08,
    )
    shown = set()
    for row, stack in enumerate(stacks, start=1):
        for name, values in updates[stack].items():
            layers = list(range(1, len(values) + 1))
            fig.add_trace(
                go.Bar(
                    x=layers,
                    y=values,
                    name=labels["sublayers"][name],
                    legendgroup=name,
                    showlegend=name not in shown,
                    marker_color=SUBLAYER_COLORS.get(name),
                    legendrank=SUBLAYER_ORDER.index(name) if name in SUBLAYER_ORDER else 99,
                ),
                row=row,
                col=1,
            )
            shown.add(name)
        share = zero_share[stack]
        fig.add_trace(
            go.Bar(
                x=list(range(1, len(share) + 1)),
                y=share,
                marker_color="#756bb1",
                showlegend=False,
                texttemplate="%{y:.0%}",
                hovertemplate=f"{labels['layer']} %{{x}}: %{{y:.1%}}<extra></extra>",
            ),
            row=row,
            col=2,
        )
        fig.update_yaxes(range=[0, 1], tickformat=".0%", row=row, col=2)
        for col in (1, 2):
            fig.update_xaxes(title_text=labels["layer"], dtick=1, row=row, col=col)
    # The legend under the last row, clear of its "layer" axis titles.
    fig.update_layout(
        title=_title(labels["title"]),
        barmode="group",
        height=300 * len(stacks) + 150,
        margin=dict(l=10, r=10, t=100, b=70),
        legend=dict(orientation="h", y=0, yanchor="bottom", x=0, yref="container"),
    )
    return fig


def output_distribution_figure(
    probabilities: np.ndarray, pieces: list[str], chosen: int, labels: dict, named: int = 8
) -> go.Figure:
    """The softmax of the output layer over the whole target vocabulary, sorted from the most to the least likely
    piece, on a log scale; the `named` most likely pieces and the chosen one are marked with their text.
    pieces: the vocabulary's pieces (index = id); chosen: the id the step chose. labels: rank, probability,
    chosen, title."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    order = np.argsort(-probabilities, kind="stable")
    ranks = np.arange(1, len(order) + 1)
    text = plotly_literal([pieces[i] for i in order[:named]])
    fig = go.Figure(
        go.Scatter(
            x=ranks,
            y=probabilities[order],
            mode="lines",
            line=dict(color=STREAM_COLOR),
            hovertemplate=f"{labels['rank']} %{{x}}: %{{y:.2e}}<extra></extra>",
            showlegend=False,
        )
    )
    # The most likely pieces are named in a line above the chart, by rank: on the log axis their points sit so
    # close together that labels beside them ran into each other (最后 over 她的).
    fig.add_trace(
        go.Scatter(
            x=ranks[:named],
            y=probabilities[order[:named]],
            mode="markers",
            text=text,
            marker=dict(color=UPDATE_COLOR, size=8),
            showlegend=False,
            hovertemplate="%{text}: %{y:.4f}<extra></extra>",
        )
    )
    named_line, lines = wrapped_title(
        "   ".join(f"{k + 1}. {piece} {probabilities[order[k]]:.0%}" for k, piece in enumerate(text)), 64
    )
    rank = int(np.nonzero(order == chosen)[0][0]) + 1
    fig.add_trace(
        go.Scatter(
            x=[rank],
            y=[probabilities[chosen]],
            mode="markers",
            name=labels["chosen"],
            marker=dict(color=RATIO_COLOR, size=14, symbol="star"),
            hovertemplate=f"{plotly_literal([pieces[chosen]])[0]}: %{{y:.4f}}<extra></extra>",
        )
    )
    fig.update_layout(
        title=dict(text=html.escape(labels["title"], quote=False), subtitle=dict(text=named_line)),
        height=380 + TITLE_LINE_PX * lines,
        margin=dict(l=10, r=10, t=66 + TITLE_LINE_PX * lines, b=10),
        xaxis=dict(title=labels["rank"], type="log"),
        yaxis=dict(title=labels["probability"], type="log", exponentformat="power"),
        legend=dict(orientation="h", y=-0.2),
    )
    return fig
