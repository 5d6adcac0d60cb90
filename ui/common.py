"""What several views share: drawing a chart, the chosen layer and head, axis names, the kind and query selectors
and the main attention heatmap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from model import decode, head_search, probe
from model.transformer import ATTENTION_KINDS as KINDS
from ui import models, widgets
from viz import attention as attention_viz
from viz.escape import markdown_literal
from viz.labels import axis_languages, axis_names, kind_in_sentence, kind_name, query_labels
from words import t

# Plotly's mode bar with its one button a class uses, the PNG download: its full row of eight icons lay over the
# right end of long chart titles while the pointer was on a chart (a teacher points at the projected map). Drag
# to zoom and a double click to reset still work without their buttons.
PLOTLY_CONFIG = {
    "displaylogo": False,
    "modeBarButtons": [["toImage"]],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}
# Presentation mode: how much larger the heatmap's tick labels, cell values and rows are drawn, and the map's
# height at most, so the whole map of a ten-word sentence is on the first screen of a 1024×768 projector.
PRESENTATION_SCALE = 1.5
PRESENTATION_MAP_HEIGHT = 460
# A one-line note above the map (the unsure note, in presentation mode one line): the map is this much shorter
# for each, so it still ends on the first screen (measured: 374 px top with the note, 808-820 px bottom before).
NOTE_HEIGHT = 58


def presentation_map_height() -> int | None:
    """The main map's height at most: in presentation mode what is left of the first screen, else no limit."""
    if not st.session_state.get("present"):
        return None
    return PRESENTATION_MAP_HEIGHT - NOTE_HEIGHT * st.session_state.get("notes_above", 0)


@dataclass(frozen=True)
class HeadChoice:
    """The layer and head a view shows, as model/ indexes them: 0-based, head None for the layer's heads together.
    Parsed once from what a person chose (the sidebar, the session and the link hold them 1-based, head "mean" for
    all), and shown 1-based again on screen."""

    layer: int
    head: int | None

    @classmethod
    def shown_as(cls, layer: int | str, head: str) -> HeadChoice:
        """From the 1-based layer and head ("1".."H", or "mean") a person reads."""
        return cls(int(layer) - 1, None if head == "mean" else int(head) - 1)

    @property
    def shown_layer(self) -> int:
        return self.layer + 1

    @property
    def shown_head(self) -> str:
        return "mean" if self.head is None else str(self.head + 1)

    @property
    def one_head(self) -> int:
        """The head whose own vectors a view shows: the chosen one, the first where the layer's heads are chosen
        together (their mean has no queries or keys of its own)."""
        return 0 if self.head is None else self.head


@dataclass(frozen=True)
class Context:
    """What every view reads: the translation shown (teacher-forced when a reference is given), the model's own
    output, where it came from, the chosen layer and head, and the interface language."""

    tr: decode.Translation
    model_output: decode.Translation
    checkpoint: str
    beam: int
    chosen: HeadChoice
    lang: str
    word_level: bool
    language_pair: tuple[str, str]  # the checkpoint's (source, target) language codes; lang is the interface's
    cfg: object  # the model's TransformerConfig
    fetch: Callable[[], decode.Translation]  # tr again, from the shared cache or computed anew (see show_attention)
    original: decode.Translation | None = None  # the model's own output when what-if choices (a trail) are set


# Two maps of a comparison stand side by side only up to this many pieces: the main column at 1024 px with the
# sidebar open gives each about 270 px, and with more pieces their cells' numbers ran into each other.
SIDE_BY_SIDE_PIECES = 5


def map_pair(pieces: int):
    """Two places for the two maps of a comparison: side by side when they stay legible, else one under the
    other."""
    return tuple(st.columns(2)) if pieces <= SIDE_BY_SIDE_PIECES else (st.container(), st.container())


def inspect_head(layer: int, head: int) -> None:
    st.session_state.update(layer=layer, head=str(head), view_chosen=True)


def open_head(layer: int, head: int, tab: str) -> None:
    """Show this head in the main map of its attention kind."""
    st.session_state.update(layer=layer, head=str(head), tab=tab, view_chosen=True)
    scroll_to_top_next_run()


def scroll_to_top_next_run() -> None:
    """A button that opens another view (a head of a ranking, a lesson's way to the explorer) left the page
    scrolled where the button was, 700–800 px down at 1024×768: the map it opened stood above the screen and the
    click looked as if it did nothing. The run it starts ends by scrolling the page to its top."""
    st.session_state.scroll_to_top = st.session_state.get("scroll_to_top", 0) + 1


def scroll_to_top_if_asked() -> None:
    """At the end of a run: the page back to its top where a button asked for it (scroll_to_top_next_run). The
    script's text holds the request's number, so a second request is a new element and runs again."""
    asked = st.session_state.get("scroll_to_top", 0)
    if asked and asked != st.session_state.get("scrolled_to_top"):
        st.session_state.scrolled_to_top = asked
        st.html(
            f"<script>/* {asked} */ document.querySelector(\"[data-testid='stMain']\")?.scrollTo(0, 0);</script>",
            unsafe_allow_javascript=True,
        )


def choose_view() -> None:
    """The layer or head picked by hand: from now on the page never moves them on its own (ui.session)."""
    st.session_state.view_chosen = True


def chart(fig, key: str, stretch: bool = True) -> None:
    """stretch=False keeps the figure's own width (a narrow table-like figure)."""
    st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, width="stretch" if stretch else "content")


def selected_weights(attention: np.ndarray, chosen: HeadChoice) -> np.ndarray:
    """attention (layers, heads, queries, keys) -> the chosen head's (queries, keys), or its layer's mean."""
    per_layer = attention[chosen.layer]
    return attention_viz.mean_over_heads(per_layer) if chosen.head is None else per_layer[chosen.head]


