"""Two sentences side by side: one view, layer and head on one colour scale, their difference, and the heads that
link a word pair most differently."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import decode, head_search
from ui import widgets
from ui.common import (
    KIND_TAB,
    attention_heatmap,
    axis_names,
    chart,
    every_head,
    kind_selector,
    layer_of_kind,
    open_head,
)
from ui.models import get_hypotheses
from viz import attention as attention_viz
from viz.heads import statistic_grid
from viz.text import markdown_literal, t

# Minimal pairs for the comparison view: (name key in viz.text, first sentence, second sentence).
MINIMAL_PAIRS = [
    ("pair_coreference", "The animal didn't cross the street because it was too tired.",
     "The animal didn't cross the street because it was too wide."),
    ("pair_word_order", "The dog chases the cat.", "The cat chases the dog."),
    ("pair_coreference_size", "The trophy didn't fit in the suitcase because it was too big.",
     "The trophy didn't fit in the suitcase because it was too small."),
    ("pair_roles", "She gave him a book.", "He gave her a book."),
]


def show_compare(tr: decode.Translation, checkpoint: str, beam: int, layer: int, head: str, lang: str,
                 word_level: bool, languages: tuple[str, str]) -> None:
    """Two sentences side by side: the same view, layer and head, one colour scale (0 to 1, as every map)."""
    second = st.session_state.second_sentence.strip()
    if not second:
        st.info(t("compare_empty", lang))
        return
    other = get_hypotheses(checkpoint, second, beam)[0]
    st.markdown(t("compare_translations", lang, first=markdown_literal(tr.target_text),
                  second=markdown_literal(other.target_text)))
    kind = kind_selector(lang, "compare_kind")
    layer = layer_of_kind(tr, kind, layer, lang)
    left, right = st.columns(2)
    figures = []
    for column, translation, name in ((left, tr, "a"), (right, other, "b")):
        fig, weights, queries, keys = attention_heatmap(translation, kind, layer, head, lang, word_level, languages)
        figures.append((weights, queries, keys))
        with column:
            chart(fig, key=f"compare-{name}")
    (weights_a, queries_a, keys_a), (weights_b, queries_b, keys_b) = figures
    if weights_a.shape == weights_b.shape:
        query_axis, key_axis = axis_names(kind, lang)
        chart(attention_viz.difference_heatmap(
            weights_a - weights_b, queries_a, keys_a, queries_b, keys_b, query_axis, key_axis,
            title=t("compare_difference_title", lang), value_label=t("compare_difference", lang),
            masked=attention_viz.causal_mask(len(queries_a)) if kind == "decoder_self" and not word_level else None),
            key="compare-difference")
    else:
        st.caption(t("compare_no_difference", lang, a=" × ".join(map(str, weights_a.shape)),
                     b=" × ".join(map(str, weights_b.shape))))

    # Which heads link the same pair of words differently in the two sentences (it → animal vs it → street)?
    st.markdown(f"**{t('compare_heads', lang)}**")
    levels = [every_head(translation, kind, word_level, languages) for translation in (tr, other)]
    pairs = []
    for (maps, queries, keys, masked), name, column in zip(levels, "ab", st.columns(2)):
        q_box, k_box = column.columns(2)
        sentence = t("sentence_first" if name == "a" else "sentence_second", lang)
        query = widgets.selectbox(q_box, t("compare_query", lang, n=sentence), list(range(len(queries))),
                                  key=f"compare_query_{name}", format_func=lambda i, q=queries: f"{i}: {q[i]}")
        visible = head_search.visible_keys(masked, query, len(keys))
        key = widgets.selectbox(k_box, t("compare_key", lang, n=sentence), visible, key=f"compare_key_{name}",
                                format_func=lambda i, k=keys: f"{i}: {k[i]}")
        pairs.append((maps[:, :, query, key], f"{queries[query]} → {keys[key]}"))
    (first_weights, first_pair), (second_weights, second_pair) = pairs
    difference = first_weights - second_weights
    chart(statistic_grid(difference, t("compare_heads_title", lang, a=first_pair, b=second_pair),
                         layer_label=t("layer", lang), head_label=t("head", lang), colorscale="RdBu", zmid=0.0),
          key="compare-heads")
    order = np.argsort(-np.abs(difference), axis=None, kind="stable")[:4]
    columns = st.columns(4)
    for i, flat in enumerate(order):
        l, h = divmod(int(flat), difference.shape[1])
        columns[i].button(t("compare_open", lang, layer=l + 1, head=h + 1, diff=float(difference[l, h])),
                          key=f"compare-open-{i}", on_click=open_head, args=(l + 1, h + 1, KIND_TAB[kind]))
    st.caption(t("compare_note", lang))
