"""Lesson 2, why divide by √d_k: its prose (scaling.en.md, scaling.zh.md), then the softmax view on the model's
own queries and keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.views import Lesson, register

if TYPE_CHECKING:
    from ui.common import Context


def intro_values(ctx: Context) -> dict:
    """The model's width, heads and d_k, beside the seed's code, which divides by √768 over one head."""
    return {"d_model": ctx.cfg.d_model, "heads": ctx.cfg.n_heads, "d_k": ctx.cfg.d_k}


register(Lesson("lesson_scaling", "tab_softmax", shows_view=True, intro_values=intro_values))
