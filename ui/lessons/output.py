"""The output layer: at one decoding step, the final linear layer and softmax give a probability to every piece
of the target vocabulary; the step picks from that distribution."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.common import Context, chart
from ui.models import get_inside, get_model
from ui.views import Lesson, register
from viz import inside as inside_viz
from viz.escape import markdown_literal
from words import scientific, t

NAMED = 8  # pieces named on the curve


def show_output_layer(ctx: Context) -> None:
    lang, tr = ctx.lang, ctx.tr
    st.caption(t("output_explain", lang))
    n = len(tr.target_ids)
    if st.session_state.get("output_step", 0) >= n:
        st.session_state.output_step = 0
    step = st.slider(t("step", lang), 0, n - 1, key="output_step") if n > 1 else 0
    target = get_model(ctx.checkpoint).target_tokenizer
    pieces = [target.piece(i) for i in range(target.vocab_size)]
    probabilities = np.exp(get_inside(ctx.checkpoint, tr).log_probs[step].astype(np.float64))
    chosen = tr.target_ids[step]
    chart(
        inside_viz.output_distribution_figure(
            probabilities,
            pieces,
            chosen,
            dict(
                rank=t("output_rank", lang),
                probability=t("probability", lang),
                chosen=t("output_chosen", lang),
                title=t("output_title", lang, step=step, vocab=len(pieces)),
            ),
            named=NAMED,
        ),
        key="output-distribution",
    )
    order = np.sort(probabilities)[::-1]
    covering = int(np.searchsorted(np.cumsum(order), 0.9) + 1)
    rank = int((probabilities > probabilities[chosen]).sum()) + 1
    st.caption(
        t(
            "output_measured",
            lang,
            step=step,
            piece=markdown_literal(tr.target_pieces[step]),
            p=probabilities[chosen],
            rank=rank,
            vocab=len(pieces),
            covering=covering,
            below=int((probabilities < 1e-6).sum()),
            diff=scientific(abs(probabilities[chosen] - tr.token_probs[step])),
        )
    )
    if tr.teacher_forced:
        st.caption(t("output_forced", lang))


register(Lesson("lesson_output", "tab_decoding", own_view=show_output_layer, widgets=("output_step",)))
