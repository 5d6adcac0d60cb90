"""The translation line and the three attention views: one head's heatmap, its downloads, every head as thumbnails."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pyarrow as pa
import streamlit as st

from model import align, attribute, decode, export
from model.confidence import TARGET_PRECISION, mean_log_prob
from model.progress import Cancelled
from ui import models, widgets
from ui import views as registry
from ui.cache import failed
from ui.common import (
    PLOTLY_CONFIG,
    Context,
    HeadChoice,
    attention_heatmap,
    chart,
    head_name,
    inspect_head,
    layer_of_kind,
)
from ui.decoding import show_trail
from ui.models import get_alignment, get_attribution, get_calibration, get_model
from ui.views import View, register
from viz import attention as attention_viz
from viz.escape import markdown_literal
from viz.handout import handout, handout_labels, kind_document, map_font_px, map_layout, switcher_html
from viz.labels import axis_names, kind_name
from viz.tables import MAIN_COLUMN_PX, attention_csv, grid_columns, probability_text, token_table
from words import apart, sentences, t


def show_translation(
    tr: decode.Translation, model_output: decode.Translation, lang: str, checkpoint: str | None = None
) -> None:
    """The translation in one line, so the attention map fits on the first screen of a projector; the pieces
    and the per-piece probabilities one click away. Selecting a row of the per-piece table offers that step's
    alternatives as what-if choices (the model writes the chosen piece there and decodes on)."""
    st.markdown(f"### {markdown_literal(tr.target_text)}")
    if tr.teacher_forced:
        st.caption(
            sentences(
                lang,
                t("teacher_forcing_note", lang),
                f"{t('model_output_was', lang)} {markdown_literal(model_output.target_text)}",
            )
        )
    # In presentation mode the details wait in the sidebar: the first screen is for the map.
    with (st.sidebar if st.session_state.get("present") else st).expander(t("details", lang)):
        left, right = st.columns(2)
        left.caption(t("source_pieces", lang))
        left.code(" ".join(tr.source_pieces), language=None, wrap_lines=True)  # no sideways scroll
        right.caption(t("target_pieces", lang))
        right.code(" ".join(tr.target_pieces), language=None, wrap_lines=True)
        labels = {k: t(f"col_{k}", lang) for k in ("position", "piece", "probability", "alternatives")}
        st.caption(t("token_table_help", lang))
        table, columns = models.shared_figure(tr, ("piece_table", lang), lambda: piece_table(tr, labels))
        event = st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            column_config=columns,
            key="piece_table",
            on_select="rerun" if checkpoint and not tr.teacher_forced else "ignore",
            selection_mode="single-row",
        )
        rows = event.selection.rows if checkpoint and not tr.teacher_forced and event else []
        if rows and rows[0] < len(tr.target_pieces):
            show_piece_alternatives(tr, rows[0], checkpoint, lang)


# The details expander's inner width at 1024 px with the sidebar open, less the grid's row-selection column.
PIECE_TABLE_PX = 460


def piece_table(tr: decode.Translation, labels: dict) -> tuple:
    """The per-piece table and its columns: step, piece and probability as wide as their values, the other likely
    pieces as many as fit the room left (five ran the table off a 1024 px screen; a row's selection lists all)."""
    fixed = grid_columns(token_table(tr.target_pieces, tr.token_probs, tr.alternatives, labels, 0))[:-1]
    room = PIECE_TABLE_PX - sum(c.width_px for c in fixed)
    table = token_table(tr.target_pieces, tr.token_probs, tr.alternatives, labels, room)
    config = widgets.grid_config(fixed)
    config[labels["alternatives"]] = st.column_config.Column(labels["alternatives"], width=room)
    # as Arrow, what st.dataframe sends: converted once for every session that shows it (ui.models.shared_figure)
    return pa.Table.from_pandas(table, preserve_index=False), config


def show_piece_alternatives(tr: decode.Translation, step: int, checkpoint: str, lang: str) -> None:
    """One button per alternative of this step: write it here instead and decode on (what-if decoding)."""
    from ui.decoding import choose_piece  # the what-if trail lives with the decoding view

    st.caption(t("whatif_from_table", lang, step=step, piece=markdown_literal(tr.target_pieces[step])))
    others = [(piece, p) for piece, p in tr.alternatives[step] if piece != tr.target_pieces[step]]
    for column, (i, (piece, p)) in zip(st.columns(max(len(others), 1)), enumerate(others)):
        column.button(
            f"{piece} ({probability_text(p)})",
            key=f"table-whatif-{i}",
            on_click=choose_piece,
            args=(checkpoint, step, piece),
            width="stretch",
        )


def browser_switching_default() -> bool:
    """The toggle's starting value: on, unless the server's operator set ATTENTION_EXPLORER_SWITCH_IN_BROWSER=0
    (the app's own tests of the server's maps do, as AppTest runs no page script)."""
    return os.environ.get("ATTENTION_EXPLORER_SWITCH_IN_BROWSER", "1") != "0"


def switches_in_browser(tab: str | None) -> bool:
    """Whether the open view's map is switched in the page (every layer and head sent once, a switch drawn there
    with no server run): on by default, for the three attention views wherever their map shows the raw weights
    of pieces (another method and word level need the server's map, with the sidebar's layer and head),
    presenting or not. The one rule the sidebar and the views read."""
    return bool(
        st.session_state.get("browser_switching", browser_switching_default())
        and tab in registry.map_views()
        and widgets.current("attribution") in (None, attribute.RAW)
        and not widgets.current("word_level")
    )


def open_clicked_head(kind: str) -> None:
    """A click on a thumbnail's title in the server's layers x heads grid opens that head (the see-through marker
    there carries its layer and head, from 1: viz.attention.attention_grid)."""
    points = st.session_state[f"grid-{kind}"].selection.points
    if points:
        layer, head = (int(v) for v in points[0]["customdata"][:2])
        st.session_state.update(layer=layer, head=str(head), view_chosen=True)


def cancel_attribution(key: tuple) -> None:
    models.slow_attributions().cancel(key)


@st.fragment(run_every=1.0)
def attribution_progress(key: tuple, name: str, lang: str) -> None:
    """How far a slow method's background computation is, read every second, with a button that cancels it; the
    whole page is drawn again when it has finished (or was cancelled)."""
    jobs = models.slow_attributions()
    job = jobs.peek(key)
    if job is None or job.done():
        st.rerun(scope="app")
    progress = jobs.progress(key)
    if progress is None:
        st.progress(0.0, text=t("attribution_waiting", lang, method=name))
    else:
        done, total = progress
        st.progress(
            min(done / max(total, 1), 1.0), text=t("attribution_progress", lang, method=name, done=done, total=total)
        )
    st.button(
        t("attribution_cancel", lang), key=f"attribution-cancel-{key[-1]}", on_click=cancel_attribution, args=(key,)
    )


def attribution_map(tr: decode.Translation, kind: str, chosen: HeadChoice, method: str, checkpoint: str, lang: str):
    """-> (the view's map under the method, its title, its colour-bar label, signed?, the method's whole result)
    or None for raw weights (also while a slow method waits to be asked for on this sentence, or computes)."""
    account = attribute.METHODS[method]
    if account.recorded or checkpoint is None:
        return None
    name = t(f"attribution_{method}", lang)
    if kind not in account.kinds:
        st.info(t("attribution_no_encoder", lang, method=name))
        return None
    if models.is_slow(method):
        # Chosen once, a slow method must not make every later sentence, checkpoint or link wait: it is computed
        # when asked for, on this sentence, in the background (models.start_attribution), the page usable meanwhile.
        key = models.attribution_key(checkpoint, tr, method)
        job = models.slow_attributions().peek(key)
        if job is None or failed(job):
            st.info(t("attribution_on_demand", lang, method=name[:1].upper() + name[1:], seconds=account.seconds))
            if job is not None:
                error = None if job.cancelled() else job.exception()
                cancelled = error is None or isinstance(error, Cancelled)
                st.caption(
                    t("attribution_cancelled", lang, method=name)
                    if cancelled
                    else t("attribution_failed", lang, method=name, error=markdown_literal(str(error)))
                )
            # the button's value, not an on_click with tr as argument: a session keeps a callback's arguments
            if st.button(t("attribution_compute", lang, method=name), key=f"attribution-ask-{kind}"):
                models.start_attribution(checkpoint, tr, method)
                st.rerun()
            return None
        if not job.done():
            attribution_progress(key, name[:1].upper() + name[1:], lang)
            return None
        record, computed = job.result()
    else:
        with st.spinner(t("attribution_computing", lang, method=name), show_time=True):
            record, computed = get_attribution(checkpoint, tr, method)
    model = get_model(checkpoint).model
    values = account.view(model, record, kind, chosen.layer, chosen.head, computed)
    layer, head = chosen.shown_layer, head_name(chosen.shown_head, lang)
    where = {
        "model": lambda: t("attribution_whole_model", lang),
        "layer": lambda: t("attribution_up_to_layer", lang, layer=layer),
        "head": lambda: t("attribution_layer_head", lang, layer=layer, head=head),
    }[account.granularity]()
    title = t("attribution_title", lang, kind=kind_name(kind, lang), method=name, where=where)
    return values, title, t(f"attribution_unit_{method}", lang), account.signed, computed


def show_alignment_score(checkpoint: str | None, chosen: HeadChoice, lang: str) -> None:
    """This head's (or layer's) alignment error on the checkpoint's gold set, and the best head's."""
    table = get_alignment(checkpoint) if checkpoint else None
    if not table:
        return
    layer, head = chosen.shown_layer, chosen.shown_head  # as the table names them
    rows = table["results"]
    mine = align.aer_of(rows, "attention", layer, head)
    best = align.best_row(rows, attribute.RAW)
    if mine is None or best is None:
        return
    opened_here = (layer, head) == (best["layer"], str(best["head"]))
    if opened_here and st.session_state.get("opened_on_aligner") and not st.session_state.get("view_chosen"):
        st.caption(t("opened_on_aligner", lang, layer=layer, head=head_name(head, lang), aer=f"{best['aer']:.2f}"))
    st.caption(
        t(
            "aer_caption",
            lang,
            aer=f"{mine:.2f}",
            sentences=table["sentences"],
            best_layer=best["layer"],
            best_head=head_name(str(best["head"]), lang),
            best=f"{best['aer']:.2f}",
        )
    )
    if (layer, head) != (best["layer"], str(best["head"])):  # the map where a class sees an alignment, one click on
        st.button(
            t("aer_show_best", lang, layer=best["layer"], head=head_name(str(best["head"]), lang)),
            on_click=inspect_head,
            args=(best["layer"], best["head"]),
            key="aer-show-best",
        )


# Where the app serves static/ (server.enableStaticServing): Plotly's bundle and the Chinese font for the maps
# switched in the browser.
STATIC_URL = "/app/static"


def show_attention(ctx: Context, kind: str) -> None:
    """One kind's map for the chosen layer and head, its explanation, downloads and the layers x heads grid."""
    tr, lang, checkpoint = ctx.tr, ctx.lang, ctx.checkpoint
    chosen = layer_of_kind(tr, kind, ctx.chosen, lang)
    method = st.session_state.get("attribution", attribute.RAW) if checkpoint else attribute.RAW
    attribution = attribution_map(tr, kind, chosen, method, checkpoint, lang)
    # Switched in the browser: the raw weights of every layer and head of this kind go to the page once, and a
    # switch draws there, without a server run (the layer and head reach the server through the link). The
    # server's own map is then not built at all.
    in_browser = attribution is None and switches_in_browser(registry.map_view(kind))
    if attribution is None:
        method = attribute.RAW
    if in_browser:
        show_in_browser(tr, kind, chosen, lang, ctx.language_pair)
        shown = None
    else:
        shown = server_map(ctx, kind, chosen, attribution)
    if checkpoint and any(kind in attribute.METHODS[m].kinds for m in models.PREFETCHED_ATTRIBUTIONS):
        st.session_state.prefetch_attributions = True  # app.main starts it once the page is drawn
    raw = attribute.METHODS[method].recorded
    map_captions(tr, kind, chosen, method, attribution, in_browser, checkpoint, lang)
    downloads(ctx, kind, chosen, method, shown)
    st.toggle(
        t("browser_switching", lang),
        key="browser_switching",
        # a value only where it is first drawn: passed beside a value in session state, Streamlit warned
        **widgets.first_value("browser_switching", browser_switching_default()),
        help=t("browser_switching_help", lang),
    )
    if not in_browser:  # else the grid is in the page's own drawing
        head_grid(tr, kind, chosen, method, raw, lang)


def server_map(ctx: Context, kind: str, chosen: HeadChoice, attribution) -> tuple:
    """The map drawn by the server (raw weights, or another account's): -> (weights, queries, keys) it shows."""
    tr, lang, word_level, languages = ctx.tr, ctx.lang, ctx.word_level, ctx.language_pair
    if attribution is None:
        fig, weights, queries, keys = attention_heatmap(tr, kind, chosen, lang, word_level, languages)
    else:
        values, title, unit, signed, _ = attribution
        fig, weights, queries, keys = attention_heatmap(
            tr,
            kind,
            chosen,
            lang,
            word_level,
            languages,
            title=title,
            values=values,
            signed=signed,
            value_label=unit,
        )
    chart(fig, key=f"heatmap-{kind}")  # first, so the map is on the first screen; its explanation below
    return weights, queries, keys


def map_captions(tr, kind: str, chosen: HeadChoice, method: str, attribution, in_browser: bool, checkpoint, lang):
    """What the map shows: another account's explanation (and integrated gradients' completeness), or the
    weights' own caption and the alignment score; the note on the mean over heads."""
    raw = attribute.METHODS[method].recorded
    if attribution is not None:
        computed = attribution[-1]
        st.caption(t(f"attribution_explain_{method}", lang))
        if getattr(computed, "completeness_error", None) is not None:  # integrated gradients' sums, checked
            st.caption(
                t(
                    "attribution_completeness",
                    lang,
                    error=f"{100 * float(computed.completeness_error.max()):.2f}",
                    steps=computed.steps_used,
                )
            )
    if kind == "cross" and raw and not in_browser:  # about the server's map; the page's own may show another
        show_alignment_score(checkpoint, chosen, lang)
    if raw:  # what the weights of this kind are; another account has its own caption above
        st.caption(
            t(
                {"encoder_self": "caption_encoder", "decoder_self": "caption_decoder", "cross": "caption_cross"}[kind],
                lang,
            )
        )
    if chosen.head is None or in_browser:  # the page's lists offer the mean too
        st.caption(t("mean_note", lang, heads=tr.attention(kind).shape[1]))


def downloads(ctx: Context, kind: str, chosen: HeadChoice, method: str, shown: tuple | None) -> None:
    """The map as CSV (the server's map only: the page switching heads itself holds them all), the translation as
    .npz, the handout. Files are made only when a button is clicked (a callable), not on every run. The buttons
    keep ctx.fetch (the translation again from the shared cache, or computed anew), not the translation:
    Streamlit keeps a session's download callables as long as the session, even disconnected, and a beam-8
    translation of a long sentence holds tens of MiB. Two a row: three cut their labels at 1024 px."""
    lang, fetch, languages, word_level = ctx.lang, ctx.fetch, ctx.language_pair, ctx.word_level
    raw = attribute.METHODS[method].recorded
    csv_button, npz_button = st.columns(2)
    html_button = st if shown is not None else csv_button
    if shown is not None:
        weights, queries, keys = shown
        one_map = weights.copy()  # one map; a view would keep its whole layers x heads array alive
        csv_button.download_button(
            t("download_csv" if raw else "download_csv_method", lang),
            lambda: attention_csv(one_map, queries, keys, axis_names(kind, lang)[0]),
            file_name=f"{kind}-layer{chosen.shown_layer}-head{chosen.shown_head}"
            f"{'' if raw else '-' + method}{'-words' * word_level}.csv",
            mime="text/csv",
            key=f"csv-{kind}",
            on_click="ignore",
        )
    model_name = Path(ctx.checkpoint).name
    stem = download_stem(model_name, ctx.tr.source_text)
    npz_button.download_button(
        t("download_npz", lang),
        lambda: export.to_bytes(fetch(), ".npz"),
        file_name=f"{stem}.npz",
        mime="application/octet-stream",
        key=f"npz-{kind}",
        on_click="ignore",
        help=t("download_npz_help", lang),
    )
    html_button.download_button(
        t("download_html", lang),
        lambda: handout(fetch(), lang, model_name, languages, kind, chosen.shown_layer, chosen.shown_head),
        file_name=f"{stem}.html",
        mime="text/html",
        key=f"html-{kind}",
        on_click="ignore",
        help=t("download_html_help", lang),
    )


def download_stem(model_name: str, sentence: str, words: int = 6) -> str:
    """A download's file name without its extension: the checkpoint and the sentence's first words
    ("en-zh-the-cat-chases-the-dog", "zh-en-猫追狗"), so a teacher's handouts of a lesson do not all come out as
    attention.html, attention (1).html, ..."""
    kept = re.findall(r"\w+", sentence.lower())[:words]
    return "-".join([model_name, *kept])[:80] or "translation"


def head_grid(tr: decode.Translation, kind: str, chosen: HeadChoice, method: str, raw: bool, lang: str) -> None:
    """Every layer and head of this kind as thumbnails, the chosen head outlined where the map shows one head; a
    thumbnail's click opens its head (the page's own grid does the same when the maps switch in the browser)."""
    attention = tr.attention(kind)
    one_head = chosen.head is not None and attribute.METHODS[method].granularity == "head"
    highlight = (chosen.layer, chosen.head) if one_head else None
    grid = models.shared_figure(
        tr,
        ("grid", kind, highlight, raw, lang),
        lambda: attention_viz.attention_grid(
            attention,
            title=t(
                "grid_title" if raw else "grid_title_raw", lang, layers=attention.shape[0], heads=attention.shape[1]
            ),
            masked=attention_viz.causal_mask(attention.shape[-1]) if kind == "decoder_self" else None,
            layer_label=t("layer", lang),
            head_label=t("head", lang),
            highlight=highlight,
            query_label=t("query", lang),
            key_label=t("key", lang),
        ),
    )
    st.plotly_chart(
        grid,
        key=f"grid-{kind}",
        config=PLOTLY_CONFIG,
        width="stretch",
        on_select=functools.partial(open_clicked_head, kind),
        selection_mode="points",
    )
    st.caption(t("grid_help_mean" if chosen.head is None else "grid_help", lang))


def show_in_browser(tr: decode.Translation, kind: str, chosen: HeadChoice, lang: str, languages) -> None:
    """This kind's maps switched in the page (viz.handout.switcher_html): one iframe with every layer and head."""
    st.session_state.link_in_browser = True  # app.main: the page writes the link from now on (ui.session)
    document = dict(
        kinds={kind: kind_document(tr, kind, lang, languages)}, link=st.session_state.get("link_params", {})
    )
    queries, keys = document["kinds"][kind]["queries"], document["kinds"][kind]["keys"]
    present = bool(st.session_state.get("present"))
    page = switcher_html(
        document,
        handout_labels(lang),
        lang,
        chosen.layer,
        "mean" if chosen.head is None else chosen.head,  # the page's own name for the layer's heads together
        STATIC_URL,
        present=present,
    )
    map_height = map_layout(queries, keys, map_font_px(present))["height"]
    layers, heads = tr.attention(kind).shape[:2]
    thumb = max(24, min(56, (MAIN_COLUMN_PX - 64) // (heads + 1) - 8)) + 8
    # Our own page (every piece of the sentence escaped in it), same-origin: it writes the app's link.
    st.iframe(page, height=50 + map_height + 30 + thumb * layers)


def draw_encoder(ctx: Context) -> None:
    show_attention(ctx, "encoder_self")
    st.caption(t("caption_multihead", ctx.lang))


NAMED_CHARACTERS = 20  # an unknown-character notice names this many, then counts the rest


# One character of an unknown piece: an invisible one is written "<U+XXXX>" (model.tokenizer.visible), and is one
# character, not nine.
CHARACTER = re.compile(r"<U\+[0-9A-F]{4,6}>|\S")


def named_characters(pieces: list[str], lang: str) -> str:
    """The distinct characters of these unknown pieces (one piece can hold a run of them), the first
    NAMED_CHARACTERS by name and the rest counted (5,000 emoji typed must not make a 5,000-character notice), as
    Markdown-literal text."""
    distinct = list(dict.fromkeys(c for piece in pieces for c in CHARACTER.findall(piece)))
    named = markdown_literal(" ".join(distinct[:NAMED_CHARACTERS]))
    rest = len(distinct) - NAMED_CHARACTERS
    return named + (t("more_characters", lang, n=rest) if rest > 0 else "")


def translation_notes(
    tr: decode.Translation,
    model_output: decode.Translation,
    original: decode.Translation,
    cfg,
    what_if: bool,
    checkpoint: str,
    lang: str,
) -> None:
    """The translation shown, with what was cut or unknown in its input and whether the model is unsure of it.
    In presentation mode each note is one short line, and the map below gets shorter by each note's height
    (notes_above), so it still ends on the first screen."""
    present = bool(st.session_state.get("present"))
    notes = []
    if tr.truncated:
        notes.append(("warning", t("truncated", lang, limit=cfg.max_len, kept=len(tr.source_pieces) - 1)))
    if tr.unknown_source_pieces:
        notes.append(("warning", t("unknown", lang, chars=named_characters(tr.unknown_source_pieces, lang))))
    if tr.reference_truncated:
        notes.append(("warning", t("reference_truncated", lang, limit=cfg.max_len, kept=len(tr.target_pieces))))
    if tr.unknown_reference:
        notes.append(("warning", t("reference_unknown", lang, chars=named_characters(tr.unknown_reference, lang))))
    if not tr.finished:
        notes.append(("info", t("unfinished", lang)))
    for kind, text in notes:
        getattr(st, kind)(text)
    drawn = len(notes)
    show_translation(tr, model_output, lang, checkpoint)
    drawn += show_trail(tr, original, lang)
    calibration = get_calibration(checkpoint)
    if calibration and not tr.teacher_forced and calibration.unsure(tr.token_probs):
        # the threshold was set on the model's own translations: a forced path is said to be unlikely, not wrong
        mean = mean_log_prob(tr.token_probs)
        score, threshold = apart(mean, calibration.threshold)
        if what_if:
            st.warning(t("unsure_forced_short" if present else "unsure_forced", lang, score=score, threshold=threshold))
        else:
            # how sure the note is: of the judged translations that scored as low (or, below every one of them,
            # of those under the threshold), how many were wrong
            wrong, judged, lowest = calibration.evidence(mean)
            verdict = t("unsure_probably" if judged and wrong / judged >= TARGET_PRECISION else "unsure_possibly", lang)
            key = "unsure_lowest" if lowest else "unsure"
            st.warning(
                t(
                    f"{key}_short" if present else key,
                    lang,
                    verdict=verdict,
                    score=score,
                    threshold=threshold,
                    wrong=wrong,
                    n=judged,
                )
            )
        drawn += 1
    st.session_state.notes_above = drawn if present else 0


MAP_READS = ("layer", "head", "attribution", "word_level")
MAP_WIDGETS = ("browser_switching",)
register(View("tab_encoder", "group_maps", draw_encoder, MAP_WIDGETS, MAP_READS, kind="encoder_self"))
register(
    View(
        "tab_decoder",
        "group_maps",
        lambda ctx: show_attention(ctx, "decoder_self"),
        MAP_WIDGETS,
        MAP_READS,
        kind="decoder_self",
    )
)
register(
    View("tab_cross", "group_maps", lambda ctx: show_attention(ctx, "cross"), MAP_WIDGETS, MAP_READS, kind="cross")
)
