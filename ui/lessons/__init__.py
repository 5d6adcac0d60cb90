"""Lessons: the seed articles' argument in their order (Q/K/V and scores, √d_k, multi-head, masks, positions,
residual and LayerNorm, FFN, encoder-decoder, output layer), then whether attention is an explanation, each
proved on the user's current sentence with this model's own numbers and linked to the explorer view that shows
the same thing in full; last, how attention is learnt, on a tiny model the student trains (ui.lessons.learned)."""

from __future__ import annotations

import streamlit as st

from ui.common import Context, scroll_to_top_next_run
from ui.views import Lesson, views
from words import t


def open_in_explorer(view: str) -> None:
    st.session_state.update(page="explore", tab=view)
    scroll_to_top_next_run()


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
