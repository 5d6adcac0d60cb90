"""The translation line and the three attention views: one head's heatmap, its downloads, every head as thumbnails."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from model import decode, export
from ui.common import attention_heatmap, axis_names, chart, layer_of_kind
from viz import attention as attention_viz
from viz.tables import attention_csv, token_table
from viz.text import markdown_literal, t


def show_translation(tr: decode.Translation, model_output: decode.Translation, lang: str) -> None:
    """The translation in one line, so the attention map fits on the first screen of a projector; the pieces
    and the per-piece probabilities one click away."""
    st.markdown(f"### {markdown_literal(tr.target_text)}")
    if tr.teacher_forced:
        st.caption(f"{t('teacher_forcing_note', lang)} {t('model_output_was', lang)} "
                   f"{markdown_literal(model_output.target_text)}")
    # In presentation mode the details wait in the sidebar: the first screen is for the map.
    with (st.sidebar if st.session_state.get("present") else st).expander(t("details", lang)):
        left, right = st.columns(2)
        left.caption(t("source_pieces", lang))
        left.code(" ".join(tr.source_pieces), language=None)
        right.caption(t("target_pieces", lang))
        right.code(" ".join(tr.target_pieces), language=None)
        labels = {k: t(f"col_{k}", lang) for k in ("position", "piece", "probability", "alternatives")}
        st.caption(t("token_table_help", lang))
        st.dataframe(token_table(tr.target_pieces, tr.token_probs, tr.alternatives, labels), hide_index=True,
                     width="stretch")


def show_attention(tr: decode.Translation, kind: str, layer: int, head: str, lang: str, word_level: bool,
                   languages: tuple[str, str], fetch: Callable[[], decode.Translation]) -> None:
    """fetch: gets tr again (from the shared cache, or computed anew), for the download button to keep instead of
    tr itself: Streamlit keeps a session's download callables as long as the session, even disconnected, and a
    beam-8 translation of a long sentence holds tens of MiB."""
    layer = layer_of_kind(tr, kind, layer, lang)
    fig, weights, queries, keys = attention_heatmap(tr, kind, layer, head, lang, word_level, languages)
    chart(fig, key=f"heatmap-{kind}")  # first, so the map is on the first screen; its explanation below
    st.caption(t({"encoder_self": "explain_encoder", "decoder_self": "explain_decoder", "cross": "explain_cross"}[kind],
                 lang))
    attention = tr.attention(kind)
    if head == "mean":
        st.caption(t("mean_note", lang, heads=attention.shape[1]))
    # Files are made only when a button is clicked (a callable), not on every run; a click does not rerun.
    csv_button, npz_button = st.columns(2)
    shown = weights.copy()  # one map; a view would keep its whole layers x heads array alive
    csv_button.download_button(
        t("download_csv", lang),
        lambda: attention_csv(shown, queries, keys, axis_names(kind, lang)[0]),
        file_name=f"{kind}-layer{layer}-head{head}{'-words' if word_level else ''}.csv",
        mime="text/csv",
        key=f"csv-{kind}",
        on_click="ignore",
    )
    npz_button.download_button(
        t("download_npz", lang),
        lambda: export.to_bytes(fetch(), ".npz"),
        file_name="translation.npz",
        mime="application/octet-stream",
        key=f"npz-{kind}",
        on_click="ignore",
        help=t("download_npz_help", lang),
    )
    grid = attention_viz.attention_grid(
        attention,
        title=t("grid_title", lang, layers=attention.shape[0], heads=attention.shape[1]),
        masked=attention_viz.causal_mask(attention.shape[-1]) if kind == "decoder_self" else None,
        layer_label=t("layer", lang),
        head_label=t("head", lang),
        highlight=(layer - 1, int(head) - 1) if head != "mean" else None,
        query_label=t("query", lang),
        key_label=t("key", lang),
    )
    chart(grid, key=f"grid-{kind}")
    st.caption(t("grid_help_mean" if head == "mean" else "grid_help", lang))
