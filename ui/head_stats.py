"""Per-head statistics for the sentence, and the corpus statistics and ablation ranking shipped with a checkpoint."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from model import align, probe, roles
from model.transformer import ATTENTION_KINDS as KINDS
from ui import views as registry
from ui import widgets
from ui.common import Context, chart, kind_selector, open_head
from ui.models import get_alignment, get_model
from ui.views import View, register
from viz.escape import markdown_literal
from viz.heads import statistic_grid
from viz.labels import kind_in_sentence, kind_name
from viz.tables import GridColumn, grid_columns, localized_head_table
from words import apart, t


@st.cache_data(show_spinner=False, max_entries=16)
def section_heading(text: str) -> None:
    """A section of the view, headed below the page's own title (an h4): its subheaders (h3) were larger."""
    st.markdown(f"##### {markdown_literal(text)}")


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


def readable(frame: pd.DataFrame, lang: str) -> pd.DataFrame:
    """A probe table in the interface language, each attention kind by its short name (the view names took a
    table's last column off the main column at 1024 px)."""
    return localized_head_table(frame, t, lang, {kind: t(f"kind_short_{kind}", lang) for kind in KINDS})


# Headings short enough for a table of ten numbers to fit the main column at 1024 px with the sidebar open; each
# column's full name is its heading's tooltip.
ABBREVIATED = (
    "entropy distance same previous next boundary punctuation max_weight alignment_agreement source_order "
    "bleu bleu_drop log_prob_drop"
).split()


def number_format(column: str, values: pd.Series) -> str:
    """One format per column, so 39 and 38.99 do not stand one above the other: whole numbers none, the
    log-probability drops (hundredths of a nat) three decimals, the rest two."""
    if not pd.api.types.is_float_dtype(values):
        return "%d"
    return "%.3f" if column == "log_prob_drop" else "%.2f"


def head_table_columns(frame: pd.DataFrame, lang: str) -> tuple[pd.DataFrame, list[GridColumn]]:
    """A probe table localised, and how each column shows: a heading short enough, one number format per
    column, a width that holds the heading and every value."""
    shown = readable(frame, lang)
    localized = dict(zip(frame.columns, shown.columns))
    headings = {localized[c]: t(f"abbr_{c}", lang) for c in frame.columns if c in ABBREVIATED}
    formats = {
        localized[c]: number_format(c, frame[c]) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
    }
    return shown, grid_columns(shown, headings, formats)


def head_table(frame: pd.DataFrame, lang: str, key: str | None = None) -> None:
    """A probe table as a reader sees it: localised, each number column in one format, every heading and value
    whole, and the table inside the main column at 1024 px with the sidebar open."""
    shown, columns = head_table_columns(frame, lang)
    widgets.fitted_dataframe(st, shown, columns, key=key)


def statistic_label(name: str, lang: str) -> str:
    return t(f"stat_{name}", lang)


