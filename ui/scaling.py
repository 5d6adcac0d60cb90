"""Softmax and the 1/√d_k scaling: synthetic statistics, then the model's real queries and keys."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.common import Context, chart
from ui.steps import choose_query
from ui.views import View, register
from viz import softmax as softmax_viz
from viz.escape import plotly_literal
from words import t


@st.cache_data(show_spinner=False)
def get_scaling_statistics() -> tuple[dict, dict]:
    d_ks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    return softmax_viz.dot_product_variance(d_ks), softmax_viz.saturation_statistics(d_ks)


def show_scaling(ctx: Context) -> None:
    tr, lang = ctx.tr, ctx.lang
    variance, saturation = get_scaling_statistics()
    # The caption quotes the same computation the saturation plot draws, at the paper's d_k = 64.
    st.caption(t("caption_scaling", lang, n_keys=saturation["n_keys"], **softmax_viz.saturation_at(saturation, 64)))
    labels = {
        k: t(k, lang) for k in ("unscaled", "scaled", "theory", "max_weight", "entropy", "gradient_norm", "masked")
    }
    chart(
        softmax_viz.variance_figure(
            variance, dict(labels, x="d_k", y=t("variance_y", lang), title=t("variance_title", lang))
        ),
        key="variance",
    )
    st.session_state.setdefault("pair_dk", 64)
    d_k = st.select_slider(t("d_k_slider", lang), [4, 16, 64, 256], key="pair_dk")
    rng = np.random.default_rng(0)
    q, keys = rng.standard_normal(d_k), rng.standard_normal((8, d_k))
    pair_labels = dict(labels, title=t("softmax_pair_title", lang, d_k=d_k), x=t("key", lang), y=t("weight", lang))
    chart(softmax_viz.softmax_pair_figure(keys @ q, d_k, [f"k{j + 1}" for j in range(8)], pair_labels), key="pair")
    chart(
        softmax_viz.saturation_figure(
            saturation, dict(labels, x="d_k", title=t("saturation_title", lang, n_keys=saturation["n_keys"]))
        ),
        key="saturation",
    )

    st.caption(t("caption_model_scaling", lang))
    c = choose_query(tr, ctx.chosen, lang, "scaling")
    d_k = c.q.shape[0]
    real_labels = dict(
        labels,
        x=t("key", lang),
        y=t("weight", lang),
        title=t(
            "model_scaling_title",
            lang,
            layer=c.head.shown_layer,
            head=c.head.shown_head,
            token=plotly_literal([c.queries[c.position]])[0],
            d_k=d_k,
        ),
    )
    chart(softmax_viz.softmax_pair_figure(c.k @ c.q, d_k, c.keys, real_labels, c.masked), key="model-scaling")


register(View("tab_softmax", "group_design", show_scaling, ("pair_dk", "scaling_kind", "scaling_query")))
