""" "Attention routes, the feed-forward network transforms": per layer, how much each sub-layer changes the
representation it reads, and how many of the FFN's ReLU units are off."""

from __future__ import annotations

import streamlit as st

from model import inside
from ui.common import Context, chart
from ui.models import get_inside
from ui.views import Lesson, register
from viz import inside as inside_viz
from words import t


def show_ffn(ctx: Context) -> None:
    lang = ctx.lang
    st.caption(t("ffn_explain", lang, d_ff=ctx.cfg.d_ff, d_model=ctx.cfg.d_model))
    result = get_inside(ctx.checkpoint, ctx.tr)
    updates = {stack: inside.relative_updates(result.stack(stack)) for stack in ("encoder", "decoder")}
    zeros = {stack: inside.relu_zero_share(result.stack(stack)) for stack in ("encoder", "decoder")}
    names = inside.SUBLAYERS["decoder"]
    chart(
        inside_viz.sublayer_updates_figure(
            updates,
            zeros,
            dict(
                stacks={s: t(f"stack_{s}", lang) for s in ("encoder", "decoder")},
                sublayers={n: t(f"sublayer_{n}", lang) for n in names},
                layer=t("layer", lang),
                relative=t("ffn_relative", lang),
                zeros=t("ffn_zeros", lang),
                title=t("ffn_title", lang),
                subplot=t("subplot_title", lang),
            ),
        ),
        key="ffn-updates",
    )
    attention_larger = sum(
        int(u["self_attention"][i] > u["feed_forward"][i])
        for u in updates.values()
        for i in range(len(u["feed_forward"]))
    )
    n_layers = sum(len(u["feed_forward"]) for u in updates.values())
    st.caption(
        t(
            "ffn_measured",
            lang,
            ffn_larger=n_layers - attention_larger,
            n=n_layers,
            low=min(z.min() for z in zeros.values()),
            high=max(z.max() for z in zeros.values()),
            d_ff=ctx.cfg.d_ff,
        )
    )
    st.caption(t("ffn_limits", lang))


register(Lesson("lesson_ffn", None, own_view=show_ffn))
