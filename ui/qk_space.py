"""A head's query-key space: the current sentence's queries and keys beside a held-out sample, in 2-D."""

from __future__ import annotations

import contextlib

import streamlit as st

from model import qk_space, roles
from model.data import read_everyday
from model.progress import Progress
from model.transformer import ATTENTION_KINDS as KINDS
from ui.cache import BackgroundResults, between_steps, page_runs
from ui.common import Context, chart, kind_selector, layer_of_kind, query_selector
from ui.links import kind_and_numbers, session_numbers
from ui.models import get_model
from ui.views import LinkParam, View, register
from viz.labels import axis_names, query_labels
from viz.steps import qk_space_figure
from words import t

FALLBACK_SENTENCES = 60  # of our everyday sentences (never trained on), for a checkpoint without a sample file


def sample_sentences(checkpoint: str, loaded) -> list[str]:
    """The checkpoint's held-out sample (qk_sample.txt: its probe set's first sentences), or, where it ships
    none, the first of our everyday sentences in the language it reads."""
    sentences = qk_space.read_sample_sentences(checkpoint)
    if sentences:
        return sentences
    meta = loaded.metadata
    everyday = read_everyday(meta.get("target_language", "zh"), source_language=meta.get("source_language", "en"))
    return [e.source for e in everyday][:FALLBACK_SENTENCES]


def compute_sample(checkpoint: str, loaded, slots) -> qk_space.QKSample:
    """In the background thread: only plain objects, no Streamlit call (slots: a context manager around each
    batch)."""
    return qk_space.sample_qk_in_batches(
        loaded, sample_sentences(checkpoint, loaded), slots, batch=10, progress=Progress(should_stop=between_steps)
    )


@st.cache_resource(show_spinner=False)
def qk_samples() -> BackgroundResults:
    """The held-out sample of each checkpoint, computed once per server in the background: started by the first
    page that loads the checkpoint (warm_qk_sample), so the view opens without waiting for it (6.5 s for en-zh's
    300 sentences, 12 s for en-de's, on one core beside a training run), in batches, at the lowest priority."""
    return BackgroundResults("qk-sample")


def sample_future(checkpoint: str):
    # No model slot: the background thread runs at the lowest CPU priority (ui.cache.lower_this_threads_priority),
    # and a slot held by a thread every page outranks would be held for long.
    loaded = get_model(checkpoint)
    return qk_samples().future(checkpoint, lambda report: compute_sample(checkpoint, loaded, contextlib.nullcontext()))


def warm_qk_sample(checkpoint: str) -> None:
    """Start computing the checkpoint's sample in the background if no page has yet (cheap once started)."""
    sample_future(checkpoint)


def get_qk_sample(checkpoint: str) -> qk_space.QKSample:
    """Every head's queries and keys over the held-out sample (waits if its computation is still running)."""
    future = sample_future(checkpoint)
    with page_runs.waiting_on_background():  # the sample must not give way to the page waiting for it
        return future.result()


def show_qk_space(ctx: Context) -> None:
    lang, tr = ctx.lang, ctx.tr
    st.caption(t("qk_explain", lang))
    kind = kind_selector(lang, "qk_kind")
    position = query_selector(tr, kind, lang, "qk_query", label="qk_query_label")
    chosen = layer_of_kind(tr, kind, ctx.chosen, lang)
    if chosen.head is None:
        st.caption(t("mean_shows_head_1", lang))
    layer, head = chosen.layer, chosen.one_head
    with st.spinner(t("qk_sampling", lang)):  # only if the background run is not done yet
        sample = get_qk_sample(ctx.checkpoint)
    q, k = qk_space.head_points(tr, kind, layer, head)
    projection = qk_space.project(q, k, sample.queries[kind][layer, head], sample.keys[kind][layer, head])
    weights = tr.attention(kind)[layer, head]
    _, keys = tr.axis_pieces(kind)
    query_axis, key_axis = axis_names(kind, lang)
    labels = dict(
        query=t("qk_queries", lang),
        key=t("qk_keys", lang),
        sample_query=t("qk_sample_queries", lang),
        sample_key=t("qk_sample_keys", lang),
        weight=t("weight", lang),
        x=t("qk_component", lang, n=1, share=projection.explained[0]),
        y=t("qk_component", lang, n=2, share=projection.explained[1]),
        title=t("qk_title", lang, layer=layer + 1, head=head + 1),
    )
    chart(
        qk_space_figure(
            projection.queries,
            projection.keys,
            projection.sample_queries,
            projection.sample_keys,
            query_labels(tr, kind),
            keys,
            position,
            weights[position],
            labels,
        ),
        key="qk-space",
    )
    st.caption(
        t(
            "qk_method",
            lang,
            share=sum(projection.explained),
            n=sample.sentences,
            queries=len(projection.sample_queries),
            keys=len(projection.sample_keys),
        )
    )
    if kind != "cross":  # an offset compares a query's and a key's positions: only within one sequence
        offset, share = roles.positional_offset(weights)
        if share >= roles.POSITIONAL_SHARE:
            st.caption(t("qk_positional", lang, share=share, offset=offset))


# qk=decoder_self.3: the attention kind and the query whose weights are drawn, once a query was chosen
QUERY = LinkParam(
    "qk",
    read=lambda session: (
        (session.get("qk_kind"), *numbers)
        if session.get("qk_kind") in KINDS and (numbers := session_numbers(session, ("qk_query",)))
        else None
    ),
    write=lambda qk: f"{qk[0]}.{qk[1]}",
    parse=lambda text: (kind_and_numbers(text, KINDS, 1), []),
    restore=lambda qk: dict(qk_kind=qk[0], qk_query=qk[1], qk_from_link=True),
)

register(View("tab_qk", "group_heads", show_qk_space, ("qk_kind", "qk_query"), link=(QUERY,)))
