"""Lessons: the seed articles' argument in their order (Q/K/V and scores, √d_k, multi-head, masks, positions,
residual and LayerNorm, FFN, encoder-decoder, output layer), then whether attention is an explanation, each
proved on the user's current sentence with this model's own numbers and linked to the explorer view that shows
the same thing in full; last, how attention is learnt, on a tiny model the student trains (ui.lessons.learned)."""

from __future__ import annotations

import streamlit as st

from ui.common import Context
from ui.lessons.explanation import show_explanation
from ui.lessons.ffn import show_ffn
from ui.lessons.learned import WIDGETS as LEARNED_WIDGETS
from ui.lessons.learned import intro_values as learned_intro_values
from ui.lessons.learned import show_learned
from ui.lessons.no_attention import show_no_attention
from ui.lessons.output_layer import show_output_layer
from ui.lessons.padding import show_padding
from ui.lessons.residual import show_residual
from ui.lessons.word_order import show_word_order
from ui.views import Lesson, register, views
from words import t


def open_in_explorer(view: str) -> None:
    st.session_state.update(page="explore", tab=view)


def show_lesson(lesson: Lesson, ctx: Context) -> None:
    """What the lesson argues, then the proof on the current sentence, then the way to the explorer."""
    st.markdown(t(f"{lesson.key}_intro", ctx.lang, **(lesson.intro_values(ctx) if lesson.intro_values else {})))
    if lesson.shows_view:
        views()[lesson.explorer_view].draw(ctx)
    if lesson.own_view is not None:
        if lesson.heading:
            st.markdown(f"**{t(lesson.heading, ctx.lang)}**")
        lesson.own_view(ctx)
    if lesson.explorer_view:
        st.button(
            t("lesson_open", ctx.lang, view=t(lesson.explorer_view, ctx.lang)),
            key=f"open-{lesson.key}",
            on_click=open_in_explorer,
            args=(lesson.explorer_view,),
        )


register(Lesson("lesson_qkv", "tab_steps", shows_view=True))
register(Lesson("lesson_scaling", "tab_softmax", shows_view=True))
register(Lesson("lesson_multihead", "tab_encoder", shows_view=True))
register(
    Lesson(
        "lesson_masks",
        "tab_decoder",
        shows_view=True,
        own_view=show_padding,
        heading="padding_heading",
        widgets=("padding_other",),
        reads=("layer", "head"),
    )
)
register(
    Lesson(
        "lesson_positions",
        "tab_positional",
        own_view=show_word_order,
        widgets=("order_a", "order_b"),
        reads=("layer", "head"),
    )
)
register(
    Lesson(
        "lesson_residual",
        None,
        own_view=show_residual,
        widgets=("residual_stack", "residual_position", "layernorm_sublayer"),
    )
)
register(Lesson("lesson_ffn", None, own_view=show_ffn))
register(Lesson("lesson_encoder_decoder", "tab_cross", own_view=show_no_attention, reads=("layer", "head")))
register(Lesson("lesson_output", "tab_decoding", own_view=show_output_layer, widgets=("output_step",)))
register(
    Lesson(
        "lesson_explanation",
        "tab_cross",
        own_view=show_explanation,
        widgets=("explain_step", "explain_ig"),
        reads=("layer",),
    )
)
register(
    Lesson("lesson_learned", None, own_view=show_learned, widgets=LEARNED_WIDGETS, intro_values=learned_intro_values)
)