def show_head_statistics(ctx: Context) -> None:
    tr, checkpoint, lang = ctx.tr, ctx.checkpoint, ctx.lang
    stats = probe.translation_statistics(tr)
    kind = kind_selector(lang, "stats_kind")
    names = list(stats[kind])
    name = widgets.selectbox(
        st, t("statistic", lang), names, format_func=lambda n: statistic_label(n, lang), key="stats_name"
    )
    labels = dict(layer_label=t("layer", lang), head_label=t("head", lang))
    chart(
        statistic_grid(
            stats[kind][name],
            t("stats_grid_title", lang, kind=kind_name(kind, lang), statistic=t(f"short_{name}", lang)),
            **labels,
        ),
        key="stats-grid",
    )
    frame = probe.statistics_frame({kind: stats[kind]})
    st.caption(t("heads_table", lang))
    head_table(frame.drop(columns="kind"), lang, key="stats-table")

    st.markdown(f"**{t('inspect_head', lang)}**")
    cfg = get_model(checkpoint).model.cfg
    left, right, button = st.columns([1, 1, 2])
    layer = widgets.selectbox(left, t("layer", lang), list(range(1, cfg.n_layers(kind) + 1)), key="inspect_layer")
    head = widgets.selectbox(right, t("head", lang), list(range(1, cfg.n_heads + 1)), key="inspect_head")
    # opens the head in its kind's map (this view offers no layer and head of its own to change)
    button.button(
        t("inspect_button", lang, layer=layer, head=head),
        on_click=open_head,
        args=(layer, head, registry.map_view(kind)),
    )

    section_heading(t("corpus_title", lang))
    corpus = shipped_csv(checkpoint, "head_stats.csv", lang)
    if corpus is None:
        st.info(t("corpus_missing", lang, path=checkpoint))
    else:
        rows = corpus[corpus["kind"] == kind]
        if name in rows and rows[name].notna().any():
            values = rows.pivot(index="layer", columns="head", values=name).to_numpy()
            roles = rows.pivot(index="layer", columns="head", values="role").fillna("").to_numpy().tolist()
            chart(
                statistic_grid(
                    values,
                    t("corpus_grid_title", lang, kind=kind_name(kind, lang), statistic=statistic_label(name, lang)),
                    roles=roles,
                    **labels,
                ),
                key="corpus-grid",
            )
        named = corpus[corpus["role"] != ""][["kind", "layer", "head", "role"]] if "role" in corpus else corpus[:0]
        st.markdown(f"**{t('named_heads', lang)}**")
        if named.empty:
            st.caption(t("no_named_heads", lang))
        else:
            head_table(named, lang)
        st.markdown(f"**{t('strongest_heads', lang)}**")
        head_table(probe.strongest_heads(corpus), lang)
    show_measured_roles(checkpoint, kind, lang)
    show_alignment_grid(checkpoint, lang)
    ranking = shipped_csv(checkpoint, "head_ablation.csv", lang)
    if ranking is None:
        st.info(t("ablation_ranking_missing", lang, path=checkpoint))
    else:
        baseline = ranking["bleu"] + ranking["bleu_drop"]
        st.markdown(f"**{t('ablation_ranking', lang, bleu=round(float(baseline.iloc[0]), 2))}**")
        head_table(ranking.head(20), lang)


ALIGNERS = ("attention", "shifted", "norm", "norm-shifted", "value-zeroing")
AER_COLORSCALE = "Viridis_r"  # bright = low AER = a good aligner, in every view that shows it


def show_alignment_grid(checkpoint: str, lang: str) -> None:
    """Every cross-attention head's alignment error rate on the gold set, per method, and the best heads."""
    section_heading(t("aer_title", lang))
    table = get_alignment(checkpoint)
    if not table:
        st.info(t("aer_missing", lang, path=checkpoint))
        return
    cfg = get_model(checkpoint).model.cfg
    rows = table["results"]
    method = widgets.radio(
        st,
        t("aer_method", lang),
        [m for m in ALIGNERS if any(r["method"] == m for r in rows)],
        format_func=lambda m: t(f"aer_{m}", lang),
        horizontal=True,
        key="aer_method",
    )
    grid = align.aer_grid(rows, method, cfg.n_decoder_layers, cfg.n_heads)
    chart(
        statistic_grid(
            grid,
            t("aer_grid_title", lang, method=t(f"aer_{method}", lang), sentences=table["sentences"]),
            layer_label=t("layer", lang),
            head_label=t("head", lang),
            colorscale=AER_COLORSCALE,
            value_label=t("aer_bar", lang),
        ),
        key="aer-grid",
    )
    st.caption(t("aer_explain", lang))
    best = pd.DataFrame(
        [
            {
                t("aer_col_method", lang): t(f"aer_{r['method']}", lang)
                if r["method"] in ALIGNERS
                else t(f"attribution_{r['method']}", lang),
                t("col_layer", lang): "–" if r["head"] == "model" else str(r["layer"]),
                t("col_head", lang): t("attribution_whole_model", lang)
                if r["head"] == "model"
                else t("mean_heads", lang)
                if r["head"] == "mean"
                else str(r["head"]),
                "AER": f"{r['aer']:.2f}",
            }
            for r in align.best_rows(rows)
        ]
    )
    st.markdown(f"**{t('aer_best', lang)}**")
    st.dataframe(best, hide_index=True, width="stretch", key="aer-best")


