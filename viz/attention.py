"""Attention heatmaps: one head in detail, and every layer x head as a grid of thumbnails.

Pure functions: token lists and numpy arrays in, Plotly figures out. Rows are queries, columns are keys.
Axes are integer positions with the tokens as tick text, so a token that occurs twice keeps two rows.
Every piece of user text is HTML-escaped before Plotly sees it (Plotly renders a subset of HTML in labels).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .escape import plotly_literal
from .titles import column_labels, column_labels_px, level_labels_fit
from .widths import display_width

COLORSCALE = "Blues"
# Every signed value the app draws, one convention (a map beside another read with the opposite one): red above
# 0, blue below, white at 0. An attribution: red raises the piece's log-probability, blue lowers it.
SIGNED_COLORSCALE = "RdBu_r"
MASKED_COLOR = "#c9c9c9"


def causal_mask(n: int) -> np.ndarray:
    """True where a decoder query may NOT look: keys after the query (the upper triangle)."""
    return np.triu(np.ones((n, n), dtype=bool), k=1)


def difference_heatmap(
    difference: np.ndarray,
    queries_a: list[str],
    keys_a: list[str],
    queries_b: list[str],
    keys_b: list[str],
    query_axis: str,
    key_axis: str,
    title: str = "",
    value_label: str = "difference",
    masked: np.ndarray | None = None,
) -> go.Figure:
    """First sentence's map minus the second's, cell by cell (same shape): red where the first gives more weight,
    blue where the second does, on a fixed -1..1 scale. Ticks name both sentences' pieces ("dog / cat")."""
    difference = np.asarray(difference, dtype=np.float32)
    if masked is not None:
        difference = np.where(masked, np.float32(np.nan), difference)
    both = lambda a, b: [x if x == y else f"{x} / {y}" for x, y in zip(plotly_literal(a), plotly_literal(b))]  # noqa: E731
    q_text, k_text = both(queries_a, queries_b), both(keys_a, keys_b)
    n_q, n_k = difference.shape
    fig = go.Figure(
        go.Heatmap(
            z=difference,
            x=list(range(n_k)),
            y=list(range(n_q)),
            colorscale=SIGNED_COLORSCALE,
            zmid=0.0,
            zmin=-1.0,
            zmax=1.0,
            colorbar=dict(title=value_label, thickness=12),
            xgap=1,
            ygap=1,
            hovertemplate=f"{query_axis}: %{{y}}<br>{key_axis}: %{{x}}<br>{value_label}: %{{z:+.4f}}<extra></extra>",
        )
    )
    _map_layout(fig, q_text, k_text, query_axis, key_axis, title)
    return fig


def mean_over_heads(attention: np.ndarray) -> np.ndarray:
    """(heads, queries, keys) -> (queries, keys). Each row still sums to 1."""
    return attention.mean(axis=0)


