"""Attention explorer: `streamlit run app.py`.

The entry and its wiring: the sidebar, session and URL state, and which page (explorer or lessons) and view
runs. Each view's widgets and layout live in its own ui/ module and read one Context; the model is loaded once
per process and each (checkpoint, sentence, decoding, what-if) is computed once into a byte-bounded cache shared
by all sessions (ui.models, ui.cache). Figures come from viz/, which never calls the model.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import streamlit as st

# The first alert whose text is not ASCII (Chinese, an arrow) imports this module, which compiles a 0.14 s emoji
# regex inside whatever click showed the alert; imported with the first page, it costs once per server.
import streamlit.emojis  # noqa: F401
import torch

from model import attribute
from model.checkpoint import CheckpointError, incomplete_checkpoints, list_checkpoints, read_metadata
from model.confidence import mean_log_prob
from model.transformer import ATTENTION_KINDS as KINDS
from model.transformer import count_parameters
from ui import links, widgets
from ui.ablation import show_ablation
from ui.attention import flow_selector, show_attention, show_translation
from ui.common import VIEW_GROUPS, Context, head_name
from ui.compare import MINIMAL_PAIRS, show_compare
from ui.decoding import show_decoding_steps, show_trail
from ui.head_stats import show_head_statistics
from ui.lens import show_logit_lens
from ui.lessons import LESSON_KEYS, LESSON_WIDGETS, show_lesson
from ui.models import (
    get_calibration,
    get_forced,
    get_hypotheses,
    get_model,
    get_scores,
    heavy_page_slots,
    is_heavy,
    log_event,
    prefetch_flows,
    translation_cache,
)
from ui.positional import show_positional
from ui.qk_space import show_qk_space, warm_qk_sample
from ui.scaling import show_scaling
from ui.search import show_head_search
from ui.steps import show_steps
from viz.text import LANGUAGES, STRINGS, language_name, markdown_literal, t

CHECKPOINT_ROOT = Path(os.environ.get("ATTENTION_EXPLORER_CHECKPOINTS", Path(__file__).parent / "checkpoints"))
# Offered when a checkpoint folder has no examples.txt (one sentence per line, from that checkpoint's domain).
DEFAULT_EXAMPLES = [
    "Tom is reading a book.",
    "I don't know what to do.",
    "She bought a red car yesterday.",
    "The cat is sleeping on the sofa.",
]
PREFERRED_CHECKPOINT = "en-zh"  # the first one a visitor sees, when it is there
PAGES = ("explore", "lessons")
# One intra-op thread per request: a server runs many sessions' requests side by side on few cores, and two
# threads each oversubscribe them (measured on these 2 cores while another process used both: value zeroing of a
# 20-word sentence 1.45 s with 2 threads, 0.11 s with 1; gradient x input 4.6 s and 0.23 s).
TORCH_THREADS = int(os.environ.get("ATTENTION_EXPLORER_TORCH_THREADS", "1"))
# The widgets inside the views: their values outlive a closed tab (widgets.keep).
VIEW_WIDGETS = (
    "pe_length",
    "pe_dims",
    "pair_dk",
    "scaling_kind",
    "scaling_query",
    "steps_kind",
    "steps_query",
    "stats_kind",
    "stats_name",
    "inspect_layer",
    "inspect_head",
    "ablation_kind",
    "decode_step",
    "qk_kind",
    "qk_query",
    "flow_method",
    "search_kind",
    "search_query",
    "search_key",
    "search_by",
    "compare_kind",
    "compare_query",
    "compare_x",
    "compare_y",
) + LESSON_WIDGETS
TAB_KEYS = tuple(view for views in VIEW_GROUPS.values() for view in views)
MAX_BEAM = 8
URL_KEYS = {
    "s": "sentence",
    "s2": "second_sentence",
    "ckpt": "checkpoint",
    "layer": "layer",
    "head": "head",
    "lang": "lang",
    "beam": "beam",
    "present": "present",
    "words": "word_level",
}


# ---------------------------------------------------------------------------------------------- state & URL


def examples_for(name: str) -> list[str]:
    path = CHECKPOINT_ROOT / name / "examples.txt"
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return DEFAULT_EXAMPLES
    return [line for line in lines if line] or DEFAULT_EXAMPLES


def checkpoint_label(name: str, meta: dict, lang: str) -> str:
    """ "en-de · English → German", from the folder's config.json metadata (just the name without languages)."""
    if "source_language" not in meta or "target_language" not in meta:
        return name
    source, target = (language_name(meta[k], lang) for k in ("source_language", "target_language"))
    return f"{name} · {source} → {target}"


