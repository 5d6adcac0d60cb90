"""Attention explorer: `streamlit run app.py`.

The entry and its wiring. The sidebar (ui.sidebar), the session's state and link (ui.session, ui.links), the
translation and its warnings, then the open page: the explorer's views or the lessons (ui.navigation), both read
from one registry (ui.views) and drawn from one Context. The model is loaded once per process and each
(checkpoint, sentence, decoding, what-if) is computed once into a byte-bounded cache shared by all sessions
(ui.models, ui.cache). Figures come from viz/, which never calls the model.
"""

from __future__ import annotations

import contextlib
import os
import uuid

import streamlit as st
import torch

from model.checkpoint import CheckpointError, list_checkpoints, read_metadata
from ui import navigation, session, views, widgets
from ui.attention import switches_in_browser, translation_notes
from ui.cache import page_runs
from ui.checkpoints import checkpoint_root
from ui.common import Context, HeadChoice, scroll_to_top_if_asked
from ui.lessons.learned import start_default_run
from ui.models import (
    computes_ahead,
    get_alignment,
    get_forced,
    get_hypotheses,
    get_model,
    heavy_page_slots,
    is_heavy,
    log_event,
    note_script_run,
    prefetch_attributions,
    translation_cache,
)
from ui.qk_space import warm_qk_sample
from ui.sidebar import (
    about_expander,
    checkpoint_problems,
    page_selector,
    sidebar,
    switch_checkpoint,
    view_selectors,
)
from viz.escape import markdown_literal
from words import LANGUAGES, t

# One intra-op thread per request: a server runs many sessions' requests side by side on few cores, and two
# threads each oversubscribe them (measured on these 2 cores while another process used both: value zeroing of a
# 20-word sentence 1.45 s with 2 threads, 0.11 s with 1; gradient x input 4.6 s and 0.23 s).
TORCH_THREADS = int(os.environ.get("ATTENTION_EXPLORER_TORCH_THREADS", "1"))


def fetch_again(checkpoint: str, sentence: str, beam: int, choice: int, reference: str, trail: tuple = ()):
    """How to get the translation shown again, holding only its recipe (strings and numbers), not its arrays."""
    if reference:
        return lambda: get_forced(checkpoint, sentence, reference=reference)
    return lambda: get_hypotheses(checkpoint, sentence, beam, trail=trail)[choice]


def open_first_loadable(checkpoints: list[str]):
    """The chosen checkpoint, or, when it does not load, the first other one that does (the choice moves there).
    -> (the loaded model or None, [(name, what is wrong)] for each that failed)."""
    chosen = widgets.current("checkpoint")  # read before its selector is drawn
    broken = []
    for name in [chosen] + [c for c in checkpoints if c != chosen]:
        try:
            loaded = get_model(str(checkpoint_root() / name))
        except CheckpointError as e:
            broken.append((name, str(e)))
            continue
        if name != chosen:
            widgets.set_value("checkpoint", name)
            switch_checkpoint()
        return loaded, broken
    return None, broken


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


def open_page() -> list[str]:
    """The page's settings and the checkpoints there are (the page stops, saying where it looked, when none)."""
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(TORCH_THREADS)
    presenting = st.session_state.get("present", st.query_params.get("present") == "1")
    # A projector's page opens with the sidebar folded away: the map gets the whole width and starts higher.
    st.set_page_config(
        page_title="Attention explorer", layout="wide", initial_sidebar_state="collapsed" if presenting else "auto"
    )
    checkpoints = [p.name for p in list_checkpoints(checkpoint_root())]
    lang = st.session_state.get("lang", st.query_params.get("lang", "en"))
    lang = lang if lang in LANGUAGES else "en"
    if not checkpoints:
        st.error(t("no_checkpoints", lang, root=markdown_literal(str(checkpoint_root()))))
        st.stop()
    return checkpoints


def translate_sentence(checkpoint: str, sentence: str, beam: int, cfg, lang: str):
    """-> (the model's own hypotheses, those with the what-if trail, the trail kept). Under load the same sentence
    is computed once for the whole class (ui.cache): the page says it is waiting."""
    trail = session.current_trail(checkpoint, sentence, beam, cfg.tgt_vocab_size)
    slots = translation_cache().slots
    ahead = slots.queued + max(0, slots.running - slots.n + 1)
    with st.spinner(t("translating_queued", lang, n=ahead) if ahead else t("translating", lang)):
        original = get_hypotheses(checkpoint, sentence, beam)
        hypotheses = get_hypotheses(checkpoint, sentence, beam, trail=trail) if trail else original
        kept = session.fit_link_trail(trail, hypotheses[0])
        if kept != trail:  # a link's what-if step this translation never reached: without it
            trail = kept
            hypotheses = get_hypotheses(checkpoint, sentence, beam, trail=trail) if trail else original
    return original, hypotheses, trail


