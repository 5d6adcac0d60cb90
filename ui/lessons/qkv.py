"""Lesson 1, queries, keys, values and scores: its prose (qkv.en.md, qkv.zh.md), then the step-by-step view
on the current sentence."""

from ui.views import Lesson, register

register(Lesson("lesson_qkv", "tab_steps", shows_view=True))
