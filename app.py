"""Attention explorer: `streamlit run app.py`.

Widgets and layout only. The model is loaded once per process (st.cache_resource); each (checkpoint,
sentence, decoding) is translated once into a byte-bounded cache shared by all sessions (ui.cache) and every
view reads that one result. Figures come from viz/, which never calls the model; widget-state repair and link
parsing live in ui/.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from model import decode, export, head_search, probe
from model.checkpoint import (
    CheckpointError,
    LoadedModel,
    list_checkpoints,
    load_checkpoint,
    read_metadata,
)
from model.transformer import ATTENTION_KINDS as KINDS
from model.transformer import sinusoidal_positional_encoding
from viz import attention as attention_viz
from viz import positional as positional_viz
from viz import softmax as softmax_viz
from viz import steps as steps_viz
from viz.decoding import decoding_step_figure
from viz.heads import statistic_grid
from viz.tables import attention_csv, token_table
from ui import links, widgets
from ui.cache import ByteBudgetCache
from viz.text import LANGUAGES, language_name, markdown_literal, plotly_literal, t

CHECKPOINT_ROOT = Path(os.environ.get("ATTENTION_EXPLORER_CHECKPOINTS", Path(__file__).parent / "checkpoints"))
# Offered when a checkpoint folder has no examples.txt (one sentence per line, from that checkpoint's domain).
DEFAULT_EXAMPLES = [
    "Tom is reading a book.",
    "I don't know what to do.",
    "She bought a red car yesterday.",
    "The cat is sleeping on the sofa.",
]
PREFERRED_CHECKPOINT = "en-zh"  # the first one a visitor sees, when it is there
KIND_TAB = {"encoder_self": "tab_encoder", "decoder_self": "tab_decoder", "cross": "tab_cross"}
# The widgets inside the views: their values outlive a closed tab (widgets.keep).
VIEW_WIDGETS = ("pe_length", "pe_dims", "pair_dk", "scaling_kind", "scaling_query", "steps_kind", "steps_query",
                "stats_kind", "stats_name", "inspect_layer", "inspect_head", "ablation_kind", "ablate", "decode_step",
                "search_kind", "search_query", "search_key", "search_by", "compare_kind", "compare_query_a",
                "compare_key_a", "compare_query_b", "compare_key_b")
TAB_KEYS = ("tab_encoder", "tab_decoder", "tab_cross", "tab_compare", "tab_positional", "tab_softmax", "tab_steps",
            "tab_heads", "tab_search", "tab_ablation", "tab_decoding")
# Minimal pairs for the comparison view: (name key in viz.text, first sentence, second sentence).
MINIMAL_PAIRS = [
    ("pair_coreference", "The animal didn't cross the street because it was too tired.",
     "The animal didn't cross the street because it was too wide."),
    ("pair_word_order", "The dog chases the cat.", "The cat chases the dog."),
    ("pair_coreference_size", "The trophy didn't fit in the suitcase because it was too big.",
     "The trophy didn't fit in the suitcase because it was too small."),
    ("pair_roles", "She gave him a book.", "He gave her a book."),
]
SEARCH_TOP = 8  # best heads drawn by the head search
MAX_BEAM = 8
# Translations kept for reuse across sessions, by the bytes of their attention and Q/K/V arrays: a short greedy
# sentence holds well under 1 MiB, a long beam-8 one up to ~100 MiB.
TRANSLATION_CACHE_BYTES = 256 * 2**20
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
URL_KEYS = {"s": "sentence", "s2": "second_sentence", "ckpt": "checkpoint", "layer": "layer", "head": "head",
            "lang": "lang", "beam": "beam",
            "present": "present"}
# Presentation mode: how much larger the heatmap's tick labels, cell values and rows are drawn.
PRESENTATION_SCALE = 1.5


# ---------------------------------------------------------------------------------------------- model & caching


@st.cache_resource(show_spinner=False)
def get_model(checkpoint: str) -> LoadedModel:
    return load_checkpoint(checkpoint)


def as_ablation(heads: tuple[str, ...]) -> dict[str, list[tuple[int, int]]]:
    """("cross:2:5", ...) with 1-based layer and head -> {"cross": [(1, 4)], ...} as decode expects."""
    ablate: dict[str, list[tuple[int, int]]] = {}
    for item in heads:
        kind, layer, head = item.split(":")
        ablate.setdefault(kind, []).append((int(layer) - 1, int(head) - 1))
    return ablate


@st.cache_resource(show_spinner=False)
def translation_cache() -> ByteBudgetCache:
    """One per server process, shared by every session; bounded by the bytes of the arrays it holds."""
    return ByteBudgetCache(TRANSLATION_CACHE_BYTES)


def get_hypotheses(checkpoint: str, sentence: str, beam_size: int, ablated: tuple[str, ...] = ()) -> list:
    def compute():
        loaded = get_model(checkpoint)
        return decode.translate_hypotheses(
            loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence, beam_size=beam_size,
            ablate=as_ablation(ablated),
        )

    return translation_cache().get(("hypotheses", checkpoint, sentence, beam_size, ablated), compute)


def get_forced(checkpoint: str, sentence: str, reference: str | None = None,
               reference_ids: tuple[int, ...] | None = None, ablated: tuple[str, ...] = ()) -> decode.Translation:
    def compute():
        loaded = get_model(checkpoint)
        return decode.teacher_force(
            loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence, reference=reference,
            reference_ids=list(reference_ids) if reference_ids else None, ablate=as_ablation(ablated),
        )

    return translation_cache().get(("forced", checkpoint, sentence, reference, reference_ids, ablated), compute)


@st.cache_data(show_spinner=False)
def get_scaling_statistics() -> tuple[dict, dict]:
    d_ks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    return softmax_viz.dot_product_variance(d_ks), softmax_viz.saturation_statistics(d_ks)


@st.cache_data(show_spinner=False, max_entries=16)
def read_head_table(path: str, mtime: float) -> pd.DataFrame | str:  # mtime: a new file is read again
    """The table, or what is wrong with it (a string naming the file)."""
    try:
        return probe.read_head_table(Path(path))
    except probe.HeadTableError as e:
        return str(e)


def shipped_csv(checkpoint: str, name: str, lang: str) -> pd.DataFrame | None:
    """A probe CSV shipped with the checkpoint; None when absent or unusable (then a warning names the file)."""
    path = Path(checkpoint) / name
    if not path.is_file():
        return None
    table = read_head_table(str(path), path.stat().st_mtime)
    if isinstance(table, str):
        st.warning(t("table_invalid", lang, error=markdown_literal(table)))
        return None
    return table


# ---------------------------------------------------------------------------------------------- state & URL


def examples_for(name: str) -> list[str]:
    path = CHECKPOINT_ROOT / name / "examples.txt"
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return DEFAULT_EXAMPLES
    return [line for line in lines if line] or DEFAULT_EXAMPLES


def checkpoint_label(name: str, meta: dict, lang: str) -> str:
    """"en-de · English → German", from the folder's config.json metadata (just the name without languages)."""
    if "source_language" not in meta or "target_language" not in meta:
        return name
    source, target = (language_name(meta[k], lang) for k in ("source_language", "target_language"))
    return f"{name} · {source} → {target}"


