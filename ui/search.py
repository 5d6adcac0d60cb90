"""Head search: every layer and head ranked by what it does from one chosen query to one chosen key."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import decode, head_search
from ui import widgets
from ui.common import KIND_TAB, axis_names, chart, every_head, kind_selector, open_head
from viz import attention as attention_viz
from viz.heads import statistic_grid
from viz.text import t

SEARCH_TOP = 8  # best heads drawn by the head search


def show_head_search(tr: decode.Translation, lang: str, word_level: bool, languages: tuple[str, str]) -> None:
    st.caption(t("explain_search", lang))
    kind = kind_selector(lang, "search_kind")
    maps, queries, keys, masked = every_head(tr, kind, word_level, languages)
    query_axis, key_axis = axis_names(kind, lang)
    left, middle, right = st.columns([2, 2, 1])
    query = widgets.selectbox(left, query_axis, list(range(len(queries))), key="search_query",
                              format_func=lambda i: f"{i}: {queries[i]}")
    visible = head_search.visible_keys(masked, query, len(keys))
    key = widgets.selectbox(middle, key_axis, visible, key="search_key", format_func=lambda i: f"{i}: {keys[i]}",
                            default=visible[-1] if kind == "decoder_self" else visible[0])
    by = widgets.radio(right, t("search_by", lang), list(head_search.SCORES), key="search_by",
                       format_func=lambda b: t(f"search_{b}", lang))
    ranked = head_search.rank_heads(maps, query, key, masked, by)
    best = ranked[:SEARCH_TOP]
    pair = t("search_pair", lang, from_piece=queries[query], to_piece=keys[key])
    heads = np.array([[(h.layer, h.head) for h in best]])
    notes = [[f"{h.weight:.2f}" if by == "weight" else f"×{h.lift:.1f}" for h in best]]
    title = t("search_top_title", lang, n=len(best), pair=pair, score=t(f"search_{by}", lang))
    chart(attention_viz.attention_grid(
        maps[heads[0, :, 0] - 1, heads[0, :, 1] - 1][None], title=title, masked=masked, heads=heads, notes=notes,
        mark=(query, key), layer_label=t("layer", lang), head_label=t("head", lang), query_label=t("query", lang),
        key_label=t("key", lang)), key="search-top")
    columns = st.columns(4)
    for i, h in enumerate(best):
        columns[i % 4].button(t("search_open", lang, layer=h.layer, head=h.head), key=f"search-open-{i}",
                              on_click=open_head, args=(h.layer, h.head, KIND_TAB[kind]))
    scores = np.array([getattr(h, by) for h in sorted(ranked, key=lambda h: (h.layer, h.head))])
    chart(statistic_grid(scores.reshape(maps.shape[:2]), t("search_grid_title", lang, score=t(f"search_{by}", lang),
                                                             pair=pair),
                         layer_label=t("layer", lang), head_label=t("head", lang)), key="search-grid")
    st.caption(t("search_lift_note", lang))