def attention_heatmap(
    weights: np.ndarray,
    query_tokens: list[str],
    key_tokens: list[str],
    query_axis: str,
    key_axis: str,
    title: str = "",
    masked: np.ndarray | None = None,
    masked_label: str = "masked",
    predicted_tokens: list[str] | None = None,
    predicted_label: str = "predicts",
    show_values: bool | None = None,
    weight_label: str = "weight",
    font_scale: float = 1.0,
    max_height: int | None = None,
    signed: bool = False,
) -> go.Figure:
    """One (queries, keys) attention matrix (or another account of the same view: model.attribute).

    masked: boolean (queries, keys), True where the model was not allowed to look. Those cells are drawn in a
    separate grey trace (not as a low value on the colour scale) and say "masked" on hover.
    predicted_tokens: for decoder queries, the token each position predicted, shown on hover.
    font_scale: tick labels, cell values and row height grow by this factor (a projector in a classroom).
    max_height: the figure's height at most, in pixels (rows get shorter to fit).
    signed: scores of either sign (gradients): a diverging scale centred on 0, symmetric, instead of 0 to 1.
    """
    weights = np.asarray(weights, dtype=np.float32)  # what the model computed; half the bytes of float64 to send
    n_q, n_k = weights.shape
    if (n_q, n_k) != (len(query_tokens), len(key_tokens)):
        raise ValueError(
            f"weights are {n_q}x{n_k} but there are {len(query_tokens)} query and {len(key_tokens)} key tokens"
        )
    q_text, k_text = plotly_literal(query_tokens), plotly_literal(key_tokens)
    pred_text = plotly_literal(predicted_tokens) if predicted_tokens is not None else None

    # Hover text per cell: query token, key token (and what the query position predicted).
    # (Plotly's %{y} prints an axis's tick text, here the piece itself: the position comes from customdata.)
    custom = np.empty((n_q, n_k, 5), dtype=object)
    for i in range(n_q):
        for j in range(n_k):
            custom[i, j] = (q_text[i], k_text[j], pred_text[i] if pred_text else "", i, j)
    pred_line = f"<br>{predicted_label}: %{{customdata[2]}}" if pred_text else ""
    position = f"{query_axis}: %{{customdata[3]}} %{{customdata[0]}}"
    hover = (
        f"{position}{pred_line}<br>{key_axis}: %{{customdata[4]}} %{{customdata[1]}}"
        f"<br>{weight_label}: %{{z:.4f}}<extra></extra>"
    )
    shown = weights.copy()
    if masked is not None:
        shown[masked] = np.nan
    if show_values is None:
        show_values = max(n_q, n_k) <= 14
    fig = go.Figure(
        go.Heatmap(
            z=shown,
            x=list(range(n_k)),
            y=list(range(n_q)),
            customdata=custom,
            hovertemplate=hover,
            colorscale=SIGNED_COLORSCALE if signed else COLORSCALE,
            zmin=-_largest(shown) if signed else 0.0,
            zmax=_largest(shown) if signed else 1.0,
            colorbar=dict(title=weight_label, thickness=12),
            texttemplate="%{z:.2f}" if show_values else None,
            textfont=dict(size=round(10 * font_scale)),
            xgap=1,
            ygap=1,
            name="attention",
        )
    )
    if masked is not None and masked.any():
        fig.add_trace(
            go.Heatmap(
                z=np.where(masked, np.float32(1.0), np.float32(np.nan)),
                x=list(range(n_k)),
                y=list(range(n_q)),
                customdata=custom,
                colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]],
                showscale=False,
                hovertemplate=(
                    f"{position}<br>{key_axis}: %{{customdata[4]}} %{{customdata[1]}}<br>{masked_label}<extra></extra>"
                ),
                # Plotly would print a texttemplate in every cell, so the "×" goes only where the mask is.
                text=np.where(masked, "×", "").tolist() if show_values else None,
                texttemplate="%{text}" if show_values else None,
                xgap=1,
                ygap=1,
                name="masked",
            )
        )
    _map_layout(fig, q_text, k_text, query_axis, key_axis, title, font_scale, max_height)
    return fig


