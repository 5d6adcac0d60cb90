"""Attention is learned: the student trains a tiny Transformer (model.toy) on a made-up language whose alignment
is known, and watches its loss, its accuracy and one sentence's cross-attention at every snapshot."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import streamlit as st

from model import toy
from model.transformer import count_parameters
from ui import widgets
from ui.cache import failed
from ui.common import Context, chart
from ui.models import parameter_count, toy_run, toy_runs
from ui.views import Lesson, register
from viz.toy import learning_curves, snapshot_map
from words import sentences, t

WIDTHS = (32, 128)  # d_model: the narrow default, and one wide enough (d_k up to 128) for the scaling to matter
HEADS = (1, 2, 4)
SEEDS = tuple(range(10))
WIDGETS = ("toy_task", "toy_heads", "toy_width", "toy_seed", "toy_positional", "toy_scaling", "toy_map", "toy_snapshot")
# Exact match and alignment error at which a caption says the run learnt the task (the lesson's tests ask these
# of the reorder task with the default settings).
LEARNT_EXACT, LEARNT_AER = 0.99, 0.10


def start_default_run() -> None:
    """The default setting's run, started once per server (at its first page), so the lesson usually opens on a
    finished run."""
    toy_run(toy.ToySettings())


def run_cost(settings: toy.ToySettings) -> float:
    """A toy run's time relative to the default's: its sub-layers (an encoder layer has two, a decoder layer three,
    two without cross-attention) times (d_model / 32)^0.75, times its steps. Measured alone on one core: 6 + 6
    layers 2.6 times the default (this says 3), d_model 128 2.8 times (2.8), the decoder alone half (0.4)."""
    per_layer = 2 if settings.architecture == "decoder-only" else 2 + 3
    return settings.layers * per_layer * (settings.d_model / 32) ** 0.75 * settings.steps


def expected_seconds(settings: list[toy.ToySettings]) -> int:
    """How long a button that starts these runs should take here: the runs not yet trained or training, one after
    the other, each the default run's measured time (5 s alone on one core of the machine it was written on, 12 s
    beside a training run) times its run_cost."""
    default = toy_runs().finished(toy.ToySettings())
    base = default.seconds if default is not None else 5.0
    to_train = [s for s in settings if (f := toy_runs().peek(s)) is None or failed(f)]
    return max(1, round(base * sum(map(run_cost, to_train)) / run_cost(toy.ToySettings())))


def chosen_settings(lang: str) -> toy.ToySettings:
    """The run the widgets describe (two rows at 1024 px: the task and the model, then the switches)."""
    default = toy.ToySettings()
    task, heads, width, seed = st.columns([3, 2, 2, 1.4])
    choice = widgets.radio(
        task,
        t("toy_task", lang),
        list(toy.TASKS),
        key="toy_task",
        default=default.task,
        format_func=lambda k: t(f"toy_task_{k}", lang),
        horizontal=True,
    )
    n_heads = widgets.radio(
        heads, t("toy_heads", lang), list(HEADS), key="toy_heads", default=default.heads, horizontal=True
    )
    d_model = widgets.radio(
        width, t("toy_width", lang), list(WIDTHS), key="toy_width", default=default.d_model, horizontal=True
    )
    seed = widgets.selectbox(seed, t("toy_seed", lang), list(SEEDS), key="toy_seed", default=default.seed)
    left, right = st.columns(2)
    st.session_state.setdefault("toy_positional", True)
    st.session_state.setdefault("toy_scaling", True)
    positional = left.toggle(t("toy_positional", lang), key="toy_positional")
    scaling = right.toggle(t("toy_scaling", lang, d_k=d_model // n_heads), key="toy_scaling")
    return replace(
        default, task=choice, heads=n_heads, d_model=d_model, seed=seed, positional_encoding=positional, scaling=scaling
    )


def describe(settings: toy.ToySettings, lang: str) -> str:
    """A run's settings in a few words, for a legend."""
    return t(
        "toy_describe",
        lang,
        task=t(f"toy_task_{settings.task}", lang),
        positional=t("toy_on" if settings.positional_encoding else "toy_off", lang),
        scaling=t("toy_on" if settings.scaling else "toy_off", lang),
        heads=head_count(settings.heads, lang),
        d_model=settings.d_model,
        seed=settings.seed,
    )


def head_count(n: int, lang: str) -> str:
    return t("toy_one_head", lang) if n == 1 else t("toy_head_count", lang, n=n)


def over_heads(n: int, lang: str) -> str:
    """What a layer's map is made of: "mean over its 4 heads", or its one head."""
    return t("toy_over_one_head", lang) if n == 1 else t("toy_over_heads", lang, n=n)