def widget_values_the_page_sent() -> dict[str, object]:
    """Key -> value of the widget values the browser sent with this run. A page that reconnects to a restarted
    server sends the values its widgets hold, with the action that triggered the run (a new sentence, another
    layer, a tab), while the new server's session is still empty: those values are the user's and must win over
    the link's. A new page sends none."""
    try:  # Streamlit's session internals: no public API says which values the browser sent
        from streamlit.runtime.state.common import user_key_from_element_id
        from streamlit.runtime.state.session_state_proxy import get_session_state

        sent = {}
        for w in get_session_state().get_widget_states():
            key, field = user_key_from_element_id(w.id), w.WhichOneof("value")
            if key and field:
                sent[key] = getattr(w, field)
        return sent
    except Exception:
        return {}


def restored_values(sent: dict, checkpoints: list[str]) -> dict[str, object]:
    """The sent values of the page's main choices as the options they name (select widgets send the option's
    label, in the interface language of the page), for the keys the script reads before it draws them."""

    def by_label(options, label_of):
        return {label_of(o, lang): o for o in options for lang in LANGUAGES}

    def number(label):
        digits = "".join(c for c in str(label) if c.isdigit())
        return int(digits) if digits else None

    restored = {}
    for key in ("sentence", "second_sentence", "reference"):
        if isinstance(sent.get(key), str):
            restored[key] = sent[key]
    for key in ("present", "word_level"):
        if isinstance(sent.get(key), bool):
            restored[key] = sent[key]
    maps = {
        "lang": by_label(LANGUAGES, lambda code, _: LANGUAGES[code]),
        "checkpoint": by_label(
            checkpoints, lambda name, lang: checkpoint_label(name, read_metadata(CHECKPOINT_ROOT / name), lang)
        ),
        "decoding": by_label(("greedy", "beam"), lambda d, lang: t(d, lang)),
        "page": by_label(PAGES, lambda p, lang: t(f"page_{p}", lang)),
        "flow_method": by_label(attribute.METHODS, lambda m, lang: t(f"flow_{m}", lang)),
        "head": by_label(["mean"], head_name),
    }
    for key, labels in maps.items():
        if sent.get(key) in labels:
            restored[key] = labels[sent[key]]
    if "head" in sent and "head" not in restored and number(sent["head"]):
        restored["head"] = str(number(sent["head"]))
    for key in ("layer", "beam_size"):
        if number(sent.get(key, "")):
            restored[key] = number(sent[key])
    return restored


def tab_from_sent(sent: dict, lang_keys: tuple[str, ...], widget_key: str) -> str | None:
    """The tab key whose label (in any interface language) a sent tabs widget holds, or None."""
    by_label = {t(key, lang): key for key in lang_keys for lang in LANGUAGES}
    return by_label.get(sent.get(widget_key)) if isinstance(sent.get(widget_key), str) else None


