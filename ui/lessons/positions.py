"""Why positional encoding: the encoder on the sentence and on the same words with two swapped, with the
positional encoding and without it (an argument of the forward pass)."""

from __future__ import annotations

import streamlit as st

from model import what_if
from model.tokenizer import WORD_BOUNDARY
from ui import widgets
from ui.common import Context, chart, head_name, layer_of_kind, map_pair, selected_weights
from ui.models import get_word_order
from ui.views import Lesson, register
from viz import attention as attention_viz
from viz.escape import markdown_literal
from viz.labels import axis_names
from words import t

# The sentence the lesson offers, in the language the checkpoint reads: the seeds' pair (written in Chinese in
# the seeds: 狗追猫 and 猫追狗 hold the same characters in another order).
EXAMPLES = {"en": "The dog chases the cat.", "zh": "狗追猫。"}
EXAMPLE = EXAMPLES["en"]
# The intro's pair of sentences with the same words in another order, in the source language the model reads
SWAPPED_PAIRS = {"en": ("the dog chases the cat", "the cat chases the dog"), "zh": ("狗追猫", "猫追狗")}


def intro_values(ctx: Context) -> dict:
    first, second = SWAPPED_PAIRS.get(ctx.language_pair[0], SWAPPED_PAIRS["en"])
    return {"pair_first": first, "pair_second": second}


# Not offered as the default pair: swapping two of these rarely shows anything ("walked to the the station").
FUNCTION_WORDS = frozenset(
    "a an the to of in on at by for and or but is are was were be it i my your his her "
    "their our we you he she they this that with as from 的 了 是 在 和 吗 呢 吧 着".split()
)


def use_example(example: str) -> None:
    st.session_state.update(sentence=example)


def show_word_order(ctx: Context) -> None:
    lang, tr = ctx.lang, ctx.tr
    st.caption(t("order_explain", lang))
    source_language = ctx.language_pair[0]
    example = EXAMPLES.get(source_language, EXAMPLE)
    units = what_if.word_units(tr.source_pieces, source_language)
    words = ["".join(tr.source_pieces[i] for i in unit).replace(WORD_BOUNDARY, " ").strip() for unit in units]
    choices = [i for i, unit in enumerate(units) if tr.source_pieces[unit[0]] != "</s>"]
    left, right = st.columns(2, vertical_alignment="bottom")
    label = lambda i: f"{i}: {words[i]}"  # noqa: E731
    # By default the first and the last content word (dog and cat in the example), chosen afresh for each new
    # sentence: positions picked in another sentence name other words.
    if st.session_state.get("order_sentence") != tr.source_text:
        st.session_state.order_sentence = tr.source_text
        for key in ("order_a", "order_b"):
            st.session_state.pop(key, None)
    content = [i for i in choices if any(c.isalnum() for c in words[i]) and words[i].lower() not in FUNCTION_WORDS]
    content = content if len(content) >= 2 else choices
    a = widgets.selectbox(left, t("order_first", lang), choices, key="order_a", format_func=label, default=content[0])
    b = widgets.selectbox(
        right, t("order_second", lang), choices, key="order_b", format_func=label, default=content[-1]
    )
    if tr.source_text.strip() != example:
        # on a row of its own: in a narrow column its label was cut ("Try: The dog chases t…")
        st.button(t("order_example", lang, sentence=example), on_click=use_example, args=(example,), help=example)
    if a == b:
        st.info(t("order_same", lang))
        return
    result = get_word_order(ctx.checkpoint, tr.source_text, a, b)
    st.markdown(
        t("order_sentences", lang, first=markdown_literal(tr.source_text), second=markdown_literal(result.swapped_text))
    )
    without, with_pe = st.columns(2)
    without.metric(
        t("order_without_pe", lang), f"{result.attention_difference[False]:.1e}", help=t("order_metric_help", lang)
    )
    with_pe.metric(
        t("order_with_pe", lang), f"{result.attention_difference[True]:.3f}", help=t("order_metric_help", lang)
    )
    st.caption(
        t(
            "order_measured",
            lang,
            attention_without=result.attention_difference[False],
            output_without=result.output_difference[False],
            attention_with=result.attention_difference[True],
            output_with=result.output_difference[True],
            size=result.output_size,
        )
    )

    chosen = layer_of_kind(tr, "encoder_self", ctx.chosen, lang)
    query_axis, key_axis = axis_names("encoder_self", lang)
    for positional in (False, True):
        st.markdown(f"**{t('order_with_pe' if positional else 'order_without_pe', lang)}**")
        columns = map_pair(len(result.pieces))
        for column, pieces, attention, name in (
            (columns[0], result.pieces, result.attention, "original"),
            (columns[1], result.swapped_pieces, result.swapped_attention, "swapped"),
        ):
            title = t(
                "order_map_title",
                lang,
                layer=chosen.shown_layer,
                head=head_name(chosen.shown_head, lang),
                sentence=t(f"order_{name}", lang),
            )
            with column:
                chart(
                    attention_viz.attention_heatmap(
                        selected_weights(attention[positional], chosen),
                        pieces,
                        pieces,
                        query_axis,
                        key_axis,
                        title=title,
                        weight_label=t("weight", lang),
                    ),
                    key=f"order-{int(positional)}-{name}",
                )


register(
    Lesson(
        "lesson_positions",
        "tab_positional",
        own_view=show_word_order,
        widgets=("order_a", "order_b"),
        reads=("layer", "head"),
        intro_values=intro_values,
    )
)