def hypothesis_choice(hypotheses: list, lang: str) -> int:
    """Which of a beam's hypotheses the page shows (the sidebar's list; the first where there is one)."""
    if len(hypotheses) == 1:
        return 0
    # The labels, not the hypotheses: Streamlit keeps a widget's format_func as long as the session (also after it
    # disconnects), and a lambda over the hypotheses would keep every one of them alive with it.
    labels = [f"{i + 1}. {h.target_text} ({h.log_prob:.2f})" for i, h in enumerate(hypotheses)]
    return widgets.selectbox(
        st.sidebar,
        t("hypothesis", lang),
        list(range(len(hypotheses))),
        key="hypothesis",
        format_func=labels.__getitem__,
    )


def main() -> None:
    checkpoints = open_page()
    session.init_state(checkpoints)
    # how many sessions use this server now: with a class on it nothing is computed ahead for one sentence
    sessions = note_script_run(st.session_state.setdefault("session_key", uuid.uuid4().hex))
    # the page-wide choices too: a view that does not read them does not draw them
    widgets.keep(("layer", "head", "attribution", "word_level") + views.kept_widgets())
    loaded, broken = open_first_loadable(checkpoints)  # before the selector is drawn: it may move the choice
    if loaded is not None:
        # a head switched in the browser since the last run (before its selectors are drawn)
        cfg = loaded.model.cfg
        session.adopt_browser_view(max(cfg.n_encoder_layers, cfg.n_decoder_layers), cfg.n_heads)
    if computes_ahead():  # in the background, once per server: what views will likely ask for
        if loaded is not None:
            warm_qk_sample(str(checkpoint_root() / widgets.current("checkpoint")))  # the query-key view's sample
        start_default_run()  # the lesson "Attention is learned": its default toy run
    sidebar({name: read_metadata(checkpoint_root() / name) for name in checkpoints})
    widgets.rerun_if_drawn_otherwise()  # the checkpoint a reconnected page sent is loaded by a run of its own
    lang = st.session_state.lang

    navigation.page_style(st.session_state.present)
    if not st.session_state.present:  # a projector's first screen is for the map
        st.markdown(f"#### {t('title', lang)}")
    checkpoint_problems(broken, lang)
    if loaded is None:
        st.stop()
    checkpoint = str(checkpoint_root() / st.session_state.checkpoint)
    cfg = loaded.model.cfg
    about_expander(checkpoint, loaded, lang)
    language_pair = (loaded.metadata.get("source_language", "en"), loaded.metadata.get("target_language", "zh"))
    session.apply_link_view(cfg)
    session.open_cross_attention_on_the_best_aligner(get_alignment(checkpoint))
    offered = views.selectors_for(widgets.current("page"), st.session_state.get("tab"), st.session_state.get("lesson"))
    open_view = st.session_state.get("tab", next(iter(views.views())))  # a new page opens on the first view
    if widgets.current("page") == "explore" and switches_in_browser(open_view):
        offered = tuple(s for s in offered if s not in ("layer", "head"))  # the maps' own lists choose them
    if not st.session_state.present:
        view_selectors(cfg, lang, offered)
    session.write_url()
    notices = st.container()  # the link's notices, once its sentence has been checked against them

    sentence = st.session_state.sentence.strip()
    if not sentence:
        session.show_link_notices(lang, notices)
        st.warning(t("empty_input", lang))
        st.stop()
    beam = int(st.session_state.beam)
    original, hypotheses, trail = translate_sentence(checkpoint, sentence, beam, cfg, lang)
    choice = hypothesis_choice(hypotheses, lang)
    model_output = hypotheses[choice]
    reference = st.session_state.reference.strip()
    tr = get_forced(checkpoint, sentence, reference=reference) if reference else model_output

    if "link_notices" in st.session_state:  # the first page of a link
        session.check_link_positions(tr, widgets.current("word_level"), language_pair)
        session.show_link_notices(lang, notices)
    translation_notes(tr, model_output, original[0], cfg, bool(trail), checkpoint, lang)
    if st.session_state.present:
        view_selectors(cfg, lang, offered)
    page_selector(lang)
    widgets.rerun_if_drawn_otherwise()  # a reconnected page's own page, whose selectors this run did not offer
    widgets.settle()  # every choice the page shows is drawn: from here on, all are in session state

    ctx = Context(
        tr=tr,
        model_output=model_output,
        checkpoint=checkpoint,
        beam=beam,
        chosen=HeadChoice.shown_as(st.session_state.layer, st.session_state.head),  # parsed once, here
        lang=lang,
        word_level=st.session_state.word_level,
        language_pair=language_pair,
        cfg=cfg,
        fetch=fetch_again(checkpoint, sentence, beam, choice, reference, trail),
        original=original[0],
    )
    with drawing_slot(tr, lang):
        if st.session_state.page == "lessons":
            navigation.lesson_tabs(ctx)
        else:
            navigation.explorer_tabs(ctx)
    session.write_url(final=True)  # again: a view may have replaced a link's value that did not fit the sentence
    # a decoder or cross map was drawn: while its reader looks at it, an idle server computes what a method switch
    # would wait for
    if st.session_state.pop("prefetch_attributions", False):
        prefetch_attributions(checkpoint, tr, sessions)
    scroll_to_top_if_asked()
    widgets.run_reached_its_end()


with page_runs.drawing():  # background work gives way while pages are drawn (ui.cache.between_steps)
    main()