def init_state(checkpoints: list[str]) -> None:
    """Defaults, overridden once per session by the URL's query parameters (a shared link), each checked
    strictly (ui.links); what the link asked for but could not have is listed in link_notices.
    Checkpoints are named by folder (the URL says ckpt=en-de, not a path on the server)."""
    if st.session_state.get("initialised"):
        return
    link = links.parse_link(
        {k: st.query_params[k] for k in st.query_params},
        checkpoints,
        list(LANGUAGES),
        MAX_BEAM,
        TAB_KEYS + LESSON_KEYS,
        attribute.METHODS,
        {k: len(st.query_params.get_all(k)) for k in st.query_params},
    )
    checkpoint = link.checkpoint or (PREFERRED_CHECKPOINT if PREFERRED_CHECKPOINT in checkpoints else checkpoints[0])
    sent = widget_values_the_page_sent()  # a reconnected page: its widgets' values stand, the link fills the rest
    defaults = dict(
        sentence=link.sentence or examples_for(checkpoint)[0],
        second_sentence=link.second_sentence or "",
        checkpoint=checkpoint,
        layer=1,
        head="1",
        lang=link.lang or "en",
        beam=link.beam or 1,
        decoding="greedy",
        reference="",
        word_level=bool(link.word_level),
        present=link.present,
    )
    restored = restored_values(sent, checkpoints)
    # a value the page sent but that cannot be read back (an option no longer offered) falls back to the default
    st.session_state.update({k: v for k, v in defaults.items() if k not in restored})
    st.session_state.update(restored)
    if "beam_size" in restored and st.session_state.get("decoding") == "beam":
        st.session_state.beam = restored["beam_size"]
    st.session_state.update(
        link_notices=link.notices,
        link_view=(None if "layer" in sent else link.layer, None if "head" in sent else link.head),
    )
    if "page" not in sent:
        st.session_state.page = "explore"
    if st.session_state.get("beam", 1) > 1:
        st.session_state.update(decoding="beam", beam_size=st.session_state.beam)
    if link.pair:
        kind, query, key = link.pair
        st.session_state.update(search_kind=kind, search_query=query, search_key=key, search_signature="from a link")
    if link.view in TAB_KEYS:
        st.session_state.update(page="explore", tab=link.view)
    elif link.view in LESSON_KEYS:
        st.session_state.update(page="lessons", lesson=link.view)
    if link.qk:
        st.session_state.update(qk_kind=link.qk[0], qk_query=link.qk[1])
    if link.flow:
        st.session_state.flow_method = link.flow
    if link.trail:
        st.session_state.update(trail=[list(step) for step in link.trail], trail_for="from a link")
    if link.compared:
        st.session_state.update(
            zip(("compare_query", "compare_x", "compare_y"), link.compared), compare_signature="from a link"
        )  # kept, not replaced by the pair's own words
    # A reconnected page's tab click (its tabs widgets hold labels): the view or lesson it opened.
    # (the group tabs send a value only once clicked: else the group is the link's view's, or the first)
    clicked_group = tab_from_sent(sent, tuple(VIEW_GROUPS), "group_tab")
    group = clicked_group or group_of(st.session_state.get("tab", TAB_KEYS[0]))
    view = tab_from_sent(sent, VIEW_GROUPS[group], f"view_tab_{group}")
    if view or clicked_group:
        st.session_state.tab = view or VIEW_GROUPS[group][0]
    lesson = tab_from_sent(sent, LESSON_KEYS, "lesson_tab")
    if lesson:
        st.session_state.lesson = lesson
    st.session_state.initialised = True


def apply_link_view(cfg) -> None:
    """The link's layer and head, once the checkpoint's depth and head count are known."""
    if "link_view" not in st.session_state:
        return
    layer, head, notices = links.fit_view(
        *st.session_state.pop("link_view"), max(cfg.n_encoder_layers, cfg.n_decoder_layers), cfg.n_heads
    )
    st.session_state.link_notices += notices
    if layer is not None:
        st.session_state.layer = layer
    if head is not None:
        st.session_state.head = head


def show_link_notices(lang: str) -> None:
    notices = st.session_state.pop("link_notices", None)  # said once, on the page the link opened
    if not notices:
        return
    lines = [
        t(
            f"link_{n.action}",
            lang,
            parameter=n.parameter,
            value=markdown_literal(n.value),
            used=markdown_literal(n.used),
        )
        for n in notices
    ]
    st.warning("\n".join(f"- {line}" for line in lines))


