"""The command line of `python -m model.train`: its options, grouped as --help shows them, and the checks of
combinations that cannot run (each says what to do instead)."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from ..data import DEFAULT_DATA_DIR

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


def _data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data", "which corpus, how its parts are weighed in an epoch, batches")
    g.add_argument("--corpus", default="tatoeba-en-zh", choices=sorted(LANGUAGES))
    g.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    g.add_argument(
        "--ml-repeat",
        type=int,
        default=1,
        help="tatoeba-extra-ml-en-zh and -en-de: how many times each machine-learning training pair (en-de: each "
        "human-translated one) is seen per epoch",
    )
    g.add_argument(
        "--short-ml-repeat",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -en-de: extra times each machine-learning training pair of at most "
        "model.data.SHORT_ML_WORDS English words is seen per epoch (a teacher's sentences are short)",
    )
    g.add_argument(
        "--added-ml-repeat",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -zh-en: how many times each pair of en-zh-ml's files added on 2026-12-05 "
        "(model.data.ML_ADDED_FILES) is seen per epoch, their machine translation once; 0 leaves them out",
    )
    g.add_argument(
        "--two-name-copies",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -zh-en: copies of each everyday training pair with two given names, or a "
        "name and a city, all of them replaced by others (model.data.copies_with_other_names; the names sets "
        "names_valid and names_test measure it)",
    )
    g.add_argument(
        "--unlisted-name-sentences",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh and -zh-en: this many everyday pairs with two names, or a name and a city, for "
        "each of half the given names no list holds (model.data.UNLISTED_NAMES_TRAINED: Layla 蕾拉), one given name "
        "replaced by it (the names_unlisted sets measure it, the other half apart)",
    )
    g.add_argument(
        "--all-unlisted-names",
        action="store_true",
        help="with --unlisted-name-sentences: sentences for every name of model.data.UNLISTED_NAMES (Lisa 丽萨, Laura "
        "劳拉), not half: the half left out learnt nothing from the others' sentences",
    )
    g.add_argument(
        "--core-word-repeat",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-de: extra times each machine-learning training pair whose German holds a lesson "
        "word (model.data.CORE_GERMAN_WORDS: Encoder, Schicht, Köpfe, Aufmerksamkeit, Wahrscheinlichkeit …) is seen; "
        "tatoeba-extra-ml-zh-en: each pair with a seed or lesson word and its English (model.data.CORE_CHINESE_WORDS: "
        "追 with chase, 注意力头 with attention head)",
    )
    g.add_argument(
        "--machine-translated-repeat",
        type=int,
        default=1,
        help="tatoeba-extra-ml-en-de: how many times each pair of en-de-ml's machine-translated files (-mt) is "
        "seen per epoch; 0 leaves them out",
    )
    g.add_argument(
        "--city-copies",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: copies of each everyday training pair with a city, the city replaced by "
        "another CC-CEDICT place on both sides (Boston/波士顿 -> Munich/慕尼黑)",
    )
    g.add_argument(
        "--sentences-per-city",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: this many everyday sentences for each CC-CEDICT city (pairs with one city, "
        "it replaced by this one on both sides), so every city is in as many sentences (--city-copies: per pair)",
    )
    g.add_argument(
        "--apposed-names",
        type=int,
        default=0,
        metavar="COPIES",
        help='tatoeba-extra-ml-en-zh: copies of each everyday pair with "my friend", "her brother" … with a '
        "given name put after the relation on both sides (My friend Jack … 我的朋友杰克…; model.data.apposed_names)",
    )
    g.add_argument(
        "--language-copies",
        type=int,
        default=0,
        help="tatoeba-extra-ml-en-zh: copies of each everyday pair with a language name (English, French …), each "
        "replaced by another on both sides (English into Japanese 英文…日语 -> French into Chinese 法文…汉语)",
    )
    g.add_argument(
        "--mined-cities",
        action="store_true",
        help="tatoeba-extra-en-de: the city copies also use the German names the sentence pairs give places CLDR "
        "does not list (Beijing -> Peking; model.data.mined_city_names)",
    )
    g.add_argument(
        "--name-copies",
        type=int,
        default=None,
        help="tatoeba-extra-en-zh: name-substituted copies of each training pair with a name (default 1)",
    )
    g.add_argument(
        "--names-every-epoch",
        action="store_true",
        help="train on all of the corpus's name pairs (given names, CLDR names: about 1,800) every epoch, beside "
        "any --lexicon-per-epoch draw; without the word pairs a model forgets names (Jerry -> 杰瑞)",
    )
    g.add_argument(
        "--terms-every-epoch",
        action="store_true",
        help="train on all of the corpus's technical terms (en-zh-ml/terms.tsv: attention 注意力) every epoch",
    )
    g.add_argument(
        "--capitalised-terms",
        action="store_true",
        help="with --terms-every-epoch: each term also as a sentence starts with it (Softmax, Attention): the "
        "machine-learning text writes them lower-case mid-sentence, where a teacher's sentence begins with them",
    )
    g.add_argument(
        "--lexicon-per-epoch",
        type=int,
        default=0,
        help="word pairs (dictionary glosses, names) drawn afresh each epoch from the corpus's lexicon and trained "
        "on beside its sentences (0: none)",
    )


def _batch_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("batches", "how many pairs a step reads, and how long a pair may be")
    g.add_argument("--limit-train", type=int, default=None, help="use only the first N training pairs (tests)")
    g.add_argument("--max-tokens", type=int, default=3000, help="padded tokens per batch (per process)")
    g.add_argument("--max-len", type=int, default=128)


def _vocabulary_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "vocabulary", "where the weights and tokenizers start, and how the vocabularies are learnt or extended"
    )
    g.add_argument(
        "--init-from",
        type=Path,
        help="continue training from this checkpoint folder: its tokenizers, shape and weights (a fresh optimizer "
        "and schedule; --dropout and --max-len still apply); the shape options below are then ignored",
    )
    g.add_argument(
        "--new-tokenizers",
        action="store_true",
        help="with --init-from: train new tokenizers on this corpus (--src-vocab, --tgt-vocab) and keep every "
        "weight but the embeddings, whose rows are copied for the pieces both vocabularies share",
    )
    g.add_argument(
        "--joint-vocab",
        action="store_true",
        help="one tokenizer learnt on both languages' training text (--src-vocab pieces; source.model and "
        "target.model are then the same) and one matrix for both embeddings and the output layer (Section 3.4)",
    )
    g.add_argument("--src-vocab", type=int, default=4000)
    g.add_argument("--tgt-vocab", type=int, default=4000)
    g.add_argument(
        "--extend-vocab",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from: append a piece to each tokenizer for every word of the training data seen at least "
        "MIN_COUNT times that it cuts into 3 or more pieces (English words on the source side; Latin-script words "
        "on a Chinese target side), keeping every old piece, its id and its weights (0: no extension)",
    )
    g.add_argument(
        "--extend-characters",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from and a Chinese target: also append a piece for every Chinese character of the training "
        "targets seen at least MIN_COUNT times that the target tokenizer can only write as <unk> (0: none)",
    )
    g.add_argument(
        "--extend-terms",
        action="store_true",
        help="with --init-from: append a source piece for every word of the technical terms, in lower case and with "
        "a capital (a sentence starts with it), that the source tokenizer cuts into 3 or more pieces (Softmax: "
        "▁So f t m a x); a capitalised piece starts as its lower-case word was read",
    )
    g.add_argument(
        "--extend-domain-words",
        type=int,
        default=0,
        metavar="MIN_COUNT",
        help="with --init-from a joint vocabulary (en-de): append one piece, to source and target alike, for every "
        "word of the machine-learning training pairs (both languages, each pair once) seen at least MIN_COUNT times "
        "that the vocabulary cuts into 3 or more pieces (Encoder: ▁E n code r; neuronales: ▁neu ro n al es); with "
        "--extend-terms also every word of the terms, both languages (0: none)",
    )
    g.add_argument(
        "--extend-names",
        action="store_true",
        help="with --init-from: append a source piece for every English word of the name pairs (given names, "
        "CC-CEDICT places) that the source tokenizer cuts into 3 or more pieces (Munich: ▁M un ic h)",
    )
    g.add_argument(
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
    g.add_argument(
        "--retire-cross-word-pieces",
        action="store_true",
        help="with --init-from and a Chinese target: mark unused every target piece of two or more Chinese characters "
        "that is no word of the corpus's dictionary, names or terms (在医院, 有两, 只猫), so the training targets are "
        "cut at word boundaries; ids and weights stay, decoding still reads the retired pieces",
    )
    g.add_argument(
        "--subword-alpha",
        type=float,
        default=0.0,
        help="subword regularisation: re-cut every training sentence each epoch with SentencePiece sampling at this "
        "alpha (0.1 is Kudo's setting; 0 keeps the one best segmentation)",
    )


def _model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model", "the Transformer's shape (a continued run inherits its checkpoint's)")
    g.add_argument("--d-model", type=int, default=256)
    g.add_argument("--d-ff", type=int, default=1024)
    g.add_argument("--heads", type=int, default=8)
    g.add_argument("--layers", type=int, default=6, help="encoder layers = decoder layers")
    g.add_argument("--dropout", type=float, default=0.1)
    g.add_argument("--norm-first", action="store_true", help="pre-norm residuals instead of the paper's post-norm")


def _optimisation_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("optimisation", "the learning-rate schedule and the losses")
    g.add_argument("--warmup", type=int, default=1000)
    g.add_argument("--lr-factor", type=float, default=1.0)
    g.add_argument("--clip", type=float, default=1.0)
    g.add_argument("--label-smoothing", type=float, default=0.1)
    g.add_argument(
        "--target-word-dropout",
        type=float,
        default=0.0,
        metavar="P",
        help="replace each piece of the decoder's input (not <s>) by <unk> with probability P while training, so "
        "the next piece must often be read from the source rather than guessed from the Chinese so far (a "
        "decoder that leans on its own prefix drops what the source says: 我的朋友 -> 住在, Jack left out)",
    )
    g.add_argument(
        "--omission-margin",
        type=float,
        default=0.0,
        help="add the omission contrast: each batch also scores its targets with one span of 1-3 word pieces left "
        "out, and a hinge loss asks the whole target to be this many nats likelier (0 leaves it out)",
    )
    g.add_argument("--omission-weight", type=float, default=1.0, help="the omission contrast's weight in the loss")
    g.add_argument(
        "--repeat-unlikelihood",
        type=float,
        default=0.0,
        help="add, at this weight, a loss on the probability of writing the piece just written again where the "
        "target writes another (token-level unlikelihood against stutter; 0 leaves it out)",
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("run", "epochs, saving and resuming, the machine, averaging and export")
    g.add_argument("--run-dir", type=Path, required=True)
    g.add_argument("--epochs", type=int, default=30)
    g.add_argument("--max-minutes", type=float, default=None, help="stop after the epoch that passes this time")
    g.add_argument(
        "--save-every-minutes",
        type=float,
        default=15.0,
        help="also write the resumable state this often inside an epoch (a run killed mid-epoch resumes at the "
        "batch after the last save, not at the epoch's start)",
    )
    g.add_argument("--stop-after-steps", type=int, default=None, help=argparse.SUPPRESS)  # tests: a kill mid-epoch
    g.add_argument("--seed", type=int, default=1)
    g.add_argument(
        "--device",
        default="cpu",
        help="where the training steps run: cpu, or cuda on a machine with an NVIDIA GPU (one process); the "
        "per-epoch validation decodes on a CPU copy of the model, and the files written are a CPU run's",
    )
    g.add_argument(
        "--bf16",
        action="store_true",
        help="mixed precision: forward and backward under torch.autocast(bfloat16); weights, optimizer state and "
        "the exported checkpoint stay float32 / float16 (here, with AVX-512 BF16: 1.9 s instead of 3.0 s a "
        "3,500-token step of the 6+6 model); refused on a CPU without native bfloat16, where it is 20x slower",
    )
    g.add_argument("--threads", type=int, default=None)
    g.add_argument("--valid-bleu-sentences", type=int, default=500, help="0 skips the per-epoch BLEU")
    g.add_argument("--no-progress", action="store_true")
    g.add_argument("--average-last", type=int, default=5, help="average the weights of this many last epochs")
    g.add_argument(
        "--average-epochs",
        type=int,
        nargs=2,
        metavar=("FIRST", "LAST"),
        help="export the average of these epochs' weights (chosen beforehand, e.g. with "
        "benchmarks/score_run_epochs.py) instead of the better of the last and the last-N average; "
        "keep them with --average-last",
    )
    g.add_argument(
        "--average-with-init",
        action="store_true",
        help="with --average-epochs and --init-from: the --init-from weights (where this run started) are one "
        "more set in the average, as the last epochs of a run continued from them are (same tokenizers only)",
    )
    g.add_argument("--export", type=Path, help="write the final (averaged) checkpoint folder here")
    g.add_argument("--export-dtype", choices=["float32", "float16"], default="float16")


def parse_args(argv=None, description: str | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    for group in (
        _data_options,
        _batch_options,
        _vocabulary_options,
        _model_options,
        _optimisation_options,
        _run_options,
    ):
        group(p)
    return p.parse_args(argv)


def bf16_is_native() -> bool:
    """Whether this CPU computes bfloat16 itself (AVX-512 BF16 or AMX). Without it (an AVX2 machine) autocast
    emulates bfloat16, measured 90 s instead of 4 s in float32 for one 3,000-token step of the 6+6 model."""
    return torch.ops.mkldnn._is_mkldnn_bf16_supported()
