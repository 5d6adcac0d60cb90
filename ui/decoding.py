"""Decoding step by step: at step t the output so far, the attention rows of position t, the next-piece choices;
and what-if decoding: write another piece at step t and let the model decode on from there."""

from __future__ import annotations

import streamlit as st

from model import decode
from ui.common import Context, chart, layer_of_kind, row_outcomes, selected_weights
from ui.links import NUMBER
from ui.models import get_model
from ui.views import LinkParam, View, register
from viz.decoding import decoding_step_figure
from viz.escape import markdown_literal
from viz.tables import probability_text
from words import t


def choose_piece(checkpoint: str, step: int, piece: str) -> None:
    """Button callback: the trail keeps the choices before this step, then writes `piece` here (a text of several
    pieces fills the next steps too). A piece the vocabulary cannot write leaves the trail as it was."""
    try:
        forced = decode.forced_steps(get_model(checkpoint).target_tokenizer, [(step, piece)])
    except ValueError:
        st.session_state.whatif_error = piece
        return
    kept = [choice for choice in st.session_state.get("trail", []) if choice[0] < step]
    st.session_state.trail = kept + [[s, i] for s, i in sorted(forced.items())]
    st.session_state.whatif_typed = ""


def undo_choice() -> None:
    st.session_state.trail = st.session_state.get("trail", [])[:-1]


def show_trail(tr: decode.Translation, original: decode.Translation | None, lang: str, with_undo: bool = True) -> bool:
    """What the what-if choices changed: each forced step, the model's own translation beside the new one, and
    the log-probabilities of both. tr: the model's output on the trail; original: without it. -> whether it drew
    anything."""
    trail = st.session_state.get("trail", [])
    if not trail or original is None or tr.teacher_forced:
        return False
    steps = t("clause_separator", lang).join(
        t(
            "whatif_step",
            lang,
            step=step,
            piece=markdown_literal(tr.target_pieces[step]) if step < len(tr.target_pieces) else "–",
        )
        for step, _ in trail
    )
    st.info(
        t(
            "whatif_note",
            lang,
            steps=steps,
            new=markdown_literal(tr.target_text),
            new_lp=tr.log_prob,
            original=markdown_literal(original.target_text),
            original_lp=original.log_prob,
            delta=tr.log_prob - original.log_prob,
        )
    )
    if with_undo:
        st.button(t("whatif_undo", lang), on_click=undo_choice, key="whatif-undo-top")
    return True


def show_decoding_steps(ctx: Context) -> None:
    tr, lang = ctx.tr, ctx.lang
    st.caption(t("caption_decoding_steps", lang))
    n = len(tr.target_pieces)
    if st.session_state.get("decode_step", 0) >= n:
        st.session_state.decode_step = 0
    step = st.slider(t("step", lang), 0, n - 1, key="decode_step") if n > 1 else 0
    chosen = layer_of_kind(tr, "cross", ctx.chosen, lang)  # decoder self- and cross-attention share the layers
    decoder_inputs = tr.decoder_input_pieces
    st.markdown(t("partial_output", lang, step=step))
    st.code(" ".join(decoder_inputs[: step + 1]), language=None, wrap_lines=True)
    labels = dict(
        self=t("step_self", lang),
        cross=t("step_cross", lang),
        next=t("step_next", lang),
        weight=t("weight", lang),
        probability=t("probability", lang),
    )
    fig = decoding_step_figure(
        step,
        selected_weights(tr.attention("decoder_self"), chosen)[step],
        decoder_inputs,
        selected_weights(tr.attention("cross"), chosen)[step],
        tr.source_pieces,
        tr.alternatives[step],
        tr.target_pieces[step],
        labels,
        chosen_probability=tr.token_probs[step],
    )
    chart(fig, key="decoding-step")
    st.caption(row_outcomes(tr, lang, sentence=True)[step])
    show_what_if(ctx, step)


def show_what_if(ctx: Context, step: int) -> None:
    """Pick another piece for this step (one of the model's top choices, or typed) and decode on from it."""
    lang, tr = ctx.lang, ctx.tr
    st.markdown(f"**{t('whatif_title', lang, step=step)}**")
    if tr.teacher_forced:
        st.caption(t("whatif_forcing", lang))
        return
    alternatives = tr.alternatives[step]
    # Not the piece written already (writing it again would change nothing). Options change with every step and
    # sentence: a plain selectbox keyed by the step starts on the model's best other choice that says something
    # (not a bare word-start "▁" or </s>).
    written = tr.target_pieces[step]
    options = [piece for piece, _ in alternatives if piece != written]
    probability = dict(alternatives)
    pick, typed = st.columns(2, vertical_alignment="bottom")
    worth = [i for i, p in enumerate(options) if p.strip("\u2581") and not p.startswith("<")]
    chosen = pick.selectbox(
        t("whatif_pick", lang),
        options,
        index=worth[0] if worth else 0,
        key=f"whatif_pick_{step}",
        format_func=lambda p: f"{p} ({probability_text(probability[p])})",
    )
    text = typed.text_input(t("whatif_type", lang), key="whatif_typed", help=t("whatif_type_help", lang))
    piece = text.strip() or chosen
    # a typed piece the step already writes would change nothing: said, and the button is off
    already = piece in (written, written.lstrip("\u2581"))
    st.button(
        t("whatif_go", lang, step=step, piece=piece),
        on_click=choose_piece,  # its own row: never cut
        args=(ctx.checkpoint, step, piece),
        key="whatif-go",
        disabled=already,
    )
    if already:
        st.caption(t("whatif_already_written", lang, step=step, piece=markdown_literal(piece)))
    error = st.session_state.pop("whatif_error", None)
    if error:
        st.warning(t("whatif_unwritable", lang, piece=markdown_literal(error)))
    if st.session_state.get("trail"):  # what the choices changed is said once, above the translation
        st.button(t("whatif_undo", lang), on_click=undo_choice, key="whatif-undo")


def parse_trail(text: str) -> tuple[tuple[tuple[int, int], ...] | None, list[tuple[str, str, str]]]:
    """force=2:1234,5:88: step 2 writes piece 1234, step 5 piece 88. A step given twice keeps its last piece, with
    a notice."""
    pairs = [item.split(":") for item in text.split(",")]
    if not pairs or not all(len(p) == 2 and all(NUMBER.fullmatch(x) for x in p) for p in pairs):
        return None, []
    trail = tuple(sorted({int(a): int(b) for a, b in pairs}.items()))
    notices = []
    for step in sorted({int(a) for a, _ in pairs if sum(int(x) == int(a) for x, _ in pairs) > 1}):
        given = ",".join(f"{a}:{b}" for a, b in pairs if int(a) == step)
        notices.append((given, "duplicate", f"{step}:{dict(trail)[step]}"))
    return trail, notices


# force=...: what-if decoding, the (step, piece id) pairs the decoder must write
TRAIL = LinkParam(
    "force",
    read=lambda session: tuple(tuple(step) for step in session.get("trail") or ()) or None,
    write=lambda trail: ",".join(f"{step}:{piece}" for step, piece in trail),
    parse=parse_trail,
    restore=lambda trail: dict(trail=[list(step) for step in trail], trail_for="from a link", trail_from_link=True),
)

register(View("tab_decoding", "group_generation", show_decoding_steps, ("decode_step",), link=(TRAIL,)))
