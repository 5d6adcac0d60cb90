"""Train a translation Transformer.

    python -m model.train --corpus tatoeba-en-zh --run-dir runs/en-zh --export checkpoints/en-zh
    torchrun --nproc_per_node=2 -m model.train ...      # the same, DistributedDataParallel (gloo on CPU)

A run folder holds the tokenizers, ``state.pt`` (model + optimizer + schedule, written after every epoch, so a
killed run started again with the same command continues where it stopped), the weights of recent epochs for
checkpoint averaging, and ``metrics.jsonl`` (one line per epoch: losses, validation BLEU, timing).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path

import sentencepiece as spm
import torch
import torch.distributed as dist
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from .checkpoint import apply_weights, load_checkpoint, save_checkpoint, weights_to_save
from .data import DEFAULT_DATA_DIR, load_splits, sentence_initial, training_pairs
from .decode import pad_batch
from .evaluate import bleu_tokenizer_for, score, translate_corpus
from .tokenizer import (
    BOS_ID,
    EOS_ID,
    EXTENSION_WORDS,
    PAD_ID,
    UNK_ID,
    WORD_BOUNDARY,
    Tokenizer,
    characters_it_cannot_write,
    chinese_words_cut_finely,
    extend_sentencepiece,
    lexicon_words_cut_finely,
    pieces_across_words,
    retire_pieces,
    train_sentencepiece,
    words_cut_finely,
)
from .transformer import DecoderOutput, EncoderOutput, Transformer, TransformerConfig, count_parameters

LANGUAGES = {
    "tatoeba-en-zh": ("en", "zh"),
    "tatoeba-extra-en-zh": ("en", "zh"),
    "tatoeba-extra-ml-en-zh": ("en", "zh"),
    "tatoeba-extra-ml-zh-en": ("zh", "en"),
    "multi30k-en-de": ("en", "de"),
    "tatoeba-en-de": ("en", "de"),
    "tatoeba-multi30k-en-de": ("en", "de"),
    "names-en-de": ("en", "de"),
    "tatoeba-extra-en-de": ("en", "de"),
    "tatoeba-extra-ml-en-de": ("en", "de"),
}


def noam_rate(step: int, d_model: int, warmup: int, factor: float) -> float:
    """Section 5.3: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), times a factor."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_batches(lengths: list[tuple[int, int]], max_tokens: int, seed: int) -> list[list[int]]:
    """Group example indices into batches of at most max_tokens padded tokens (on the longer side).

    Sorting by length keeps padding small; a little noise in the sort key and a shuffle of the batches,
    both seeded by epoch, vary the batches from epoch to epoch."""
    rng = random.Random(seed)
    order = sorted(range(len(lengths)), key=lambda i: (max(lengths[i]) + rng.random(), lengths[i]))
    batches, current, width = [], [], 0
    for i in order:
        new_width = max(width, *lengths[i])
        if current and new_width * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, new_width = [], max(lengths[i])
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(pairs: list[tuple[list[int], list[int]]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> src (batch, S) ending in </s>; tgt_in (batch, T) = <s> y; tgt_out (batch, T) = y </s>."""
    src = [s + [EOS_ID] for s, _ in pairs]
    tgt_in = [[BOS_ID] + t for _, t in pairs]
    tgt_out = [t + [EOS_ID] for _, t in pairs]
    return pad_batch(src), pad_batch(tgt_in), pad_batch(tgt_out)


def drop_target_words(tgt_in: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """The decoder's input with each piece but <s> and padding replaced by <unk> with probability p (word
    dropout on the target side, as in Sennrich et al. 2016's WMT systems). The targets it is scored on stay
    whole; only what the decoder may lean on is thinned."""
    drop = torch.rand(tgt_in.shape, generator=generator) < p
    drop &= (tgt_in != PAD_ID) & (tgt_in != BOS_ID)
    return tgt_in.masked_fill(drop, UNK_ID)


def loss_fn(logits: torch.Tensor, target: torch.Tensor, label_smoothing: float) -> torch.Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=PAD_ID, label_smoothing=label_smoothing
    )


def omit_a_span(target: list[int], deletable: list[bool], rng: random.Random, longest: int = 3) -> list[int] | None:
    """A copy of target with one span of 1 to `longest` pieces left out, all of them words (not punctuation):
    the negative of the omission contrast (Yang et al. 2019, "Reducing Word Omission Errors in Neural Machine
    Translation: A Contrastive Learning Approach"). None when target has no such piece."""
    starts = [i for i, piece in enumerate(target) if deletable[piece]]
    if not starts:
        return None
    start = rng.choice(starts)
    end = start + 1
    span = rng.randint(1, longest)
    while end < len(target) and end - start < span and deletable[target[end]]:
        end += 1
    return target[:start] + target[end:]


def word_pieces(tokenizer: Tokenizer) -> list[bool]:
    """Per piece id: does it write a word (letters, digits, characters), not punctuation, a space or a control
    piece? The pieces the omission contrast may leave out."""
    processor = tokenizer.processor
    return [
        any(ch.isalnum() for ch in processor.id_to_piece(i))
        and not (processor.is_control(i) or processor.is_unknown(i))
        for i in range(tokenizer.vocab_size)
    ]


def sequence_log_probs(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(batch,) the log-probability the model gives each whole target (the sum over its pieces, padding left
    out), without label smoothing: the score the omission contrast compares."""
    picked = torch.log_softmax(logits.float(), dim=-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return (picked * (target != PAD_ID)).sum(dim=-1)


def omission_hinge(full: torch.Tensor, omitted: torch.Tensor, margin: float) -> torch.Tensor:
    """max(0, margin - (log p(y|x) - log p(y with a word left out|x))), averaged: zero once the model prefers
    the whole translation to the one missing a word by `margin` nats, so it only pushes where it omits."""
    return torch.relu(margin - (full - omitted)).mean()


def omission_loss(
    model: Transformer,
    encoded: EncoderOutput,
    decoded: DecoderOutput | None,
    pairs: list[tuple[list[int], list[int]]],
    tgt_in: torch.Tensor,
    tgt_out: torch.Tensor,
    deletable: list[bool],
    rng: random.Random,
    margin: float,
    bf16: bool,
) -> torch.Tensor:
    """The omission contrast of one batch: its targets decoded again with a span left out (omit_a_span), on the
    batch's own encoder pass (only the decoder runs again), and omission_hinge between the two scores.

    `decoded` is the batch's decoder pass when it read the whole targets; None when it read them thinned
    (--target-word-dropout): the whole targets are then decoded again here, since a score with pieces hidden
    from the decoder is lower for that alone, and the hinge would push on every sentence."""
    rows = [r for r, (_, target) in enumerate(pairs) if any(deletable[piece] for piece in target)]
    if not rows:
        return tgt_out.new_zeros((), dtype=torch.float32)
    omitted = [(pairs[r][0], omit_a_span(pairs[r][1], deletable, rng)) for r in rows]
    _, neg_in, neg_out = (t.to(tgt_out.device) for t in collate(omitted))
    memory = EncoderOutput(encoded.memory[rows], encoded.src_mask[rows])
    with torch.autocast(device_type=tgt_out.device.type, dtype=torch.bfloat16, enabled=bf16):
        negative = model.decode(neg_in, memory)
        full_logits = model.decode(tgt_in[rows], memory).logits if decoded is None else decoded.logits[rows]
    full = sequence_log_probs(full_logits, tgt_out[rows])
    return omission_hinge(full, sequence_log_probs(negative.logits, neg_out), margin)


def repeat_unlikelihood(logits: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """-log(1 - p(the piece just written)) at every step whose true next piece is another one, averaged: token-level
    unlikelihood (Welleck et al. 2019) with one negative per step, the immediate repeat, so that a piece written
    once is not written again at once (the stutter of 方法方法方法) unless the target repeats it."""
    previous = tgt_in  # the decoder's input at step t is the piece written at step t - 1
    steps = (previous != tgt_out) & (tgt_out != PAD_ID) & (previous != BOS_ID)
    p_repeat = torch.softmax(logits.float(), dim=-1).gather(-1, previous.unsqueeze(-1)).squeeze(-1)
    penalty = -torch.log1p(-p_repeat.clamp(max=1 - 1e-6))
    return (penalty * steps).sum() / steps.sum().clamp(min=1)


def average_weights(paths: list[Path | dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Checkpoint averaging (Section 6.1): the mean of the weights saved at the last few epochs (each a file, or
    weights already loaded: the --init-from weights with --average-with-init)."""
    total = None
    for path in paths:
        weights = path if isinstance(path, dict) else load_file(str(path))
        if total is None:
            total = {k: v.double() for k, v in weights.items()}
        else:
            for k, v in weights.items():
                total[k] += v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}


def transfer_weights(initial, model: Transformer, source_tok: Tokenizer, target_tok: Tokenizer) -> tuple[int, int]:
    """Warm start under new vocabularies: every weight but the embeddings is copied; an embedding row is copied
    where the new piece is an old piece (for a target without the dummy prefix, "我" also takes the row of "▁我"
    if the old vocabulary had no bare "我"). Rows of new pieces keep their fresh initialisation.
    Under one shared vocabulary (`--joint-vocab`) the one matrix takes a piece's row from the old source
    embedding where the old source vocabulary had the piece, else from the old target embedding.
    Returns how many source and target rows were copied."""
    old = weights_to_save(initial.model)
    new = model.state_dict()
    copied, mappings = [], []
    for keys, old_tok, new_tok in (
        (("src_embed.lookup.weight",), initial.source_tokenizer, source_tok),
        (("tgt_embed.lookup.weight", "generator.bias"), initial.target_tokenizer, target_tok),
    ):
        old_ids = {old_tok.piece(i): i for i in range(old_tok.vocab_size)}
        mapping = {}
        for i in range(new_tok.vocab_size):
            piece = new_tok.piece(i)
            j = old_ids.get(piece, old_ids.get("\u2581" + piece) if not piece.startswith("\u2581") else None)
            if i <= EOS_ID:
                j = i  # <pad>, <unk>, <s>, </s> keep their ids
            if j is not None:
                mapping[i] = j
        for key in keys:
            if key not in old:
                continue
            rows = new[key].clone()
            if key.endswith("bias"):
                rows[:] = old[key].mean()  # a new piece starts at the old pieces' mean output bias
            for i, j in mapping.items():
                rows[i] = old[key][j]
            old[key] = rows
        copied.append(len(mapping))
        mappings.append(mapping)
    if model.cfg.share_source_target_embeddings:
        shared = old.pop("tgt_embed.lookup.weight")
        shared[list(mappings[0])] = old["src_embed.lookup.weight"][list(mappings[0])]
        old["src_embed.lookup.weight"] = shared
    apply_weights(model, old)
    return copied[0], copied[1]


def extend_weights(initial, model: Transformer, source_tok: Tokenizer, target_tok: Tokenizer) -> tuple[int, int]:
    """Warm start under extended vocabularies (`--extend-vocab`): the first ids are the old pieces, every weight
    is copied as it was; the row of each appended piece (and its output bias) starts as the mean of the rows of
    the old pieces its word was cut into ("TensorFlow" from T, en, s, or, F, l, ow), so the model begins by
    reading the new piece about as it read the pieces it replaces; a capitalised word the old tokenizer cuts more
    finely than its lower-case form starts as the lower-case form was read ("▁Softmax" from ▁softmax, not from
    ▁So f t m a x; "▁Positional" from ▁position al): the text used the word mid-sentence, a teacher starts a
    sentence with it. Returns how many source and target rows were added."""
    old = weights_to_save(initial.model)
    added = []
    for keys, old_tok, new_tok in (
        (("src_embed.lookup.weight",), initial.source_tokenizer, source_tok),
        (("tgt_embed.lookup.weight", "generator.bias"), initial.target_tokenizer, target_tok),
    ):
        n_old = old_tok.vocab_size
        if new_tok.vocab_size < n_old or any(new_tok.piece(i) != old_tok.piece(i) for i in range(n_old)):
            raise ValueError("an extended vocabulary must keep every old piece at its id")
        starts = []  # for each appended piece, the old pieces whose rows it starts from (one cut per piece)
        for i in range(n_old, new_tok.vocab_size):
            word = new_tok.piece(i).replace(WORD_BOUNDARY, " ").strip()
            ids, lower_ids = old_tok.encode(word), old_tok.encode(word[:1].lower() + word[1:])
            starts.append(lower_ids if len(lower_ids) < len(ids) else ids)
        for key in keys:
            if key in old:
                old[key] = torch.cat([old[key][:n_old], *(old[key][ids].mean(0, keepdim=True) for ids in starts)])
        added.append(new_tok.vocab_size - n_old)
    apply_weights(model, old)
    return added[0], added[1]


class Run:
    """Everything about one training run that lives in its folder."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.state = directory / "state.pt"
        self.metrics = directory / "metrics.jsonl"
        self.source_spm = directory / "source.model"
        self.target_spm = directory / "target.model"

    def epoch_weights(self, epoch: int) -> Path:
        return self.dir / f"epoch{epoch:03d}.safetensors"

    def read_metrics(self) -> list[dict]:
        if not self.metrics.exists():
            return []
        return [json.loads(line) for line in self.metrics.read_text().splitlines() if line.strip()]


def model_shape(cfg: TransformerConfig) -> dict:
    """A configuration without the options a continued run sets itself (--dropout, --max-len): what it inherits."""
    return {k: v for k, v in asdict(cfg).items() if k not in ("dropout", "max_len")}


def setup_distributed() -> tuple[int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group(backend="gloo")  # processes on CPU cores (--device cuda is one process)
        return dist.get_rank(), world
    return 0, 1


def barrier(world: int):
    if world > 1:
        dist.barrier()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="tatoeba-en-zh", choices=sorted(LANGUAGES))
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--run-dir", type=Path, required=True)
    p.add_argument("--export", type=Path, help="write the final (averaged) checkpoint folder here")
    p.add_argument(
        "--init-from",
        type=Path,
        help="continue training from this checkpoint folder: its tokenizers, shape and weights (a fresh optimizer "
        "and schedule; --dropout and --max-len still apply); the shape options below are then ignored",
    )
    p.add_argument(
        "--new-tokenizers",
        action="store_true",
        help="with --init-from: train new tokenizers on this corpus (--src-vocab, --tgt-vocab) and keep every "
        "weight but the embeddings, whose rows are copied for the pieces both vocabularies share",
    )
    p.add_argument(
        "--joint-vocab",
        action="store_true",
        help="one tokenizer learnt on both languages' training text (--src-vocab pieces; source.model and "
        "target.model are then the same) and one matrix for both embeddings and the output layer (Section 3.4)",
    )
    p.add_argument(
        "--save-every-minutes",
        type=float,
        default=15.0,
        help="also write the resumable state this often inside an epoch (a run killed mid-epoch resumes at the "
        "batch after the last save, not at the epoch's start)",
    )
    p.add_argument("--stop-after-steps", type=int, default=None, help=argparse.SUPPRESS)  # tests: a kill mid-epoch
    p.add_argument(
        "--extend-vocab",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from: append a piece to each tokenizer for every word of the training data seen at least "
        "MIN_COUNT times that it cuts into 3 or more pieces (English words on the source side; Latin-script words "
        "on a Chinese target side), keeping every old piece, its id and its weights (0: no extension)",
    )
    p.add_argument(
        "--extend-characters",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from and a Chinese target: also append a piece for every Chinese character of the training "
        "targets seen at least MIN_COUNT times that the target tokenizer can only write as <unk> (0: none)",
    )
    p.add_argument(
        "--extend-terms",
        action="store_true",
        help="with --init-from: append a source piece for every word of the technical terms, in lower case and with "
        "a capital (a sentence starts with it), that the source tokenizer cuts into 3 or more pieces (Softmax: "
        "▁So f t m a x); a capitalised piece starts as its lower-case word was read",
    )
    p.add_argument(
        "--extend-domain-words",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from a joint vocabulary (en-de): append one piece, to source and target alike, for every "
        "word of the machine-learning training pairs (both languages, each pair once) seen at least MIN_COUNT times "
        "that the vocabulary cuts into 3 or more pieces (Encoder: ▁E n code r; neuronales: ▁neu ro n al es); with "
        "--extend-terms also every word of the terms, both languages (0: none)",
    )
    p.add_argument(
        "--retire-cross-word-pieces",
        action="store_true",
        help="with --init-from and a Chinese target: mark unused every target piece of two or more Chinese characters "
        "that is no word of the corpus's dictionary, names or terms (在医院, 有两, 只猫), so the training targets are "
        "cut at word boundaries; ids and weights stay, decoding still reads the retired pieces",
    )
    p.add_argument(
        "--extend-chinese-words",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from and a Chinese target: append a target piece for every Chinese word of the corpus's "
        "dictionary, names and terms seen at least MIN_COUNT times in the training targets that the target "
        "tokenizer writes in two or more pieces (模型: 模 型; 注意力: 注意 力); a new row starts as the mean of its "
        "pieces' rows. From scratch with a Chinese source (zh-en): the same for the new source tokenizer, whose "
        "pieces across two words are also retired",
    )
    p.add_argument(
        "--extend-names",
        action="store_true",
        help="with --init-from: append a source piece for every English word of the name pairs (given names, "
        "CC-CEDICT places) that the source tokenizer cuts into 3 or more pieces (Munich: ▁M un ic h)",
    )
    p.add_argument(
        "--ml-repeat",
        type=int,
        default=1,
        help="tatoeba-extra-ml-en-zh and -en-de: how many times each machine-learning training pair (en-de: each "
        "human-translated one) is seen per epoch",
    )
    p.add_argument(
        "--short-ml-repeat",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -en-de: extra times each machine-learning training pair of at most "
        "model.data.SHORT_ML_WORDS English words is seen per epoch (a teacher's sentences are short)",
    )
    p.add_argument(
        "--added-ml-repeat",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -zh-en: how many times each pair of en-zh-ml's files added on 2026-12-05 "
        "(model.data.ML_ADDED_FILES) is seen per epoch, their machine translation once; 0 leaves them out",
    )
    p.add_argument(
        "--machine-translated-repeat",
        type=int,
        default=1,
        help="tatoeba-extra-ml-en-de: how many times each pair of en-de-ml's machine-translated files (-mt) is "
        "seen per epoch; 0 leaves them out",
    )
    p.add_argument(
        "--city-copies",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: copies of each everyday training pair with a city, the city replaced by "
        "another CC-CEDICT place on both sides (Boston/波士顿 -> Munich/慕尼黑)",
    )
    p.add_argument(
        "--sentences-per-city",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: this many everyday sentences for each CC-CEDICT city (pairs with one city, "
        "it replaced by this one on both sides), so every city is in as many sentences (--city-copies: per pair)",
    )
    p.add_argument(
        "--apposed-names",
        type=int,
        default=0,
        metavar="COPIES",
        help='tatoeba-extra-ml-en-zh: copies of each everyday pair with "my friend", "her brother" … with a '
        "given name put after the relation on both sides (My friend Jack … 我的朋友杰克…; model.data.apposed_names)",
    )
    p.add_argument(
        "--language-copies",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: copies of each everyday pair with a language name (English, French …), each "
        "replaced by another on both sides (English into Japanese 英文…日语 -> French into Chinese 法文…汉语)",
    )
    p.add_argument(
        "--mined-cities",
        action="store_true",
        help="tatoeba-extra-en-de: the city copies also use the German names the sentence pairs give places CLDR "
        "does not list (Beijing -> Peking; model.data.mined_city_names)",
    )
    p.add_argument(
        "--terms-every-epoch",
        action="store_true",
        help="train on all of the corpus's technical terms (en-zh-ml/terms.tsv: attention 注意力) every epoch",
    )
    p.add_argument(
        "--capitalised-terms",
        action="store_true",
        help="with --terms-every-epoch: each term also as a sentence starts with it (Softmax, Attention): the "
        "machine-learning text writes them lower-case mid-sentence, where a teacher's sentence begins with them",
    )
    p.add_argument(
        "--lexicon-per-epoch",
        type=int,
        default=0,
        help="word pairs (dictionary glosses, names) drawn afresh each epoch from the corpus's lexicon and trained "
        "on beside its sentences (0: none)",
    )
    p.add_argument(
        "--name-copies",
        type=int,
        default=None,
        help="tatoeba-extra-en-zh: name-substituted copies of each training pair with a name (default 1)",
    )
    p.add_argument(
        "--names-every-epoch",
        action="store_true",
        help="train on all of the corpus's name pairs (given names, CLDR names: about 1,800) every epoch, beside "
        "any --lexicon-per-epoch draw; without the word pairs a model forgets names (Jerry -> 杰瑞)",
    )
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--max-minutes", type=float, default=None, help="stop after the epoch that passes this time")
    p.add_argument("--max-tokens", type=int, default=3000, help="padded tokens per batch (per process)")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=6, help="encoder layers = decoder layers")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--norm-first", action="store_true", help="pre-norm residuals instead of the paper's post-norm")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument(
        "--target-word-dropout",
        type=float,
        default=0.0,
        metavar="P",
        help="replace each piece of the decoder's input (not <s>) by <unk> with probability P while training, so "
        "the next piece must often be read from the source rather than guessed from the Chinese so far (a "
        "decoder that leans on its own prefix drops what the source says: 我的朋友 -> 住在, Jack left out)",
    )
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--lr-factor", type=float, default=1.0)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--src-vocab", type=int, default=4000)
    p.add_argument("--tgt-vocab", type=int, default=4000)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--average-last", type=int, default=5, help="average the weights of this many last epochs")
    p.add_argument(
        "--average-epochs",
        type=int,
        nargs=2,
        metavar=("FIRST", "LAST"),
        help="export the average of these epochs' weights (chosen beforehand, e.g. with "
        "benchmarks/score_run_epochs.py) instead of the better of the last and the last-N average; "
        "keep them with --average-last",
    )
    p.add_argument(
        "--average-with-init",
        action="store_true",
        help="with --average-epochs and --init-from: the --init-from weights (where this run started) are one "
        "more set in the average, as the last epochs of a run continued from them are (same tokenizers only)",
    )
    p.add_argument("--valid-bleu-sentences", type=int, default=500, help="0 skips the per-epoch BLEU")
    p.add_argument("--limit-train", type=int, default=None, help="use only the first N training pairs (tests)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--device",
        default="cpu",
        help="where the training steps run: cpu, or cuda on a machine with an NVIDIA GPU (one process); the "
        "per-epoch validation decodes on a CPU copy of the model, and the files written are a CPU run's",
    )
    p.add_argument(
        "--bf16",
        action="store_true",
        help="mixed precision: forward and backward under torch.autocast(bfloat16); weights, optimizer state and "
        "the exported checkpoint stay float32 / float16 (here, with AVX-512 BF16: 1.9 s instead of 3.0 s a "
        "3,500-token step of the 6+6 model); refused on a CPU without native bfloat16, where it is 20x slower",
    )
    p.add_argument(
        "--subword-alpha",
        type=float,
        default=0.0,
        help="subword regularisation: re-cut every training sentence each epoch with SentencePiece sampling at this "
        "alpha (0.1 is Kudo's setting; 0 keeps the one best segmentation)",
    )
    p.add_argument(
        "--omission-margin",
        type=float,
        default=0.0,
        help="add the omission contrast: each batch also scores its targets with one span of 1-3 word pieces left "
        "out, and a hinge loss asks the whole target to be this many nats likelier (0 leaves it out)",
    )
    p.add_argument("--omission-weight", type=float, default=1.0, help="the omission contrast's weight in the loss")
    p.add_argument(
        "--repeat-unlikelihood",
        type=float,
        default=0.0,
        help="add, at this weight, a loss on the probability of writing the piece just written again where the "
        "target writes another (token-level unlikelihood against stutter; 0 leaves it out)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--export-dtype", choices=["float32", "float16"], default="float16")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def bf16_is_native() -> bool:
    """Whether this CPU computes bfloat16 itself (AVX-512 BF16 or AMX). Without it (an AVX2 machine) autocast
    emulates bfloat16, measured 90 s instead of 4 s in float32 for one 3,000-token step of the 6+6 model."""
    return torch.ops.mkldnn._is_mkldnn_bf16_supported()


def main(argv=None):
    args = parse_args(argv)
    if args.average_with_init and not args.average_epochs:
        sys.exit("--average-with-init adds the --init-from weights to an --average-epochs average: name the epochs")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: this machine has no CUDA GPU that torch can use; train with --device cpu")
    if args.bf16 and device.type == "cpu" and not bf16_is_native():
        sys.exit(
            f"--bf16: this CPU ({torch.backends.cpu.get_cpu_capability()}) has no native bfloat16, so "
            "autocast would emulate it about 20x slower than float32; train without --bf16"
        )
    rank, world = setup_distributed()
    if world > 1 and args.omission_margin:
        sys.exit("--omission-margin trains in one process (its second decoder pass bypasses DistributedDataParallel)")
    if world > 1 and device.type != "cpu":
        sys.exit("--device cuda trains in one process (torchrun's processes share the CPU cores)")
    if args.threads:
        torch.set_num_threads(args.threads)
    run = Run(args.run_dir)
    run.dir.mkdir(parents=True, exist_ok=True)
    src_lang, tgt_lang = LANGUAGES[args.corpus]

    splits = load_splits(
        args.corpus,
        args.data_dir,
        name_copies=args.name_copies,
        ml_repeat=args.ml_repeat,
        city_copies=args.city_copies,
        mined_cities=args.mined_cities,
        sentences_per_city=args.sentences_per_city,
        short_ml_repeat=args.short_ml_repeat,
        machine_translated_repeat=args.machine_translated_repeat,
        added_ml_repeat=args.added_ml_repeat,
        apposed_name_copies=args.apposed_names,
        language_copies=args.language_copies,
    )
    pairs = training_pairs(splits.train)
    if args.limit_train:
        pairs = pairs[: args.limit_train]

    terms = splits.terms + (sentence_initial(splits.terms) if args.capitalised_terms else [])
    initial = load_checkpoint(args.init_from) if args.init_from else None
    extending = bool(
        args.extend_vocab
        or args.extend_characters
        or args.extend_terms
        or args.extend_names
        or args.extend_chinese_words
        or args.extend_domain_words
    )
    if args.retire_cross_word_pieces and (not initial or args.new_tokenizers or tgt_lang != "zh"):
        sys.exit("--retire-cross-word-pieces retires pieces of --init-from's Chinese target tokenizer")
    words_as_source_pieces = bool(args.extend_chinese_words and src_lang == "zh" and not initial)
    if extending and (not initial or args.new_tokenizers) and not words_as_source_pieces:
        sys.exit("--extend-* options extend the tokenizers of --init-from (not --new-tokenizers)")
    if args.joint_vocab and initial and not args.new_tokenizers:
        sys.exit("--joint-vocab with --init-from needs --new-tokenizers (the checkpoint has two vocabularies)")
    joint = bool(initial and initial.model.cfg.share_source_target_embeddings)
    if args.extend_domain_words and not joint:
        sys.exit("--extend-domain-words extends --init-from's joint vocabulary (one for both languages)")
    if joint and (args.extend_vocab or args.extend_characters or args.extend_names or args.extend_chinese_words):
        sys.exit("a joint vocabulary is extended with --extend-domain-words and --extend-terms only")
    if rank == 0 and joint and extending and not (run.source_spm.exists() and run.target_spm.exists()):
        # One vocabulary, one embedding matrix: the same pieces appended for both languages.
        tok = initial.source_tokenizer
        texts = [text for pair in splits.domain_train for text in pair]
        words = words_cut_finely(texts, tok.processor, EXTENSION_WORDS["joint"], args.extend_domain_words)
        if args.extend_terms:
            words += lexicon_words_cut_finely(
                [text for pair in splits.terms for text in pair], tok.processor, EXTENSION_WORDS["joint"], True
            )
        model_bytes = extend_sentencepiece((Path(args.init_from) / "source.model").read_bytes(), words, True)
        run.source_spm.write_bytes(model_bytes)
        run.target_spm.write_bytes(model_bytes)
    if rank == 0 and initial and not args.new_tokenizers and not (run.source_spm.exists() and run.target_spm.exists()):
        for name, side in (("source.model", "source"), ("target.model", "target")):
            model_bytes = (Path(args.init_from) / name).read_bytes()
            tok = initial.source_tokenizer if side == "source" else initial.target_tokenizer
            texts = [s if side == "source" else t for s, t in pairs + terms * args.terms_every_epoch]
            chinese_target = side == "target" and tgt_lang == "zh"
            words = []
            if args.extend_vocab and (side == "source" or chinese_target):
                words = words_cut_finely(texts, tok.processor, EXTENSION_WORDS[side], args.extend_vocab)
            if side == "source" and args.extend_terms:
                words += lexicon_words_cut_finely(
                    [en for en, _ in splits.terms], tok.processor, EXTENSION_WORDS[side], with_capital=True
                )
            if side == "source" and args.extend_names:
                words += lexicon_words_cut_finely(
                    [en for en, _ in splits.names], tok.processor, EXTENSION_WORDS[side], with_capital=False
                )
            if args.extend_characters and chinese_target:
                words += characters_it_cannot_write(
                    texts + [t for _, t in splits.names], tok.processor, args.extend_characters
                )
            dictionary = {zh for _, zh in splits.lexicon + splits.names + splits.terms}
            if args.extend_chinese_words and chinese_target:
                words += chinese_words_cut_finely(texts, tok.processor, dictionary, args.extend_chinese_words)
            if words:
                model_bytes = extend_sentencepiece(model_bytes, words, word_start=not chinese_target)
            if args.retire_cross_word_pieces and chinese_target:
                model_bytes = retire_pieces(model_bytes, pieces_across_words(tok.processor, dictionary))
            (run.dir / name).write_bytes(model_bytes)
    # Tokenizers are trained once, on the training split only, and reused when the run resumes.
    if rank == 0 and args.joint_vocab and not (run.source_spm.exists() and run.target_spm.exists()):
        # English and Chinese share only the Latin words of the machine-learning text (Transformer, softmax) and
        # names written in Latin; NFKC for both, and every rare Chinese character need not have a piece.
        chinese = "zh" in (src_lang, tgt_lang)
        joint = train_sentencepiece(
            [s for s, _ in pairs] + [t for _, t in pairs], args.src_vocab, 0.9995 if chinese else 1.0
        )
        run.source_spm.write_bytes(joint)
        run.target_spm.write_bytes(joint)
    if rank == 0 and not (run.source_spm.exists() and run.target_spm.exists()):
        for path, texts, size, lang in (
            (run.source_spm, [s for s, _ in pairs], args.src_vocab, src_lang),
            (run.target_spm, [t for _, t in pairs], args.tgt_vocab, tgt_lang),
        ):
            # Not every rare Chinese character gets a piece of its own (0.9995 is SentencePiece's advice for CJK),
            # and no "▁" before a sentence's first character (Chinese has no spaces). A Chinese target keeps its
            # full-width punctuation (no NFKC), so the model can write it; a Chinese source takes NFKC, so ？ and ?,
            # typed either way, read the same.
            chinese = lang == "zh"
            normalization = "identity" if chinese and path == run.target_spm else "nmt_nfkc"
            coverage = 0.9995 if chinese else 1.0
            model_bytes = train_sentencepiece(texts, size, coverage, normalization, dummy_prefix=not chinese)
            if words_as_source_pieces and path == run.source_spm:
                dictionary = {zh for zh, _ in splits.lexicon + splits.names + splits.terms}
                processor = spm.SentencePieceProcessor(model_proto=model_bytes)
                words = chinese_words_cut_finely(texts, processor, dictionary, args.extend_chinese_words)
                model_bytes = extend_sentencepiece(model_bytes, words, word_start=False)
                # and, as --retire-cross-word-pieces does for a Chinese target, no piece spans two words (的模型),
                # so the source axis of every map reads in words
                extended = spm.SentencePieceProcessor(model_proto=model_bytes)
                retired = pieces_across_words(extended, dictionary)
                model_bytes = retire_pieces(model_bytes, retired)
                print(
                    f"Chinese source: {len(words)} dictionary words appended as pieces, {len(retired)} pieces "
                    "across words retired"
                )
            path.write_bytes(model_bytes)
    barrier(world)
    source_tok, target_tok = Tokenizer.load(run.source_spm), Tokenizer.load(run.target_spm)

    def encode_pairs(epoch: int) -> list[tuple[list[int], list[int]]]:
        if args.subword_alpha:
            spm.set_random_generator_seed(args.seed * 1000 + epoch)  # the same cuts again when a run resumes
            cut = lambda tok, text: tok.sample(text, args.subword_alpha)  # noqa: E731
        else:
            cut = lambda tok, text: tok.encode(text)  # noqa: E731
        chosen = pairs
        if args.lexicon_per_epoch and splits.lexicon:
            draw = random.Random(args.seed * 1000 + epoch).sample(
                splits.lexicon, min(args.lexicon_per_epoch, len(splits.lexicon))
            )
            chosen = pairs + draw
        if args.names_every_epoch:
            chosen = chosen + splits.names
        if args.terms_every_epoch:
            chosen = chosen + terms
        encoded = ((cut(source_tok, s), cut(target_tok, t)) for s, t in chosen)
        return [(s, t) for s, t in encoded if len(s) + 1 <= args.max_len and len(t) + 1 <= args.max_len]

    data = encode_pairs(0)
    deletable = word_pieces(target_tok) if args.omission_margin else None
    valid = splits.valid
    valid_pairs = [(source_tok.encode(e.source), target_tok.encode(r)) for e in valid for r in e.references[:1]]

    cfg = TransformerConfig(
        src_vocab_size=source_tok.vocab_size,
        tgt_vocab_size=target_tok.vocab_size,
        d_model=args.d_model,
        n_heads=args.heads,
        d_ff=args.d_ff,
        n_encoder_layers=args.layers,
        n_decoder_layers=args.layers,
        dropout=args.dropout,
        max_len=args.max_len,
        norm_first=args.norm_first,
        share_source_target_embeddings=args.joint_vocab,
    )
    if initial:
        shape = model_shape(initial.model.cfg)
        if args.new_tokenizers or extending:
            shape.update(src_vocab_size=source_tok.vocab_size, tgt_vocab_size=target_tok.vocab_size)
        if args.new_tokenizers:
            shape.update(share_source_target_embeddings=args.joint_vocab)
        cfg = TransformerConfig(**{**shape, "dropout": args.dropout, "max_len": args.max_len})
    torch.manual_seed(args.seed)
    model = Transformer(cfg)
    if initial and args.new_tokenizers:
        shared = transfer_weights(initial, model, source_tok, target_tok)
        if rank == 0:
            print(
                f"warm start from {args.init_from}: embedding rows copied for {shared[0]} source and {shared[1]} "
                "target pieces"
            )
    elif initial and extending:
        added = extend_weights(initial, model, source_tok, target_tok)
        if rank == 0:
            print(f"warm start from {args.init_from}: {added[0]} source and {added[1]} target pieces added")
    elif initial:
        apply_weights(model, weights_to_save(initial.model))
    model.to(device)  # before the optimizer, whose state (also a resumed one) then lives beside the weights
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: noam_rate(step + 1, cfg.d_model, args.warmup, args.lr_factor)
    )
    start_epoch, elapsed_before, partial = 1, 0.0, None
    if run.state.exists():
        state = torch.load(run.state, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        torch.set_rng_state(state["rng"])
        if device.type == "cuda" and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"])
        start_epoch, elapsed_before, partial = state["epoch"] + 1, state["elapsed"], state.get("partial")
        if rank == 0:
            within = f", {partial['batches_done']} batches into epoch {start_epoch}" if partial else ""
            print(f"resuming {run.dir} after epoch {state['epoch']}{within}")
            # A run killed after logging an epoch but before saving its state repeats that epoch: drop its line.
            kept = [m for m in run.read_metrics() if m["epoch"] <= state["epoch"]]
            run.metrics.write_text("".join(json.dumps(m) + "\n" for m in kept))
    trainable = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    if rank == 0:
        print(
            f"{len(data)} training pairs, {count_parameters(model) / 1e6:.1f}M parameters, "
            f"{world} process(es), {torch.get_num_threads()} threads each"
        )

    def save_state(epoch_done: int, partial: dict | None = None):
        """The resumable state, written last and atomically: a run killed mid-write resumes from the previous one.
        partial: how far into the next epoch it got (batches done, their loss), for a save inside an epoch."""
        tmp = run.state.with_suffix(".tmp")
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if device.type == "cuda" else None,  # dropout's, on a GPU
                "epoch": epoch_done,
                "elapsed": time.time() - started,
                "partial": partial,
                "args": {k: str(v) for k, v in vars(args).items()},
            },
            tmp,
        )
        tmp.replace(run.state)

    started = time.time() - elapsed_before
    steps_this_call = 0
    for epoch in range(start_epoch, args.epochs + 1):
        model.train()
        if args.subword_alpha:
            data = encode_pairs(epoch)
        lengths = [(len(s) + 1, len(t) + 1) for s, t in data]
        batches = make_batches(lengths, args.max_tokens, seed=args.seed * 1000 + epoch)
        batches = batches[: len(batches) // world * world][rank::world]  # equal share per process
        # A run resumed inside an epoch skips the batches it already trained on (the batches are the same: they
        # are drawn from a seed of the epoch) and carries on their loss and time.
        done = partial["batches_done"] if partial else 0
        total_loss, total_tokens = (partial["loss"], partial["tokens"]) if partial else (0.0, 0)
        epoch_start = time.time() - (partial["seconds"] if partial else 0.0)
        partial, last_save = None, time.time()
        bar = tqdm(
            desc=f"epoch {epoch}",
            disable=rank != 0 or args.no_progress,
            mininterval=5,
            initial=done,
            total=len(batches),
        )
        for b, batch in enumerate(batches[done:], start=done):
            # What is drawn for a batch (pieces dropped, spans left out) comes from its own seed: a resumed run
            # draws the same.
            batch_seed = args.seed * 1_000_003 + epoch * 10_007 + b
            src, tgt_in, tgt_out = collate([data[i] for i in batch])
            # what the decoder reads; tgt_in stays whole (repeat_unlikelihood asks what the previous piece was)
            decoder_in = tgt_in
            if args.target_word_dropout:
                generator = torch.Generator().manual_seed(batch_seed)
                decoder_in = drop_target_words(tgt_in, args.target_word_dropout, generator)
            src, tgt_in, tgt_out, decoder_in = (t.to(device) for t in (src, tgt_in, tgt_out, decoder_in))
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=args.bf16):
                encoded, decoded = trainable(src, decoder_in)
            loss = cross_entropy = loss_fn(decoded.logits.float(), tgt_out, args.label_smoothing)
            if args.repeat_unlikelihood:
                loss = loss + args.repeat_unlikelihood * repeat_unlikelihood(decoded.logits, tgt_in, tgt_out)
            if args.omission_margin:
                rng = random.Random(batch_seed)
                loss = loss + args.omission_weight * omission_loss(
                    model,
                    encoded,
                    None if args.target_word_dropout else decoded,  # the contrast compares whole targets only
                    [data[i] for i in batch],
                    tgt_in,
                    tgt_out,
                    deletable,
                    rng,
                    args.omission_margin,
                    args.bf16,
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            schedule.step()
            tokens = int((tgt_out != PAD_ID).sum())
            total_loss += cross_entropy.item() * tokens  # train_loss stays the cross-entropy, comparable across runs
            total_tokens += tokens
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{schedule.get_last_lr()[0]:.2e}")
            steps_this_call += 1
            stop = (
                args.stop_after_steps is not None and steps_this_call >= args.stop_after_steps and b + 1 < len(batches)
            )
            if b + 1 < len(batches) and (stop or time.time() - last_save >= args.save_every_minutes * 60):
                if rank == 0:
                    save_state(
                        epoch - 1,
                        {
                            "batches_done": b + 1,
                            "loss": total_loss,
                            "tokens": total_tokens,
                            "seconds": time.time() - epoch_start,
                        },
                    )
                barrier(world)
                last_save = time.time()
            if stop:
                bar.close()
                return
        bar.close()

        if rank == 0:
            # Validation decodes with model.decode, which builds its tensors on the CPU: a CPU copy off a GPU.
            on_cpu = model if device.type == "cpu" else copy.deepcopy(model).to("cpu")
            record = {
                "epoch": epoch,
                "step": schedule.last_epoch,
                "train_loss": round(total_loss / max(total_tokens, 1), 4),
                **validate(on_cpu, valid_pairs, valid, source_tok, target_tok, tgt_lang, args),
                **{
                    f"{name}_{k}": v
                    for name, examples in splits.domains.items()
                    if name.endswith("_valid")
                    for k, v in validate_bleu(on_cpu, examples, source_tok, target_tok, tgt_lang, args).items()
                },
                "epoch_seconds": round(time.time() - epoch_start, 1),
                "elapsed_minutes": round((time.time() - started) / 60, 1),
            }
            print(json.dumps(record))
            with open(run.metrics, "a") as f:
                f.write(json.dumps(record) + "\n")
            save_file(weights_to_save(on_cpu), str(run.epoch_weights(epoch)))
            stale = run.epoch_weights(epoch - args.average_last)
            if stale.exists():
                stale.unlink()
            save_state(epoch)
        barrier(world)
        if args.max_minutes and (time.time() - started) / 60 > args.max_minutes:
            if rank == 0:
                print(f"stopping after epoch {epoch}: past {args.max_minutes} minutes")
            break

    if rank == 0 and args.export:
        export(run, cfg, args, source_tok, target_tok, valid, tgt_lang)
    if world > 1:
        dist.destroy_process_group()


@torch.no_grad()
def validate(model, valid_pairs, valid, source_tok, target_tok, tgt_lang, args) -> dict:
    model.eval()
    total_loss, total_tokens = 0.0, 0
    for i in range(0, len(valid_pairs), 128):
        src, tgt_in, tgt_out = collate(valid_pairs[i : i + 128])
        _, decoded = model(src, tgt_in)
        tokens = int((tgt_out != PAD_ID).sum())
        total_loss += loss_fn(decoded.logits, tgt_out, 0.0).item() * tokens
        total_tokens += tokens
    result = {"valid_loss": round(total_loss / total_tokens, 4)}
    result.update(
        {f"valid_{k}": v for k, v in validate_bleu(model, valid, source_tok, target_tok, tgt_lang, args).items()}
    )
    return result


@torch.no_grad()
def validate_bleu(model, examples, source_tok, target_tok, tgt_lang, args) -> dict:
    """Greedy BLEU and chrF of the first --valid-bleu-sentences examples ({} when that is 0)."""
    if not args.valid_bleu_sentences:
        return {}
    model.eval()
    subset = examples[: args.valid_bleu_sentences]
    hyps = translate_corpus(model, source_tok, target_tok, [e.source for e in subset])
    scores = score(hyps, subset, bleu_tokenizer_for(tgt_lang))
    return {"bleu": scores["bleu"], "chrf": scores["chrf"]}


def starting_weights(
    init_from: str | None, cfg: TransformerConfig, source_tok: Tokenizer, target_tok: Tokenizer
) -> dict[str, torch.Tensor]:
    """The weights a continued run started from, as an epoch's file holds them: the checkpoint's, with the new rows
    the run started with where it extended the vocabularies (`--extend-vocab`, `--extend-terms`, ...;
    `extend_weights`). New tokenizers or another shape have no such weights, even at the same vocabulary sizes."""
    if not init_from:
        sys.exit("--average-with-init needs --init-from (the weights the run started from)")
    initial = load_checkpoint(init_from)
    vocab = ("src_vocab_size", "tgt_vocab_size")
    layers = {k: v for k, v in model_shape(initial.model.cfg).items() if k not in vocab}
    if layers == {k: v for k, v in model_shape(cfg).items() if k not in vocab}:
        model = Transformer(cfg)
        try:
            extend_weights(initial, model, source_tok, target_tok)  # with no new piece: the checkpoint's weights
        except ValueError:
            pass
        else:
            return weights_to_save(model)
    sys.exit(f"--average-with-init: {init_from} has another shape or vocabulary than this run")


def export(run: Run, cfg: TransformerConfig, args, source_tok, target_tok, valid, tgt_lang):
    """Average the last epochs' weights, keep whichever of averaged / last scores better on validation BLEU
    (or take the average of --average-epochs), and write the checkpoint folder."""
    metrics = run.read_metrics()
    last_epoch = metrics[-1]["epoch"]
    if args.average_epochs:
        first, last = args.average_epochs
        paths = [run.epoch_weights(e) for e in range(first, last + 1)]
        missing = [p.name for p in paths if not p.exists()]
        if missing:
            raise SystemExit(f"--average-epochs: {', '.join(missing)} not in {run.dir} (see --average-last)")
        name = f"average of epochs {first}-{last}"
        if args.average_with_init:
            starting = starting_weights(args.init_from, cfg, source_tok, target_tok)
            paths = [starting, *paths]
            name = f"average of the --init-from weights and epochs {first}-{last}"
        candidates = {name: average_weights(paths)}
    else:
        paths = [run.epoch_weights(e) for e in range(last_epoch - args.average_last + 1, last_epoch + 1)]
        paths = [p for p in paths if p.exists()]
        candidates = {"last": load_file(str(run.epoch_weights(last_epoch)))}
        if len(paths) > 1:
            candidates[f"average of last {len(paths)}"] = average_weights(paths)
    model = Transformer(cfg)
    best_name, best_bleu, best_weights = None, -1.0, None
    for name, weights in candidates.items():
        apply_weights(model, weights)
        model.eval()
        hyps = translate_corpus(model, source_tok, target_tok, [e.source for e in valid])
        bleu = score(hyps, valid, bleu_tokenizer_for(tgt_lang))["bleu"]
        print(f"export candidate {name}: valid BLEU {bleu}")
        if bleu > best_bleu:
            best_name, best_bleu, best_weights = name, bleu, weights
    apply_weights(model, best_weights)
    src_lang, _ = LANGUAGES[args.corpus]
    metadata = {
        "corpus": args.corpus,
        "source_language": src_lang,
        "target_language": tgt_lang,
        "epochs": last_epoch,
        "weights": best_name,
        "valid_bleu_greedy": best_bleu,
        "training_minutes": round(metrics[-1]["elapsed_minutes"], 1),
        "train_args": {k: str(v) for k, v in vars(args).items() if k not in ("run_dir", "export", "data_dir")},
    }
    dtype = torch.float16 if args.export_dtype == "float16" else torch.float32
    save_checkpoint(args.export, model, run.source_spm.read_bytes(), run.target_spm.read_bytes(), metadata, dtype=dtype)
    (Path(args.export) / "metrics.jsonl").write_text(run.metrics.read_text())
    print(f"exported {best_name} to {args.export} (valid BLEU {best_bleu})")


if __name__ == "__main__":
    main()
