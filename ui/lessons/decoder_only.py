"""GPT keeps only the decoder: the project's own Transformer trained twice on the same toy task (model.toy), as
an encoder-decoder and as the decoder stack alone reading "source <sep> target"; the encoder-decoder's
cross-attention beside the block of the decoder-only model's masked self-attention where the rows that write the
target read the source, each scored against the generated alignment."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from model import toy
from ui import widgets
from ui.common import Context, chart
from ui.lessons.learned import expected_seconds, map_labels, train_together
from ui.views import Lesson, register
from viz.toy import sequence_map, snapshot_map
from words import t

WIDGETS = ("alone_task",)


def both_settings(task: str) -> tuple[toy.ToySettings, toy.ToySettings]:
    """The same task, seed and training, as an encoder-decoder and as the decoder alone."""
    together = toy.ToySettings(task=task)
    return together, replace(together, architecture="decoder-only")


def show_decoder_only(ctx: Context) -> None:
    lang = ctx.lang
    task = widgets.radio(
        st,
        t("toy_task", lang),
        list(toy.TASKS),
        key="alone_task",
        default="reorder",
        format_func=lambda k: t(f"toy_task_{k}", lang),
        horizontal=True,
    )
    settings = both_settings(task)
    names = [t(f"alone_{s.architecture}", lang) for s in settings]
    seconds = expected_seconds(list(settings))
    runs = train_together(list(settings), names, t("alone_train", lang, seconds=seconds), "alone_train", lang)
    if runs is not None:
        show_both(*runs, lang)


def show_both(together: toy.ToyRun, alone: toy.ToyRun, lang: str) -> None:
    last_together, last_alone = together.snapshots[-1], alone.snapshots[-1]
    rows = []
    for run, last, where in ((together, last_together, "alone_where_cross"), (alone, last_alone, "alone_where_self")):
        rows.append(
            {
                t("alone_col_model", lang): t(f"alone_{run.settings['architecture']}", lang),
                t("alone_col_parameters", lang): f"{run.parameters:,}",
                t("alone_col_steps", lang): last.step,
                t("alone_col_exact", lang): f"{last.exact_match:.0%}",
                t("alone_col_aer", lang): f"{last.aer:.3f}",
                t("alone_col_where", lang): t(where, lang, layer=last.layer + 1),
            }
        )
    st.table(pd.DataFrame(rows))
    st.caption(
        t(
            "alone_caption",
            lang,
            n=together.held_out,
            steps=last_together.step,
            exact_together=last_together.exact_match,
            aer_together=last_together.aer,
            exact_alone=last_alone.exact_match,
            aer_alone=last_alone.aer,
            parameters_together=together.parameters,
            parameters_alone=alone.parameters,
        )
    )
    heads = f"{together.settings['heads']}"
    chart(
        snapshot_map(
            np.asarray(last_together.cross),
            together.target,
            together.source,
            together.alignment,
            map_labels(lang),
            t("alone_cross_title", lang, layer=last_together.layer + 1, heads=heads, step=last_together.step),
            predicted=last_together.forced,
        ),
        key="alone-cross",
    )
    chart(
        sequence_map(
            np.asarray(last_alone.sequence),
            alone.sequence,
            alone.source_start,
            alone.target_start,
            alone.alignment,
            dict(
                query_axis=t("alone_rows", lang),
                key_axis=t("alone_columns", lang),
                weight=t("weight", lang),
                masked=t("masked_cell", lang),
                block=t("alone_block", lang),
                truth=t("toy_truth", lang),
            ),
            t("alone_self_title", lang, layer=last_alone.layer + 1, heads=heads, step=last_alone.step),
        ),
        key="alone-sequence",
    )
    st.caption(t("alone_map_caption", lang))


register(Lesson("lesson_decoder_only", None, own_view=show_decoder_only, widgets=WIDGETS))
