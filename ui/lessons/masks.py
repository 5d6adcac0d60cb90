"""Masks in a batch: the sentence and another of a different length padded into one batch; the padding mask
keeps every weight on a padding key at exactly 0, so each sentence comes out as it does alone."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.transformer import ATTENTION_KINDS as KINDS
from ui.common import Context, chart, head_name, layer_of_kind, selected_weights
from ui.models import get_model, get_padded_batch
from ui.views import Lesson, register
from viz import attention as attention_viz
from viz.labels import axis_names, kind_name
from viz.padding import padded_tokens_figure
from words import t

# The sentence padded beside the user's: a short one beside a long sentence, a long one beside a short, in the
# language the checkpoint reads (both never trained on: must_translate.tsv, everyday.tsv's Chinese).
PARTNERS = {
    "en": ("Good morning.", "The cat is sleeping on the sofa because it is very tired today."),
    "zh": ("早上好。", "我奶奶和我们一起住在一套小公寓里。"),
}
SHORT_PARTNER, LONG_PARTNER = PARTNERS["en"]


def show_padding(ctx: Context) -> None:
    lang, tr = ctx.lang, ctx.tr
    st.caption(t("padding_explain", lang))
    short, long = PARTNERS.get(ctx.language_pair[0], PARTNERS["en"])
    default = short if len(tr.source_pieces) > 6 else long
    # The second sentence, where it has another length: a minimal pair's (猫追狗。 beside 狗追猫。) has the same
    # pieces in another order, and a batch of the two held no padding to show.
    second = st.session_state.get("second_sentence", "").strip()
    if second and len(get_model(ctx.checkpoint).source_tokenizer.encode(second)) + 1 != len(tr.source_pieces):
        default = second
    st.session_state.setdefault("padding_other", default)
    other = st.text_input(t("padding_other", lang), key="padding_other").strip()
    if not other:
        st.info(t("padding_empty", lang))
        return
    batch = get_padded_batch(ctx.checkpoint, (tr.source_text, other))
    rows = [t("padding_row", lang, n=n) for n in (1, 2)]
    chart(
        padded_tokens_figure(
            batch.source_pieces,
            batch.key_mask,
            rows,
            dict(
                position=t("position", lang),
                real=t("padding_real", lang),
                padding=t("padding_pad", lang),
                title=t("padding_tokens_title", lang),
            ),
        ),
        key="padding-tokens",
        stretch=False,
    )

    padded = {
        "encoder_self": not batch.key_mask.all(),
        "cross": not batch.key_mask.all(),
        "decoder_self": not batch.target_key_mask.all(),
    }
    zeros = t("list_separator", lang).join(
        f"{kind_name(k, lang)} {batch.padding_weight[k]:g}"
        if padded[k]
        else f"{kind_name(k, lang)}: {t('padding_none', lang)}"
        for k in KINDS
    )
    st.markdown(t("padding_zero", lang, values=zeros))
    table = pd.DataFrame(
        {  # the verdict first: a long sentence must not push it out of view
            t("padding_identical", lang): [
                "✓" if a == b else "✗" for a, b in zip(batch.translations, batch.alone_translations)
            ],
            t("padding_in_batch", lang): batch.translations,
            t("padding_alone", lang): batch.alone_translations,
            t("padding_sentence", lang): batch.texts,
        }
    )
    # A static table: its cells wrap, so a long sentence and its translations are read whole at 1024 px (the
    # interactive table cut them off).
    st.table(table, hide_index=True)
    st.caption(t("padding_difference", lang, **batch.difference_from_alone))

    # The padded sentence's encoder self-attention in the batch, padding keys drawn as masked.
    short = int(batch.key_mask.sum(1).argmin())
    chosen = layer_of_kind(tr, "encoder_self", ctx.chosen, lang)
    weights = selected_weights(batch.encoder_attention[short], chosen)
    pieces = batch.source_pieces[short]
    masked = ~batch.key_mask[short][None, :].repeat(len(pieces), 0)
    query_axis, key_axis = axis_names("encoder_self", lang)
    chart(
        attention_viz.attention_heatmap(
            weights,
            pieces,
            pieces,
            query_axis,
            key_axis,
            masked=masked,
            masked_label=t("padding_masked", lang),
            title=t(
                "padding_map_title",
                lang,
                layer=chosen.shown_layer,
                head=head_name(chosen.shown_head, lang),
                sentence=rows[short],
            ),
            weight_label=t("weight", lang),
        ),
        key="padding-map",
    )
    st.caption(t("padding_rows_note", lang))


register(
    Lesson(
        "lesson_masks",
        "tab_decoder",
        shows_view=True,
        own_view=show_padding,
        heading="padding_heading",
        widgets=("padding_other",),
        reads=("layer", "head"),
    )
)
