"""Lesson 2, why divide by √d_k: its prose (scaling.en.md, scaling.zh.md), then the softmax view on the model's
own queries and keys."""

from ui.views import Lesson, register

register(Lesson("lesson_scaling", "tab_softmax", shows_view=True))