def row_outcomes(tr: decode.Translation, lang: str, sentence: bool = False) -> list[str]:
    """What each decoder position t did with its output: the piece it chose (and its probability), or, under
    teacher forcing, the piece it was fed (with the probability the model gave it) beside the model's own top
    choice. Short for hovers; sentence=True for a caption."""
    out = []
    for piece, probability, alternatives in zip(tr.target_pieces, tr.token_probs, tr.alternatives):
        top, top_probability = alternatives[0]
        if tr.teacher_forced:
            key = "fed_sentence" if sentence else "fed_short"
            shown = markdown_literal if sentence else str  # a caption is markdown; a hover is escaped by viz
            out.append(t(key, lang, piece=shown(piece), p=probability, top=shown(top), top_p=top_probability))
        else:
            out.append(
                t("chosen_sentence", lang, piece=markdown_literal(piece), p=probability)
                if sentence
                else f"{piece} ({probability:.3f})"
            )
    return out


def layer_of_kind(tr: decode.Translation, kind: str, chosen: HeadChoice, lang: str) -> HeadChoice:
    """The chosen layer, or this kind's last one when its stack is shallower (a checkpoint may have more encoder
    than decoder layers, or fewer); says so when it had to step back."""
    n_layers = tr.attention(kind).shape[0]
    if chosen.layer >= n_layers:
        st.caption(t("layer_clamped", lang, kind=kind_in_sentence(kind, lang), n=n_layers, layer=chosen.shown_layer))
        return replace(chosen, layer=n_layers - 1)
    return chosen


def every_head(tr: decode.Translation, kind: str, word_level: bool, languages: tuple[str, str]):
    """Every layer and head of one kind, at piece or word level -> (maps, query labels, keys, masked or None);
    decoder rows are named by what they read and write (query_labels)."""
    queries, keys = tr.axis_pieces(kind)
    masked = attention_viz.causal_mask(len(queries)) if kind == "decoder_self" else None
    maps, _, keys, masked = head_search.maps_at_level(
        tr.attention(kind), queries, keys, masked, word_level, *axis_languages(kind, languages)
    )
    return maps, query_labels(tr, kind, word_level, languages), keys, masked


def head_name(head: str, lang: str) -> str:
    """A head as a person reads it: head "1".."H", or "mean" for the layer's heads together."""
    return t("mean_heads", lang) if head == "mean" else t("head_n", lang, n=head)


def head_option_label(item: str, lang: str) -> str:
    kind, layer, head = item.split(":")
    return f"{kind_name(kind, lang)} · L{layer} H{head}"


def kind_selector(lang: str, key: str) -> str:
    return widgets.radio(
        st, t("steps_kind", lang), KINDS, format_func=lambda k: kind_name(k, lang), horizontal=True, key=key
    )


def query_selector(tr: decode.Translation, kind: str, lang: str, key: str, label: str = "query_token") -> int:
    queries = query_labels(tr, kind)
    return widgets.selectbox(
        st, t(label, lang), list(range(len(queries))), format_func=lambda i: f"{i}: {queries[i]}", key=key
    )


def attention_heatmap(
    tr: decode.Translation,
    kind: str,
    chosen: HeadChoice,
    lang: str,
    word_level: bool,
    languages: tuple[str, str],
    title: str | None = None,
    values=None,
    signed: bool = False,
    value_label: str | None = None,
):
    """The big heatmap for one kind, layer and head (piece or word level) -> (figure, weights, queries, keys).
    title: instead of the kind, layer and head. values: another account of the same view (queries, keys) to
    draw instead of the attention weights (a model.attribute method's view); signed: its scores have either sign."""
    height = presentation_map_height()
    if values is None:  # the raw weights: one figure for every session on this translation and view
        return models.shared_figure(
            tr,
            ("heatmap", kind, chosen, lang, word_level, languages, title, height),
            lambda: _attention_heatmap(
                tr, kind, chosen, lang, word_level, languages, title, None, signed, value_label, height
            ),
        )
    return _attention_heatmap(tr, kind, chosen, lang, word_level, languages, title, values, signed, value_label, height)


def _attention_heatmap(
    tr, kind, chosen, lang, word_level, languages, title, values, signed, value_label, height: int | None
):
    """height: the presentation map's height at most (presentation mode), None for the normal page."""
    queries, keys = tr.axis_pieces(kind)
    weights = selected_weights(tr.attention(kind), chosen) if values is None else values
    masked = attention_viz.causal_mask(len(queries)) if kind == "decoder_self" else None
    predicted = row_outcomes(tr, lang) if kind != "encoder_self" else None
    if word_level:
        weights, _, keys, masked = probe.word_level(weights, queries, keys, *axis_languages(kind, languages), masked)
        predicted = None  # a word row mixes several prediction steps
    queries = query_labels(tr, kind, word_level, languages)
    query_axis, key_axis = axis_names(kind, lang)
    fig = attention_viz.attention_heatmap(
        weights,
        queries,
        keys,
        query_axis,
        key_axis,
        font_scale=PRESENTATION_SCALE if height else 1.0,
        max_height=height,
        title=title
        or t(
            "heatmap_title",
            lang,
            kind=kind_name(kind, lang),
            layer=chosen.shown_layer,
            head=head_name(chosen.shown_head, lang),
        ),
        masked=masked,
        masked_label=t("masked_cell", lang),
        predicted_tokens=predicted,
        predicted_label=t("fed" if tr.teacher_forced else "predicts", lang),
        weight_label=value_label or t("weight", lang),
        signed=signed,
    )
    return fig, weights, queries, keys
