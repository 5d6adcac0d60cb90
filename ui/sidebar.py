"""The sidebar: interface language, checkpoint, sentence and decoding, the view's layer, head and word level
(above the maps in presentation mode), the page switch and what the model is."""

from __future__ import annotations

import streamlit as st

from model import attribute
from model.checkpoint import incomplete_checkpoints
from ui import views as registry
from ui import widgets
from ui.checkpoints import checkpoint_label, checkpoint_root, examples_for, minimal_pairs, source_language
from ui.common import choose_view, head_name
from ui.links import MAX_SENTENCE_CHARACTERS
from ui.models import get_calibration, get_scores, parameter_count
from viz.cjk import is_cjk
from viz.escape import markdown_literal
from words import LANGUAGES, STRINGS, language_name, sentences, t

MAX_BEAM = 8
PAGES = ("explore", "lessons")


def use_example() -> None:
    """The example menu copies its choice into the sentence box and goes back to its placeholder, so the same
    example can be picked again and the menu never holds a sentence of another checkpoint's list."""
    if st.session_state.example:
        st.session_state.update(sentence=st.session_state.example, example="")


def use_pair() -> None:
    """The minimal-pair menu fills both sentence boxes and goes back to its placeholder."""
    chosen = st.session_state.pair_example
    if chosen:
        pair = next(p for p in minimal_pairs(st.session_state.checkpoint) if p.name == chosen)
        st.session_state.update(
            sentence=pair.first,
            second_sentence=pair.second,
            pair_example="",
            page="explore",
            tab=registry.view_reading("second_sentence"),
        )


def cut_to_limit(key: str) -> None:
    """A text box's on_change: text longer than MAX_SENTENCE_CHARACTERS (a paste) is cut there, and the box says so.
    The box has no limit of its own (max_chars): the browser then refused a longer paste whole and said nothing, and
    counted a character beyond the Basic Multilingual Plane (an emoji) twice, so after a link of 2,000 of them no
    key typed did anything."""
    text = st.session_state[key]
    shortened = st.session_state.setdefault("shortened_boxes", set())
    if len(text) > MAX_SENTENCE_CHARACTERS:
        st.session_state[key] = text[:MAX_SENTENCE_CHARACTERS]
        shortened.add(key)
    else:
        shortened.discard(key)


def text_box(label: str, key: str, help: str, lang: str) -> None:
    """A sentence box (the sentence, the reference, the second sentence): what is longer than a link may carry is
    cut, with a note under the box."""
    st.text_input(label, key=key, help=help, on_change=cut_to_limit, args=(key,), **widgets.first_value(key))
    if key in st.session_state.get("shortened_boxes", ()):
        st.caption(t("box_shortened", lang, used=MAX_SENTENCE_CHARACTERS))


def language_of(text: str) -> str:
    """The source language a sentence is written for: "zh" where it holds Chinese characters, else "en"."""
    return "zh" if any(is_cjk(c) for c in text) else "en"


def written_in(text: str, language: str) -> bool:
    """Whether a sentence can be read by a model whose source is this language: Chinese text for a Chinese
    source, text without Chinese characters for the others (an empty one fits any)."""
    return not text.strip() or (language_of(text) == "zh") == (language == "zh")


def switch_checkpoint() -> None:
    # A reference translation is in the old checkpoint's target language: keep it and the new model would be
    # teacher-forced on text it cannot read.
    st.session_state.reference = ""
    # so are switched-off heads: the other checkpoint's heads are other heads
    st.session_state.ablated_heads = []
    # and sentences in the other source language (en-zh to zh-en): the new model opens on its first example
    name = st.session_state.get("checkpoint")
    if name is None:  # called before a checkpoint is chosen (app.main, when the linked one does not load)
        return
    language = source_language(name)
    # Each source language's last sentences are kept: back on en-zh after zh-en, the teacher's own English
    # sentence returns, not the first example.
    left = st.session_state.setdefault("sentences_by_language", {})
    for key in ("sentence", "second_sentence"):
        text = st.session_state.get(key, "")
        if text.strip() and not written_in(text, language):
            left[(key, language_of(text))] = text
    if not written_in(st.session_state.get("sentence", ""), language):
        st.session_state.sentence = left.pop(("sentence", language), examples_for(name)[0])
    second = st.session_state.get("second_sentence", "")
    if not second.strip() or not written_in(second, language):  # emptied when this language was left
        st.session_state.second_sentence = left.pop(("second_sentence", language), "")
    if not written_in(st.session_state.get("padding_other", ""), language):
        st.session_state.pop("padding_other")  # the masks lesson chooses one in the new language


def attribution_selector(container, lang: str, **kwargs) -> str:
    """Which account of the view the attention maps show: raw weights or another method (model.attribute); one
    choice for all three attention views, beside the layer and head, kept in the link (attribution=)."""
    return widgets.selectbox(
        container,
        t("attribution", lang),
        list(attribute.METHODS),
        key="attribution",
        format_func=lambda m: t(f"attribution_{m}", lang),
        help=t("attribution_help", lang),
        **kwargs,
    )


