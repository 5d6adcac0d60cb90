"""Logit lens for the decoder: what every decoder layer would predict at every step if it were the last."""

from __future__ import annotations

import streamlit as st

from ui.common import Context, chart
from ui.models import get_logit_lens, get_model
from ui.views import View, register
from ui.words import t
from viz.decoding import logit_lens_figure
from viz.escape import markdown_literal


def show_logit_lens(ctx: Context) -> None:
    lang, tr = ctx.lang, ctx.tr
    st.caption(t("lens_explain", lang))
    lens = get_logit_lens(ctx.checkpoint, tr)
    tokenizer = get_model(ctx.checkpoint).target_tokenizer
    top_pieces = [[[tokenizer.piece(int(i)) for i in cell] for cell in row] for row in lens.top_ids]
    labels = dict(
        layer=t("layer", lang),
        step=t("step", lang),
        probability=t("probability", lang),
        rank=t("lens_rank", lang),
        top=t("lens_top", lang),
        title=t("lens_title", lang),
    )
    chart(
        logit_lens_figure(lens.rank, lens.probability, top_pieces, lens.top_probabilities, tr.target_pieces, labels),
        key="logit-lens",
    )
    decided = lens.decided_at()
    n_layers = lens.rank.shape[0]
    early = [
        f"{markdown_literal(p)} ({d})" for p, d in zip(tr.target_pieces, decided) if d is not None and d < n_layers
    ]
    late = [markdown_literal(p) for p, d in zip(tr.target_pieces, decided) if d == n_layers]
    st.caption(t("lens_decided", lang, early=", ".join(early) or "–", late=", ".join(late) or "–", layers=n_layers))
    st.caption(t("lens_limits", lang))


register(View("tab_lens", "group_generation", show_logit_lens, reads=()))  # every layer, the whole model
