"""Attention is learned: a tiny Transformer (this project's own model.transformer, in a tiny configuration) trained
in seconds on a made-up translation task whose true word alignment is known by construction.

The seed articles insist that Q, K and V are not labels a sentence carries but three projections the model learns,
and that what a head attends to comes out of training. The shipped checkpoints have finished learning; this module
shows the learning: it records the loss, the exact-match accuracy and one sentence's cross-attention at snapshots,
and scores each snapshot's cross-attention as a word aligner against the alignment the task was generated with.

The tasks (one toy lexicon: nouns, verbs, adjectives; the "target language" writes each English word as one
capitalised word, so every target word has exactly one source word):
- copy:    any 3-7 words, written in the same order (the alignment is the diagonal);
- reverse: the same words in reverse order (the anti-diagonal);
- reorder: "[adjective] noun verb [adjective] noun" -> subject, its adjective, object, its adjective, verb
           ("big Tom chases small Jerry" -> "TOM BIG JERRY SMALL CHASE"): the target language is verb-final and puts
           an adjective after its noun, so cross-attention must learn to jump. Subjects and objects come from one
           set of nouns, so only word order tells who chases whom: without positional encoding in the encoder the
           source is a bag of words, and the task cannot be learnt (the decoder keeps its own: `decode` adds it).

Runs are deterministic for a setting: seeded initial weights and batches, no dropout, a fixed number of steps, one
thread (`run` leaves the thread count to its caller; the command line sets one). Everything is returned as plain
data (ToyRun), nothing is kept in the model.

    python -m model.toy --task reorder --seed 0 --json run.json
    python -m model.toy --task reorder --architecture decoder-only --json alone.json   # GPT's half: no encoder
    python -m model.toy --layers 6 --learning-rate 0.01 --warmup 0 --norm post       # the paper's post-norm stalls

A decoder-only model (--architecture decoder-only: the same decoder layers without cross-attention, no encoder)
reads one sequence, "<s> source <sep> target", and is scored on the block of its masked self-attention where the
rows that write the target read the source: the encoder-decoder's cross-attention, found by self-attention.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .align import GoldPair, alignment_error_rate
from .cli import check_output, fail, positive_float, positive_int
from .decode import greedy_batch_tokens
from .progress import Progress
from .teacher_forcing import pad_batch, teacher_forced_input
from .tokenizer import BOS_ID, EOS_ID, PAD_ID
from .transformer import AttentionOptions, DecoderCache, Transformer, TransformerConfig

NOUNS = ("Tom", "Jerry", "cat", "dog", "fox", "bird")
VERBS = {"chases": "CHASE", "sees": "SEE", "helps": "HELP", "likes": "LIKE", "finds": "FIND"}
ADJECTIVES = ("big", "small", "old", "young")
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")  # in the order of model.tokenizer's ids
SOURCE_WORDS = SPECIALS + NOUNS + tuple(VERBS) + ADJECTIVES
TARGET_WORDS = SPECIALS + tuple(w.upper() for w in NOUNS) + tuple(VERBS.values()) + tuple(a.upper() for a in ADJECTIVES)
TASKS = ("copy", "reverse", "reorder")
ARCHITECTURES = ("encoder-decoder", "decoder-only")
NORMS = ("post", "pre")  # the paper's LayerNorm(x + Sublayer(x)), or x + Sublayer(LayerNorm(x))
# A decoder-only model reads one sequence, "<s> source <sep> target </s>", in one vocabulary: the target words
# (their ids as in TARGET_WORDS), then the separator and the source words.
SEPARATOR = "<sep>"
SEQUENCE_WORDS = TARGET_WORDS + (SEPARATOR,) + SOURCE_WORDS[len(SPECIALS) :]
# The sentence whose cross-attention is recorded at every snapshot; never trained on.
TEST_SENTENCE = "big Tom chases small Jerry"
HELD_OUT_SHARE = 0.2  # of the reorder task's 3,750 sentences, never trained on (copy and reverse: fresh samples)
GRADIENT_STEPS = 20  # the first steps whose per-layer gradient norms a run records
SPLIT_SEED = 1234  # the held-out sentences are the task's, the same for every run seed: runs compare


def gloss(word: str) -> str:
    """The target language's word for a source word."""
    return VERBS.get(word, word.upper())


@dataclass(frozen=True)
class ToyExample:
    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[int, ...]  # alignment[j] = the source position of target word j


