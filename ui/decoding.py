"""Decoding step by step: at step t the output so far, the attention rows of position t, the next-piece choices."""

from __future__ import annotations

import streamlit as st

from model import decode
from ui.common import chart, layer_of_kind, row_outcomes, selected_weights
from viz.decoding import decoding_step_figure
from viz.text import t


def show_decoding_steps(tr: decode.Translation, layer: int, head: str, lang: str) -> None:
    st.caption(t("explain_decoding_steps", lang))
    n = len(tr.target_pieces)
    if st.session_state.get("decode_step", 0) >= n:
        st.session_state.decode_step = 0
    step = st.slider(t("step", lang), 0, n - 1, key="decode_step") if n > 1 else 0
    layer = layer_of_kind(tr, "cross", layer, lang)  # decoder self- and cross-attention share the decoder's layers
    decoder_inputs = tr.decoder_input_pieces
    st.markdown(t("partial_output", lang, step=step))
    st.code(" ".join(decoder_inputs[: step + 1]), language=None)
    labels = dict(self=t("step_self", lang), cross=t("step_cross", lang), next=t("step_next", lang),
                  weight=t("weight", lang), probability=t("probability", lang))
    fig = decoding_step_figure(
        step,
        selected_weights(tr.decoder_self_attention, layer, head)[step],
        decoder_inputs,
        selected_weights(tr.cross_attention, layer, head)[step],
        tr.source_pieces,
        tr.alternatives[step],
        tr.target_pieces[step],
        labels,
        chosen_probability=tr.token_probs[step],
    )
    chart(fig, key="decoding-step")
    st.caption(row_outcomes(tr, lang, sentence=True)[step])
