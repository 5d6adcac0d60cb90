"""The model, loaded once per process, and translations, computed once per (checkpoint, sentence, decoding,
what-if) into a byte-bounded cache shared by every session; the figures of a translation's views, built once
for every session that shows them."""

from __future__ import annotations

import hashlib
import json
import os
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from model import attribute, decode, faithfulness, inside, teacher_forcing, toy, what_if
from model.checkpoint import LoadedModel, load_checkpoint
from model.confidence import Calibration, load_calibration
from model.progress import Progress
from model.transformer import count_parameters
from ui.cache import (
    BackgroundResults,
    BackgroundWorker,
    Batcher,
    ByteBudgetCache,
    ComputeSlots,
    array_bytes,
    between_steps,
)

# Translations kept for reuse across sessions, by the bytes of their attention and Q/K/V arrays: a short greedy
# sentence holds well under 1 MiB, a 40-word beam-8 one about 18 MiB. 256 MiB put the worst case of
# benchmarks/server_memory.py just over 1 GiB (1,034 MiB); 128 MiB: 853 and 924 MiB.
TRANSLATION_CACHE_BYTES = 128 * 2**20
# Model computations at once (each with one intra-op thread, see app.TORCH_THREADS): one per core by default.
MODEL_SLOTS = int(os.environ.get("ATTENTION_EXPLORER_MODEL_SLOTS", os.cpu_count() or 2))


@st.cache_resource(show_spinner=False)
def get_model(checkpoint: str) -> LoadedModel:
    return load_checkpoint(checkpoint)


@st.cache_resource(show_spinner=False)
def parameter_count(checkpoint: str) -> int:
    """The model's number of weights, for the About box (counted once: 1.4 ms a page run when counted each time)."""
    return count_parameters(get_model(checkpoint).model)


@st.cache_resource(show_spinner=False)
def get_calibration(checkpoint: str) -> Calibration | None:
    """The checkpoint's unsure-translation threshold (confidence.json), if it ships one."""
    return load_calibration(checkpoint)


@st.cache_resource(show_spinner=False)
def get_scores(checkpoint: str) -> dict:
    """The checkpoint's measured scores (eval.json, written by model.evaluate), empty if it ships none."""
    path = Path(checkpoint) / "eval.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def as_ablation(heads: tuple[str, ...]) -> dict[str, list[tuple[int, int]]]:
    """("cross:2:5", ...) with 1-based layer and head -> {"cross": [(1, 4)], ...} as decode expects."""
    ablate: dict[str, list[tuple[int, int]]] = {}
    for item in heads:
        kind, layer, head = item.split(":")
        ablate.setdefault(kind, []).append((int(layer) - 1, int(head) - 1))
    return ablate


# Where a server appends one line per computation ("kind<TAB>key hash"), when set: benchmarks/class_load.py counts
# them to check that a class typing the same sentence at once costs one computation.
COMPUTE_LOG = os.environ.get("ATTENTION_EXPLORER_COMPUTE_LOG")


def log_computation(key) -> None:
    log_event(key[0], hashlib.sha1(repr(key).encode()).hexdigest()[:12])


def log_event(kind: str, detail: str = "") -> None:
    """One line in the computation log, when the server was started with one (benchmarks only)."""
    if COMPUTE_LOG:
        with open(COMPUTE_LOG, "a", encoding="utf-8") as log:  # one short append: whole lines from every thread
            log.write(f"{kind}\t{detail}\n")


@st.cache_resource(show_spinner=False)
def translation_cache() -> ByteBudgetCache:
    """One per server process, shared by every session; bounded by the bytes of the arrays it holds."""
    return ByteBudgetCache(
        TRANSLATION_CACHE_BYTES, ComputeSlots(MODEL_SLOTS), on_compute=log_computation if COMPUTE_LOG else None
    )


