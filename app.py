"""Attention explorer: `streamlit run app.py`.

Widgets and layout only. The model is loaded once per process (st.cache_resource); each (checkpoint,
sentence, decoding) is translated once (st.cache_data) and every view reads that one result. Figures come
from viz/, which never calls the model.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import streamlit as st

from model import decode
from model.checkpoint import CheckpointError, LoadedModel, list_checkpoints, load_checkpoint
from model.transformer import sinusoidal_positional_encoding
from viz import attention as attention_viz
from viz import positional as positional_viz
from viz import softmax as softmax_viz
from viz import steps as steps_viz
from viz.tables import attention_csv, token_table
from viz.text import LANGUAGES, markdown_literal, t

CHECKPOINT_ROOT = Path(os.environ.get("ATTENTION_EXPLORER_CHECKPOINTS", Path(__file__).parent / "checkpoints"))
EXAMPLES = [
    "Tom is reading a book.",
    "I don't know what to do.",
    "She bought a red car yesterday.",
    "The cat is sleeping on the sofa.",
    "Can you help me carry this box?",
    "We will visit our grandmother next week.",
]
KINDS = ("encoder_self", "decoder_self", "cross")
KIND_TAB = {"encoder_self": "tab_encoder", "decoder_self": "tab_decoder", "cross": "tab_cross"}
MAX_BEAM = 8
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


# ---------------------------------------------------------------------------------------------- model & caching


@st.cache_resource(show_spinner=False)
def get_model(checkpoint: str) -> LoadedModel:
    return load_checkpoint(checkpoint)


@st.cache_data(show_spinner=False, max_entries=128)
def get_translation(checkpoint: str, sentence: str, beam_size: int) -> decode.Translation:
    loaded = get_model(checkpoint)
    return decode.translate(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence, beam_size=beam_size
    )


@st.cache_data(show_spinner=False)
def get_scaling_statistics() -> tuple[dict, dict]:
    d_ks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    return softmax_viz.dot_product_variance(d_ks), softmax_viz.saturation_statistics(d_ks)


# ---------------------------------------------------------------------------------------------- state & URL

URL_KEYS = {"s": "sentence", "ckpt": "checkpoint", "layer": "layer", "head": "head", "lang": "lang", "beam": "beam"}


def init_state(checkpoints: list[str]) -> None:
    """Defaults, overridden once per session by the URL's query parameters (a shared link)."""
    if st.session_state.get("initialised"):
        return
    st.session_state.update(sentence=EXAMPLES[0], checkpoint=checkpoints[0], layer=1, head="1", lang="en", beam=1,
                            decoding="greedy")
    params = st.query_params
    if params.get("s"):
        st.session_state.sentence = params["s"]
    if params.get("ckpt") in checkpoints:
        st.session_state.checkpoint = params["ckpt"]
    if params.get("lang") in LANGUAGES:
        st.session_state.lang = params["lang"]
    for key in ("layer", "beam"):
        if params.get(key, "").isdigit():
            st.session_state[key] = max(1, int(params[key]))
    if st.session_state.beam > 1:
        st.session_state.update(decoding="beam", beam_size=min(st.session_state.beam, MAX_BEAM))
    if params.get("head"):
        st.session_state.head = params["head"]
    st.session_state.initialised = True


def write_url() -> None:
    st.query_params.from_dict({url: str(st.session_state[key]) for url, key in URL_KEYS.items()})


def use_example() -> None:
    if st.session_state.example:
        st.session_state.sentence = st.session_state.example


# ---------------------------------------------------------------------------------------------- views


def chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, width="stretch")


def selected_weights(attention: np.ndarray, layer: int, head: str) -> np.ndarray:
    """attention (layers, heads, queries, keys), 1-based layer, head "mean" or "1".."H" -> (queries, keys)."""
    per_layer = attention[layer - 1]
    return attention_viz.mean_over_heads(per_layer) if head == "mean" else per_layer[int(head) - 1]