def write_url() -> None:
    def text(value) -> str:
        return str(int(value)) if isinstance(value, bool) else str(value)

    params = {url: text(st.session_state[key]) for url, key in URL_KEYS.items()}
    lessons = st.session_state.get("page") == "lessons"
    view = st.session_state.get("lesson", LESSON_KEYS[0]) if lessons else st.session_state.get("tab")
    if view and (lessons or view != TAB_KEYS[0]):  # the first tab of the explorer is the default: no parameter
        params["view"] = view
    pair = [st.session_state.get(k) for k in ("search_kind", "search_query", "search_key")]
    if pair[0] in KINDS and all(type(p) is int for p in pair[1:]):  # the head search's pair, once one was chosen
        params["pair"] = ".".join(map(str, pair))
    compared = [st.session_state.get(k) for k in ("compare_query", "compare_x", "compare_y")]
    if st.session_state.second_sentence.strip() and all(type(p) is int for p in compared):
        params["cmp"] = ".".join(map(str, compared))  # the word pairs of the two-sentence view
    qk = [st.session_state.get(k) for k in ("qk_kind", "qk_query")]
    if qk[0] in KINDS and type(qk[1]) is int:  # the query-key space's kind and query, once one was chosen
        params["qk"] = f"{qk[0]}.{qk[1]}"
    if st.session_state.get("flow_method", "attention") != "attention":
        params["flow"] = st.session_state.flow_method
    if st.session_state.get("trail"):
        params["force"] = ",".join(f"{step}:{piece}" for step, piece in st.session_state.trail)
    st.query_params.from_dict(params)


def page_style(present: bool) -> None:
    """Less empty space above the page, so the map fits the first screen of a 1024×768 projector; every lesson tab
    in view; in presentation mode, larger captions and translation for the back row. Fixed CSS, no user text."""
    css = f".block-container {{padding-top: {1.5 if present else 2.5}rem; padding-bottom: 1rem;}}"
    # Ten lessons do not fit one row at 1024 px (nor in Chinese at 1280): they wrap to a second row instead of
    # hiding behind the tab bar's scroll arrow.
    css += " .st-key-lesson_tab [role='tablist'] {flex-wrap: wrap; overflow: visible;}"
    if present:
        css += (
            " [data-testid='stCaptionContainer'] {font-size: 1.1rem;}"
            " [data-testid='stMarkdownContainer'] h3 {font-size: 2.2rem;}"
        )
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
        st.session_state.update(
            sentence=first, second_sentence=second, pair_example="", page="explore", tab="tab_compare"
        )


def switch_checkpoint() -> None:
    # A reference translation is in the old checkpoint's target language: keep it and the new model would be
    # teacher-forced on text it cannot read.
    st.session_state.reference = ""


def remember_tab(keys: tuple[str, ...], state_key: str, widget_key: str) -> None:
    """The tabs widget holds the open tab's *label*, which changes with the interface language; the session
    keeps the tab's key, so a language switch stays on the same tab."""
    by_label = {t(key, lang): key for key in keys for lang in LANGUAGES}
    st.session_state[state_key] = by_label.get(st.session_state[widget_key], keys[0])


def lazy_tabs(keys: tuple[str, ...], state_key: str, widget_key: str, lang: str) -> dict:
    """Tabs of which only the open one runs (lazy tabs: a hidden view costs nothing, and a layer or head change
    redraws one view instead of all of them). -> tab key -> tab; check tab.open before drawing into it."""
    st.session_state[widget_key] = t(st.session_state.setdefault(state_key, keys[0]), lang)
    tabs = st.tabs(
        [t(k, lang) for k in keys], key=widget_key, on_change=remember_tab, args=(keys, state_key, widget_key)
    )
    return dict(zip(keys, tabs))