def init_state(checkpoints: list[str]) -> None:
    """Defaults, overridden once per session by the URL's query parameters (a shared link), each checked
    strictly (ui.links); what the link asked for but could not have is listed in link_notices.
    Checkpoints are named by folder (the URL says ckpt=en-de, not a path on the server)."""
    if st.session_state.get("initialised"):
        return
    link = links.parse_link({k: st.query_params[k] for k in st.query_params}, checkpoints, list(LANGUAGES), MAX_BEAM)
    checkpoint = link.checkpoint or (PREFERRED_CHECKPOINT if PREFERRED_CHECKPOINT in checkpoints else checkpoints[0])
    st.session_state.update(sentence=link.sentence or examples_for(checkpoint)[0],
                            second_sentence=link.second_sentence or "", checkpoint=checkpoint, layer=1,
                            head="1", lang=link.lang or "en", beam=link.beam or 1, decoding="greedy", reference="",
                            word_level=False, present=link.present, link_notices=link.notices,
                            link_view=(link.layer, link.head))
    if st.session_state.beam > 1:
        st.session_state.update(decoding="beam", beam_size=st.session_state.beam)
    if link.pair:
        kind, query, key = link.pair
        st.session_state.update(search_kind=kind, search_query=query, search_key=key)
    if link.compared:
        st.session_state.update(zip(("compare_query_a", "compare_key_a", "compare_query_b", "compare_key_b"),
                                    link.compared))
    st.session_state.initialised = True


def apply_link_view(cfg) -> None:
    """The link's layer and head, once the checkpoint's depth and head count are known."""
    if "link_view" not in st.session_state:
        return
    layer, head, notices = links.fit_view(*st.session_state.pop("link_view"),
                                          max(cfg.n_encoder_layers, cfg.n_decoder_layers), cfg.n_heads)
    st.session_state.link_notices += notices
    if layer is not None:
        st.session_state.layer = layer
    if head is not None:
        st.session_state.head = head


def show_link_notices(lang: str) -> None:
    notices = st.session_state.pop("link_notices", None)  # said once, on the page the link opened
    if not notices:
        return
    lines = [t(f"link_{n.action}", lang, parameter=n.parameter, value=markdown_literal(n.value),
               used=markdown_literal(n.used)) for n in notices]
    st.warning("\n".join(f"- {line}" for line in lines))


def write_url() -> None:
    def text(value) -> str:
        return str(int(value)) if isinstance(value, bool) else str(value)

    params = {url: text(st.session_state[key]) for url, key in URL_KEYS.items()}
    pair = [st.session_state.get(k) for k in ("search_kind", "search_query", "search_key")]
    if pair[0] in KINDS and all(type(p) is int for p in pair[1:]):  # the head search's pair, once one was chosen
        params["pair"] = ".".join(map(str, pair))
    compared = [st.session_state.get(k)
                for k in ("compare_query_a", "compare_key_a", "compare_query_b", "compare_key_b")]
    if st.session_state.second_sentence.strip() and all(type(p) is int for p in compared):
        params["cmp"] = ".".join(map(str, compared))  # the word pairs of the two-sentence view
    st.query_params.from_dict(params)


