"""The sinusoidal positional encoding of the model's d_model."""

from __future__ import annotations

import streamlit as st

from model.transformer import sinusoidal_positional_encoding
from ui import widgets
from ui.common import Context, chart
from ui.views import View, register
from viz import positional as positional_viz
from words import t


def show_positional(ctx: Context) -> None:
    d_model, max_len, lang = ctx.cfg.d_model, ctx.cfg.max_len, ctx.lang
    st.caption(t("caption_positional", lang))
    st.session_state.setdefault("pe_length", 50)
    length = st.slider(t("pe_length", lang), 8, 200, key="pe_length")
    if length > max_len:
        st.caption(t("pe_beyond_model", lang, max_len=max_len, last=max_len - 1))
    pe = sinusoidal_positional_encoding(length, d_model).numpy()
    chart(
        positional_viz.positional_heatmap(
            pe, t("position", lang), t("dimension", lang), t("pe_heatmap_title", lang, d_model=d_model)
        ),
        key="pe-heatmap",
    )
    default_dims = sorted({d for d in (0, 1, 4, 5, d_model // 4, d_model // 2) if d < d_model})
    st.session_state.setdefault("pe_dims", default_dims)
    dims = widgets.multiselect(st, t("pe_dims", lang), list(range(d_model)), key="pe_dims")
    chart(
        positional_viz.positional_curves(
            pe, dims, t("position", lang), t("pe_curves_title", lang), t("dimension", lang)
        ),
        key="pe-curves",
    )
    st.caption(t("caption_similarity", lang))
    chart(
        positional_viz.position_similarity_heatmap(pe, t("position", lang), t("pe_similarity_title", lang)),
        key="pe-similarity",
    )


register(View("tab_positional", "group_design", show_positional, ("pe_length", "pe_dims"), reads=()))