def group_of(view: str) -> str:
    return next(group for group, views in VIEW_GROUPS.items() if view in views)


def open_group(lang_keys: tuple[str, ...]) -> None:
    """A click on a group tab opens the view last open in that group (its first, the first time)."""
    by_label = {t(key, lang): key for key in lang_keys for lang in LANGUAGES}
    group = by_label.get(st.session_state.group_tab, lang_keys[0])
    st.session_state.tab = st.session_state.get("last_view", {}).get(group, VIEW_GROUPS[group][0])


def explorer_tabs(explorer: dict, lang: str) -> None:
    """The group tabs, then the open group's view tabs; only the open view runs. st.session_state.tab (the view's
    key) decides both, so view= links, "open this head" buttons and a language switch land on the same view."""
    view = st.session_state.setdefault("tab", TAB_KEYS[0])
    groups = tuple(VIEW_GROUPS)
    st.session_state.group = group_of(view)
    st.session_state.group_tab = t(st.session_state.group, lang)
    tabs = st.tabs([t(g, lang) for g in groups], key="group_tab", on_change=open_group, args=(groups,))
    for group, tab in zip(groups, tabs):
        if not tab.open:
            continue
        with tab:
            st.session_state.setdefault("last_view", {})[group] = view
            for key, view_tab in lazy_tabs(VIEW_GROUPS[group], "tab", f"view_tab_{group}", lang).items():
                if view_tab.open:
                    with view_tab:
                        explorer[key]()


# ---------------------------------------------------------------------------------------------- page


def sidebar(checkpoints: dict[str, dict]) -> None:
    """checkpoints: folder name -> its config.json metadata."""
    with st.sidebar:
        widgets.radio(
            st,
            t("interface_language", st.session_state.lang),
            list(LANGUAGES),
            format_func=LANGUAGES.get,
            horizontal=True,
            key="lang",
        )
        lang = st.session_state.lang
        widgets.selectbox(
            st,
            t("checkpoint", lang),
            list(checkpoints),
            format_func=lambda name: checkpoint_label(name, checkpoints[name], lang),
            key="checkpoint",
            on_change=switch_checkpoint,
        )
        metadata = checkpoints[st.session_state.checkpoint]
        widgets.selectbox(
            st,
            t("examples", lang),
            [""] + examples_for(st.session_state.checkpoint),
            key="example",
            on_change=use_example,
            format_func=lambda s: s or t("example_placeholder", lang),
        )
        st.text_input(t("sentence", lang), key="sentence", help=t("sentence_help", lang))
        widgets.radio(
            st,
            t("decoding", lang),
            ["greedy", "beam"],
            key="decoding",
            format_func=lambda d: t(d, lang),
            horizontal=True,
        )
        if st.session_state.decoding == "beam":
            st.session_state.setdefault("beam_size", 4)
            st.slider(t("beam_size", lang), 2, MAX_BEAM, key="beam_size")
        st.session_state.beam = 1 if st.session_state.decoding == "greedy" else st.session_state.beam_size
        target = language_name(metadata.get("target_language", "?"), lang)
        st.text_input(t("reference", lang), key="reference", help=t("reference_help", lang, target=target))
        st.text_input(t("second_sentence", lang), key="second_sentence", help=t("second_sentence_help", lang))
        widgets.selectbox(
            st,
            t("minimal_pairs", lang),
            [""] + [p[0] for p in MINIMAL_PAIRS],
            key="pair_example",
            on_change=use_pair,
            format_func=lambda k: t(k, lang) if k else t("pair_placeholder", lang),
        )
        st.toggle(t("presentation", lang), key="present", help=t("presentation_help", lang))


