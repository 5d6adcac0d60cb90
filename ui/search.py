"""Head search: every layer and head ranked by what it does from one chosen query to one chosen key."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import align, head_search
from model.transformer import ATTENTION_KINDS as KINDS
from ui import views as registry
from ui import widgets
from ui.common import Context, chart, every_head, kind_selector, open_head
from ui.compare import STOP_WORDS
from ui.head_stats import AER_COLORSCALE
from ui.links import kind_and_numbers, session_numbers
from ui.models import get_alignment
from ui.views import LinkParam, View, register
from viz import attention as attention_viz
from viz.heads import statistic_grid
from viz.labels import ARROW, axis_names
from words import t

SEARCH_TOP = 8  # best heads drawn by the head search


def _content(label: str) -> bool:
    """A piece or word worth starting on: letters (or Chinese), not a stop word, not <s> / </s>."""
    text = label.split(ARROW)[-1].replace("\u2581", "").strip().lower()
    return bool(text) and not text.startswith("<") and text not in STOP_WORDS and any(c.isalpha() for c in text)


def default_pair(kind: str, queries: list[str], keys: list[str]) -> tuple[int, int]:
    """Where the pair selectors start: encoder, the first content word and the next one; decoder, the row that
    writes the first content piece with, in the masked self-attention, the previous position, and in the
    cross-attention, the first content word of the source."""
    content_q = [i for i, q in enumerate(queries) if _content(q)] or [0]
    content_k = [i for i, k in enumerate(keys) if _content(k)] or [0]
    query = content_q[0]
    if kind == "encoder_self":
        return query, next((k for k in content_k if k > query), content_k[0])
    if kind == "decoder_self":
        return query, max(query - 1, 0)
    return query, content_k[0]


def by_alignment(ranked: list[head_search.HeadScore], aer: np.ndarray) -> list[head_search.HeadScore]:
    """The same heads, lowest gold-set AER first (a corpus property: the pair does not change the order)."""
    return sorted(ranked, key=lambda h: (aer[h.layer, h.head], h.layer, h.head))


def show_head_search(ctx: Context) -> None:
    tr, lang, word_level, languages, checkpoint = ctx.tr, ctx.lang, ctx.word_level, ctx.language_pair, ctx.checkpoint
    st.caption(t("caption_search", lang))
    kind = kind_selector(lang, "search_kind")
    maps, queries, keys, masked = every_head(tr, kind, word_level, languages)
    query_axis, key_axis = axis_names(kind, lang)
    keep_or_reset_pair((tr.source_text, tr.target_text, kind, word_level), queries, keys, lang)
    start_query, start_key = default_pair(kind, queries, keys)
    left, middle, right = st.columns([2, 2, 1])
    query = widgets.selectbox(
        left,
        query_axis,
        list(range(len(queries))),
        key="search_query",
        format_func=lambda i: f"{i}: {queries[i]}",
        default=start_query,
    )
    visible = head_search.visible_keys(masked, query, len(keys))
    key = widgets.selectbox(
        middle,
        key_axis,
        visible,
        key="search_key",
        format_func=lambda i: f"{i}: {keys[i]}",
        default=start_key if start_key in visible else visible[-1],
    )
    table = get_alignment(checkpoint) if checkpoint and kind == "cross" else None
    aer = align.aer_grid(table["results"], "attention", *maps.shape[:2]) if table else None
    scores_offered = list(head_search.SCORES) + (["aer"] if aer is not None and np.isfinite(aer).all() else [])
    by = widgets.radio(
        right, t("search_by", lang), scores_offered, key="search_by", format_func=lambda b: t(f"search_{b}", lang)
    )
    ranked = head_search.rank_heads(maps, query, key, masked, "weight" if by == "aer" else by)
    if by == "aer":
        ranked = by_alignment(ranked, aer)
    best = ranked[:SEARCH_TOP]
    pair = t("search_pair", lang, from_piece=queries[query], to_piece=keys[key])
    title = (
        t("search_aer_top_title", lang, n=len(best))
        if by == "aer"
        else t("search_top_title", lang, n=len(best), pair=pair, score=t(f"search_{by}", lang))
    )
    if by == "aer":
        st.caption(t("search_aer_note", lang))  # before the thumbnails: the pair does not change this order
    show_best_heads(best, maps, masked, (query, key), by, aer, title, kind, lang)
    if by == "aer":
        grid_values = aer
    else:
        grid_values = np.array([getattr(h, by) for h in sorted(ranked, key=lambda h: (h.layer, h.head))]).reshape(
            maps.shape[:2]
        )
    chart(
        statistic_grid(
            grid_values,
            t("search_aer_grid_title", lang)
            if by == "aer"
            else t("search_grid_title", lang, score=t(f"search_{by}", lang), pair=pair),
            layer_label=t("layer", lang),
            head_label=t("head", lang),
            **(dict(colorscale=AER_COLORSCALE, value_label=t("aer_bar", lang)) if by == "aer" else {}),
        ),
        key="search-grid",
    )
    if by != "aer":
        st.caption(t("search_lift_note", lang))


def keep_or_reset_pair(signature: tuple, queries: list[str], keys: list[str], lang: str) -> None:
    """The chosen pair stays while the sentence and view stay; a new sentence starts on its own words. A link's
    pair is checked against the sentence first (out of it: a warning, and the sentence's own)."""
    if st.session_state.get("search_signature") == "from a link":
        st.session_state.search_signature = signature
        query, key = st.session_state.get("search_query"), st.session_state.get("search_key")
        if not (type(query) is int and 0 <= query < len(queries) and type(key) is int and 0 <= key < len(keys)):
            st.warning(t("link_out_of_sentence", lang, parameter="pair"))
            st.session_state.search_signature = None  # start on the sentence's own words
    if st.session_state.get("search_signature") != signature:  # a new sentence: start on its own words again
        for key in ("search_query", "search_key"):
            st.session_state.pop(key, None)
        st.session_state.search_signature = signature


def show_best_heads(best, maps, masked, pair: tuple[int, int], by: str, aer, title: str, kind: str, lang: str):
    """The best heads' thumbnails, two rows of four: each wide enough to read, each "Open" button right under its
    own thumbnail."""
    query, key = pair
    for row in range(0, len(best), 4):
        shown = best[row : row + 4]
        heads = np.array([[(h.layer + 1, h.head + 1) for h in shown]])  # the tiles' titles, from 1
        notes = [
            [
                f"{h.weight:.2f}"
                if by == "weight"
                else f"×{h.lift:.1f}"
                if by == "lift"
                else f"AER {aer[h.layer, h.head]:.2f}"
                for h in shown
            ]
        ]
        chart(
            attention_viz.attention_grid(
                maps[[h.layer for h in shown], [h.head for h in shown]][None],
                title=title if row == 0 else "",
                masked=masked,
                heads=heads,
                notes=notes,
                tile_title_size=14,  # four tiles a row leave room for titles readable from the back of a class
                mark=(query, key),
                layer_label=t("layer", lang),
                head_label=t("head", lang),
                query_label=t("query", lang),
                key_label=t("key", lang),
            ),
            key=f"search-top-{row // 4}",
        )
        for column, (i, h) in zip(st.columns(4), enumerate(shown, start=row)):
            column.button(
                t("search_open", lang, layer=h.layer + 1, head=h.head + 1),
                key=f"search-open-{i}",
                on_click=open_head,
                args=(h.layer + 1, h.head + 1, registry.map_view(kind)),  # the session's, from 1
                width="stretch",
            )


# pair=cross.2.1: the attention kind, query and key positions (from 0), once a pair was chosen
PAIR = LinkParam(
    "pair",
    read=lambda session: (
        (session.get("search_kind"), *numbers)
        if session.get("search_kind") in KINDS and (numbers := session_numbers(session, ("search_query", "search_key")))
        else None
    ),
    write=lambda pair: ".".join(map(str, pair)),
    parse=lambda text: (kind_and_numbers(text, KINDS, 2), []),
    restore=lambda pair: dict(
        search_kind=pair[0], search_query=pair[1], search_key=pair[2], search_signature="from a link"
    ),
)

register(
    View(
        "tab_search",
        "group_heads",
        show_head_search,
        ("search_kind", "search_query", "search_key", "search_by"),
        reads=("word_level",),
        link=(PAIR,),
    )
)