# A page whose maps are large (a long pasted text) builds figures of tens of MiB (the 48-head overview of a
# 128-piece sentence sends 12 MiB); eight such pages drawn side by side took the server to 1.25 GiB. At most
# MODEL_SLOTS of them are drawn at once, the rest wait (benchmarks/class_load.py --heavy).
HEAVY_PIECES = 64


@st.cache_resource(show_spinner=False)
def heavy_page_slots() -> ComputeSlots:
    """Bounds how many large pages are drawn at once in this process (separate from the model's slots, so a
    page holding one can still translate)."""
    return ComputeSlots(MODEL_SLOTS)


def is_heavy(tr: decode.Translation) -> bool:
    return max(len(tr.source_pieces), len(tr.target_pieces)) > HEAVY_PIECES


# Figures shared by the sessions that show the same view of the same translation (a class on the sentence on
# the board): building a Plotly figure is most of a page's own time once the translation is cached.
FIGURE_CACHE_BYTES = 64 * 2**20


class SharedFigure(go.Figure):
    """A figure built once and shown as it is to every session (shared_figure). Streamlit's plotly_chart asks each
    session's run for the figure's dict: Plotly's to_dict, a deep copy with every array encoded in base64, 1.7 ms
    for a layers x heads grid, the largest part of drawing a chart once it is built. A shared figure makes it on
    the first ask and hands that dict out after (plotly_chart only reads it). Never changed once shared: a
    session that wants another figure builds its own."""

    def to_dict(self) -> dict:
        if "_shared_dict" not in self.__dict__:
            self._shared_dict = super().to_dict()
        return self._shared_dict


def share(value):
    """value with every Plotly figure in it (itself, or the items of a tuple or list) made a SharedFigure: the
    same object, its class changed (a subclass that only adds the memo, so nothing is copied or validated again)."""
    if type(value) is go.Figure:
        value.__class__ = SharedFigure
    elif isinstance(value, (tuple, list)):
        for item in value:
            share(item)
    return value


def figure_bytes(value) -> int:
    """The bytes of the numpy arrays a figure's traces hold (plotly keeps data arrays as numpy), twice for a shared
    figure (its dict holds them again, encoded), plus those of any arrays and Arrow tables beside it."""
    if isinstance(value, go.Figure):
        arrays = sum(v.nbytes for trace in value.data for v in trace._props.values() if isinstance(v, np.ndarray))
        return 4096 + arrays * (2 if isinstance(value, SharedFigure) else 1)
    if isinstance(value, (tuple, list)):
        return sum(figure_bytes(item) for item in value)
    if isinstance(value, pa.Table):
        return value.nbytes
    return array_bytes(value)


@st.cache_resource(show_spinner=False)
def figure_cache() -> ByteBudgetCache:
    return ByteBudgetCache(FIGURE_CACHE_BYTES, ComputeSlots(1 << 16, release_memory=False), size=figure_bytes)


def shared_figure(tr: decode.Translation, key: tuple, build: Callable[[], object]):
    """build() for this translation and view (a figure, a table, or a tuple of them and arrays), built once for
    every session that shows it; its figures are SharedFigures. key: everything
    besides the translation that the result depends on (view, layer, head, language, ...). Entries hold the
    translation weakly: they never keep a dropped translation alive, and one whose id a new translation reuses
    is built again."""
    cache, full_key = figure_cache(), (id(tr), *key)

    def compute():
        return weakref.ref(tr), share(build())

    owner, value = cache.get(full_key, compute)
    if owner() is not tr:
        cache.discard(full_key)
        owner, value = cache.get(full_key, compute)
    return value


# A class typing at once: plain greedy translations of sentences of at most BATCHED_WORDS words that wait for a
# model slot together are decoded in one padded batch (decode.translate_batch), a third of the time of one after
# another. Longer texts go alone: one long sentence would make the whole batch decode to its length.
BATCHED_WORDS = 40


@st.cache_resource(show_spinner=False)
def greedy_batcher(checkpoint: str) -> Batcher:
    loaded = get_model(checkpoint)
    return Batcher(
        translation_cache().slots,
        lambda texts: decode.translate_batch(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, texts),
    )


