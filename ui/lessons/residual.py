"""Residual connections and LayerNorm, measured on the sentence: per sub-layer, the size of the residual stream
and of what the sub-layer adds; what LayerNorm does to one position's features; and which axis it normalises."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model import inside, toy
from ui import widgets
from ui.common import Context, chart
from ui.lessons.learned import LEARNT_EXACT, curve_labels, expected_seconds, train_together
from ui.lessons.learned import curves as toy_curves
from ui.models import get_inside
from ui.views import Lesson, register
from viz import inside as inside_viz
from viz.labels import query_labels
from viz.toy import layer_gradients, learning_curves
from words import t

STACKS = ("encoder", "decoder")
SHOWN_FEATURES = 24  # features drawn in the LayerNorm / BatchNorm picture (of d_model)


def stack_selector(lang: str, key: str) -> str:
    return widgets.radio(
        st, t("inside_stack", lang), STACKS, key=key, horizontal=True, format_func=lambda s: t(f"stack_{s}", lang)
    )


def position_selector(ctx: Context, stack: str, key: str) -> int:
    pieces = query_labels(ctx.tr, "encoder_self" if stack == "encoder" else "decoder_self")
    return widgets.selectbox(
        st,
        t("inside_position", lang=ctx.lang),
        list(range(len(pieces))),
        key=key,
        format_func=lambda i: f"{i}: {pieces[i]}",
    )


def sublayer_label(layer: int, name: str, lang: str) -> str:
    return f"L{layer} {t(f'sublayer_{name}', lang)}"


def show_residual(ctx: Context) -> None:
    lang = ctx.lang
    st.caption(t("residual_explain", lang))
    st.caption(t("residual_prenorm" if ctx.cfg.norm_first else "residual_postnorm", lang))
    left, right = st.columns(2)
    with left:
        stack = stack_selector(lang, "residual_stack")
    with right:
        position = position_selector(ctx, stack, "residual_position")
    result = get_inside(ctx.checkpoint, ctx.tr)
    records = result.stack(stack)
    rows = inside.residual_rows(records, position, result.layer_norm_eps)
    steps = [sublayer_label(r.layer, r.sublayer, lang) for r in rows]
    pieces = query_labels(ctx.tr, "encoder_self" if stack == "encoder" else "decoder_self")
    chart(
        inside_viz.residual_figure(
            steps,
            [r.stream_norm for r in rows],
            [r.update_norm for r in rows],
            [r.ratio for r in rows],
            dict(
                stream=t("residual_stream", lang),
                update=t("residual_update", lang),
                ratio=t("residual_ratio", lang),
                norm=t("residual_norm", lang),
                title=t("residual_title", lang, piece=pieces[position]),
            ),
        ),
        key="residual-norms",
    )
    first, last = rows[0], rows[-1]
    st.caption(
        t(
            "residual_measured",
            lang,
            first=first.stream_norm,
            last=last.stream_norm,
            smallest=min(r.ratio for r in rows),
            largest=max(r.ratio for r in rows),
        )
    )

    row, step = show_layer_norm(ctx, records, result.layer_norm_eps, rows, steps, pieces, position)
    show_norm_axes(ctx, records[row.layer - 1][row.sublayer], pieces, position, step)
    show_norm_placement(lang)


def show_layer_norm(ctx: Context, records, eps: float, rows, steps: list[str], pieces: list[str], position: int):
    """One sub-layer's LayerNorm at the chosen position: its input, standardized and output values, and every
    sub-layer's means and variances. -> (the chosen sub-layer's row, its label)."""
    lang = ctx.lang
    st.markdown(f"**{t('layernorm_heading', lang)}**")
    # Options name a layer and sub-layer ("6:feed_forward"), so the choice survives a switch of stack.
    names = [f"{r.layer}:{r.sublayer}" for r in rows]
    chosen = widgets.selectbox(
        st,
        t("layernorm_which", lang),
        names,
        key="layernorm_sublayer",
        format_func=lambda name: steps[names.index(name)],
    )
    choice = names.index(chosen)
    row = rows[choice]
    record = records[row.layer - 1][row.sublayer]
    values = record.norm_input[position]
    standardized = inside.standardize(values, eps)
    chart(
        inside_viz.layer_norm_figure(
            values,
            standardized,
            record.norm_output[position],
            dict(
                input=t("layernorm_input", lang),
                standardized=t("layernorm_standardized", lang),
                output=t("layernorm_output", lang),
                feature_value=t("layernorm_value", lang),
                count=t("layernorm_count", lang),
                stats=t("layernorm_stats", lang),
                title=t("layernorm_title", lang, step=steps[choice], piece=pieces[position]),
            ),
        ),
        key="layernorm-histograms",
    )
    table = pd.DataFrame(
        [
            {
                t("layernorm_col_sublayer", lang): steps[i],
                t("layernorm_col_in", lang): f"{r.input_mean:+.3f} / {r.input_var:.3f}",
                t("layernorm_col_standardized", lang): f"{r.standardized_mean:+.1e} / {r.standardized_var:.4f}",
                t("layernorm_col_out", lang): f"{r.output_mean:+.3f} / {r.output_var:.3f}",
            }
            for i, r in enumerate(rows)
        ]
    )
    # Four columns fit the main column at 1024 px with the sidebar open (seven ran off it); the norms and their
    # ratio are the residual chart's above.
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(t("layernorm_table_note", lang))

    return row, steps[choice]


def show_norm_axes(ctx: Context, record, pieces: list[str], position: int, step: str) -> None:
    """Which numbers LayerNorm averages (one piece's features) against BatchNorm (one feature over the batch)."""
    lang = ctx.lang
    st.markdown(f"**{t('norm_axes_heading', lang)}**")
    matrix = record.norm_input[:, :SHOWN_FEATURES]
    chart(
        inside_viz.norm_axes_figure(
            matrix,
            pieces,
            position,
            0,
            dict(
                layer_norm=t("norm_axes_layer", lang),
                batch_norm=t("norm_axes_batch", lang),
                token=t("position", lang),
                feature=t("dimension", lang),
                value=t("layernorm_value", lang),
                title=t("norm_axes_title", lang, n=SHOWN_FEATURES, d_model=ctx.cfg.d_model, step=step),
            ),
        ),
        key="norm-axes",
    )
    st.caption(t("norm_axes_explain", lang))


# Post-norm against pre-norm, trained live on lesson 11's task (model.toy): the setting the toy learns at either
# way, and one deep and fast enough, without warm-up, for the placement of LayerNorm to decide (measured here:
# post-norm 0 % exact at loss 2.6, pre-norm 100 %).
NORM_SETTINGS = {
    "norm_default": {},
    "norm_deep": {"layers": 6, "learning_rate": 1e-2, "warmup": 0},
}


def show_norm_placement(lang: str) -> None:
    """Both placements of LayerNorm trained on one setting the student picks: loss and exact match as they train,
    and each layer's gradient norm at the first step."""
    st.markdown(f"**{t('norm_heading', lang)}**")
    st.caption(t("norm_explain", lang))
    choice = widgets.radio(
        st, t("norm_setting", lang), list(NORM_SETTINGS), key="norm_setting", format_func=lambda k: t(k, lang)
    )
    settings = [toy.ToySettings(norm=norm, **NORM_SETTINGS[choice]) for norm in toy.NORMS]
    names = [t(f"norm_{s.norm}", lang) for s in settings]
    seconds = expected_seconds(settings)
    runs = train_together(settings, names, t("norm_train", lang, seconds=seconds), "norm_train", lang, primary=False)
    if runs is None:
        return
    post, pre = runs
    curves = [toy_curves(run, name) for run, name in zip(runs, names)]
    labels = curve_labels(lang, post.held_out)
    chart(learning_curves(curves, labels), key="norm-curves")
    first = {name: run.gradient_norms[0] for run, name in zip(runs, names)}
    # model.toy names the layers "encoder 1" … "decoder 6": in the interface's language
    layers = [f"{t(f'stack_{stack}', lang)} {n}" for stack, n in (name.split() for name in post.gradient_layers)]
    chart(
        layer_gradients(
            layers,
            first,
            dict(layer=t("layer", lang), norm=t("norm_gradient", lang), title=t("norm_gradient_title", lang)),
        ),
        key="norm-gradients",
    )
    last_post, last_pre = post.snapshots[-1], pre.snapshots[-1]
    learnt = [last.exact_match >= LEARNT_EXACT for last in (last_post, last_pre)]
    outcome = "same" if all(learnt) else "apart" if any(learnt) else "neither"
    st.caption(
        t(
            "norm_caption",
            lang,
            layers=post.settings["layers"],
            rate=post.settings["learning_rate"],
            warmup=post.settings["warmup"],
            steps=last_post.step,
            exact_post=last_post.exact_match,
            loss_post=last_post.loss,
            exact_pre=last_pre.exact_match,
            loss_pre=last_pre.loss,
            outcome=t(f"norm_outcome_{outcome}", lang),
        )
    )


register(
    Lesson(
        "lesson_residual",
        None,
        own_view=show_residual,
        widgets=("residual_stack", "residual_position", "layernorm_sublayer", "norm_setting"),
    )
)