def _largest(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def _map_layout(
    fig: go.Figure,
    q_text: list[str],
    k_text: list[str],
    query_axis: str,
    key_axis: str,
    title: str,
    font_scale: float = 1.0,
    max_height: int | None = None,
) -> None:
    """The layout every (queries, keys) map shares: keys on top, queries down, each tick a piece, the title
    above the key labels."""
    n_q, n_k = len(q_text), len(k_text)
    # Large labels (presentation) stand upright above the columns, so neighbours never touch; with many keys
    # they shrink towards 10 px rather than overlap.
    key_font = max(round(12 * font_scale * min(1.0, 14 / max(n_k, 1))), 10)

    def key_labels(font: int) -> tuple[list[str], int, int]:
        """(labels shown, angle, font) at this font size: on the page level or slanted while they fit, then
        upright, smaller, and with many keys every k-th one; in presentation level while each fits its column,
        else upright."""
        if font_scale == 1:
            return column_labels(k_text)
        return k_text, 0 if level_labels_fit(k_text, font) else -90, font

    def room_above(labels: list[str], angle: int, font: int) -> int:
        """Room above the map for the key labels (slanted ones need their length), the key axis title and the
        title, so the title never runs into the labels."""
        title_room = round(20 * font_scale) + 4 if title else 0
        return column_labels_px(labels, angle, font) + round(16 * font_scale) + 14 + title_room

    # A Chinese axis title turned on its side is read with a tilted head, and a long one is longer than a short
    # map is high (it was cut: "coder position (query): …"): either goes under the map, upright.
    title_px = display_width(query_axis) * 6.5 * font_scale
    upright = any("\u4e00" <= c <= "\u9fff" for c in query_axis) or title_px > 0.9 * n_q * round(26 * font_scale)
    bottom = round(22 * font_scale) if upright else 0
    shown_keys, angle, key_font = key_labels(key_font)
    top = room_above(shown_keys, angle, key_font)
    # Rows 26 px (times font_scale); with max_height, as short as fits, so a projector's first screen holds the
    # whole map of a ten-word sentence, below a note too. The row labels shrink with the rows, from 12 px times
    # font_scale down to 8 px times it (12 px in presentation, the page's own size), never taller than their row
    # less 6 px: eleven rows under the unsure note (a ten-word sentence written in ten Chinese words) need it.
    # Where even those rows would not fit (upright key labels of long English words, "grandmother", and eleven
    # rows or more: 785 px on a 768 px screen), the key labels shrink first, to the page's own 12 px, and only
    # then the rows, down to 12 px with 8 px labels (a bad translation of ten words in sixteen pieces, 17 rows
    # under a Chinese axis title: 13 px).
    row_height = round(26 * font_scale)
    label_font = round(12 * font_scale)
    if max_height:

        def rows_fit(top: int) -> int:
            return (max_height - top - 10 - bottom) // max(n_q, 1)

        while key_font > 12 and rows_fit(top) < round(8 * font_scale) + 6:
            shown_keys, angle, key_font = key_labels(key_font - 1)
            top = room_above(shown_keys, angle, key_font)
        row_height = max(12, min(row_height, rows_fit(top)))
        label_font = min(label_font, max(row_height - 6, 8))
    fig.update_layout(
        title=dict(
            text=html.escape(title, quote=False),
            y=1.0,
            yanchor="top",
            yref="container",
            pad=dict(t=8),
            font=dict(size=round(14 * font_scale)),
        )
        if title
        else None,
        xaxis=dict(
            title=dict(text=key_axis, standoff=6),
            tickmode="array",
            tickvals=list(range(n_k)),
            ticktext=shown_keys,
            side="top",
            tickangle=angle,
            tickfont=dict(size=key_font),
        ),
        yaxis=dict(
            title=None if upright else query_axis,
            tickmode="array",
            tickvals=list(range(n_q)),
            ticktext=q_text,
            autorange="reversed",
            tickfont=dict(size=label_font),
        ),
        height=max(320, top + 10 + bottom + row_height * n_q),
        margin=dict(l=10, r=10, t=top, b=10 + bottom),
        plot_bgcolor="white",
    )
    if upright:
        fig.add_annotation(
            text=f"↓ {html.escape(query_axis, quote=False)}",
            xref="paper",
            yref="paper",
            x=0,
            y=0,
            xanchor="left",
            yanchor="top",
            yshift=-6,
            showarrow=False,
            font=dict(size=round(12 * font_scale)),
        )


def tile_heads(maps: np.ndarray, fill=np.nan) -> tuple[np.ndarray, tuple[int, int]]:
    """(layers, heads, queries, keys, ...) -> one array with every head's map as a tile, layers down and heads
    across, `fill` in the gaps. Returns (tiles, (row_step, col_step)): tile (l, h) starts at row l * row_step,
    column h * col_step."""
    n_layers, n_heads, n_q, n_k = maps.shape[:4]
    # Gaps scale with the tile so thumbnails stay apart whatever the sentence length; the row gap leaves room
    # for each thumbnail's title.
    col_gap, row_gap = max(1, round(0.12 * n_k)), max(2, round(0.35 * n_q))
    row_step, col_step = n_q + row_gap, n_k + col_gap
    tiles = np.full(
        (n_layers * row_step - row_gap, n_heads * col_step - col_gap, *maps.shape[4:]), fill, dtype=maps.dtype
    )
    for layer in range(n_layers):
        for head in range(n_heads):
            r, c = layer * row_step, head * col_step
            tiles[r : r + n_q, c : c + n_k] = maps[layer, head]
    return tiles, (row_step, col_step)


def attention_grid(
    attention: np.ndarray,
    title: str = "",
    masked: np.ndarray | None = None,
    layer_label: str = "layer",
    head_label: str = "head",
    highlight: tuple[int, int] | None = None,
    query_label: str = "query",
    key_label: str = "key",
    heads: np.ndarray | None = None,
    notes: list[list[str]] | None = None,
    tile_title_size: int = 10,
    mark: tuple[int, int] | None = None,
) -> go.Figure:
    """(rows, columns, queries, keys) -> a grid of small heatmaps, one per head: by default every layer (rows)
    and head (columns).

    All heads are tiles of one heatmap trace (and masked cells one grey trace), not a subplot each: 48 subplots
    cost the server most of a rerun and the browser 48 plots to lay out. Layers and heads are numbered from 1
    in the tiles' titles, as in the selectors. highlight=(row, column), 0-based, outlines the head shown in
    detail. heads: (rows, columns, 2) the (layer, head), from 1, that each tile shows, when the tiles are a
    selection (the head search's best heads); notes: text after each tile's title; mark=(query, key) outlines
    that cell in every tile."""
    attention = np.asarray(attention, dtype=np.float32)
    n_layers, n_heads, n_q, n_k = attention.shape
    if heads is None:
        heads = np.stack(np.meshgrid(np.arange(1, n_layers + 1), np.arange(1, n_heads + 1), indexing="ij"), -1)
    shown = np.where(masked, np.float32(np.nan), attention) if masked is not None else attention
    tiles, (row_step, col_step) = tile_heads(shown)
    # Each cell's (layer, head, query, key) for the hover: layer and head from 1 as in the selectors, positions
    # from 0 as on the big map.
    numbers = np.broadcast_arrays(
        heads[:, :, None, None, 0],
        heads[:, :, None, None, 1],
        np.arange(n_q)[None, None, :, None],
        np.arange(n_k)[None, None, None, :],
    )
    small = np.uint8 if max(heads.max(), n_q, n_k) < 256 else np.int32  # a quarter of the bytes to send
    index, _ = tile_heads(np.stack(numbers, axis=-1).astype(small), fill=0)
    hover = (
        f"{layer_label} %{{customdata[0]}}, {head_label} %{{customdata[1]}}<br>"
        f"{query_label} %{{customdata[2]}}, {key_label} %{{customdata[3]}}: %{{z:.3f}}<extra></extra>"
    )
    traces = _grid_traces(tiles, index, hover, attention, masked, heads, (row_step, col_step))
    titles = [
        dict(
            text=f"L{heads[row, col, 0]} H{heads[row, col, 1]}" + (f" · {notes[row][col]}" if notes else ""),
            x=col * col_step + (n_k - 1) / 2,
            y=row * row_step - 0.5,
            xref="x",
            yref="y",
            yanchor="bottom",
            showarrow=False,
            font=dict(size=tile_title_size),
        )
        for row in range(n_layers)
        for col in range(n_heads)
    ]
    shapes = _grid_shapes(attention.shape, (row_step, col_step), mark, highlight)
    layout = dict(
        title=dict(text=html.escape(title, quote=False)) if title else None,
        annotations=titles,
        shapes=shapes,
        xaxis=dict(visible=False, range=[-0.5 - 0.5 * (col_step - n_k), tiles.shape[1] - 0.5 + 0.5 * (col_step - n_k)]),
        # Room above the first row for its titles, and below the last for the frame.
        yaxis=dict(visible=False, range=[tiles.shape[0] - 0.5 + 0.3 * (row_step - n_q), -(row_step - n_q) - 0.5]),
        height=90 * n_layers + 80,
        margin=dict(l=10, r=10, t=70 if title else 30, b=10),
        plot_bgcolor="white",
    )
    return go.Figure(data=traces, layout=layout)


def _grid_traces(tiles, index, hover: str, attention: np.ndarray, masked, heads: np.ndarray, steps) -> list:
    """The grid's traces: every tile in one heatmap, masked cells in one grey one, and a see-through marker on
    each tile's title."""
    n_layers, n_heads, n_q, n_k = attention.shape
    row_step, col_step = steps
    traces = [
        go.Heatmap(
            z=tiles,
            customdata=index,
            colorscale=COLORSCALE,
            zmin=0.0,
            zmax=1.0,
            showscale=False,
            hovertemplate=hover,
            hoverongaps=False,
            name="attention",
        )
    ]
    if masked is not None and masked.any():
        grey, _ = tile_heads(np.broadcast_to(np.where(masked, np.float32(1.0), np.float32(np.nan)), attention.shape))
        traces.append(
            go.Heatmap(
                z=grey,
                colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]],
                showscale=False,
                hoverinfo="skip",
                hoverongaps=False,
                name="masked",
            )
        )
    # One see-through marker on each thumbnail's title, carrying its layer and head: a click on it selects the
    # point (a heatmap cell cannot be selected), which the app reads to open that head.
    traces.append(
        go.Scatter(
            x=[col * col_step + (n_k - 1) / 2 for row in range(n_layers) for col in range(n_heads)],
            y=[row * row_step - 0.5 - 0.35 * (row_step - n_q) for row in range(n_layers) for col in range(n_heads)],
            customdata=[
                [int(heads[row, col, 0]), int(heads[row, col, 1])] for row in range(n_layers) for col in range(n_heads)
            ],
            mode="markers",
            marker=dict(size=28, symbol="square", opacity=0),
            hoverinfo="none",
            showlegend=False,
            name="open",
        )
    )
    return traces


