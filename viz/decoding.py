"""One decoding step: what the decoder looked at while choosing output piece t, and what it could have chosen."""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .escape import plotly_literal
from .titles import MAP_PLOT_PX, TITLE_LINE_PX, column_labels, column_labels_naming, column_labels_px, wrapped_title

# One of the three charts of a step at 1024 px with the sidebar open: a third of the main column, less its gaps.
THIRD_PLOT_PX = 150


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
    # A third of the main column at 1024 px holds about 22 Latin characters of a title: each wraps at that width
    # (on one line each, the three read as one: "…of this pos…cross-att…").
    titles = [wrapped_title(html.escape(labels[k], quote=False), 22) for k in ("self", "cross", "next")]
    fig = make_subplots(rows=1, cols=3, subplot_titles=[text for text, _ in titles], horizontal_spacing=0.07)
    fig.update_annotations(font_size=12)
    fig.add_trace(
        go.Bar(
            x=list(range(visible)),
            y=decoder_row[:visible],
            marker_color="#1f77b4",
            customdata=plotly_literal(decoder_keys[:visible]),
            hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=list(range(len(source_keys))),
            y=cross_row,
            marker_color="#ff7f0e",
            customdata=plotly_literal(source_keys),
            hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    # Each chart is a third of the main column: past a dozen pieces their upright labels touched, so only those
    # that fit are written, the tallest bars among them (hover names every bar).
    for col, keys, weights in ((1, decoder_keys[:visible], decoder_row[:visible]), (2, source_keys, cross_row)):
        shown, angle, font = column_labels_naming(plotly_literal(keys), weights, plot_px=THIRD_PLOT_PX)
        fig.update_xaxes(
            tickmode="array",
            tickvals=list(range(len(keys))),
            ticktext=shown,
            tickangle=angle,
            tickfont=dict(size=font),
            row=1,
            col=col,
        )
    pieces, probabilities = [p for p, _ in alternatives], [p for _, p in alternatives]
    if chosen not in pieces and chosen_probability is not None:
        pieces, probabilities = pieces + [chosen], probabilities + [chosen_probability]
    fig.add_trace(
        go.Bar(
            x=list(range(len(pieces))),
            y=probabilities,
            marker_color=["#2ca02c" if p == chosen else "#9c9c9c" for p in pieces],
            hovertemplate="%{y:.3f}<extra></extra>",
        ),
        row=1,
        col=3,
    )
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(pieces))), ticktext=plotly_literal(pieces), row=1, col=3)
    # One 0..1 scale for all three; the y-axis titles would sit on the chart to their left, so the weight axis is
    # named once at the left and the probability chart says what it shows in its own title.
    for col in (1, 2, 3):
        fig.update_yaxes(range=[0, 1], title_text=labels["weight"] if col == 1 else None, row=1, col=col)
    lines = max(n for _, n in titles)
    fig.update_layout(height=320 + 18 * lines, showlegend=False, margin=dict(l=10, r=10, t=22 + 18 * lines, b=10))
    # next pieces: upright labels, so neighbouring Chinese pieces never run into each other
    fig.update_xaxes(tickangle=-90 if len(pieces) > 4 else 0, row=1, col=3)
    return fig


def logit_lens_figure(
    rank: np.ndarray,
    probability: np.ndarray,
    top_pieces: list[list[list[str]]],
    top_probabilities: np.ndarray,
    step_labels: list[str],
    labels: dict,
) -> go.Figure:
    """(layers, steps) grid: colour = the probability each decoder layer, read as if it were the last, gives the
    piece finally written at that step; the number in a cell is its rank (1 = that layer's top choice); hover
    lists the layer's three most probable pieces. Layers down (1 at the top), steps across, labelled by the piece
    written. labels: layer, step, probability, rank, top, title."""
    rank = np.asarray(rank)
    n_layers, n_steps = rank.shape
    hover = [
        [
            " · ".join(
                f"{p} {q:.2f}" for p, q in zip(plotly_literal(top_pieces[layer][s]), top_probabilities[layer, s])
            )
            for s in range(n_steps)
        ]
        for layer in range(n_layers)
    ]
    # The rank in each cell where it fits (a digit is 0.6 of the font wide): in narrow cells only the short ranks
    # (the layers that nearly have the piece); hover gives every cell's rank.
    cell_px = MAP_PLOT_PX / max(n_steps, 1)
    rank_font = 11 if cell_px >= 30 else 9
    widest = int((cell_px - 3) / (0.6 * rank_font))
    text = [[(str(r) if r < 1000 else "999+") for r in row] for row in rank]
    text = [[x if len(x) <= widest else "" for x in row] for row in text]
    fig = go.Figure(
        go.Heatmap(
            z=np.asarray(probability, dtype=np.float32),
            x=list(range(n_steps)),
            y=list(range(1, n_layers + 1)),
            zmin=0.0,
            zmax=1.0,
            colorscale="Blues",
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=rank_font),
            customdata=np.array(
                [[[h, rank[layer, s]] for s, h in enumerate(row)] for layer, row in enumerate(hover)], dtype=object
            ),
            colorbar=dict(title=labels["probability"], thickness=12),
            xgap=2,
            ygap=2,
            hovertemplate=(
                f"{labels['layer']} %{{y}}, {labels['step']} %{{x}}<br>{labels['probability']}: "
                f"%{{z:.3f}} · {labels['rank']} %{{customdata[1]}}<br>{labels['top']}: %{{customdata[0]}}"
                "<extra></extra>"
            ),
        )
    )
    title, lines = wrapped_title(labels["title"])
    # Room above the grid for the title, the step axis's title and its tick labels: "19: Krankenhaus" turned by
    # 45° stands about 90 px high, where a fixed margin let the step axis's title run into the title's last line.
    ticks, angle, font = column_labels([f"{i}: {p}" for i, p in enumerate(plotly_literal(step_labels))])
    ticks_px = column_labels_px(ticks, angle, font)
    # (+8: with level labels the step axis's title still touched the title's last line by 7-9 px)
    top = math.ceil(TITLE_LINE_PX * lines + 28 + ticks_px + 20)
    height = 30 + 40 * n_layers + top
    fig.update_layout(
        # Plotly places a title of several lines by its first line's baseline ("top" pushed that line out of the
        # figure): the first baseline one line below the top, the others follow downwards (as viz.heads does);
        # 14 px, the size wrapped_title's width is counted for (at 17 px a Chinese line reached the right edge)
        title=dict(text=title, y=1 - TITLE_LINE_PX / height, yanchor="bottom", font=dict(size=14)),
        xaxis=dict(
            title=labels["step"],
            tickmode="array",
            tickvals=list(range(n_steps)),
            ticktext=ticks,
            side="top",
            tickangle=angle,
            tickfont=dict(size=font),
        ),
        yaxis=dict(title=labels["layer"], autorange="reversed", dtick=1),
        height=height,
        margin=dict(l=10, r=10, t=top, b=10),
        plot_bgcolor="white",
    )
    return fig