def get_hypotheses(
    checkpoint: str,
    sentence: str,
    beam_size: int,
    ablated: tuple[str, ...] = (),
    uniform_cross: bool = False,
    trail: tuple[tuple[int, int], ...] = (),
) -> list:
    """Every hypothesis (one for greedy), best first. ablated, uniform_cross: what-ifs of the forward pass;
    trail: what-if decoding, ((step, piece id), ...) the decoder must write."""

    def compute():
        loaded = get_model(checkpoint)
        return decode.translate_hypotheses(
            loaded.model,
            loaded.source_tokenizer,
            loaded.target_tokenizer,
            sentence,
            beam_size=beam_size,
            ablate=as_ablation(ablated),
            uniform_cross=uniform_cross,
            forced=dict(trail) or None,
        )

    key = ("hypotheses", checkpoint, sentence, beam_size, ablated, uniform_cross, trail)
    if beam_size == 1 and not (ablated or uniform_cross or trail) and len(sentence.split()) <= BATCHED_WORDS:
        batcher = greedy_batcher(checkpoint)
        return translation_cache().get(key, lambda: [batcher(sentence)], takes_slot=False)
    return translation_cache().get(key, compute)


def get_forced(
    checkpoint: str,
    sentence: str,
    reference: str | None = None,
    reference_ids: tuple[int, ...] | None = None,
    ablated: tuple[str, ...] = (),
    uniform_cross: bool = False,
) -> decode.Translation:
    def compute():
        loaded = get_model(checkpoint)
        return decode.teacher_force(
            loaded.model,
            loaded.source_tokenizer,
            loaded.target_tokenizer,
            sentence,
            reference=reference,
            reference_ids=list(reference_ids) if reference_ids else None,
            ablate=as_ablation(ablated),
            uniform_cross=uniform_cross,
        )

    key = ("forced", checkpoint, sentence, reference, reference_ids, ablated, uniform_cross)
    return translation_cache().get(key, compute)


def get_inside(checkpoint: str, tr: decode.Translation, uniform_cross: bool = False) -> teacher_forcing.PassRecord:
    """The residual stream, LayerNorm and FFN records and output distribution of the pass over tr's output."""
    key = ("inside", checkpoint, tuple(tr.source_ids), tuple(tr.target_ids), uniform_cross)
    return translation_cache().get(
        key,
        lambda: teacher_forcing.record_pass(
            get_model(checkpoint).model, tr.source_ids, tr.target_ids, inside.NEEDS, uniform_cross
        ),
    )


def get_logit_lens(checkpoint: str, tr: decode.Translation) -> inside.LogitLens:
    """What each decoder layer would predict at each step of tr's output (inside.logit_lens)."""
    key = ("logit lens", checkpoint, tuple(tr.source_ids), tuple(tr.target_ids))
    return translation_cache().get(
        key, lambda: inside.logit_lens(get_model(checkpoint).model, get_inside(checkpoint, tr), tr.target_ids)
    )


def get_word_order(checkpoint: str, sentence: str, a: int, b: int) -> what_if.WordOrder:
    def compute():
        loaded = get_model(checkpoint)
        language = loaded.metadata.get("source_language", "en")
        return what_if.word_order(loaded.model, loaded.source_tokenizer, sentence, a, b, language)

    return translation_cache().get(("word order", checkpoint, sentence, a, b), compute)


def get_padded_batch(checkpoint: str, sentences: tuple[str, ...]) -> what_if.PaddedBatch:
    def compute():
        loaded = get_model(checkpoint)
        return what_if.padded_batch(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, list(sentences))

    return translation_cache().get(("padded batch", checkpoint, sentences), compute)


