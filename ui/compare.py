"""Two sentences side by side: one view, layer and head on one colour scale, their difference, and the heads that
link a word pair most differently."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import decode, head_search
from model.tokenizer import group_pieces_into_words
from ui import views as registry
from ui import widgets
from ui.checkpoints import MINIMAL_PAIRS, MinimalPair
from ui.common import (
    Context,
    attention_heatmap,
    chart,
    every_head,
    kind_selector,
    layer_of_kind,
    map_pair,
    open_head,
)
from ui.links import NUMBER, session_numbers
from ui.models import get_hypotheses
from ui.views import LinkParam, View, register
from viz import attention as attention_viz
from viz.escape import markdown_literal
from viz.heads import statistic_grid
from viz.labels import axis_names
from words import t

STOP_WORDS = {"the", "a", "an", "is", "was", "it", "to", "of", "and", "because", "too", "did", "didn't", "n't"}


def show_compare(ctx: Context) -> None:
    """Two sentences side by side: the same view, layer and head, one colour scale (0 to 1, as every map)."""
    tr, checkpoint, beam, lang = ctx.tr, ctx.checkpoint, ctx.beam, ctx.lang
    word_level, languages = ctx.word_level, ctx.language_pair
    second = st.session_state.second_sentence.strip()
    if not second:
        st.info(t("compare_empty", lang))
        return
    other = get_hypotheses(checkpoint, second, beam)[0]
    st.markdown(
        t(
            "compare_translations",
            lang,
            first=markdown_literal(tr.target_text),
            second=markdown_literal(other.target_text),
        )
    )
    kind = kind_selector(lang, "compare_kind")
    chosen = layer_of_kind(tr, kind, ctx.chosen, lang)
    left, right = map_pair(max(len(tr.source_pieces), len(tr.target_pieces), len(other.target_pieces)))
    figures = []
    for column, translation, name in ((left, tr, "a"), (right, other, "b")):
        fig, weights, queries, keys = attention_heatmap(translation, kind, chosen, lang, word_level, languages)
        figures.append((weights, queries, keys))
        with column:
            chart(fig, key=f"compare-{name}")
    (weights_a, queries_a, keys_a), (weights_b, queries_b, keys_b) = figures
    if weights_a.shape == weights_b.shape:
        query_axis, key_axis = axis_names(kind, lang)
        chart(
            attention_viz.difference_heatmap(
                weights_a - weights_b,
                queries_a,
                keys_a,
                queries_b,
                keys_b,
                query_axis,
                key_axis,
                title=t("compare_difference_title", lang),
                value_label=t("compare_difference", lang),
                masked=attention_viz.causal_mask(len(queries_a)) if kind == "decoder_self" and not word_level else None,
            ),
            key="compare-difference",
        )
    else:
        st.caption(
            t(
                "compare_no_difference",
                lang,
                a=" × ".join(map(str, weights_a.shape)),
                b=" × ".join(map(str, weights_b.shape)),
            )
        )

    show_tracking(tr, other, kind, lang, word_level, languages)


def _bare(label: str) -> str:
    return label.replace("\u2581", "").strip().lower()


def _find_word(labels: list[str], word: str, language: str) -> int | None:
    """The first piece of the word (a word may be cut into several pieces)."""
    groups = group_pieces_into_words(labels, language)
    return next((g[0] for g in groups if _bare("".join(labels[i] for i in g)) == word), None)


def default_tracked(
    labels: list[str],
    other_labels: list[str],
    sentences: tuple[str, str],
    pairs: tuple[MinimalPair, ...] = MINIMAL_PAIRS["en"],
    language: str = "en",
) -> tuple[int, int, int]:
    """Start positions (in the first sentence) of the query and the two candidate words: a minimal pair's own
    words; otherwise the first three content words found in both sentences. language: the sentences'."""
    pair = next((p for p in pairs if (p.first, p.second) == sentences), None)
    if pair:
        found = [_find_word(labels, w, language) for w in pair.tracked]
        if None not in found:
            return tuple(found)
    # Otherwise whole words (a word cut into pieces starts on its first piece) found in both sentences.
    other_words = {_bare("".join(other_labels[i] for i in g)) for g in group_pieces_into_words(other_labels, language)}
    words = [(g[0], _bare("".join(labels[i] for i in g))) for g in group_pieces_into_words(labels, language)]
    shared = [i for i, w in words if w in other_words and w.isalpha() and w not in STOP_WORDS]
    shared += [i for i, w in words if i not in shared and w.isalpha()]
    shared += [i for i in range(len(labels)) if i not in shared]
    return shared[0], shared[1 % len(shared)], shared[2 % len(shared)]