def view_selectors(cfg, lang: str) -> None:
    """Layer, head and word level: in the sidebar, or, in presentation mode, in one row above the maps, so a
    teacher can collapse the sidebar and still switch heads."""
    deepest = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
    heads = ["mean"] + [str(h) for h in range(1, cfg.n_heads + 1)]
    present = st.session_state.present
    if present:
        # one compact row: each choice says what it is ("layer 5", "head 3"), so the labels above can go
        layer_box, head_box, flow_box, word_box = st.columns([1, 1, 1.3, 1], vertical_alignment="center")
    else:
        st.sidebar.subheader(t("view", lang))
        layer_box = head_box = flow_box = word_box = st.sidebar
    compact = dict(label_visibility="collapsed") if present else {}
    widgets.selectbox(
        layer_box,
        t("layer", lang),
        list(range(1, deepest + 1)),
        key="layer",
        format_func=(lambda n: t("layer_n", lang, n=n)) if present else str,
        **compact,
    )
    widgets.selectbox(
        head_box, t("head", lang), heads, key="head", format_func=lambda h: head_name(h, lang), default="1", **compact
    )
    flow_selector(flow_box, lang, **compact)
    word_box.checkbox(t("word_level", lang), key="word_level", help=t("word_level_help", lang))


def fetch_again(checkpoint: str, sentence: str, beam: int, choice: int, reference: str, trail: tuple = ()):
    """How to get the translation shown again, holding only its recipe (strings and numbers), not its arrays."""
    if reference:
        return lambda: get_forced(checkpoint, sentence, reference=reference)
    return lambda: get_hypotheses(checkpoint, sentence, beam, trail=trail)[choice]


def current_trail(checkpoint: str, sentence: str, beam: int, vocab_size: int) -> tuple[tuple[int, int], ...]:
    """The what-if choices of this sentence (step, piece id); a new sentence, checkpoint or beam starts without
    any (a link's trail is kept for the sentence the link opened)."""
    signature = (checkpoint, sentence, beam)
    if st.session_state.get("trail_for") == "from a link":
        st.session_state.trail_for = signature
    if st.session_state.get("trail_for") != signature:
        st.session_state.update(trail=[], trail_for=signature)
    trail = [step for step in st.session_state.get("trail", []) if 0 <= step[1] < vocab_size]
    return tuple(tuple(step) for step in trail)


def explorer_views(ctx: Context) -> dict:
    """Tab key -> the function that draws that view of the explorer."""
    tr, lang = ctx.tr, ctx.lang
    view = (ctx.layer, ctx.head, lang)

    def encoder_view():
        show_attention(tr, "encoder_self", *view, ctx.word_level, ctx.languages, ctx.fetch, ctx.checkpoint)
        st.caption(t("explain_multihead", lang))

    return {
        "tab_encoder": encoder_view,
        "tab_decoder": lambda: show_attention(
            tr, "decoder_self", *view, ctx.word_level, ctx.languages, ctx.fetch, ctx.checkpoint
        ),
        "tab_cross": lambda: show_attention(
            tr, "cross", *view, ctx.word_level, ctx.languages, ctx.fetch, ctx.checkpoint
        ),
        "tab_positional": lambda: show_positional(ctx.cfg.d_model, ctx.cfg.max_len, lang),
        "tab_softmax": lambda: show_scaling(tr, *view),
        "tab_steps": lambda: show_steps(tr, *view),
        "tab_heads": lambda: show_head_statistics(tr, ctx.checkpoint, lang),
        "tab_search": lambda: show_head_search(tr, lang, ctx.word_level, ctx.languages, ctx.checkpoint),
        "tab_compare": lambda: show_compare(tr, ctx.checkpoint, ctx.beam, *view, ctx.word_level, ctx.languages),
        "tab_ablation": lambda: show_ablation(
            ctx.model_output, ctx.checkpoint, ctx.beam, *view, ctx.word_level, ctx.languages
        ),
        "tab_decoding": lambda: show_decoding_steps(ctx),
        "tab_lens": lambda: show_logit_lens(ctx),
        "tab_qk": lambda: show_qk_space(ctx),
    }