def compute_attribution(model, tr: decode.Translation, method: str, progress: Progress | None = None):
    """-> (the record of tr's forward pass, the method's whole result or None where the method computes each
    view's map on its own, cheaper: its declaration per_view). The record is the one tr holds when it has what
    the method declares it needs, else one teacher-forced pass over its output recording that. Plain objects
    only: background threads call it too. progress: see model.progress (a slow method reports to it, and stops)."""
    record = attribute.record_for(model, tr.source_ids, tr.target_ids, [method], tr.record)
    chosen = attribute.METHODS[method]
    return record, (None if chosen.per_view else chosen.compute(model, record, progress=progress))


def attribution_key(checkpoint: str, tr: decode.Translation, method: str) -> tuple:
    return ("attribution", checkpoint, tuple(tr.source_ids), tuple(tr.target_ids), method)


def get_attribution(checkpoint: str, tr: decode.Translation, method: str):
    """compute_attribution, once per translation and method for every session (a method that is_slow: see
    start_attribution)."""
    return translation_cache().get(
        attribution_key(checkpoint, tr, method), lambda: compute_attribution(get_model(checkpoint).model, tr, method)
    )


# A method whose whole result takes longer than this on a 20-word sentence (integrated gradients: about a minute on
# one core, minutes with a class on the server) is computed only when its user asks, on that sentence, and in the
# background: the page stays usable, shows how far it is and can cancel it. One at a time for the whole server,
# at the lowest CPU priority and holding no model slot (a slot held by a thread the other pages outrank would be
# held for long: ui.cache.lower_this_threads_priority); the results are small (a map per output step), the last
# SLOW_ATTRIBUTIONS_KEPT kept.
SLOW_SECONDS = 2.0
SLOW_ATTRIBUTIONS_KEPT = 32


def is_slow(method: str) -> bool:
    return attribute.METHODS[method].seconds > SLOW_SECONDS


@st.cache_resource(show_spinner=False)
def slow_attributions() -> BackgroundResults:
    return BackgroundResults("slow-attribution", max_results=SLOW_ATTRIBUTIONS_KEPT)


def start_attribution(checkpoint: str, tr: decode.Translation, method: str) -> Future:
    """The background computation of a slow method on tr, started unless it runs or has finished; its result is
    compute_attribution's, its progress slow_attributions().progress(attribution_key(...))."""
    loaded = get_model(checkpoint)

    def compute(report):
        progress = Progress(report, lambda: report.cancelled.is_set() or between_steps())
        log_event("attribution", method)
        return compute_attribution(loaded.model, tr, method, progress)

    return slow_attributions().future(attribution_key(checkpoint, tr, method), compute)


# Computed ahead, while the server is idle, for a page that shows a map these methods give: the methods whose
# whole result takes long enough to feel on a switch and short enough to spend an idle core on (gradient x input:
# 0.13 s on a 20-word sentence, one core, where drawing the switched map takes another 0.3 s; under 0.05 s below
# about a dozen output pieces, not worth a class's cores). Integrated gradients (a minute) runs only when asked.
PREFETCHED_ATTRIBUTIONS = tuple(
    name for name, m in attribute.METHODS.items() if not m.per_view and 0.05 <= m.seconds <= 1.0
)
PREFETCH_MIN_PIECES = 12


@st.cache_resource(show_spinner=False)
def attribution_prefetcher() -> BackgroundWorker:
    return BackgroundWorker("attribution-prefetch")


def computes_ahead() -> bool:
    """Whether idle time computes what a page will likely ask for (the query-key view's sample, the lesson's
    default toy run, the quick attribution methods): on unless ATTENTION_EXPLORER_COMPUTE_AHEAD=0 (the app's tests
    turn it off: the work one test started ran on beside the next ones)."""
    return os.environ.get("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1") != "0"


# Computing a sentence's attributions ahead is for a server one person explores on (a teacher preparing, a student
# at home). With a class on it (another session ran a script within CLASS_SECONDS) the cores go to the pages asked
# for: 30 students' prefetches took the new-sentence p90 from 1.3 s to 2.4 s on two cores (benchmarks/README.md).
CLASS_SECONDS = 60.0