def page_style(present: bool) -> None:
    """Less empty space above the page, so the map fits the first screen of a 1024×768 projector; in presentation
    mode, larger captions and translation for the back row. Fixed CSS, no user text."""
    css = ".block-container {padding-top: 2.5rem; padding-bottom: 1rem;}"
    if present:
        css += (" [data-testid='stCaptionContainer'] {font-size: 1.1rem;}"
                " [data-testid='stMarkdownContainer'] h3 {font-size: 2.2rem;}")
    st.markdown(f"<style>{css}</style>", unsafe_allow_html=True)


def use_example() -> None:
    """The example menu copies its choice into the sentence box and goes back to its placeholder, so the same
    example can be picked again and the menu never holds a sentence of another checkpoint's list."""
    if st.session_state.example:
        st.session_state.update(sentence=st.session_state.example, example="")


def use_pair() -> None:
    """The minimal-pair menu fills both sentence boxes and goes back to its placeholder."""
    chosen = st.session_state.pair_example
    if chosen:
        _, first, second = next(p for p in MINIMAL_PAIRS if p[0] == chosen)
        st.session_state.update(sentence=first, second_sentence=second, pair_example="", tab="tab_compare")


def switch_checkpoint() -> None:
    # A reference translation is in the old checkpoint's target language: keep it and the new model would be
    # teacher-forced on text it cannot read.
    st.session_state.reference = ""


def remember_tab() -> None:
    """The tabs widget holds the open tab's *label*, which changes with the interface language; the session
    keeps the tab's key, so a language switch stays on the same tab."""
    by_label = {t(key, lang): key for key in TAB_KEYS for lang in LANGUAGES}
    st.session_state.tab = by_label.get(st.session_state.view_tab, "tab_encoder")


def view_tabs(lang: str) -> dict:
    """The views as tabs, of which only the open one runs (lazy tabs: a hidden view costs nothing, and a layer or
    head change redraws one view instead of nineteen figures)."""
    st.session_state.view_tab = t(st.session_state.setdefault("tab", "tab_encoder"), lang)
    return dict(zip(TAB_KEYS, st.tabs([t(k, lang) for k in TAB_KEYS], key="view_tab", on_change=remember_tab)))


def inspect_head(layer: int, head: int) -> None:
    st.session_state.update(layer=layer, head=str(head))


def open_head(layer: int, head: int, tab: str) -> None:
    """Show this head in the main map of its attention kind."""
    st.session_state.update(layer=layer, head=str(head), tab=tab)


# ---------------------------------------------------------------------------------------------- small helpers


def chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, width="stretch")


def selected_weights(attention: np.ndarray, layer: int, head: str) -> np.ndarray:
    """attention (layers, heads, queries, keys), 1-based layer, head "mean" or "1".."H" -> (queries, keys)."""
    per_layer = attention[layer - 1]
    return attention_viz.mean_over_heads(per_layer) if head == "mean" else per_layer[int(head) - 1]


def row_outcomes(tr: decode.Translation, lang: str, sentence: bool = False) -> list[str]:
    """What each decoder position t did with its output: the piece it chose (and its probability), or, under
    teacher forcing, the piece it was fed (with the probability the model gave it) beside the model's own top
    choice. Short for hovers; sentence=True for a caption."""
    out = []
    for piece, probability, alternatives in zip(tr.target_pieces, tr.token_probs, tr.alternatives):
        top, top_probability = alternatives[0]
        if tr.teacher_forced:
            key = "fed_sentence" if sentence else "fed_short"
            shown = markdown_literal if sentence else str  # a caption is markdown; a hover is escaped by viz
            out.append(t(key, lang, piece=shown(piece), p=probability, top=shown(top), top_p=top_probability))
        else:
            out.append(t("chosen_sentence", lang, piece=markdown_literal(piece), p=probability) if sentence
                       else f"{piece} ({probability:.3f})")
    return out


def layer_of_kind(tr: decode.Translation, kind: str, layer: int, lang: str) -> int:
    """The chosen layer, or this kind's last one when its stack is shallower (a checkpoint may have more encoder
    than decoder layers, or fewer); says so when it had to step back."""
    n_layers = tr.attention(kind).shape[0]
    if layer > n_layers:
        st.caption(t("layer_clamped", lang, kind=t(KIND_TAB[kind], lang), n=n_layers, layer=layer))
        return n_layers
    return layer


def axis_names(kind: str, lang: str) -> tuple[str, str]:
    query = t("encoder_query", lang) if kind == "encoder_self" else t("decoder_query", lang)
    key = t("decoder_key", lang) if kind == "decoder_self" else t("encoder_key", lang)
    return query, key


def axis_languages(kind: str, languages: tuple[str, str]) -> tuple[str, str]:
    """The languages of a kind's query and key pieces, for grouping pieces into words."""
    source, target = languages
    return (source if kind == "encoder_self" else target), (target if kind == "decoder_self" else source)


def every_head(tr: decode.Translation, kind: str, word_level: bool, languages: tuple[str, str]):
    """Every layer and head of one kind, at piece or word level -> (maps, queries, keys, masked or None)."""
    queries, keys = tr.axis_pieces(kind)
    masked = attention_viz.causal_mask(len(queries)) if kind == "decoder_self" else None
    return head_search.maps_at_level(tr.attention(kind), queries, keys, masked, word_level,
                                     *axis_languages(kind, languages))


