"""Lessons: the seed articles' argument in their order (Q/K/V and scores, √d_k, multi-head, masks, positions,
residual and LayerNorm, FFN, encoder-decoder, output layer), each proved on the user's current sentence with
this model's own numbers, and each linked to the explorer view that shows the same thing in full."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui.common import Context
from ui.explanation import show_explanation
from ui.ffn import show_ffn
from ui.no_attention import show_no_attention
from ui.output_layer import show_output_layer
from ui.padding import show_padding
from ui.residual import show_residual
from ui.word_order import show_word_order
from viz.text import t

# Lesson key -> the explorer tab that shows the same thing in full (None: the lesson is the only view of it).
LESSONS = {
    "lesson_qkv": "tab_steps",
    "lesson_scaling": "tab_softmax",
    "lesson_multihead": "tab_encoder",
    "lesson_masks": "tab_decoder",
    "lesson_positions": "tab_positional",
    "lesson_residual": None,
    "lesson_ffn": None,
    "lesson_encoder_decoder": "tab_cross",
    "lesson_output": "tab_decoding",
    "lesson_explanation": "tab_cross",
}
LESSON_KEYS = tuple(LESSONS)
# The widgets of the lessons' own views: kept while their lesson is closed (widgets.keep).
LESSON_WIDGETS = (
    "order_a",
    "order_b",
    "padding_other",
    "residual_stack",
    "residual_position",
    "layernorm_sublayer",
    "output_step",
    "explain_step",
    "explain_ig",
)


def open_in_explorer(tab: str) -> None:
    st.session_state.update(page="explore", tab=tab)


def show_lesson(key: str, ctx: Context, explorer: dict[str, Callable[[], None]]) -> None:
    """One lesson: what it argues, then the proof on the current sentence. explorer: tab key -> its view."""
    st.markdown(t(f"{key}_intro", ctx.lang))
    own_views = {
        "lesson_masks": show_padding,
        "lesson_positions": show_word_order,
        "lesson_residual": show_residual,
        "lesson_ffn": show_ffn,
        "lesson_encoder_decoder": show_no_attention,
        "lesson_output": show_output_layer,
        "lesson_explanation": show_explanation,
    }
    tab = LESSONS[key]
    if key in ("lesson_qkv", "lesson_scaling", "lesson_multihead", "lesson_masks"):
        explorer[tab]()  # the explorer's view itself, on the same sentence, layer and head
    if key in own_views:
        if key == "lesson_masks":
            st.markdown(f"**{t('padding_heading', ctx.lang)}**")
        own_views[key](ctx)
    if tab:
        st.button(
            t("lesson_open", ctx.lang, view=t(tab, ctx.lang)), key=f"open-{key}", on_click=open_in_explorer, args=(tab,)
        )
