"""Head ablation: switch heads off (an argument of the forward pass) and translate again."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.transformer import ATTENTION_KINDS as KINDS
from ui.common import (
    Context,
    attention_heatmap,
    chart,
    kind_selector,
    layer_of_kind,
)
from ui.models import get_forced, get_hypotheses, get_model
from ui.views import View, register
from viz.escape import markdown_literal
from viz.labels import kind_name
from words import t

ALL = "*"  # the whole-layer column of a kind's grid
STATE = "ablated_heads"  # session state: the heads switched off, as "kind:layer:head" (1-based)


def grid_frame(kind: str, n_layers: int, n_heads: int, chosen: set[str]) -> pd.DataFrame:
    """One row per layer, a checkbox per head and one for the whole layer, ticked where chosen."""
    rows = {}
    for layer in range(1, n_layers + 1):
        heads = [f"{kind}:{layer}:{h}" in chosen for h in range(1, n_heads + 1)]
        rows[f"L{layer}"] = [all(heads), *heads]
    return pd.DataFrame.from_dict(rows, orient="index", columns=[ALL, *[f"H{h}" for h in range(1, n_heads + 1)]])


def apply_edits(kind: str, chosen: set[str], edited_rows: dict, n_heads: int) -> set[str]:
    """The chosen heads after a grid's edits ({row index: {column: ticked}}): a head's box toggles that head,
    the whole-layer box every head of its layer."""
    chosen = set(chosen)
    for row, changes in edited_rows.items():
        layer = int(row) + 1
        for column, ticked in changes.items():
            heads = range(1, n_heads + 1) if column == ALL else [int(column[1:])]
            for head in heads:
                (chosen.add if ticked else chosen.discard)(f"{kind}:{layer}:{head}")
    return chosen


def _edited(kind: str, key: str, n_heads: int) -> None:
    edits = st.session_state[key].get("edited_rows", {})
    st.session_state[STATE] = sorted(apply_edits(kind, set(st.session_state.get(STATE, [])), edits, n_heads))
    st.session_state.ablation_version = st.session_state.get("ablation_version", 0) + 1  # redraw from the state
    st.session_state.ablation_kind = kind  # the ablated run's map opens on the kind just changed


def _set_kind(kind: str, n_layers: int, n_heads: int, on: bool) -> None:
    others = [h for h in st.session_state.get(STATE, []) if not h.startswith(f"{kind}:")]
    whole = [f"{kind}:{layer}:{head}" for layer in range(1, n_layers + 1) for head in range(1, n_heads + 1)]
    st.session_state[STATE] = sorted(others + (whole if on else []))
    st.session_state.ablation_version = st.session_state.get("ablation_version", 0) + 1
    st.session_state.ablation_kind = kind


def head_grids(cfg, lang: str) -> list[str]:
    """A layers x heads grid of checkboxes per attention kind (a box toggles a head, the first column a whole
    layer), with buttons for a whole kind. The choice lives in session state, so it outlives a closed tab."""
    chosen = set(st.session_state.get(STATE, []))
    version = st.session_state.get("ablation_version", 0)
    for kind in KINDS:  # one grid per row: side by side, three grids of nine columns were cut at 1024 px
        n_layers, n_heads = cfg.n_layers(kind), cfg.n_heads
        with st.container():
            # the kind, then its two buttons in a row of their own, then the grid at the page's whole width: beside
            # the grid the buttons were cut ("No…", in Chinese both "全…") and the grid scrolled past head 4
            title, on, off = st.columns([2, 1, 1], vertical_alignment="center")
            title.markdown(f"**{kind_name(kind, lang)}**")
            key = f"ablation_grid_{kind}_{version}"
            # narrow columns in pixels: a layer label, the whole layer ("all") and eight heads fit 1024 px with the
            # sidebar open and the main area's scroll bar shown (554 px: "whole layer" at 112 cut head 8 off); a
            # head's column holds its edit mark and "H8" at 50
            config = {ALL: st.column_config.CheckboxColumn(t("ablate_layer", lang), width=64)}
            config.update({f"H{h}": st.column_config.CheckboxColumn(f"H{h}", width=50) for h in range(1, n_heads + 1)})
            st.data_editor(
                grid_frame(kind, n_layers, n_heads, chosen),
                key=key,
                column_config=config,
                on_change=_edited,
                args=(kind, key, n_heads),
                width="content",
            )
            on.button(
                t("ablate_all", lang),
                key=f"ablate-all-{kind}",
                on_click=_set_kind,
                args=(kind, n_layers, n_heads, True),
            )
            off.button(
                t("ablate_none", lang),
                key=f"ablate-none-{kind}",
                on_click=_set_kind,
                args=(kind, n_layers, n_heads, False),
            )
    return sorted(chosen)


def switched_off(chosen: list[str], layers: dict[str, int], n_heads: int, lang: str) -> str:
    """The heads switched off ("kind:layer:head", from 1), said as briefly as they are: a whole kind as "all 48
    heads", a whole layer as "L2 (all 8 heads)", the rest one by one (all 48 cross-attention heads were listed
    one by one), with the language's own separator (a Chinese list read "已关闭：编码器自注意力: 全部 48 个头")."""
    parts = []
    for kind in KINDS:
        mine = {tuple(int(n) for n in h.split(":")[1:]) for h in chosen if h.split(":")[0] == kind}
        if not mine:
            continue
        name = kind_name(kind, lang)
        if len(mine) == layers[kind] * n_heads:
            parts.append(f"{name} · {t('all_heads', lang, n=len(mine))}")  # as a layer's, in either language
            continue
        for layer in sorted({layer for layer, _ in mine}):
            heads = sorted(head for at, head in mine if at == layer)
            if len(heads) == n_heads:
                parts.append(f"{name} · L{layer} ({t('all_heads', lang, n=n_heads)})")
            else:
                parts += [f"{name} · L{layer} H{head}" for head in heads]
    return t("list_separator", lang).join(parts)