def show_tracking(
    tr: decode.Translation,
    other: decode.Translation,
    kind: str,
    lang: str,
    word_level: bool,
    languages: tuple[str, str],
) -> None:
    """Which heads follow the word that fits each sentence (it → animal in the first, it → street in the second)?
    Ranked by head_search.referent_tracking, which gives 0 to a head that does the same in both sentences."""
    st.markdown(f"**{t('compare_heads', lang)}**")
    (maps_a, queries_a, keys_a, masked_a), (maps_b, queries_b, keys_b, _) = (
        every_head(translation, kind, word_level, languages) for translation in (tr, other)
    )
    new_words = keep_or_reset_words(
        (tr.source_text, other.source_text, kind, word_level), (queries_a, keys_a, keys_b), lang
    )
    # the candidate words are keys; in the encoder the query is one of the same pieces
    pairs = MINIMAL_PAIRS.get(languages[0], MINIMAL_PAIRS["en"])
    start = default_tracked(
        queries_a if kind == "encoder_self" else keys_a,
        keys_b,
        (tr.source_text, other.source_text),
        pairs,
        languages[0],
    )
    if new_words:  # written, not left to the widgets' defaults: the browser shows a value the server sends
        first_query = start[0] if kind == "encoder_self" else len(queries_a) - 1
        for key, value in zip(("compare_query", "compare_x", "compare_y"), (first_query, start[1], start[2])):
            st.session_state[key] = value
    q_box, x_box, y_box = st.columns(3)
    query = widgets.selectbox(
        q_box,
        t("compare_query", lang),
        list(range(len(queries_a))),
        key="compare_query",
        format_func=lambda i: f"{i}: {queries_a[i]}",
        default=start[0] if kind == "encoder_self" else len(queries_a) - 1,
    )
    visible = head_search.visible_keys(masked_a, query, len(keys_a))
    x = widgets.selectbox(
        x_box,
        t("compare_x", lang),
        visible,
        key="compare_x",
        format_func=lambda i: f"{i}: {keys_a[i]}",
        default=start[1],
    )
    y = widgets.selectbox(
        y_box,
        t("compare_y", lang),
        visible,
        key="compare_y",
        format_func=lambda i: f"{i}: {keys_a[i]}",
        default=start[2],
    )
    in_second = [
        head_search.same_label_position(queries_a, query, queries_b),
        head_search.same_label_position(keys_a, x, keys_b),
        head_search.same_label_position(keys_a, y, keys_b),
    ]
    if None in in_second:
        missing = [label for label, found in zip((queries_a[query], keys_a[x], keys_a[y]), in_second) if found is None]
        st.info(t("compare_not_in_second", lang, pieces=markdown_literal(", ".join(missing))))
        return
    tracking = head_search.referent_tracking(
        maps_a, maps_b, (query, in_second[0]), (x, in_second[1]), (y, in_second[2])
    )
    show_tracking_heads(tracking, queries_a[query], keys_a[x], keys_a[y], kind, lang)
    # what a score of 0 means, on the first pair the menu offers for this source language
    example = pairs[0]
    st.caption(t("compare_note", lang, pair=t(example.name, lang), query=example.tracked[0], word=example.tracked[1]))