def open_first_loadable(checkpoints: list[str]):
    """The chosen checkpoint, or, when it does not load, the first other one that does (the choice moves there).
    -> (the loaded model or None, [(name, what is wrong)] for each that failed)."""
    chosen = st.session_state.checkpoint
    broken = []
    for name in [chosen] + [c for c in checkpoints if c != chosen]:
        try:
            loaded = get_model(str(CHECKPOINT_ROOT / name))
        except CheckpointError as e:
            broken.append((name, str(e)))
            continue
        if name != chosen:
            st.session_state.checkpoint = name
            switch_checkpoint()
        return loaded, broken
    return None, broken


def about_model(checkpoint: str, loaded, lang: str) -> str:
    """What the model was trained on, its measured scores (eval.json: greedy, and beam 4 where measured: the
    sidebar's beam search starts at 4) and what it gets wrong."""

    def scores(decoding: str) -> str:
        return t("clause_separator", lang).join(
            t(
                "about_scores",
                lang,
                name=t(f"about_set_{name}", lang),
                bleu=r[decoding]["bleu"],
                chrf=r[decoding]["chrf"],
            )
            for name, r in get_scores(checkpoint).items()
            if decoding in r and f"about_set_{name}" in STRINGS[lang]
        )

    corpus = loaded.metadata.get("corpus", "")
    data = t(f"about_data_{corpus}", lang) if f"about_data_{corpus}" in STRINGS[lang] else ""
    beam = scores("beam4")
    return t(
        "about_model",
        lang,
        params=count_parameters(loaded.model) / 1e6,
        data=data,
        scores=scores("greedy") or "–",
        beam=t("about_beam", lang, scores=beam) if beam else "",
    )


def page_selector(lang: str) -> None:
    """The explorer (every view of the model) or the lessons (the argument in order, on the same sentence); in
    presentation mode in the sidebar, so the map moves up."""
    widgets.radio(
        st.sidebar if st.session_state.present else st,
        t("page", lang),
        PAGES,
        key="page",
        horizontal=True,
        format_func=lambda p: t(f"page_{p}", lang),
        label_visibility="collapsed",
    )


@contextlib.contextmanager
def drawing_slot(tr, lang: str):
    """A large page is drawn while holding one of a few slots (its figures take tens of MiB while they are
    built); others wait with a note. A short sentence's page is drawn at once."""
    if not is_heavy(tr):
        yield
        return
    slots = heavy_page_slots()
    note = st.empty()
    if slots.running >= slots.n:
        note.info(t("drawing_queued", lang, n=slots.queued + 1))
    with slots:
        note.empty()
        log_event("draw-start")
        try:
            yield
        finally:
            log_event("draw-end")