def axis_names(kind: str, lang: str) -> tuple[str, str]:
    if kind == "encoder_self":
        return t("encoder_query", lang), t("encoder_key", lang)
    if kind == "decoder_self":
        return t("decoder_query", lang), t("decoder_key", lang)
    return t("decoder_query", lang), t("encoder_key", lang)


def head_name(head: str, lang: str) -> str:
    return t("mean_heads", lang) if head == "mean" else t("head_n", lang, n=head)


def show_attention(tr: decode.Translation, kind: str, layer: int, head: str, lang: str) -> None:
    queries, keys = tr.axis_pieces(kind)
    attention = tr.attention(kind)
    query_axis, key_axis = axis_names(kind, lang)
    masked = attention_viz.causal_mask(len(queries)) if kind == "decoder_self" else None
    weights = selected_weights(attention, layer, head)
    st.caption(t(f"explain_{kind.split('_')[0] if kind != 'cross' else 'cross'}", lang))
    fig = attention_viz.attention_heatmap(
        weights,
        queries,
        keys,
        query_axis,
        key_axis,
        title=t("heatmap_title", lang, kind=t(KIND_TAB[kind], lang), layer=layer, head=head_name(head, lang)),
        masked=masked,
        masked_label=t("masked_cell", lang),
        predicted_tokens=tr.target_pieces if kind != "encoder_self" else None,
        predicted_label=t("predicts", lang),
    )
    chart(fig, key=f"heatmap-{kind}")
    if head == "mean":
        st.caption(t("mean_note", lang, heads=attention.shape[1]))
    st.download_button(
        t("download_csv", lang),
        attention_csv(weights, queries, keys, query_axis),
        file_name=f"{kind}-layer{layer}-head{head}.csv",
        mime="text/csv",
        key=f"csv-{kind}",
    )
    highlight = (layer - 1, int(head) - 1) if head != "mean" else None
    grid = attention_viz.attention_grid(
        attention,
        title=t("grid_title", lang, layers=attention.shape[0], heads=attention.shape[1]),
        masked=masked,
        layer_label=t("layer", lang),
        head_label=t("head", lang),
        highlight=highlight,
    )
    chart(grid, key=f"grid-{kind}")
    st.caption(t("grid_help", lang))


def show_translation(tr: decode.Translation, lang: str) -> None:
    st.subheader(t("translation", lang))
    st.markdown(f"### {markdown_literal(tr.target_text)}")
    left, right = st.columns(2)
    left.caption(t("source_pieces", lang))
    left.code(" ".join(tr.source_pieces), language=None)
    right.caption(t("target_pieces", lang))
    right.code(" ".join(tr.target_pieces), language=None)
    labels = {k: t(f"col_{k}", lang) for k in ("position", "piece", "probability", "alternatives")}
    st.caption(t("token_table_help", lang))
    st.dataframe(
        token_table(tr.target_pieces, tr.token_probs, tr.alternatives, labels), hide_index=True,
        width="stretch",
    )


