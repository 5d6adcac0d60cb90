"""Lesson 10, "Is attention an explanation?": the chosen output piece under every method beside occlusion (what
removing each source word does), how far they agree on this sentence, and the shipped corpus table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from model import attribute, faithfulness
from ui import widgets
from ui.common import Context, chart
from ui.models import get_comparison
from ui.views import Lesson, register
from viz.explanation import faithfulness_bars, method_comparison
from viz.labels import query_labels
from viz.tables import GridColumn, grid_columns
from words import t

# read at the chosen layer, all heads together (the others: the whole model)
LAYER_METHODS = tuple(name for name, m in attribute.METHODS.items() if m.granularity == "head")


def method_label(method: str, layer: int, lang: str) -> str:
    name = t(f"attribution_{method}", lang)
    return t("explain_at_layer", lang, method=name, layer=layer) if layer else name


def corpus_table(
    table: pd.DataFrame, bars: list[str], intervals: list[tuple[float, float]] | None, lang: str
) -> tuple[pd.DataFrame, list[GridColumn]]:
    """The held-out faithfulness table as the reader sees it (method, ρ, its interval, AER, sentences) and its
    columns sized to fit the main column: the ρ heading is short, its full name on hover."""
    rho = t("explain_rho", lang)
    shown = pd.DataFrame(
        {
            t("aer_col_method", lang): bars,
            rho: [f"{x:.2f}" for x in table["spearman"]],
            **(
                {t("explain_interval", lang): [f"{a:.2f} – {b:.2f}" for a, b in intervals]}
                if intervals is not None
                else {}
            ),
            "AER": ["–" if pd.isna(x) else f"{x:.2f}" for x in table["aer"]],
            t("explain_sentences", lang): table["sentences"],
        }
    )
    return shown, grid_columns(shown, {rho: t("abbr_explain_rho", lang)}, {t("explain_sentences", lang): "%d"})


def show_explanation(ctx: Context) -> None:
    tr, lang = ctx.tr, ctx.lang
    layer = min(ctx.chosen.shown_layer, ctx.cfg.n_decoder_layers)  # 1-based: faithfulness tables name layers so
    labels = query_labels(tr, "cross")
    step = widgets.selectbox(
        st,
        t("explain_step", lang),
        list(range(len(tr.target_pieces))),
        key="explain_step",
        format_func=lambda i: f"{i}: {labels[i]}",
    )
    with_ig = st.checkbox(t("explain_with_ig", lang), key="explain_ig")
    with st.spinner(t("attribution_computing", lang, method=t("explain_all_methods", lang))):
        comparison = get_comparison(ctx.checkpoint, tr, layer, step if with_ig else None)
    methods = [m for m in attribute.METHODS if m in comparison.scores]
    rows = [comparison.drops[step]] + [comparison.scores[m][step] for m in methods]
    names = [t("explain_occlusion", lang)] + [
        method_label(m, layer if m in LAYER_METHODS else 0, lang) for m in methods
    ]
    # each row is scaled to its own largest |value|, which its label gives
    names = [
        t("explain_row_max", lang, name=name, value=f"{np.nanmax(np.abs(row)):.3g}") for name, row in zip(names, rows)
    ]
    chart(
        method_comparison(
            np.array(rows),
            names,
            comparison.words,
            t("explain_title", lang, piece=labels[step]),
            t("explain_scaled", lang),
            t("explain_raw", lang),
        ),
        key="explain-methods",
    )
    st.caption(t("explain_how_to_read", lang))
    st.caption(t("explain_gradient_note", lang))
    agreement = comparison.correlations(step)
    frame = pd.DataFrame(
        {
            t("aer_col_method", lang): [method_label(m, layer if m in LAYER_METHODS else 0, lang) for m in methods],
            t("explain_rho", lang): [f"{agreement.get(m, np.nan):.2f}" for m in methods],
        }
    )
    st.dataframe(frame, hide_index=True, width="stretch", key="explain-agreement")
    n_words = len(comparison.words)
    if n_words < faithfulness.MIN_WORDS:
        st.caption(t("explain_few_words", lang, n=faithfulness.MIN_WORDS))
    else:  # how little a correlation over this piece's few words says
        chance, perfect = faithfulness.chance_correlation(n_words)
        if chance is None:
            st.caption(t("explain_rho_words_perfect", lang, n=n_words, p=perfect))
        else:
            st.caption(t("explain_rho_words", lang, n=n_words, chance=chance))

    st.markdown(f"**{t('explain_corpus', lang)}**")
    path = Path(ctx.checkpoint) / "faithfulness.csv"
    if not path.is_file():
        st.info(t("explain_corpus_missing", lang, path=ctx.checkpoint))
        return
    table = faithfulness.read_faithfulness(path)
    most = int(table["sentences"].max())
    bars = [method_label(r.method, int(r.layer), lang) for r in table.itertuples()]
    bars = [b if n == most else t("explain_ig_n", lang, label=b, n=int(n)) for b, n in zip(bars, table["sentences"])]
    # Each method's 95 % interval over sentences, where the table was written with its per-sentence correlations.
    has_intervals = {"ci_low", "ci_high"} <= set(table.columns) and table["ci_low"].notna().all()
    intervals = list(zip(table["ci_low"], table["ci_high"])) if has_intervals else None
    chart(
        faithfulness_bars(
            bars,
            table["spearman"].tolist(),
            t("explain_corpus_title", lang, n=int(table["sentences"].max())),
            t("explain_rho", lang),
            intervals,
        ),
        key="explain-corpus",
    )
    shown, columns = corpus_table(table, bars, intervals, lang)
    widgets.fitted_dataframe(st, shown, columns, key="explain-table")
    st.caption(t("explain_corpus_note", lang))
    st.caption(
        t("explain_interval_note", lang, n=most)
        if intervals is not None
        else t("explain_no_interval", lang, path=ctx.checkpoint)
    )


register(
    Lesson(
        "lesson_explanation",
        "tab_cross",
        own_view=show_explanation,
        widgets=("explain_step", "explain_ig"),
        reads=("layer",),
    )
)
