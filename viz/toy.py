"""Figures of a toy Transformer's training (model.toy): its learning curves, and one snapshot's cross-attention
with the alignment the task was generated with outlined."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.attention import attention_heatmap, causal_mask

CURRENT, PREVIOUS = "solid", "dash"
COLORS = {"loss": "#1f77b4", "exact": "#2ca02c", "aer": "#d62728"}
TRUE_CELL = "#ff7f0e"


def learning_curves(runs: list[dict], labels: dict, marked_step: int | None = None) -> go.Figure:
    """runs: one or two {"name": legend text, "steps", "loss", "exact_match", "aer": lists}, the first drawn solid
    (the run shown), a second dashed (the one to compare with). Left: the training loss; right: exact match and
    alignment error, as shares of the held-out sentences and target words. marked_step: a vertical line there
    (the snapshot the map shows). labels: step, loss, share, exact, aer, loss_title, share_title."""
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=(labels["loss_title"], labels["share_title"]), horizontal_spacing=0.12
    )
    for run, dash in zip(runs, (CURRENT, PREVIOUS)):
        current = dash == CURRENT
        # The legend names the three measures once (the run shown, solid); the run compared with gets one entry.
        common = dict(
            mode="lines+markers",
            marker=dict(size=4),
            line=dict(dash=dash, width=2.5 if current else 1.8),
            showlegend=current,
        )
        fig.add_trace(
            go.Scatter(
                x=run["steps"],
                y=run["loss"],
                name=labels["loss"],
                line_color=COLORS["loss"],
                hovertemplate=f"{labels['step']} %{{x}}<br>{labels['loss']} %{{y:.3f}}<extra>{run['name']}</extra>",
                **common,
            ),
            row=1,
            col=1,
        )
        for key, values in (("exact", run["exact_match"]), ("aer", run["aer"])):
            fig.add_trace(
                go.Scatter(
                    x=run["steps"],
                    y=[100 * v for v in values],
                    name=labels[key],
                    line_color=COLORS[key],
                    hovertemplate=f"{labels['step']} %{{x}}<br>{labels[key]} %{{y:.1f}} %<extra>{run['name']}</extra>",
                    **common,
                ),
                row=1,
                col=2,
            )
        if len(runs) > 1:  # each run's line style named once, the run shown (solid) too
            fig.add_trace(
                go.Scatter(x=[None], y=[None], mode="lines", line=dict(dash=dash, color="#555"), name=run["name"]),
                row=1,
                col=1,
            )
    if marked_step is not None:
        for col in (1, 2):
            fig.add_vline(x=marked_step, line=dict(color="#888", width=1, dash="dot"), row=1, col=col)
    fig.update_xaxes(title_text=labels["step"])
    fig.update_yaxes(title_text=labels["loss"], rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text=labels["share"], range=[-2, 102], row=1, col=2)
    fig.update_layout(
        height=360,
        # the subplot titles below the toolbar Plotly shows on hover at the top right (it hid the right one)
        margin=dict(l=10, r=10, t=64, b=10),
        legend=dict(orientation="h", yanchor="top", y=-0.25, x=0),
        plot_bgcolor="white",
    )
    fig.update_xaxes(gridcolor="#eee", zeroline=False)
    fig.update_yaxes(gridcolor="#eee", zeroline=False)
    return fig


def snapshot_map(
    weights: np.ndarray,
    target: list[str],
    source: list[str],
    alignment: list[int],
    labels: dict,
    title: str,
    predicted: list[str] | None = None,
) -> go.Figure:
    """(target+1, source+1) cross-attention of the test sentence, rows the correct translation's words (the row
    that writes each one), columns the source words; the true link of every target word outlined. labels:
    query_axis, key_axis, weight, truth, predicts."""
    fig = attention_heatmap(
        np.asarray(weights),
        target,
        source,
        labels["query_axis"],
        labels["key_axis"],
        title=title,
        weight_label=labels["weight"],
        predicted_tokens=predicted,
        predicted_label=labels["predicts"],
        show_values=True,
        font_scale=1.15,
    )
    for row, column in enumerate(alignment):
        fig.add_shape(
            type="rect",
            x0=column - 0.5,
            x1=column + 0.5,
            y0=row - 0.5,
            y1=row + 0.5,
            line=dict(color=TRUE_CELL, width=4),
        )
    return with_outline_legend(fig, {labels["truth"]: TRUE_CELL})


def with_outline_legend(fig: go.Figure, outlines: dict[str, str]) -> go.Figure:
    """A legend entry for each outline colour (shapes have none), below the map, under the query axis title
    (which a Chinese title puts there, upright). outlines: name -> colour."""
    for name, color in outlines.items():
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker=dict(symbol="square-open", size=14, color=color, line=dict(width=3)),
                name=name,
                showlegend=True,
            )
        )
    fig.update_layout(
        legend=dict(orientation="h", yanchor="bottom", y=0, yref="container", x=0),
        showlegend=True,
        height=fig.layout.height + 34,
        margin=dict(b=fig.layout.margin.b + 34),
    )
    return fig


BLOCK_COLOR = "#2ca02c"  # the outline of the block a decoder-only model reads the source through


def sequence_map(
    weights: np.ndarray,
    sequence: list[str],
    source_start: int,
    target_start: int,
    alignment: list[int],
    labels: dict,
    title: str,
) -> go.Figure:
    """A decoder-only model's masked self-attention over the test sentence as it reads it, "<s> source <sep>
    target" ((n, n), later positions masked grey): the rows that write the target (from the one reading <sep> to
    the one writing </s>) against the source columns outlined as one block, the place where an encoder-decoder's
    cross-attention would be, and inside it each target word's true source word. A row is named by what it reads
    and, in the block, what it writes ("<sep> → TOM"). labels: query_axis, key_axis, weight, masked, block,
    truth."""
    n = len(sequence)
    written = [*sequence[target_start:], "</s>"]
    rows = [
        f"{token} → {written[i - target_start + 1]}" if i >= target_start - 1 else token
        for i, token in enumerate(sequence)
    ]
    fig = attention_heatmap(
        np.asarray(weights),
        rows,
        sequence,
        labels["query_axis"],
        labels["key_axis"],
        title=title,
        masked=causal_mask(n),
        masked_label=labels["masked"],
        weight_label=labels["weight"],
        show_values=True,
        font_scale=1.15,
    )
    last_source = target_start - 2  # the column before <sep>
    fig.add_shape(
        type="rect",
        x0=source_start - 0.5,
        x1=last_source + 0.5,
        y0=target_start - 1.5,
        y1=n - 0.5,
        line=dict(color=BLOCK_COLOR, width=5),
    )
    for word, source in enumerate(alignment):
        row, column = target_start - 1 + word, source_start + source
        fig.add_shape(
            type="rect",
            x0=column - 0.5,
            x1=column + 0.5,
            y0=row - 0.5,
            y1=row + 0.5,
            line=dict(color=TRUE_CELL, width=3),
        )
    return with_outline_legend(fig, {labels["block"]: BLOCK_COLOR, labels["truth"]: TRUE_CELL})


def layer_gradients(layers: list[str], norms: dict[str, list[float]], labels: dict) -> go.Figure:
    """The gradient norm of each layer's weights at a run's first step, one line per run (log scale): how the
    update is spread over the stack when training starts. labels: layer, norm, title."""
    fig = go.Figure()
    for (name, values), dash in zip(norms.items(), ("solid", "dash")):
        fig.add_trace(go.Scatter(x=layers, y=values, mode="lines+markers", name=name, line=dict(dash=dash, width=2)))
    fig.update_layout(
        title=dict(text=labels["title"]),
        xaxis=dict(title=labels["layer"]),
        yaxis=dict(title=labels["norm"], type="log"),
        height=340,
        margin=dict(l=60, r=20, t=50, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
    )
    return fig