def show_positional(d_model: int, lang: str) -> None:
    st.caption(t("explain_positional", lang))
    length = st.slider(t("pe_length", lang), 8, 200, 50, key="pe_length")
    pe = sinusoidal_positional_encoding(length, d_model).numpy()
    chart(positional_viz.positional_heatmap(pe, t("position", lang), t("dimension", lang),
                                            t("pe_heatmap_title", lang, d_model=d_model)), key="pe-heatmap")
    default_dims = [d for d in (0, 1, 4, 5, d_model // 4, d_model // 2) if d < d_model]
    dims = st.multiselect(t("pe_dims", lang), list(range(d_model)), default=sorted(set(default_dims)), key="pe_dims")
    chart(positional_viz.positional_curves(pe, dims, t("position", lang), t("pe_curves_title", lang)), key="pe-curves")
    st.caption(t("explain_similarity", lang))
    chart(positional_viz.position_similarity_heatmap(pe, t("position", lang), t("pe_similarity_title", lang)),
          key="pe-similarity")


def query_selector(tr: decode.Translation, kind: str, lang: str, key: str) -> int:
    queries, _ = tr.axis_pieces(kind)
    return st.selectbox(
        t("query_token", lang), list(range(len(queries))), format_func=lambda i: f"{i}: {queries[i]}", key=key
    )


def kind_selector(lang: str, key: str) -> str:
    return st.radio(t("steps_kind", lang), KINDS, format_func=lambda k: t(KIND_TAB[k], lang), horizontal=True, key=key)


def show_scaling(tr: decode.Translation, layer: int, head: str, lang: str) -> None:
    st.caption(t("explain_scaling", lang))
    variance, saturation = get_scaling_statistics()
    labels = {k: t(k, lang) for k in ("unscaled", "scaled", "theory", "max_weight", "entropy", "gradient_norm")}
    labels.update(x="d_k", y=t("variance_y", lang), title=t("variance_title", lang))
    chart(softmax_viz.variance_figure(variance, labels), key="variance")

    d_k = st.select_slider(t("d_k_slider", lang), [4, 16, 64, 256], value=64, key="pair_dk")
    rng = np.random.default_rng(0)
    q, keys = rng.standard_normal(d_k), rng.standard_normal((8, d_k))
    pair_labels = dict(labels, title=t("softmax_pair_title", lang, d_k=d_k), x=t("key", lang), y=t("weight", lang))
    chart(softmax_viz.softmax_pair_figure(keys @ q, d_k, [f"k{j + 1}" for j in range(8)], pair_labels), key="pair")
    sat_labels = dict(labels, x="d_k", title=t("saturation_title", lang, n_keys=saturation["n_keys"]))
    chart(softmax_viz.saturation_figure(saturation, sat_labels), key="saturation")

    st.caption(t("explain_model_scaling", lang))
    kind = kind_selector(lang, "scaling_kind")
    position = query_selector(tr, kind, lang, "scaling_query")
    head_index = 0 if head == "mean" else int(head) - 1
    queries, keys_tokens = tr.axis_pieces(kind)
    qkv = tr.qkv[kind]
    q_vec, k_mat = qkv["q"][layer - 1, head_index, position], qkv["k"][layer - 1, head_index]
    masked = attention_viz.causal_mask(len(queries))[position] if kind == "decoder_self" else None
    real_labels = dict(labels, x=t("key", lang), y=t("weight", lang), title=t(
        "model_scaling_title", lang, layer=layer, head=head_index + 1, token=queries[position], d_k=q_vec.shape[0]))
    chart(softmax_viz.softmax_pair_figure(k_mat @ q_vec, q_vec.shape[0], keys_tokens, real_labels, masked),
          key="model-scaling")


def show_steps(tr: decode.Translation, layer: int, head: str, lang: str) -> None:
    st.caption(t("explain_steps", lang))
    kind = kind_selector(lang, "steps_kind")
    position = query_selector(tr, kind, lang, "steps_query")
    head_index = 0 if head == "mean" else int(head) - 1
    queries, keys = tr.axis_pieces(kind)
    qkv = tr.qkv[kind]
    masked = attention_viz.causal_mask(len(queries))[position] if kind == "decoder_self" else None
    steps = steps_viz.attention_steps(
        qkv["q"][layer - 1, head_index, position], qkv["k"][layer - 1, head_index], qkv["v"][layer - 1, head_index],
        masked,
    )
    labels = {k: t(k, lang) for k in ("q", "k", "v", "scores", "weights", "output", "masked")}
    labels.update(scaled=t("scaled_scores", lang), key=t("key", lang), mask=t("mask_col", lang))
    st.markdown(f"**{t('qkv_title', lang, layer=layer, head=head_index + 1)}**")
    chart(steps_viz.vectors_figure(steps, queries[position], keys, labels), key="steps-vectors")
    chart(steps_viz.steps_figure(steps, keys, labels), key="steps-bars")
    st.dataframe(steps_viz.steps_table(steps, keys, labels), hide_index=True, width="stretch")
    chart(steps_viz.output_figure(steps, labels), key="steps-output")
    model_row = tr.attention(kind)[layer - 1, head_index, position]
    st.caption(t("steps_matches", lang, token=queries[position], diff=float(np.abs(model_row - steps.weights).max())))


# ---------------------------------------------------------------------------------------------- page


def main() -> None:
    st.set_page_config(page_title="Attention explorer", layout="wide")
    checkpoints = [str(p) for p in list_checkpoints(CHECKPOINT_ROOT)]
    lang = st.session_state.get("lang", st.query_params.get("lang", "en"))
    lang = lang if lang in LANGUAGES else "en"
    if not checkpoints:
        st.error(t("no_checkpoints", lang, root=CHECKPOINT_ROOT))
        st.stop()
    init_state(checkpoints)

    with st.sidebar:
        st.radio(t("interface_language", st.session_state.lang), list(LANGUAGES), format_func=LANGUAGES.get,
                 horizontal=True, key="lang")
        lang = st.session_state.lang
        st.selectbox(t("checkpoint", lang), checkpoints, format_func=lambda p: Path(p).name, key="checkpoint")
        st.selectbox(t("examples", lang), [""] + EXAMPLES, key="example", on_change=use_example,
                     format_func=lambda s: s or t("example_placeholder", lang))
        st.text_input(t("sentence", lang), key="sentence", help=t("sentence_help", lang))
        st.radio(t("decoding", lang), ["greedy", "beam"], key="decoding", format_func=lambda d: t(d, lang),
                 horizontal=True)
        if st.session_state.decoding == "beam":
            st.session_state.setdefault("beam_size", 4)
            st.slider(t("beam_size", lang), 2, MAX_BEAM, key="beam_size")
        st.session_state.beam = 1 if st.session_state.decoding == "greedy" else st.session_state.beam_size

    st.title(t("title", lang))
    st.caption(t("subtitle", lang))

    try:
        loaded = get_model(st.session_state.checkpoint)
    except CheckpointError as e:
        st.error(t("checkpoint_error", lang, error=markdown_literal(str(e))))
        st.stop()
    cfg = loaded.model.cfg

    with st.sidebar:
        st.subheader(t("view", lang))
        st.session_state.layer = min(max(1, int(st.session_state.layer)), cfg.n_encoder_layers)
        st.selectbox(t("layer", lang), list(range(1, cfg.n_encoder_layers + 1)), key="layer")
        heads = ["mean"] + [str(h) for h in range(1, cfg.n_heads + 1)]
        if st.session_state.head not in heads:
            st.session_state.head = "1"
        st.selectbox(t("head", lang), heads, key="head", format_func=lambda h: head_name(h, lang))
    write_url()

    sentence = st.session_state.sentence
    if not sentence or not sentence.strip():
        st.warning(t("empty_input", lang))
        st.stop()
    tr = get_translation(st.session_state.checkpoint, sentence.strip(), int(st.session_state.beam))
    if tr.truncated:
        st.warning(t("truncated", lang, limit=cfg.max_len, kept=len(tr.source_pieces) - 1))
    if tr.unknown_source_pieces:
        st.warning(t("unknown", lang, chars=markdown_literal(" ".join(dict.fromkeys(tr.unknown_source_pieces)))))
    if not tr.finished:
        st.info(t("unfinished", lang))

    show_translation(tr, lang)
    layer, head = int(st.session_state.layer), st.session_state.head
    tabs = st.tabs([t(k, lang) for k in ("tab_encoder", "tab_decoder", "tab_cross", "tab_positional",
                                          "tab_softmax", "tab_steps")])
    for tab, kind in zip(tabs[:3], KINDS):
        with tab:
            show_attention(tr, kind, layer, head, lang)
    tabs[0].caption(t("explain_multihead", lang))
    with tabs[3]:
        show_positional(cfg.d_model, lang)
    with tabs[4]:
        show_scaling(tr, layer, head, lang)
    with tabs[5]:
        show_steps(tr, layer, head, lang)


main()
