"""Why attention at all: the same sentence translated with every cross-attention row made uniform, so every
output step receives one fixed summary of the source (the context vector C of an encoder-decoder without
attention), beside the learned attention."""

from __future__ import annotations

import streamlit as st

from model import inside
from ui.common import Context, attention_heatmap, chart, head_name, layer_of_kind, map_pair
from ui.models import get_forced, get_hypotheses, get_inside
from ui.views import Lesson, register
from viz.escape import markdown_literal
from words import t


def show_no_attention(ctx: Context) -> None:
    # The model's own translation, also when a reference is given: it is what the uniform run is compared with.
    lang, tr = ctx.lang, ctx.model_output
    st.caption(t("no_attention_explain", lang))
    uniform = get_hypotheses(ctx.checkpoint, tr.source_text, ctx.beam, uniform_cross=True)[0]
    # The translation shown, scored by the model without attention (teacher forcing: fed its pieces).
    forced = get_forced(ctx.checkpoint, tr.source_text, reference_ids=tuple(tr.target_ids), uniform_cross=True)
    left, right = st.columns(2)
    left.caption(t("no_attention_learned", lang))
    left.markdown(f"#### {markdown_literal(tr.target_text)}")
    right.caption(t("no_attention_uniform", lang))
    right.markdown(f"#### {markdown_literal(uniform.target_text)}")
    st.markdown(
        t(
            "no_attention_logprob",
            lang,
            before=tr.log_prob,
            after=forced.log_prob,
            delta=forced.log_prob - tr.log_prob,
            n=len(tr.target_ids),
        )
    )

    chosen = layer_of_kind(tr, "cross", ctx.chosen, lang)
    boxes = map_pair(max(len(tr.source_pieces), len(tr.target_pieces), len(uniform.target_pieces)))
    # Each map under its own translation: the learned one's rows are its pieces, the uniform one's are the
    # pieces the uniform run wrote.
    for box, translation, name in ((boxes[0], tr, "learned"), (boxes[1], uniform, "uniform")):
        with box:
            fig, *_ = attention_heatmap(
                translation,
                "cross",
                chosen,
                lang,
                False,
                ctx.language_pair,
                title=t(
                    f"no_attention_map_{name}",
                    lang,
                    layer=chosen.shown_layer,
                    head=head_name(chosen.shown_head, lang),
                ),
            )
            chart(fig, key=f"no-attention-{name}")
    # Measured, not asserted: what each cross-attention sub-layer adds at every step of the uniform pass.
    spread, learned_spread = (
        inside.largest_step_difference(get_inside(ctx.checkpoint, tr, uniform).decoder, "cross_attention")
        for uniform in (True, False)
    )
    st.caption(
        t(
            "no_attention_same_context",
            lang,
            n=len(tr.source_pieces),
            spread=spread,
            learned=learned_spread,
            steps=len(tr.target_ids),
        )
    )


register(Lesson("lesson_encoder_decoder", "tab_cross", own_view=show_no_attention, reads=("layer", "head")))