def reorder_example(words: tuple[str, ...]) -> ToyExample:
    """[adj] subject verb [adj] object -> subject [adj] object [adj] verb, with each target word's source position."""
    verb_at = next(i for i, w in enumerate(words) if w in VERBS)
    subject, obj = list(range(verb_at)), list(range(verb_at + 1, len(words)))
    # Within a noun phrase the noun comes first, then its adjective: the phrase's positions reversed.
    order = subject[::-1] + obj[::-1] + [verb_at]
    return ToyExample(words, tuple(gloss(words[i]) for i in order), tuple(order))


def sequence_example(words: tuple[str, ...], reverse: bool) -> ToyExample:
    order = list(range(len(words)))[:: -1 if reverse else 1]
    return ToyExample(words, tuple(gloss(words[i]) for i in order), tuple(order))


def make_example(task: str, words: tuple[str, ...]) -> ToyExample:
    return reorder_example(words) if task == "reorder" else sequence_example(words, task == "reverse")


def reorder_sentences() -> list[tuple[str, ...]]:
    """Every "[adjective] noun verb [adjective] noun" with two different nouns: 3,750 sentences."""
    phrases = [(noun,) for noun in NOUNS] + [(a, n) for a in ADJECTIVES for n in NOUNS]
    return [s + (verb,) + o for s, verb, o in itertools.product(phrases, VERBS, phrases) if s[-1] != o[-1]]


@dataclass
class ToyData:
    train: list[ToyExample]  # reorder: the pool batches are drawn from; copy/reverse: drawn fresh per batch
    held_out: list[ToyExample]
    test: ToyExample


