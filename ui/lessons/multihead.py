"""Lesson 3, multi-head attention: its prose (multihead.en.md, multihead.zh.md), then the encoder's map with
every head's thumbnail."""

from ui.views import Lesson, register

register(Lesson("lesson_multihead", "tab_encoder", shows_view=True))