def main() -> None:
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(TORCH_THREADS)
    presenting = st.session_state.get("present", st.query_params.get("present") == "1")
    # A projector's page opens with the sidebar folded away: the map gets the whole width and starts higher.
    st.set_page_config(
        page_title="Attention explorer", layout="wide", initial_sidebar_state="collapsed" if presenting else "auto"
    )
    checkpoints = [p.name for p in list_checkpoints(CHECKPOINT_ROOT)]
    lang = st.session_state.get("lang", st.query_params.get("lang", "en"))
    lang = lang if lang in LANGUAGES else "en"
    if not checkpoints:
        st.error(t("no_checkpoints", lang, root=markdown_literal(str(CHECKPOINT_ROOT))))
        st.stop()
    init_state(checkpoints)
    widgets.keep(VIEW_WIDGETS)
    loaded, broken = open_first_loadable(checkpoints)  # before the selector is drawn: it may move the choice
    if loaded is not None:  # the query-key view's held-out sample, computed in the background once per server
        warm_qk_sample(str(CHECKPOINT_ROOT / st.session_state.checkpoint))
    sidebar({name: read_metadata(CHECKPOINT_ROOT / name) for name in checkpoints})
    lang = st.session_state.lang

    page_style(st.session_state.present)
    if not st.session_state.present:  # a projector's first screen is for the map
        st.markdown(f"#### {t('title', lang)}")
    incomplete = incomplete_checkpoints(CHECKPOINT_ROOT)
    if incomplete:
        st.sidebar.caption(
            t(
                "checkpoints_incomplete",
                lang,
                folders=t("clause_separator", lang).join(
                    f"{markdown_literal(name)} ({', '.join(missing)})" for name, missing in incomplete.items()
                ),
            )
        )
    for name, error in broken:
        st.warning(t("checkpoint_broken", lang, name=markdown_literal(name), error=markdown_literal(error)))
    if loaded is None:
        st.stop()
    checkpoint = str(CHECKPOINT_ROOT / st.session_state.checkpoint)
    cfg = loaded.model.cfg
    with (st.sidebar if st.session_state.present else st).expander(t("about", lang)):
        st.caption(t("subtitle", lang))
        st.caption(about_model(checkpoint, loaded, lang))
        calibration = get_calibration(checkpoint)
        if calibration:
            st.caption(
                t(
                    "unsure_about",
                    lang,
                    threshold=calibration.threshold,
                    recall=calibration.recall,
                    precision=calibration.precision,
                    n=calibration.test_sentences,
                    bad=calibration.test_bad,
                    flagged=calibration.test_flagged,
                    caught=round(calibration.recall * calibration.test_bad),
                )
            )
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
    trail = current_trail(checkpoint, sentence, beam, cfg.tgt_vocab_size)
    # Under load the same sentence is computed once for the whole class (ui.cache): the page says it is waiting.
    slots = translation_cache().slots
    ahead = slots.queued + max(0, slots.running - slots.n + 1)
    with st.spinner(t("translating_queued", lang, n=ahead) if ahead else t("translating", lang)):
        original = get_hypotheses(checkpoint, sentence, beam)
        hypotheses = get_hypotheses(checkpoint, sentence, beam, trail=trail) if trail else original
    choice = 0
    if len(hypotheses) > 1:
        # The labels, not the hypotheses: Streamlit keeps a widget's format_func as long as the session (also
        # after it disconnects), and a lambda over the hypotheses would keep every one of them alive with it.
        labels = [f"{i + 1}. {h.target_text} ({h.log_prob:.2f})" for i, h in enumerate(hypotheses)]
        choice = widgets.selectbox(
            st.sidebar,
            t("hypothesis", lang),
            list(range(len(hypotheses))),
            key="hypothesis",
            format_func=labels.__getitem__,
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
    show_translation(tr, model_output, lang, checkpoint)
    show_trail(tr, original[0], lang)
    calibration = get_calibration(checkpoint)
    if calibration and not tr.teacher_forced and calibration.unsure(tr.token_probs):
        # the threshold was set on the model's own translations: a forced path is said to be unlikely, not wrong
        st.warning(
            t(
                "unsure_forced" if trail else "unsure",
                lang,
                score=mean_log_prob(tr.token_probs),
                threshold=calibration.threshold,
            )
        )
    if st.session_state.present:
        view_selectors(cfg, lang)
    page_selector(lang)

    ctx = Context(
        tr,
        model_output,
        checkpoint,
        beam,
        int(st.session_state.layer),
        st.session_state.head,
        lang,
        st.session_state.word_level,
        languages,
        cfg,
        fetch_again(checkpoint, sentence, beam, choice, reference, trail),
        original[0],
    )
    explorer = explorer_views(ctx)
    with drawing_slot(tr, lang):
        if st.session_state.page == "lessons":
            for key, tab in lazy_tabs(LESSON_KEYS, "lesson", "lesson_tab", lang).items():
                if tab.open:
                    with tab:
                        show_lesson(key, ctx, explorer)
        else:
            explorer_tabs(explorer, lang)
    write_url()  # again: a view may have replaced a link's value that did not fit the sentence
    if st.session_state.pop("prefetch_flows", False):  # a decoder or cross map was drawn: while its reader
        prefetch_flows(checkpoint, tr)  # looks at it, an idle server computes what a method switch would wait for


main()