def task_data(task: str, n_held_out: int = 300) -> ToyData:
    """The task's training pool and held-out sentences (the same for every run seed) and the test sentence."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
    test_words = tuple(TEST_SENTENCE.split())
    rng = random.Random(SPLIT_SEED)
    if task == "reorder":
        sentences = [s for s in reorder_sentences() if s != test_words]
        rng.shuffle(sentences)
        cut = int(len(sentences) * HELD_OUT_SHARE)
        held, train = sentences[:cut][:n_held_out], sentences[cut:]
    else:
        held = [random_words(rng) for _ in range(n_held_out)]
        train = []
    return ToyData(
        [make_example(task, s) for s in train], [make_example(task, s) for s in held], make_example(task, test_words)
    )


def random_words(rng: random.Random) -> tuple[str, ...]:
    words = SOURCE_WORDS[len(SPECIALS) :]
    return tuple(rng.choice(words) for _ in range(rng.randint(3, 7)))


def training_batch(task: str, data: ToyData, rng: random.Random, size: int) -> list[ToyExample]:
    """A batch drawn from reorder's pool, or for copy and reverse random sentences that are neither held out nor
    the test sentence (so "held-out" is as true of them as of reorder's)."""
    if task == "reorder":
        return rng.sample(data.train, size)
    never_trained = {e.source for e in data.held_out} | {data.test.source}
    batch = []
    while len(batch) < size:
        if (words := random_words(rng)) not in never_trained:
            batch.append(make_example(task, words))
    return batch


@dataclass(frozen=True)
class ToySettings:
    """One run. Everything that changes what a run computes is here: it is the key runs are cached by."""

    task: str = "reorder"
    seed: int = 0
    positional_encoding: bool = True  # in the encoder; the decoder always adds its own
    scaling: bool = True  # divide the scores by sqrt(d_k)
    heads: int = 2
    d_model: int = 32  # split among the heads: d_k = d_model / heads, as in the paper
    layers: int = 2  # encoder and decoder layers each
    steps: int = 400
    batch_size: int = 64
    learning_rate: float = 3e-3  # the peak, after a short warm-up; then down linearly to zero at the last step
    warmup: int = 20
    snapshots: int = 20  # besides step 0
    architecture: str = "encoder-decoder"  # or "decoder-only": the decoder stack alone, reading "source <sep> target"
    norm: str = "post"  # where LayerNorm sits: "post" (the paper's), or "pre"

    @property
    def d_k(self) -> int:
        return self.d_model // self.heads

    def rate(self, step: int) -> float:
        """The learning rate of step (0-based)."""
        if step < self.warmup:
            return self.learning_rate * (step + 1) / self.warmup
        return self.learning_rate * (self.steps - step) / max(1, self.steps - self.warmup)

    @property
    def decoder_only(self) -> bool:
        return self.architecture == "decoder-only"

    def config(self) -> TransformerConfig:
        d_model = self.d_model
        sequence = len(SEQUENCE_WORDS)
        return TransformerConfig(
            src_vocab_size=sequence if self.decoder_only else len(SOURCE_WORDS),
            tgt_vocab_size=sequence if self.decoder_only else len(TARGET_WORDS),
            d_model=d_model,
            n_heads=self.heads,
            d_ff=2 * d_model,
            # the decoder-only model gets the encoder-decoder's decoder layers and no more: the same attention
            # layers over the target, fewer parameters (no encoder, no cross-attention)
            n_encoder_layers=0 if self.decoder_only else self.layers,
            n_decoder_layers=self.layers,
            dropout=0.0,  # determinism, and a task this small needs none
            max_len=24 if self.decoder_only else 16,  # <s> + 7 source words + <sep> + 7 target words + </s>
            norm_first=self.norm == "pre",
            decoder_only=self.decoder_only,
        )

    def snapshot_steps(self) -> list[int]:
        return sorted({0, *(round(self.steps * (k + 1) / self.snapshots) for k in range(self.snapshots))})


@dataclass
class Snapshot:
    step: int
    loss: float  # training cross-entropy, nats per target word: the mean of the batches since the last snapshot
    # (at step 0, of the first batch before training on it)
    exact_match: float  # share of held-out sentences whose greedy translation is exactly right
    aer: float  # alignment error of the best layer's mean cross-attention over heads, on the held-out sentences
    layer: int  # that layer, 0-based
    aer_by_layer: list[float]
    output: list[str]  # the greedy translation of the test sentence
    forced: list[str]  # the word each row of the test sentence's map predicts, fed the correct words before it
    cross: list[list[float]]  # the test sentence, teacher-forced: that layer's mean over heads, (target+1, source+1)
    cross_heads: list  # every layer and head: (layers, heads, target+1, source+1)
    # decoder-only: "cross" and "cross_heads" are the block of its self-attention where the rows that write the
    # target read the source (and <sep>, in </s>'s place); this is the whole causal map of the test sentence, the
    # best layer's mean over heads, (sequence, sequence)
    sequence: list[list[float]] | None = None


@dataclass
class ToyRun:
    task: str
    settings: dict
    seconds: float
    source: list[str]  # the test sentence, </s> included: the maps' columns
    target: list[str]  # its correct translation, </s> included: the maps' rows
    alignment: list[int]  # the true source position of each target word
    parameters: int
    held_out: int  # how many held-out sentences each snapshot's exact match and alignment error are measured on
    snapshots: list[Snapshot] = field(default_factory=list)
    # decoder-only: the test sentence as the model reads it, "<s> source <sep> target" (the rows and columns of
    # Snapshot.sequence), and where its source and target start in it
    sequence: list[str] | None = None
    source_start: int | None = None
    target_start: int | None = None
    # the gradient norm of each layer's weights at each of the first GRADIENT_STEPS steps: (steps, layers), the
    # encoder's layers first, then the decoder's (Xiong et al. 2020 compare post- and pre-norm by these at the
    # start of training, where a post-norm stack without warm-up goes wrong)
    gradient_norms: list[list[float]] = field(default_factory=list)
    gradient_layers: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


def ids(words, vocabulary: tuple[str, ...]) -> list[int]:
    index = {w: i for i, w in enumerate(vocabulary)}
    return [index[w] for w in words]


def source_ids(example: ToyExample) -> list[int]:
    return ids(example.source, SOURCE_WORDS) + [EOS_ID]


def target_ids(example: ToyExample) -> list[int]:
    return ids(example.target, TARGET_WORDS) + [EOS_ID]


def batch_tensors(examples: list[ToyExample]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> source ids, decoder inputs (<s> y), decoder outputs (y </s>)."""
    targets = [target_ids(e) for e in examples]
    return (
        pad_batch([source_ids(e) for e in examples]),
        pad_batch([teacher_forced_input(t) for t in targets]),
        pad_batch(targets),
    )


def teacher_forced(
    model: Transformer, examples: list[ToyExample], settings: ToySettings
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The decoder fed the correct translations: (logits (batch, target+1, vocab), the correct next words (batch,
    target+1), cross-attention (layers, batch, heads, target+1, source+1)); row t is the one that writes target
    word t. A decoder-only model's "cross-attention" is the block of its self-attention where those rows read
    the source (teacher_forced_alone)."""
    if settings.decoder_only:
        return teacher_forced_alone(model, examples, settings)[:3]
    src, tgt_in, tgt_out = batch_tensors(examples)
    options = AttentionOptions(scale=settings.scaling)
    with torch.inference_mode():
        encoded = model.encode(src, options, positional=settings.positional_encoding)
        decoded = model.decode(tgt_in, encoded, options, AttentionOptions(need_weights=True, scale=settings.scaling))
    return decoded.logits, tgt_out, decoded.cross_attention.transpose(0, 1)


def sequence_ids(example: ToyExample) -> tuple[list[int], list[int]]:
    """A decoder-only model's input and next words for one example: "<s> source <sep> target" and, at each
    position, the word it must write next, <pad> (not scored) where that is a source word or the separator, which
    the model is given, not asked for."""
    source, target = ids(example.source, SEQUENCE_WORDS), ids(example.target, SEQUENCE_WORDS)
    inputs = [BOS_ID, *source, SEQUENCE_WORDS.index(SEPARATOR), *target]
    return inputs, [PAD_ID] * (len(source) + 1) + target + [EOS_ID]


def sequence_batch(examples: list[ToyExample]) -> tuple[torch.Tensor, torch.Tensor]:
    pairs = [sequence_ids(e) for e in examples]
    return pad_batch([i for i, _ in pairs]), pad_batch([o for _, o in pairs])


def teacher_forced_alone(
    model: Transformer, examples: list[ToyExample], settings: ToySettings
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """teacher_forced for a decoder-only model: the rows that write the target words (and </s>), and of its
    self-attention the block where those rows read the source words (and <sep>): (logits (batch, target+1,
    vocab), next words, that block (layers, batch, heads, target+1, source+1)), each padded; and the whole
    self-attention (batch, layers, heads, sequence, sequence)."""
    inputs, _ = sequence_batch(examples)
    with torch.inference_mode():
        decoded = model.decode(inputs, None, AttentionOptions(need_weights=True, scale=settings.scaling))
    longest = max(len(e.target) for e in examples) + 1
    widest = max(len(e.source) for e in examples) + 1
    logits = torch.zeros(len(examples), longest, decoded.logits.size(-1))
    targets = torch.full((len(examples), longest), PAD_ID)
    block = torch.zeros(decoded.self_attention.size(1), len(examples), settings.heads, longest, widest)
    for b, e in enumerate(examples):
        n_s, n_t = len(e.source), len(e.target)
        rows = torch.arange(n_s + 1, n_s + 2 + n_t)  # from the row that reads <sep> to the one that writes </s>
        columns = torch.arange(1, n_s + 2)  # the source words, then <sep>
        logits[b, : n_t + 1] = decoded.logits[b, rows]
        targets[b, : n_t + 1] = torch.tensor(target_ids(e))
        block[:, b, :, : n_t + 1, : n_s + 1] = decoded.self_attention[b][:, :, rows][:, :, :, columns]
    return logits, targets, block, decoded.self_attention


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean nats per target word (</s> included, padding not)."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=PAD_ID)


def strongest_sources(weights, n_source: int, n_target: int) -> list[int]:
    """Each target word's link: the source word (</s> left out) its row of a cross-attention map weighs most."""
    return np.asarray(weights)[:n_target, :n_source].argmax(-1).tolist()


def alignment_error(maps: torch.Tensor, examples: list[ToyExample]) -> float:
    """maps: (batch, target+1, source+1) one layer's mean over heads, scored as a word aligner (one link a target
    word, its strongest source word) against the task's alignment, every true link sure. With one link a word on
    both sides the alignment error rate is the share of target words linked to the wrong source word."""
    predicted, gold = [], []
    for m, e in zip(maps, examples):
        links = strongest_sources(m.numpy(), len(e.source), len(e.target))
        predicted.append({(s, j) for j, s in enumerate(links)})
        sure = {(s, j) for j, s in enumerate(e.alignment)}
        gold.append(GoldPair(list(e.source), list(e.target), sure, sure))
    return alignment_error_rate(predicted, gold)


def greedy_alone(model: Transformer, examples: list[ToyExample], settings: ToySettings, longest: int = 9):
    """A decoder-only model's greedy continuation of "<s> source <sep>": the ids it writes, ending in </s> when it
    finished. Sentences with sources of one length go together (one prefix length, no padding in the cache)."""
    written: list[list[int]] = [[] for _ in examples]
    options = AttentionOptions(scale=settings.scaling)
    by_length: dict[int, list[int]] = {}
    for i, e in enumerate(examples):
        by_length.setdefault(len(e.source), []).append(i)
    with torch.inference_mode():
        for rows in by_length.values():
            prefix = torch.tensor([sequence_ids(examples[i])[0][: len(examples[i].source) + 2] for i in rows])
            decoded = model.decode(prefix, None, options, cache=DecoderCache([], []))
            finished = torch.zeros(len(rows), dtype=torch.bool)
            for _ in range(longest):
                next_word = decoded.logits[:, -1].argmax(-1)
                for k, i in enumerate(rows):
                    if not finished[k]:
                        written[i].append(int(next_word[k]))
                finished |= next_word == EOS_ID
                if finished.all():
                    break
                decoded = model.decode(next_word[:, None], None, options, cache=decoded.cache)
    return written


def greedy_outputs(model: Transformer, examples: list[ToyExample], settings: ToySettings) -> list[list[int]]:
    if settings.decoder_only:
        return greedy_alone(model, examples, settings)
    return greedy_batch_tokens(
        model,
        [source_ids(e) for e in examples],
        max_len=9,
        positional=settings.positional_encoding,
        scale=settings.scaling,
    )


def layer_gradient_norms(model: Transformer) -> list[float]:
    """The L2 norm of the gradient of each layer's weights, encoder layers then decoder layers."""
    norms = []
    for layer in [*model.encoder_layers, *model.decoder_layers]:
        squares = sum(float(p.grad.pow(2).sum()) for p in layer.parameters() if p.grad is not None)
        norms.append(round(squares**0.5, 5))
    return norms


# Model construction draws from torch's global generator: one run builds its model at a time, so a run started by
# another session cannot interleave its draws with this one's.
_BUILD = threading.Lock()


def build_model(settings: ToySettings) -> Transformer:
    with _BUILD, torch.random.fork_rng():
        torch.manual_seed(settings.seed)
        return Transformer(settings.config())


def run(settings: ToySettings, progress: Progress | None = None) -> ToyRun:
    """Train from scratch with these settings, recording a Snapshot at settings.snapshot_steps(). progress: told
    the steps done after every step, and checked between steps (Cancelled gives the run up)."""
    progress = progress or Progress()
    data = task_data(settings.task)
    model = build_model(settings)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate, betas=(0.9, 0.98))
    batches = random.Random(settings.seed)
    options = AttentionOptions(scale=settings.scaling)
    n_source = len(data.test.source)
    run_record = ToyRun(
        task=settings.task,
        settings=asdict(settings),
        seconds=0.0,
        source=[*data.test.source, "</s>"],
        target=[*data.test.target, "</s>"],
        alignment=list(data.test.alignment),
        parameters=sum(p.numel() for p in model.parameters()),
        held_out=len(data.held_out),
    )
    run_record.gradient_layers = [f"encoder {i + 1}" for i in range(len(model.encoder_layers))]
    run_record.gradient_layers += [f"decoder {i + 1}" for i in range(len(model.decoder_layers))]
    if settings.decoder_only:
        run_record.sequence = ["<s>", *data.test.source, SEPARATOR, *data.test.target]
        run_record.source_start, run_record.target_start = 1, n_source + 2
    start, losses = time.perf_counter(), []
    wanted = settings.snapshot_steps()
    progress.report(0, settings.steps)  # set up: the run holds its core from here on
    for step in range(settings.steps + 1):
        examples = None
        if step < settings.steps:
            examples = training_batch(settings.task, data, batches, settings.batch_size)
        if step in wanted:
            run_record.snapshots.append(snapshot(model, data, settings, step, losses, examples))
            losses = []
        if step == settings.steps:
            break
        progress.check()
        model.train()
        if settings.decoder_only:
            inputs, next_words = sequence_batch(examples)
            loss = cross_entropy(model.decode(inputs, None, options).logits, next_words)
        else:
            src, tgt_in, tgt_out = batch_tensors(examples)
            encoded = model.encode(src, options, positional=settings.positional_encoding)
            loss = cross_entropy(model.decode(tgt_in, encoded, options, options).logits, tgt_out)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if step < GRADIENT_STEPS:
            run_record.gradient_norms.append(layer_gradient_norms(model))
        for group in optimizer.param_groups:
            group["lr"] = settings.rate(step)
        optimizer.step()
        losses.append(loss.item())
        progress.report(step + 1, settings.steps)
    run_record.seconds = round(time.perf_counter() - start, 2)
    return run_record


def snapshot(
    model: Transformer,
    data: ToyData,
    settings: ToySettings,
    step: int,
    losses: list[float],
    next_batch: list[ToyExample] | None = None,
) -> Snapshot:
    model.eval()
    if not losses:  # step 0: the untrained model's loss on the first training batch, before it trains on it
        logits, targets, _ = teacher_forced(model, next_batch, settings)
        losses = [cross_entropy(logits, targets).item()]
    _, _, maps = teacher_forced(model, data.held_out, settings)
    written = greedy_outputs(model, data.held_out, settings)
    exact = sum(w == target_ids(e) for w, e in zip(written, data.held_out)) / len(data.held_out)
    by_layer = [alignment_error(layer_maps, data.held_out) for layer_maps in maps.mean(2)]
    best = int(np.argmin(by_layer))
    test_logits, _, test_maps = teacher_forced(model, [data.test], settings)
    test_maps = test_maps[:, 0]  # (layers, heads, target+1, source+1)
    test_output = greedy_outputs(model, [data.test], settings)[0]
    words = SEQUENCE_WORDS if settings.decoder_only else TARGET_WORDS
    sequence = None
    if settings.decoder_only:
        whole = teacher_forced_alone(model, [data.test], settings)[3][0]  # (layers, heads, sequence, sequence)
        sequence = np.round(whole[best].mean(0).numpy(), 4).tolist()
    return Snapshot(
        step=step,
        loss=round(float(np.mean(losses)), 4),
        exact_match=round(exact, 4),
        aer=round(by_layer[best], 4),
        layer=best,
        aer_by_layer=[round(a, 4) for a in by_layer],
        output=[words[i] for i in test_output],
        forced=[words[i] for i in test_logits[0].argmax(-1).tolist()],
        cross=np.round(test_maps[best].mean(0).numpy(), 4).tolist(),
        cross_heads=np.round(test_maps.numpy(), 4).tolist(),
        sequence=sequence,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, default="reorder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-positional-encoding", action="store_true", help="leave it out of the encoder")
    parser.add_argument("--no-scaling", action="store_true", help="do not divide the scores by sqrt(d_k)")
    parser.add_argument("--heads", type=positive_int, default=ToySettings.heads)
    parser.add_argument("--d-model", type=positive_int, default=ToySettings.d_model, help="split among the heads")
    parser.add_argument("--learning-rate", type=positive_float, default=ToySettings.learning_rate)
    parser.add_argument("--steps", type=positive_int, default=ToySettings.steps)
    parser.add_argument(
        "--architecture",
        choices=ARCHITECTURES,
        default=ToySettings.architecture,
        help="decoder-only: the decoder stack alone, reading 'source <sep> target' (no encoder, no cross-attention)",
    )
    parser.add_argument("--norm", choices=NORMS, default=ToySettings.norm, help="LayerNorm after (post) or before")
    parser.add_argument("--layers", type=positive_int, default=ToySettings.layers, help="encoder and decoder layers")
    parser.add_argument("--warmup", type=int, default=ToySettings.warmup, help="steps of warm-up (0: none)")
    parser.add_argument("--json", type=Path, help="write the run here (default: a summary on stdout only)")
    args = parser.parse_args(argv)
    check_output(args.json)  # before training, as every command-line tool (model.cli)
    if args.d_model % args.heads:
        fail(f"--d-model {args.d_model} does not split evenly among {args.heads} heads")
    torch.set_num_threads(1)
    settings = ToySettings(
        task=args.task,
        seed=args.seed,
        positional_encoding=not args.no_positional_encoding,
        scaling=not args.no_scaling,
        heads=args.heads,
        d_model=args.d_model,
        learning_rate=args.learning_rate,
        steps=args.steps,
        architecture=args.architecture,
        norm=args.norm,
        layers=args.layers,
        warmup=args.warmup,
    )
    result = run(settings)
    for s in result.snapshots:
        words = " ".join(s.output)
        print(
            f"step {s.step:4d}  loss {s.loss:.3f}  exact match {s.exact_match:.1%}  "
            f"AER {s.aer:.1%} (layer {s.layer + 1})  {words}"
        )
    print(f"{result.seconds:.1f} s, {result.parameters:,} parameters")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result.as_json(), f)


if __name__ == "__main__":
    main()