def sidebar(checkpoints: dict[str, dict]) -> None:
    """checkpoints: folder name -> its config.json metadata."""
    with st.sidebar:
        widgets.radio(
            st,
            t("interface_language", widgets.current("lang", "en", checked=False)),
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
        source = language_name(metadata.get("source_language", "en"), lang)
        text_box(t("sentence", lang, language=source), "sentence", t("sentence_help", lang), lang)
        widgets.radio(
            st,
            t("decoding", lang),
            ["greedy", "beam"],
            key="decoding",
            format_func=lambda d: t(d, lang),
            horizontal=True,
        )
        if st.session_state.decoding == "beam":
            st.slider(t("beam_size", lang), 2, MAX_BEAM, key="beam_size", **widgets.first_value("beam_size", 4))
        st.session_state.beam = 1 if st.session_state.decoding == "greedy" else st.session_state.beam_size
        target = language_name(metadata.get("target_language", "?"), lang)
        text_box(t("reference", lang), "reference", t("reference_help", lang, target=target), lang)
        text_box(t("second_sentence", lang), "second_sentence", t("second_sentence_help", lang), lang)
        widgets.selectbox(
            st,
            t("minimal_pairs", lang),
            [""] + [p.name for p in minimal_pairs(st.session_state.checkpoint)],
            key="pair_example",
            on_change=use_pair,
            format_func=lambda k: t(k, lang) if k else t("pair_placeholder", lang),
        )
        st.toggle(
            t("presentation", lang), key="present", help=t("presentation_help", lang), **widgets.first_value("present")
        )


def view_selectors(cfg, lang: str, offered: tuple[str, ...]) -> None:
    """The layer, head, account and word level the open view reads (offered, of ui.views.SELECTORS; the others'
    values are kept, not shown): in the sidebar, or, in presentation mode, in one row above the maps, so a teacher
    can collapse the sidebar and still switch heads."""
    if not offered:
        return
    deepest = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
    heads = ["mean"] + [str(h) for h in range(1, cfg.n_heads + 1)]
    present = st.session_state.present
    widths = {"layer": 1, "head": 1, "attribution": 1.3, "word_level": 1}
    if present:
        # one compact row: each choice says what it is ("layer 5", "head 3"), so the labels above can go
        boxes = dict(zip(offered, st.columns([widths[s] for s in offered], vertical_alignment="center")))
    else:
        st.sidebar.subheader(t("view", lang))
        boxes = dict.fromkeys(offered, st.sidebar)
    compact = dict(label_visibility="collapsed") if present else {}
    if "layer" in boxes:
        widgets.selectbox(
            boxes["layer"],
            t("layer", lang),
            list(range(1, deepest + 1)),
            key="layer",
            format_func=(lambda n: t("layer_n", lang, n=n)) if present else str,
            on_change=choose_view,
            **compact,
        )
    if "head" in boxes:
        widgets.selectbox(
            boxes["head"],
            t("head", lang),
            heads,
            key="head",
            format_func=lambda h: head_name(h, lang),
            default="1",
            on_change=choose_view,
            **compact,
        )
    if "attribution" in boxes:
        attribution_selector(boxes["attribution"], lang, **compact)
    if "word_level" in boxes:
        boxes["word_level"].checkbox(
            t("word_level", lang),
            key="word_level",
            help=t("word_level_help", lang),
            **widgets.first_value("word_level"),
        )


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
    # where the weights were trained: the last run's device (config.json's train_args) or an earlier stage that
    # config.json names under stages_on_gpu (en-zh's stage 7); every other stage ran on CPUs
    metadata = loaded.metadata
    last_on_gpu = str(metadata.get("train_args", {}).get("device", "cpu")).startswith("cuda")
    on_gpu = last_on_gpu or bool(metadata.get("stages_on_gpu"))
    return t(
        "about_model",
        lang,
        params=parameter_count(checkpoint) / 1e6,
        trained=t("about_trained_gpu" if on_gpu else "about_trained_cpu", lang),
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


def about_expander(checkpoint: str, loaded, lang: str) -> None:
    """What the model is, how well it scores and when it says it is unsure: folded away, in the sidebar when
    presenting."""
    cfg = loaded.model.cfg
    with (st.sidebar if st.session_state.present else st).expander(t("about", lang)):
        st.caption(t("subtitle", lang, source=language_name(loaded.metadata.get("source_language", "en"), lang)))
        st.caption(about_model(checkpoint, loaded, lang))
        calibration = get_calibration(checkpoint)
        if calibration:
            held_out = ""
            if calibration.cross_validated_precision is not None:
                held_out = t(
                    "unsure_about_cross_validated",
                    lang,
                    judged=len(calibration.judged),
                    precision=calibration.cross_validated_precision,
                    recall=calibration.cross_validated_recall,
                )
            st.caption(
                sentences(
                    lang,
                    t(
                        "unsure_about",
                        lang,
                        threshold=calibration.threshold,
                        min_precision=calibration.min_precision or 0.0,
                        recall=calibration.recall,
                        precision=calibration.precision,
                        n=calibration.test_sentences,
                        bad=calibration.test_bad,
                        flagged=calibration.test_flagged,
                        caught=round(calibration.recall * calibration.test_bad),
                    ),
                    held_out,
                )
            )
        if cfg.norm_first:
            st.caption(t("norm_first_note", lang))
            # the difference trained live, in lesson 6's last section
            st.button(
                t("norm_first_open", lang), key="norm_first_open", on_click=open_lesson, args=("lesson_residual",)
            )


def open_lesson(lesson: str) -> None:
    st.session_state.update(page="lessons", lesson=lesson)


def checkpoint_problems(broken: list[tuple[str, str]], lang: str) -> None:
    """Checkpoint folders with files missing (in the sidebar), and each that failed to load (on the page)."""
    incomplete = incomplete_checkpoints(checkpoint_root())
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