def show_measured_roles(checkpoint: str, kind: str, lang: str) -> None:
    """Michel et al.'s importance of each head of the chosen kind, and the roles whose thresholds a head meets."""
    section_heading(t("roles_title", lang))
    path = Path(checkpoint) / "head_roles.csv"
    if not path.is_file():
        st.info(t("roles_missing", lang, path=checkpoint))
        return
    # role is text: read as such, a checkpoint where no head has a role would give an all-NaN float column
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"role": "string"})
    rows = frame[frame["kind"] == kind]
    values = rows.pivot(index="layer", columns="head", values="importance").to_numpy()
    chart(
        statistic_grid(
            values,
            t("roles_importance_title", lang, kind=kind_in_sentence(kind, lang)),
            layer_label=t("layer", lang),
            head_label=t("head", lang),
        ),
        key="importance-grid",
    )
    st.caption(t("roles_importance_explain", lang))
    named = frame[frame["role"].fillna("") != ""]
    labels = {kind_: t(f"kind_short_{kind_}", lang) for kind_ in KINDS}
    if named.empty:
        st.caption(t("roles_none", lang))
    else:
        # A static table: its evidence column wraps instead of running off the main column at 1024 px.
        st.table(
            pd.DataFrame(
                {
                    t("col_kind", lang): named["kind"].map(labels),
                    t("col_layer", lang): named["layer"],
                    t("col_head", lang): named["head"],
                    t("col_role", lang): named["role"].map(
                        lambda r: ("、" if lang == "zh" else ", ").join(
                            t(f"role_{x.strip()}", lang) for x in r.split(",")
                        )
                    ),
                    t("roles_evidence", lang): [evidence(r, lang) for r in named.itertuples()],
                }
            ),
            hide_index=True,
        )
    positional = frame.dropna(subset=["positional_share"]).sort_values("positional_share", ascending=False)
    rare = frame.dropna(subset=["rare_share"]).sort_values("rare_share", ascending=False)
    aligners = frame.dropna(subset=["aer"]).sort_values("aer")
    if len(positional) and len(rare):
        p, r = positional.iloc[0], rare.iloc[0]
        a = aligners.iloc[0] if len(aligners) else None
        # each best head's number beside its threshold, with as many decimals as it takes to tell them apart (an
        # AER of 0.5018 read "0.50" beside a limit of 0.5 that it fails)
        p_share, share = (f"{x}%" for x in apart(100 * p["positional_share"], 100 * roles.POSITIONAL_SHARE, 0))
        r_share, rare = (f"{x}%" for x in apart(100 * r["rare_share"], 100 * roles.RARE_SHARE, 0))
        a_aer, aer = apart(float(a["aer"]), roles.ALIGNMENT_AER) if a is not None else ("", f"{roles.ALIGNMENT_AER}")
        st.caption(
            t(
                "roles_thresholds",
                lang,
                share=share,
                rare=rare,
                aer=aer,
                n=roles.ALIGNMENT_HEADS,
                p_kind=labels[p["kind"]],
                p_layer=int(p["layer"]),
                p_head=int(p["head"]),
                p_offset=f"{int(p['positional_offset']):+d}",
                p_share=p_share,
                r_layer=int(r["layer"]),
                r_head=int(r["head"]),
                r_share=r_share,
                a_best=t("roles_best_aligner", lang, layer=int(a["layer"]), head=int(a["head"]), aer=a_aer)
                if a is not None
                else "",
            )
        )


def evidence(row, lang: str) -> str:
    """Why a head carries its roles, in the interface language, from the table's numbers."""
    parts = []
    roles_ = [x.strip() for x in str(row.role).split(",")]
    if "positional" in roles_:
        parts.append(
            t(
                "evidence_positional",
                lang,
                offset=f"{int(row.positional_offset):+d}",
                share=f"{row.positional_share:.0%}",
            )
        )
    if "rare-word" in roles_:
        parts.append(t("evidence_rare", lang, share=f"{row.rare_share:.0%}"))
    if "alignment" in roles_:
        parts.append(t("evidence_alignment", lang, aer=f"{row.aer:.2f}"))
    return t("clause_separator", lang).join(parts)


register(
    View(
        "tab_heads",
        "group_heads",
        show_head_statistics,
        ("stats_kind", "stats_name", "inspect_layer", "inspect_head"),
        reads=(),  # its own layer and head pickers; its button sets the page's
    )
)