def keep_or_reset_words(signature: tuple, axes: tuple[list, list, list], lang: str) -> bool:
    """The chosen query and words stay while the sentences and view stay; new sentences start on their own
    words. A link's choice is checked against the sentences first (out of them: a warning, and their own).
    -> whether the sentences' own words are to be chosen (the caller writes them into session state: popping
    the keys left the browser showing the previous pair's words, 1: 追 over a chart of 给, while the server
    used the new defaults)."""
    if st.session_state.get("compare_signature") == "from a link":
        st.session_state.compare_signature = signature
        chosen = [st.session_state.get(k) for k in ("compare_query", "compare_x", "compare_y")]
        if not all(type(c) is int and 0 <= c < len(axis) for c, axis in zip(chosen, axes)):
            st.warning(t("link_out_of_sentence", lang, parameter="cmp"))
            st.session_state.compare_signature = None  # start on the sentences' own words
    if st.session_state.get("compare_signature") != signature:  # new sentences: start on their own words again
        st.session_state.compare_signature = signature
        return True
    return False


def show_tracking_heads(tracking, query: str, x: str, y: str, kind: str, lang: str) -> None:
    """Every head's tracking score as a grid, the best head said in words, and buttons opening the best four."""
    score = tracking.score
    chart(
        statistic_grid(
            score,
            t("compare_heads_title", lang, q=query, x=x, y=y),
            layer_label=t("layer", lang),
            head_label=t("head", lang),
            colorscale=attention_viz.SIGNED_COLORSCALE,
            zmid=0.0,
        ),
        key="compare-heads",
    )
    order = [int(i) for i in np.argsort(-score, axis=None, kind="stable")[:4]]
    best_l, best_h = divmod(order[0], score.shape[1])
    numbers = dict(
        layer=best_l + 1,
        head=best_h + 1,
        score=float(score[best_l, best_h]),
        x=markdown_literal(x),
        y=markdown_literal(y),
        xa=tracking.x_first[best_l, best_h],
        ya=tracking.y_first[best_l, best_h],
        xb=tracking.x_second[best_l, best_h],
        yb=tracking.y_second[best_l, best_h],
    )
    n_tracking = int(tracking.tracks.sum())
    st.caption(
        t(
            "compare_tracking_found" if n_tracking else "compare_tracking_none",
            lang,
            n=n_tracking,
            margin=head_search.TRACKING_MARGIN,
            **numbers,
        )
    )
    columns = st.columns(4)
    for i, flat in enumerate(order):
        layer, h = divmod(flat, score.shape[1])
        numbers = dict(layer=layer + 1, head=h + 1, diff=float(score[layer, h]))
        columns[i].button(  # short enough for a quarter of the main column at 1024 px ("Open L4 H4 (+0…" was cut)
            t("compare_open", lang, **numbers),
            key=f"compare-open-{i}",
            help=t("compare_open_help", lang, **numbers),
            on_click=open_head,
            args=(layer + 1, h + 1, registry.map_view(kind)),
            width="stretch",
        )


def parse_compared(text: str) -> tuple[tuple[int, int, int] | None, list]:
    """cmp=query.x.y; an older link's query.key (first).query.key (second) keeps its two keys."""
    parts = text.split(".")
    if len(parts) not in (3, 4) or not all(NUMBER.fullmatch(p) for p in parts):
        return None, []
    numbers = [int(p) for p in parts]
    return (tuple(numbers) if len(numbers) == 3 else (numbers[0], numbers[1], numbers[3])), []


# cmp=1.0.2: the query and the words that fit the first and the second sentence, once there is a second sentence
COMPARED = LinkParam(
    "cmp",
    read=lambda session: (
        session_numbers(session, ("compare_query", "compare_x", "compare_y"))
        if (session.get("second_sentence") or "").strip()
        else None
    ),
    write=lambda compared: ".".join(map(str, compared)),
    parse=parse_compared,
    # kept, not replaced by the pair's own words
    restore=lambda compared: dict(
        zip(("compare_query", "compare_x", "compare_y"), compared), compare_signature="from a link"
    ),
)

register(
    View(
        "tab_compare",
        "group_maps",
        show_compare,
        ("compare_kind", "compare_query", "compare_x", "compare_y"),
        reads=("layer", "head", "word_level", "second_sentence"),
        link=(COMPARED,),
    )
)
