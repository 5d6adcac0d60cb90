"""Head ablation: switch heads off (an argument of the forward pass) and translate again."""

from __future__ import annotations

import streamlit as st

from model import decode
from model.transformer import ATTENTION_KINDS as KINDS
from ui import widgets
from ui.common import (
    attention_heatmap,
    chart,
    head_option_label,
    kind_selector,
    layer_of_kind,
)
from ui.models import get_forced, get_hypotheses, get_model
from viz.text import markdown_literal, t


def show_ablation(tr: decode.Translation, checkpoint: str, beam: int, layer: int, head: str, lang: str,
                  word_level: bool, languages: tuple[str, str]) -> None:
    st.caption(t("ablation_hint", lang))
    cfg = get_model(checkpoint).model.cfg
    options = [f"{kind}:{layer}:{head}" for kind in KINDS for layer in range(1, cfg.n_layers(kind) + 1)
               for head in range(1, cfg.n_heads + 1)]
    chosen = widgets.multiselect(st, t("ablate_heads", lang), options,
                                 format_func=lambda o: head_option_label(o, lang), key="ablate")
    if not chosen:
        return
    ablated_key = tuple(sorted(chosen))
    ablated = get_hypotheses(checkpoint, tr.source_text, beam, ablated_key)[0]
    left, right = st.columns(2)
    left.caption(t("original", lang))
    left.markdown(f"#### {markdown_literal(tr.target_text)}")
    right.caption(t("ablated", lang))
    right.markdown(f"#### {markdown_literal(ablated.target_text)}")
    # How much less likely the original translation became: teacher-force it through the ablated model.
    forced = get_forced(checkpoint, tr.source_text, reference_ids=tuple(tr.target_ids), ablated=ablated_key)
    st.markdown(t("logprob_change", lang, before=tr.log_prob, after=forced.log_prob, delta=forced.log_prob - tr.log_prob))
    st.markdown(f"**{t('ablated_map', lang)}**")
    kind = kind_selector(lang, "ablation_kind")
    layer = layer_of_kind(ablated, kind, layer, lang)
    fig, *_ = attention_heatmap(ablated, kind, layer, head, lang, word_level, languages)
    chart(fig, key="ablation-heatmap")
