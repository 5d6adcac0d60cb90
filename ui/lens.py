"""Logit lens for the decoder: what every decoder layer would predict at every step if it were the last."""

from __future__ import annotations

import streamlit as st

from ui.common import Context, chart
from ui.models import get_logit_lens, get_model
from ui.views import View, register
from viz.decoding import logit_lens_figure
from viz.escape import markdown_literal
from words import sentences, t


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
    st.caption(decided_caption(tr.target_pieces, lens.decided_at(), lens.rank.shape[0], lang))
    st.caption(t("lens_limits", lang))


def decided_caption(pieces: list[str], decided: list[int | None], n_layers: int, lang: str) -> str:
    """Which output pieces the lens ranks first before the last layer (from which layer on) and which only at the
    last; an empty list is said in words (a bare dash would read as a piece)."""
    early = [f"{markdown_literal(p)} ({d})" for p, d in zip(pieces, decided) if d is not None and d < n_layers]
    late = [markdown_literal(p) for p, d in zip(pieces, decided) if d == n_layers]
    comma = "、" if lang == "zh" else ", "
    return sentences(
        lang,
        t("lens_decided_early", lang, early=comma.join(early))
        if early
        else t("lens_decided_early_none", lang, layers=n_layers),
        t("lens_decided_late", lang, late=comma.join(late), layers=n_layers)
        if late
        else t("lens_decided_late_none", lang, layers=n_layers),
    )


register(View("tab_lens", "group_generation", show_logit_lens, reads=()))  # every layer, the whole model