def curves(run: toy.ToyRun, name: str) -> dict:
    snapshots = run.snapshots
    return dict(
        name=name,
        steps=[s.step for s in snapshots],
        loss=[s.loss for s in snapshots],
        exact_match=[s.exact_match for s in snapshots],
        aer=[s.aer for s in snapshots],
    )


@functools.cache
def toy_parameter_count() -> int:
    """The default toy model's number of weights (about 44,000), counted once."""
    return count_parameters(toy.build_model(toy.ToySettings()))


def intro_values(ctx: Context) -> dict:
    """The intro's sizes: the toy model's weights (to the thousand) against the chosen checkpoint's, in millions
    (English) or in 万, ten thousands (Chinese: 16,529,914 is 1,650 万)."""
    full = parameter_count(ctx.checkpoint)
    size = f"{full / 1e6:.1f} million" if ctx.lang == "en" else f"{int(round(full / 1e4, -1)):,} 万"
    return {"toy_parameters": round(toy_parameter_count(), -3), "model_size": size}


def show_learned(ctx: Context) -> None:
    lang = ctx.lang
    settings = chosen_settings(lang)
    future = toy_runs().peek(settings)
    if future is None or failed(future):
        seconds = expected_seconds([settings])
        if st.button(t("toy_train", lang, seconds=seconds), type="primary", key="toy_train"):
            toy_run(settings)
            st.rerun()
        if future is not None:
            st.caption(t("toy_failed", lang))
        return
    if not future.done():
        training_progress(settings, lang)
        return
    show_run(future.result(), settings, lang)


@st.fragment(run_every=0.5)
def training_progress(settings: toy.ToySettings, lang: str) -> None:
    """The run's progress, read twice a second from the background run (started by this student or another);
    the whole page is drawn again once it has finished."""
    future = toy_runs().peek(settings)
    if future is None or future.done():
        st.rerun(scope="app")
    progress = toy_runs().progress(settings)
    if progress is None:
        st.progress(0.0, text=t("toy_waiting", lang))
    else:
        done, total = progress
        st.progress(done / total, text=t("toy_training", lang, done=done, total=total))


def show_run(run: toy.ToyRun, settings: toy.ToySettings, lang: str) -> None:
    # The run shown before this one in this session, dashed beside it: the effect of the last switch.
    shown = st.session_state.get("toy_shown")
    if shown != settings:
        st.session_state.toy_previous = shown
        st.session_state.toy_shown = settings
        st.session_state.pop("toy_snapshot", None)  # a new run opens on its last snapshot
    previous = st.session_state.get("toy_previous")
    previous_run = toy_runs().finished(previous) if previous is not None else None

    last = run.snapshots[-1]
    held_out = run.held_out
    st.markdown(
        t(
            "toy_summary",
            lang,
            steps=last.step,
            seconds=run.seconds,
            parameters=run.parameters,
            exact=last.exact_match,
            n=held_out,
            aer=last.aer,
            layer=last.layer + 1,
            over_heads=over_heads(settings.heads, lang),
        )
    )
    st.markdown(verdict(run, settings, lang))

    steps = [s.step for s in run.snapshots]
    st.session_state.setdefault("toy_snapshot", steps[-1])
    step = st.select_slider(t("toy_snapshot", lang), options=steps, key="toy_snapshot")
    snap = run.snapshots[steps.index(step)]
    labels = curve_labels(lang, held_out)
    # The map: the layer that aligns best at the end of the run (the same layer on every snapshot, so the slider
    # shows one map change), its mean over heads or one head.
    n_layers, n_heads = len(last.cross_heads), len(last.cross_heads[0])
    # (one head: its map is the layer's, offered once, as the head)
    options = [(layer, "mean") for layer in range(n_layers) if n_heads > 1] + [
        (layer, head) for layer in range(n_layers) for head in range(n_heads)
    ]
    options.sort(key=lambda o: (o[0] != last.layer, o[0], o[1] != "mean", o[1] if o[1] != "mean" else -1))

    def label(option) -> str:
        layer, head = option
        if head == "mean":
            return t("toy_map_mean", lang, layer=layer + 1)
        return t("toy_map_head", lang, layer=layer + 1, head=head + 1)

    layer, head = widgets.selectbox(st, t("toy_map_choice", lang), options, key="toy_map", format_func=label)
    maps = np.asarray(snap.cross_heads[layer])
    weights = maps.mean(0) if head == "mean" else maps[head]
    title = t("toy_map_title", lang, step=snap.step, what=label((layer, head)))
    fig = snapshot_map(
        weights,
        run.target,
        run.source,
        run.alignment,
        map_labels(lang),
        title,
        predicted=snap.forced,
    )
    chart(fig, key="toy-map")
    links = toy.strongest_sources(weights, len(run.source) - 1, len(run.alignment))
    aligned = sum(link == true for link, true in zip(links, run.alignment))
    st.caption(
        sentences(
            lang,
            t(
                "toy_map_caption",
                lang,
                step=snap.step,
                output=" ".join(snap.output) or "—",
                right=t("toy_right" if snap.output == run.target else "toy_wrong", lang),
                aligned=aligned,
                words=len(run.alignment),
                exact=snap.exact_match,
                aer=snap.aer,
                best=snap.layer + 1,
            ),
            # the untrained model's strongest cells are chance (its rows reach 1.6-2.4x the equal share, measured):
            # the chance of the measure shown, an argmax over the source words without </s>, over these rows
            t(
                "toy_map_untrained",
                lang,
                columns=len(run.source) - 1,
                rows=len(run.alignment),
                expected=len(run.alignment) / (len(run.source) - 1),
            )
            if snap.step == 0
            else "",
        )
    )

    shown_runs = [curves(run, t("toy_current", lang, settings=describe(settings, lang)))]
    if previous_run is not None:
        shown_runs.append(curves(previous_run, t("toy_previous", lang, settings=describe(previous, lang))))
    elif len(shown_runs) == 1:
        st.caption(t("toy_compare_hint", lang))
    chart(learning_curves(shown_runs, labels, marked_step=step), key="toy-curves")