@st.cache_resource(show_spinner=False)
def recent_sessions() -> dict[str, float]:
    """{session: time.monotonic() of its last script run} over the last CLASS_SECONDS, for this process."""
    return {}


def note_script_run(session: str) -> int:
    """Record a script run of `session`; how many sessions ran one within CLASS_SECONDS, this one included."""
    now, seen = time.monotonic(), recent_sessions()
    seen[session] = now
    for other, last in list(seen.items()):
        if now - last > CLASS_SECONDS:
            seen.pop(other, None)
    return len(seen)


def prefetch_attributions(checkpoint: str, tr: decode.Translation, sessions: int = 1) -> None:
    """Start computing PREFETCHED_ATTRIBUTIONS of tr in the background, only for a lone session (sessions: how many
    ran a script lately, note_script_run) and only if no model computation runs or waits (a class keeps the cores
    busy; then a switch computes on demand, as before). A switch made meanwhile waits for this computation
    instead of repeating it (the cache's in-flight sharing)."""
    cache = translation_cache()
    if not computes_ahead() or sessions > 1 or len(tr.target_ids) < PREFETCH_MIN_PIECES or not cache.slots.idle:
        return
    loaded = get_model(checkpoint)  # fetched here: the thread makes no Streamlit call
    for method in PREFETCHED_ATTRIBUTIONS:
        key = attribution_key(checkpoint, tr, method)
        if key not in cache:
            attribution_prefetcher().submit(_prefetch, cache, key, loaded.model, tr, method)


def _prefetch(cache: ByteBudgetCache, key: tuple, model, tr: decode.Translation, method: str) -> None:
    # after the page that asked for it is drawn; still wanted, the cores still free, the server up
    if between_steps() or key in cache or not cache.slots.idle:
        return
    log_event("prefetch", method)
    # no model slot: this thread runs at the lowest priority, and a page that asks for the same result meanwhile
    # waits for this computation (the cache's in-flight sharing) instead of repeating it
    cache.get(key, lambda: compute_attribution(model, tr, method), takes_slot=False)


@st.cache_resource(show_spinner=False)
def get_alignment(checkpoint: str) -> dict | None:
    """The checkpoint's heads scored as word aligners on the gold set (alignment.json, written by model.align),
    or None if it ships none."""
    path = Path(checkpoint) / "alignment.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def get_comparison(checkpoint: str, tr: decode.Translation, layer: int, ig_step: int | None):
    """tr's output pieces under every method and occlusion (model.faithfulness.compare_step)."""
    key = ("comparison", checkpoint, tuple(tr.source_ids), tuple(tr.target_ids), layer, ig_step)
    return translation_cache().get(
        key,
        lambda: faithfulness.compare_step(
            get_model(checkpoint).model,
            tr.source_ids,
            tr.source_pieces,
            tr.target_ids,
            layer,
            ig_step,
            get_model(checkpoint).metadata.get("source_language", "en"),
        ),
    )


# The lesson "Attention is learned" trains toy Transformers (model.toy): each setting once per server, whoever
# asks first, on one background thread at the lowest CPU priority and holding no model slot (translations keep
# both; a slot held by a thread every page outranks would be held for long). The runs are small (tens of KiB of
# snapshots): the last TOY_RUNS_KEPT are kept.
TOY_RUNS_KEPT = 64


@st.cache_resource(show_spinner=False)
def toy_runs() -> BackgroundResults:
    return BackgroundResults("toy-training", max_results=TOY_RUNS_KEPT)


def toy_run(settings: toy.ToySettings):
    """The Future of settings' run, started unless it is running or done (its progress: toy_runs().progress)."""

    def compute(report) -> toy.ToyRun:
        log_event("toy", repr(settings))
        return toy.run(settings, Progress(report, lambda: report.cancelled.is_set() or between_steps()))

    return toy_runs().future(settings, compute)