def head_name(head: str, lang: str) -> str:
    return t("mean_heads", lang) if head == "mean" else t("head_n", lang, n=head)


def head_option_label(item: str, lang: str) -> str:
    kind, layer, head = item.split(":")
    return f"{t(KIND_TAB[kind], lang)} · L{layer} H{head}"


def kind_selector(lang: str, key: str) -> str:
    return widgets.radio(st, t("steps_kind", lang), KINDS, format_func=lambda k: t(KIND_TAB[k], lang),
                         horizontal=True, key=key)


def query_selector(tr: decode.Translation, kind: str, lang: str, key: str) -> int:
    queries, _ = tr.axis_pieces(kind)
    return widgets.selectbox(st, t("query_token", lang), list(range(len(queries))),
                             format_func=lambda i: f"{i}: {queries[i]}", key=key)


# ---------------------------------------------------------------------------------------------- views


def attention_heatmap(tr: decode.Translation, kind: str, layer: int, head: str, lang: str, word_level: bool,
                      languages: tuple[str, str]):
    """The big heatmap for one kind, layer and head (piece or word level) -> (figure, weights, queries, keys)."""
    queries, keys = tr.axis_pieces(kind)
    weights = selected_weights(tr.attention(kind), layer, head)
    masked = attention_viz.causal_mask(len(queries)) if kind == "decoder_self" else None
    predicted = row_outcomes(tr, lang) if kind != "encoder_self" else None
    if word_level:
        weights, queries, keys, masked = probe.word_level(weights, queries, keys, *axis_languages(kind, languages),
                                                          masked)
        predicted = None  # a word row mixes several prediction steps
    query_axis, key_axis = axis_names(kind, lang)
    fig = attention_viz.attention_heatmap(
        weights, queries, keys, query_axis, key_axis,
        font_scale=PRESENTATION_SCALE if st.session_state.get("present") else 1.0,
        title=t("heatmap_title", lang, kind=t(KIND_TAB[kind], lang), layer=layer, head=head_name(head, lang)),
        masked=masked, masked_label=t("masked_cell", lang),
        predicted_tokens=predicted, predicted_label=t("fed" if tr.teacher_forced else "predicts", lang),
        weight_label=t("weight", lang),
    )
    return fig, weights, queries, keys