def _grid_shapes(shape: tuple, steps, mark: tuple[int, int] | None, highlight: tuple[int, int] | None) -> list:
    """Outlines: the marked cell in every tile, and a frame around the highlighted tile and its title."""
    n_layers, n_heads, n_q, n_k = shape
    row_step, col_step = steps
    shapes = []
    if mark is not None:
        q, k = mark
        shapes += [
            dict(
                type="rect",
                xref="x",
                yref="y",
                line=dict(color="#ff7f0e", width=2),
                x0=col * col_step + k - 0.5,
                x1=col * col_step + k + 0.5,
                y0=row * row_step + q - 0.5,
                y1=row * row_step + q + 0.5,
            )
            for row in range(n_layers)
            for col in range(n_heads)
        ]
    if highlight is not None:
        layer, head = highlight
        # A frame around the thumbnail and its title, inside the gaps around them.
        x_pad, row_gap = 0.4 * (col_step - n_k), row_step - n_q
        shapes.append(
            dict(
                type="rect",
                xref="x",
                yref="y",
                line=dict(color="#d62728", width=3),
                x0=head * col_step - 0.5 - x_pad,
                x1=head * col_step + n_k - 0.5 + x_pad,
                y0=layer * row_step - 0.5 - 0.8 * row_gap,
                y1=layer * row_step + n_q - 0.5 + 0.2 * row_gap,
            )
        )
    return shapes