def verdict(run: toy.ToyRun, settings: toy.ToySettings, lang: str) -> str:
    """What the run shows, in a sentence: only what its numbers say."""
    last = run.snapshots[-1]
    # The first snapshot from which exact match stays at the threshold: when the translation was learnt.
    when = next(
        (s.step for k, s in enumerate(run.snapshots) if all(x.exact_match >= LEARNT_EXACT for x in run.snapshots[k:])),
        None,
    )
    if when is None:
        text = t("toy_verdict_not", lang, steps=last.step, exact=last.exact_match, aer=last.aer)
    elif last.aer <= LEARNT_AER:
        text = t("toy_verdict_learnt", lang, step=when, aligned=1 - last.aer)
    else:  # it translates, yet its attention is not where the words came from: said apart, not as "not learnt"
        text = t(
            "toy_verdict_translates",
            lang,
            step=when,
            aer=last.aer,
            layer=last.layer + 1,
            over_heads=over_heads(settings.heads, lang),
        )
    if not settings.positional_encoding:
        text = sentences(lang, text, t("toy_no_positions_note", lang))
    return text


def curve_labels(lang: str, held_out: int) -> dict:
    """The words of viz.toy.learning_curves, in the interface language."""
    return dict(
        step=t("toy_step", lang),
        loss=t("toy_loss", lang),
        share=t("toy_share", lang),
        exact=t("toy_exact", lang),
        aer=t("toy_aer", lang),
        loss_title=t("toy_loss_title", lang),
        share_title=t("toy_share_title", lang, n=held_out),
    )


def map_labels(lang: str) -> dict:
    """The words of viz.toy.snapshot_map, in the interface language."""
    return dict(
        query_axis=t("toy_rows", lang),
        key_axis=t("toy_columns", lang),
        weight=t("weight", lang),
        truth=t("toy_truth", lang),
        predicts=t("toy_writes", lang),
    )


def train_together(
    settings: list[toy.ToySettings], names: list[str], label: str, key: str, lang: str, primary: bool = True
) -> list[toy.ToyRun] | None:
    """Toy runs a lesson sets side by side: a button that starts them all (one background thread trains them one
    after the other), their progress while they train, and -> their results once every one has finished (None
    before)."""
    futures = [toy_runs().peek(s) for s in settings]
    if any(f is None or failed(f) for f in futures):
        if st.button(label, type="primary" if primary else "secondary", key=key):
            for s in settings:
                toy_run(s)
            st.rerun()
        if any(f is not None and failed(f) for f in futures):
            st.caption(t("toy_failed", lang))
        return None
    if not all(f.done() for f in futures):
        runs_progress(tuple(settings), tuple(names), lang)
        return None
    return [f.result() for f in futures]


@st.fragment(run_every=0.5)
def runs_progress(settings: tuple[toy.ToySettings, ...], names: tuple[str, ...], lang: str) -> None:
    """Each run's progress, read twice a second; the page is drawn again once all have finished."""
    if all((f := toy_runs().peek(s)) is not None and f.done() for s in settings):
        st.rerun(scope="app")
    for s, name in zip(settings, names):
        progress = toy_runs().progress(s)
        done, total = progress if progress else (0, s.steps)
        st.progress(done / total, text=t("alone_training", lang, model=name, done=done, total=total))


register(Lesson("lesson_learned", None, own_view=show_learned, widgets=WIDGETS, intro_values=intro_values))