def show_attention(tr: decode.Translation, kind: str, layer: int, head: str, lang: str, word_level: bool,
                   languages: tuple[str, str]) -> None:
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
    csv_button.download_button(
        t("download_csv", lang),
        lambda: attention_csv(weights, queries, keys, axis_names(kind, lang)[0]),
        file_name=f"{kind}-layer{layer}-head{head}{'-words' if word_level else ''}.csv",
        mime="text/csv",
        key=f"csv-{kind}",
        on_click="ignore",
    )
    npz_button.download_button(
        t("download_npz", lang),
        lambda: export.to_bytes(tr, ".npz"),
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
    st.caption(t("grid_help", lang))


def show_translation(tr: decode.Translation, model_output: decode.Translation, lang: str) -> None:
    """The translation in one line, so the attention map fits on the first screen of a projector; the pieces
    and the per-piece probabilities one click away."""
    st.markdown(f"### {markdown_literal(tr.target_text)}")
    if tr.teacher_forced:
        st.caption(f"{t('teacher_forcing_note', lang)} {t('model_output_was', lang)} "
                   f"{markdown_literal(model_output.target_text)}")
    with st.expander(t("details", lang)):
        left, right = st.columns(2)
        left.caption(t("source_pieces", lang))
        left.code(" ".join(tr.source_pieces), language=None)
        right.caption(t("target_pieces", lang))
        right.code(" ".join(tr.target_pieces), language=None)
        labels = {k: t(f"col_{k}", lang) for k in ("position", "piece", "probability", "alternatives")}
        st.caption(t("token_table_help", lang))
        st.dataframe(token_table(tr.target_pieces, tr.token_probs, tr.alternatives, labels), hide_index=True,
                     width="stretch")


def show_positional(d_model: int, max_len: int, lang: str) -> None:
    st.caption(t("explain_positional", lang))
    st.session_state.setdefault("pe_length", 50)
    length = st.slider(t("pe_length", lang), 8, 200, key="pe_length")
    if length > max_len:
        st.caption(t("pe_beyond_model", lang, max_len=max_len, last=max_len - 1))
    pe = sinusoidal_positional_encoding(length, d_model).numpy()
    chart(positional_viz.positional_heatmap(pe, t("position", lang), t("dimension", lang),
                                            t("pe_heatmap_title", lang, d_model=d_model)), key="pe-heatmap")
    default_dims = sorted({d for d in (0, 1, 4, 5, d_model // 4, d_model // 2) if d < d_model})
    st.session_state.setdefault("pe_dims", default_dims)
    dims = widgets.multiselect(st, t("pe_dims", lang), list(range(d_model)), key="pe_dims")
    chart(positional_viz.positional_curves(pe, dims, t("position", lang), t("pe_curves_title", lang),
                                           t("dimension", lang)), key="pe-curves")
    st.caption(t("explain_similarity", lang))
    chart(positional_viz.position_similarity_heatmap(pe, t("position", lang), t("pe_similarity_title", lang)),
          key="pe-similarity")


@dataclass
class QueryChoice:
    """One query of one head, chosen in a view: its kind, position, axis pieces, the head's q, K, V and mask row."""

    kind: str
    layer: int  # 1-based, within this kind's stack
    position: int
    queries: list[str]
    keys: list[str]
    head_index: int
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    masked: np.ndarray | None


def choose_query(tr: decode.Translation, layer: int, head: str, lang: str, prefix: str) -> QueryChoice:
    """Attention kind and query selectors; "mean over heads" has no vectors of its own, so it shows head 1."""
    kind = kind_selector(lang, f"{prefix}_kind")
    position = query_selector(tr, kind, lang, f"{prefix}_query")
    layer = layer_of_kind(tr, kind, layer, lang)
    queries, keys = tr.axis_pieces(kind)
    head_index = 0 if head == "mean" else int(head) - 1
    if head == "mean":
        st.caption(t("mean_shows_head_1", lang))
    qkv = tr.qkv[kind]
    masked = attention_viz.causal_mask(len(queries))[position] if kind == "decoder_self" else None
    return QueryChoice(kind, layer, position, queries, keys, head_index, qkv["q"][layer - 1, head_index, position],
                       qkv["k"][layer - 1, head_index], qkv["v"][layer - 1, head_index], masked)


def show_scaling(tr: decode.Translation, layer: int, head: str, lang: str) -> None:
    variance, saturation = get_scaling_statistics()
    # The caption quotes the same computation the saturation plot draws, at the paper's d_k = 64.
    st.caption(t("explain_scaling", lang, n_keys=saturation["n_keys"], **softmax_viz.saturation_at(saturation, 64)))
    labels = {k: t(k, lang) for k in ("unscaled", "scaled", "theory", "max_weight", "entropy", "gradient_norm",
                                      "masked")}
    chart(softmax_viz.variance_figure(variance, dict(labels, x="d_k", y=t("variance_y", lang),
                                                     title=t("variance_title", lang))), key="variance")
    st.session_state.setdefault("pair_dk", 64)
    d_k = st.select_slider(t("d_k_slider", lang), [4, 16, 64, 256], key="pair_dk")
    rng = np.random.default_rng(0)
    q, keys = rng.standard_normal(d_k), rng.standard_normal((8, d_k))
    pair_labels = dict(labels, title=t("softmax_pair_title", lang, d_k=d_k), x=t("key", lang), y=t("weight", lang))
    chart(softmax_viz.softmax_pair_figure(keys @ q, d_k, [f"k{j + 1}" for j in range(8)], pair_labels), key="pair")
    chart(softmax_viz.saturation_figure(saturation, dict(labels, x="d_k", title=t(
        "saturation_title", lang, n_keys=saturation["n_keys"]))), key="saturation")

    st.caption(t("explain_model_scaling", lang))
    c = choose_query(tr, layer, head, lang, "scaling")
    d_k = c.q.shape[0]
    real_labels = dict(labels, x=t("key", lang), y=t("weight", lang), title=t(
        "model_scaling_title", lang, layer=c.layer, head=c.head_index + 1, token=plotly_literal([c.queries[c.position]])[0],
        d_k=d_k))
    chart(softmax_viz.softmax_pair_figure(c.k @ c.q, d_k, c.keys, real_labels, c.masked), key="model-scaling")


def show_steps(tr: decode.Translation, layer: int, head: str, lang: str) -> None:
    st.caption(t("explain_steps", lang))
    c = choose_query(tr, layer, head, lang, "steps")
    steps = steps_viz.attention_steps(c.q, c.k, c.v, c.masked)
    labels = {k: t(k, lang) for k in ("q", "k", "v", "scores", "weights", "output", "masked", "dimension")}
    labels.update(scaled=t("scaled_scores", lang), key=t("key", lang), mask=t("mask_col", lang))
    st.markdown(f"**{t('qkv_title', lang, layer=c.layer, head=c.head_index + 1)}**")
    chart(steps_viz.vectors_figure(steps, c.queries[c.position], c.keys, labels), key="steps-vectors")
    chart(steps_viz.steps_figure(steps, c.keys, labels), key="steps-bars")
    st.dataframe(steps_viz.steps_table(steps, c.keys, labels), hide_index=True, width="stretch")
    chart(steps_viz.output_figure(steps, labels), key="steps-output")
    model_row = tr.attention(c.kind)[c.layer - 1, c.head_index, c.position]
    st.caption(t("steps_matches", lang, token=markdown_literal(c.queries[c.position]),
                 diff=float(np.abs(model_row - steps.weights).max())))


def statistic_label(name: str, lang: str) -> str:
    return t(f"stat_{name}", lang)


def show_head_statistics(tr: decode.Translation, checkpoint: str, lang: str) -> None:
    stats = probe.translation_statistics(tr)
    kind = kind_selector(lang, "stats_kind")
    names = list(stats[kind])
    name = widgets.selectbox(st, t("statistic", lang), names, format_func=lambda n: statistic_label(n, lang),
                             key="stats_name")
    labels = dict(layer_label=t("layer", lang), head_label=t("head", lang))
    chart(statistic_grid(stats[kind][name], t("stats_grid_title", lang, kind=t(KIND_TAB[kind], lang),
                                                                  statistic=statistic_label(name, lang)), **labels),
          key="stats-grid")
    frame = probe.statistics_frame({kind: stats[kind]})
    st.caption(t("heads_table", lang))
    st.dataframe(frame.drop(columns="kind").round(3), hide_index=True, width="stretch", key="stats-table")

    st.markdown(f"**{t('inspect_head', lang)}**")
    cfg = get_model(checkpoint).model.cfg
    left, right, button = st.columns([1, 1, 2])
    layer = widgets.selectbox(left, t("layer", lang), list(range(1, cfg.n_layers(kind) + 1)), key="inspect_layer")
    head = widgets.selectbox(right, t("head", lang), list(range(1, cfg.n_heads + 1)), key="inspect_head")
    button.button(t("inspect_button", lang, layer=layer, head=head), on_click=inspect_head, args=(layer, head))

    st.subheader(t("corpus_title", lang))
    corpus = shipped_csv(checkpoint, "head_stats.csv", lang)
    if corpus is None:
        st.info(t("corpus_missing", lang, path=checkpoint))
    else:
        rows = corpus[corpus["kind"] == kind]
        if name in rows and rows[name].notna().any():
            values = rows.pivot(index="layer", columns="head", values=name).to_numpy()
            roles = rows.pivot(index="layer", columns="head", values="role").fillna("").to_numpy().tolist()
            chart(statistic_grid(values, t("corpus_grid_title", lang, kind=t(KIND_TAB[kind], lang),
                                                 statistic=statistic_label(name, lang)), roles=roles, **labels),
                  key="corpus-grid")
        named = corpus[corpus["role"] != ""][["kind", "layer", "head", "role"]] if "role" in corpus else corpus[:0]
        st.markdown(f"**{t('named_heads', lang)}**")
        if named.empty:
            st.caption(t("no_named_heads", lang))
        else:
            st.dataframe(named, hide_index=True, width="stretch")
        st.markdown(f"**{t('strongest_heads', lang)}**")
        st.dataframe(probe.strongest_heads(corpus), hide_index=True, width="stretch")
    ranking = shipped_csv(checkpoint, "head_ablation.csv", lang)
    if ranking is None:
        st.info(t("ablation_ranking_missing", lang, path=checkpoint))
    else:
        baseline = ranking["bleu"] + ranking["bleu_drop"]
        st.markdown(f"**{t('ablation_ranking', lang, bleu=round(float(baseline.iloc[0]), 2))}**")
        st.dataframe(ranking.head(20), hide_index=True, width="stretch")


def show_head_search(tr: decode.Translation, lang: str, word_level: bool, languages: tuple[str, str]) -> None:
    st.caption(t("explain_search", lang))
    kind = kind_selector(lang, "search_kind")
    maps, queries, keys, masked = every_head(tr, kind, word_level, languages)
    query_axis, key_axis = axis_names(kind, lang)
    left, middle, right = st.columns([2, 2, 1])
    query = widgets.selectbox(left, query_axis, list(range(len(queries))), key="search_query",
                              format_func=lambda i: f"{i}: {queries[i]}")
    visible = head_search.visible_keys(masked, query, len(keys))
    key = widgets.selectbox(middle, key_axis, visible, key="search_key", format_func=lambda i: f"{i}: {keys[i]}",
                            default=visible[-1] if kind == "decoder_self" else visible[0])
    by = widgets.radio(right, t("search_by", lang), list(head_search.SCORES), key="search_by",
                       format_func=lambda b: t(f"search_{b}", lang))
    ranked = head_search.rank_heads(maps, query, key, masked, by)
    best = ranked[:SEARCH_TOP]
    pair = t("search_pair", lang, from_piece=queries[query], to_piece=keys[key])
    heads = np.array([[(h.layer, h.head) for h in best]])
    notes = [[f"{h.weight:.2f}" if by == "weight" else f"×{h.lift:.1f}" for h in best]]
    title = t("search_top_title", lang, n=len(best), pair=pair, score=t(f"search_{by}", lang))
    chart(attention_viz.attention_grid(
        maps[heads[0, :, 0] - 1, heads[0, :, 1] - 1][None], title=title, masked=masked, heads=heads, notes=notes,
        mark=(query, key), layer_label=t("layer", lang), head_label=t("head", lang), query_label=t("query", lang),
        key_label=t("key", lang)), key="search-top")
    columns = st.columns(4)
    for i, h in enumerate(best):
        columns[i % 4].button(t("search_open", lang, layer=h.layer, head=h.head), key=f"search-open-{i}",
                              on_click=open_head, args=(h.layer, h.head, KIND_TAB[kind]))
    scores = np.array([getattr(h, by) for h in sorted(ranked, key=lambda h: (h.layer, h.head))])
    chart(statistic_grid(scores.reshape(maps.shape[:2]), t("search_grid_title", lang, score=t(f"search_{by}", lang),
                                                             pair=pair),
                         layer_label=t("layer", lang), head_label=t("head", lang)), key="search-grid")
    st.caption(t("search_lift_note", lang))


def show_compare(tr: decode.Translation, checkpoint: str, beam: int, layer: int, head: str, lang: str,
                 word_level: bool, languages: tuple[str, str]) -> None:
    """Two sentences side by side: the same view, layer and head, one colour scale (0 to 1, as every map)."""
    second = st.session_state.second_sentence.strip()
    if not second:
        st.info(t("compare_empty", lang))
        return
    other = get_hypotheses(checkpoint, second, beam)[0]
    st.markdown(t("compare_translations", lang, first=markdown_literal(tr.target_text),
                  second=markdown_literal(other.target_text)))
    kind = kind_selector(lang, "compare_kind")
    layer = layer_of_kind(tr, kind, layer, lang)
    left, right = st.columns(2)
    figures = []
    for column, translation, name in ((left, tr, "a"), (right, other, "b")):
        fig, weights, queries, keys = attention_heatmap(translation, kind, layer, head, lang, word_level, languages)
        figures.append((weights, queries, keys))
        with column:
            chart(fig, key=f"compare-{name}")
    (weights_a, queries_a, keys_a), (weights_b, queries_b, keys_b) = figures
    if weights_a.shape == weights_b.shape:
        query_axis, key_axis = axis_names(kind, lang)
        chart(attention_viz.difference_heatmap(
            weights_a - weights_b, queries_a, keys_a, queries_b, keys_b, query_axis, key_axis,
            title=t("compare_difference_title", lang), value_label=t("compare_difference", lang),
            masked=attention_viz.causal_mask(len(queries_a)) if kind == "decoder_self" and not word_level else None),
            key="compare-difference")
    else:
        st.caption(t("compare_no_difference", lang, a=" × ".join(map(str, weights_a.shape)),
                     b=" × ".join(map(str, weights_b.shape))))

    # Which heads link the same pair of words differently in the two sentences (it → animal vs it → street)?
    st.markdown(f"**{t('compare_heads', lang)}**")
    levels = [every_head(translation, kind, word_level, languages) for translation in (tr, other)]
    pairs = []
    for (maps, queries, keys, masked), name, column in zip(levels, "ab", st.columns(2)):
        q_box, k_box = column.columns(2)
        sentence = t("sentence_first" if name == "a" else "sentence_second", lang)
        query = widgets.selectbox(q_box, t("compare_query", lang, n=sentence), list(range(len(queries))),
                                  key=f"compare_query_{name}", format_func=lambda i, q=queries: f"{i}: {q[i]}")
        visible = head_search.visible_keys(masked, query, len(keys))
        key = widgets.selectbox(k_box, t("compare_key", lang, n=sentence), visible, key=f"compare_key_{name}",
                                format_func=lambda i, k=keys: f"{i}: {k[i]}")
        pairs.append((maps[:, :, query, key], f"{queries[query]} → {keys[key]}"))
    (first_weights, first_pair), (second_weights, second_pair) = pairs
    difference = first_weights - second_weights
    chart(statistic_grid(difference, t("compare_heads_title", lang, a=first_pair, b=second_pair),
                         layer_label=t("layer", lang), head_label=t("head", lang), colorscale="RdBu", zmid=0.0),
          key="compare-heads")
    order = np.argsort(-np.abs(difference), axis=None, kind="stable")[:4]
    columns = st.columns(4)
    for i, flat in enumerate(order):
        l, h = divmod(int(flat), difference.shape[1])
        columns[i].button(t("compare_open", lang, layer=l + 1, head=h + 1, diff=float(difference[l, h])),
                          key=f"compare-open-{i}", on_click=open_head, args=(l + 1, h + 1, KIND_TAB[kind]))
    st.caption(t("compare_note", lang))


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


# ---------------------------------------------------------------------------------------------- page


def sidebar(checkpoints: dict[str, dict]) -> None:
    """checkpoints: folder name -> its config.json metadata."""
    with st.sidebar:
        widgets.radio(st, t("interface_language", st.session_state.lang), list(LANGUAGES), format_func=LANGUAGES.get,
                      horizontal=True, key="lang")
        lang = st.session_state.lang
        widgets.selectbox(st, t("checkpoint", lang), list(checkpoints),
                          format_func=lambda name: checkpoint_label(name, checkpoints[name], lang),
                          key="checkpoint", on_change=switch_checkpoint)
        metadata = checkpoints[st.session_state.checkpoint]
        widgets.selectbox(st, t("examples", lang), [""] + examples_for(st.session_state.checkpoint), key="example",
                          on_change=use_example, format_func=lambda s: s or t("example_placeholder", lang))
        st.text_input(t("sentence", lang), key="sentence", help=t("sentence_help", lang))
        widgets.radio(st, t("decoding", lang), ["greedy", "beam"], key="decoding", format_func=lambda d: t(d, lang),
                      horizontal=True)
        if st.session_state.decoding == "beam":
            st.session_state.setdefault("beam_size", 4)
            st.slider(t("beam_size", lang), 2, MAX_BEAM, key="beam_size")
        st.session_state.beam = 1 if st.session_state.decoding == "greedy" else st.session_state.beam_size
        target = language_name(metadata.get("target_language", "?"), lang)
        st.text_input(t("reference", lang), key="reference", help=t("reference_help", lang, target=target))
        st.text_input(t("second_sentence", lang), key="second_sentence", help=t("second_sentence_help", lang))
        widgets.selectbox(st, t("minimal_pairs", lang), [""] + [p[0] for p in MINIMAL_PAIRS], key="pair_example",
                          on_change=use_pair, format_func=lambda k: t(k, lang) if k else t("pair_placeholder", lang))
        st.toggle(t("presentation", lang), key="present", help=t("presentation_help", lang))


def view_selectors(cfg, lang: str) -> None:
    """Layer, head and word level: in the sidebar, or, in presentation mode, in one row above the maps, so a
    teacher can collapse the sidebar and still switch heads."""
    deepest = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
    heads = ["mean"] + [str(h) for h in range(1, cfg.n_heads + 1)]
    if st.session_state.present:
        layer_box, head_box, word_box = st.columns([1, 1, 1], vertical_alignment="bottom")
    else:
        st.sidebar.subheader(t("view", lang))
        layer_box = head_box = word_box = st.sidebar
    widgets.selectbox(layer_box, t("layer", lang), list(range(1, deepest + 1)), key="layer")
    widgets.selectbox(head_box, t("head", lang), heads, key="head", format_func=lambda h: head_name(h, lang),
                      default="1")
    word_box.checkbox(t("word_level", lang), key="word_level", help=t("word_level_help", lang))


def main() -> None:
    st.set_page_config(page_title="Attention explorer", layout="wide")
    checkpoints = [p.name for p in list_checkpoints(CHECKPOINT_ROOT)]
    lang = st.session_state.get("lang", st.query_params.get("lang", "en"))
    lang = lang if lang in LANGUAGES else "en"
    if not checkpoints:
        st.error(t("no_checkpoints", lang, root=markdown_literal(str(CHECKPOINT_ROOT))))
        st.stop()
    init_state(checkpoints)
    widgets.keep(VIEW_WIDGETS)
    sidebar({name: read_metadata(CHECKPOINT_ROOT / name) for name in checkpoints})
    lang = st.session_state.lang

    page_style(st.session_state.present)
    st.markdown(f"#### {t('title', lang)}")
    checkpoint = str(CHECKPOINT_ROOT / st.session_state.checkpoint)
    try:
        loaded = get_model(checkpoint)
    except CheckpointError as e:
        st.error(t("checkpoint_error", lang, error=markdown_literal(str(e))))
        st.stop()
    cfg = loaded.model.cfg
    with st.expander(t("about", lang)):
        st.caption(t("subtitle", lang))
        if cfg.norm_first:
            st.caption(t("norm_first_note", lang))
    languages = (loaded.metadata.get("source_language", "en"), loaded.metadata.get("target_language", "zh"))
    apply_link_view(cfg)
    if not st.session_state.present:
        view_selectors(cfg, lang)
    write_url()
    show_link_notices(lang)

    sentence = st.session_state.sentence.strip()
    if not sentence:
        st.warning(t("empty_input", lang))
        st.stop()
    beam = int(st.session_state.beam)
    hypotheses = get_hypotheses(checkpoint, sentence, beam)
    choice = 0
    if len(hypotheses) > 1:
        choice = widgets.selectbox(
            st.sidebar, t("hypothesis", lang), list(range(len(hypotheses))), key="hypothesis",
            format_func=lambda i: f"{i + 1}. {hypotheses[i].target_text} ({hypotheses[i].log_prob:.2f})",
        )
    model_output = hypotheses[choice]
    reference = st.session_state.reference.strip()
    tr = get_forced(checkpoint, sentence, reference=reference) if reference else model_output

    if tr.truncated:
        st.warning(t("truncated", lang, limit=cfg.max_len, kept=len(tr.source_pieces) - 1))
    if tr.unknown_source_pieces:
        st.warning(t("unknown", lang, chars=markdown_literal(" ".join(dict.fromkeys(tr.unknown_source_pieces)))))
    if tr.reference_truncated:
        st.warning(t("reference_truncated", lang, limit=cfg.max_len, kept=len(tr.target_pieces)))
    if tr.unknown_reference:
        st.warning(t("reference_unknown", lang, chars=markdown_literal(" ".join(dict.fromkeys(tr.unknown_reference)))))
    if not tr.finished:
        st.info(t("unfinished", lang))
    show_translation(tr, model_output, lang)
    if st.session_state.present:
        view_selectors(cfg, lang)

    layer, head, word_level = int(st.session_state.layer), st.session_state.head, st.session_state.word_level
    views = {
        **{KIND_TAB[kind]: (lambda kind=kind: show_attention(tr, kind, layer, head, lang, word_level, languages))
           for kind in KINDS},
        "tab_positional": lambda: show_positional(cfg.d_model, cfg.max_len, lang),
        "tab_softmax": lambda: show_scaling(tr, layer, head, lang),
        "tab_steps": lambda: show_steps(tr, layer, head, lang),
        "tab_heads": lambda: show_head_statistics(tr, checkpoint, lang),
        "tab_search": lambda: show_head_search(tr, lang, word_level, languages),
        "tab_compare": lambda: show_compare(tr, checkpoint, beam, layer, head, lang, word_level, languages),
        "tab_ablation": lambda: show_ablation(model_output, checkpoint, beam, layer, head, lang, word_level, languages),
        "tab_decoding": lambda: show_decoding_steps(tr, layer, head, lang),
    }
    for key, tab in view_tabs(lang).items():
        if tab.open:
            with tab:
                views[key]()
                if key == "tab_encoder":
                    st.caption(t("explain_multihead", lang))

main()