def show_ablation(ctx: Context) -> None:
    tr, checkpoint, beam, lang = ctx.model_output, ctx.checkpoint, ctx.beam, ctx.lang
    word_level, languages = ctx.word_level, ctx.language_pair
    st.caption(t("ablation_hint", lang))
    cfg = get_model(checkpoint).model.cfg
    switched = head_grids(cfg, lang)
    if not switched:
        return
    layers = {kind: cfg.n_layers(kind) for kind in KINDS}
    st.caption(t("ablated_list", lang, heads=switched_off(switched, layers, cfg.n_heads, lang)))
    ablated_key = tuple(sorted(switched))
    ablated = get_hypotheses(checkpoint, tr.source_text, beam, ablated_key)[0]
    left, right = st.columns(2)
    left.caption(t("original", lang))
    left.markdown(f"#### {markdown_literal(tr.target_text)}")
    right.caption(t("ablated", lang))
    right.markdown(f"#### {markdown_literal(ablated.target_text)}")
    # How much less likely the original translation became: teacher-force it through the ablated model.
    forced = get_forced(checkpoint, tr.source_text, reference_ids=tuple(tr.target_ids), ablated=ablated_key)
    st.markdown(
        t("logprob_change", lang, before=tr.log_prob, after=forced.log_prob, delta=forced.log_prob - tr.log_prob)
    )
    st.markdown(f"**{t('ablated_map', lang)}**")
    kind = kind_selector(lang, "ablation_kind")
    chosen = layer_of_kind(ablated, kind, ctx.chosen, lang)
    fig, *_ = attention_heatmap(ablated, kind, chosen, lang, word_level, languages)
    chart(fig, key="ablation-heatmap")


register(View("tab_ablation", "group_heads", show_ablation, ("ablation_kind",), reads=("layer", "head", "word_level")))
