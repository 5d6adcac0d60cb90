"""Scaled dot-product attention worked through for one query of one head, on the model's own Q, K and V."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from model import decode
from ui.common import Context, HeadChoice, chart, kind_selector, layer_of_kind, query_selector
from ui.views import View, register
from viz import attention as attention_viz
from viz import steps as steps_viz
from viz.escape import markdown_literal
from viz.labels import query_labels
from words import scientific, t


@dataclass
class QueryChoice:
    """One query of one head, chosen in a view: its kind, position, axis pieces, the head's q, K, V and mask row."""

    kind: str
    head: HeadChoice  # one head (never None), its layer within this kind's stack
    position: int
    queries: list[str]
    keys: list[str]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    masked: np.ndarray | None


def choose_query(tr: decode.Translation, chosen: HeadChoice, lang: str, prefix: str) -> QueryChoice:
    """Attention kind and query selectors; "mean over heads" has no vectors of its own, so it shows head 1."""
    kind = kind_selector(lang, f"{prefix}_kind")
    position = query_selector(tr, kind, lang, f"{prefix}_query")
    chosen = layer_of_kind(tr, kind, chosen, lang)
    _, keys = tr.axis_pieces(kind)
    queries = query_labels(tr, kind)
    if chosen.head is None:
        st.caption(t("mean_shows_head_1", lang))
    head = HeadChoice(chosen.layer, chosen.one_head)
    qkv = tr.record.qkv[kind]
    masked = attention_viz.causal_mask(len(queries))[position] if kind == "decoder_self" else None
    return QueryChoice(
        kind,
        head,
        position,
        queries,
        keys,
        qkv["q"][head.layer, head.head, position],
        qkv["k"][head.layer, head.head],
        qkv["v"][head.layer, head.head],
        masked,
    )


def show_steps(ctx: Context) -> None:
    tr, lang = ctx.tr, ctx.lang
    st.caption(t("caption_steps", lang))
    c = choose_query(tr, ctx.chosen, lang, "steps")
    steps = steps_viz.attention_steps(c.q, c.k, c.v, c.masked)
    labels = {k: t(k, lang) for k in ("q", "k", "v", "scores", "weights", "output", "masked", "dimension")}
    labels.update(scaled=t("scaled_scores", lang), key=t("key", lang), mask=t("mask_col", lang))
    st.markdown(f"**{t('qkv_title', lang, layer=c.head.shown_layer, head=c.head.shown_head)}**")
    chart(steps_viz.vectors_figure(steps, c.queries[c.position], c.keys, labels), key="steps-vectors")
    chart(steps_viz.steps_figure(steps, c.keys, labels), key="steps-bars")
    st.dataframe(steps_viz.steps_table(steps, c.keys, labels), hide_index=True, width="stretch")
    chart(steps_viz.output_figure(steps, labels), key="steps-output")
    model_row = tr.attention(c.kind)[c.head.layer, c.head.head, c.position]
    st.caption(
        t(
            "steps_matches",
            lang,
            token=markdown_literal(c.queries[c.position]),
            diff=scientific(float(np.abs(model_row - steps.weights).max())),
        )
    )


register(View("tab_steps", "group_design", show_steps, ("steps_kind", "steps_query")))
