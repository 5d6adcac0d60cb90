"""Vocabulary surgery for a training run: the tokenizers it learns or extends (once, on the training split, kept
in the run folder so a resumed run reads the same), and the warm start's weights under them (rows copied for the
pieces an old vocabulary had, new pieces starting from the pieces they replace)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

import sentencepiece as spm
import torch

from ..checkpoint import apply_weights, load_checkpoint, weights_to_save
from ..data import Splits
from ..tokenizer import (
    EOS_ID,
    EXTENSION_WORDS,
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
from ..transformer import Transformer, TransformerConfig

Pairs = list[tuple[str, str]]


def extends_vocabulary(args: argparse.Namespace) -> bool:
    """Whether the run appends pieces to its tokenizers (any --extend-* option)."""
    return bool(
        args.extend_vocab
        or args.extend_characters
        or args.extend_terms
        or args.extend_names
        or args.extend_chinese_words
        or args.extend_domain_words
    )


def words_as_source_pieces(args: argparse.Namespace, src_lang: str, initial) -> bool:
    """A Chinese source learnt from scratch with dictionary words appended as pieces (--extend-chinese-words)."""
    return bool(args.extend_chinese_words and src_lang == "zh" and not initial)


def check_vocabulary_options(args: argparse.Namespace, initial, src_lang: str, tgt_lang: str) -> None:
    """Exit, saying why, on vocabulary options that do not go together."""
    extending = extends_vocabulary(args)
    if args.retire_cross_word_pieces and (not initial or args.new_tokenizers or tgt_lang != "zh"):
        sys.exit("--retire-cross-word-pieces retires pieces of --init-from's Chinese target tokenizer")
    if extending and (not initial or args.new_tokenizers) and not words_as_source_pieces(args, src_lang, initial):
        sys.exit("--extend-* options extend the tokenizers of --init-from (not --new-tokenizers)")
    if args.joint_vocab and initial and not args.new_tokenizers:
        sys.exit("--joint-vocab with --init-from needs --new-tokenizers (the checkpoint has two vocabularies)")
    joint = bool(initial and initial.model.cfg.share_source_target_embeddings)
    if args.extend_domain_words and not joint:
        sys.exit("--extend-domain-words extends --init-from's joint vocabulary (one for both languages)")
    if joint and (args.extend_vocab or args.extend_characters or args.extend_names or args.extend_chinese_words):
        sys.exit("a joint vocabulary is extended with --extend-domain-words and --extend-terms only")


def prepare_tokenizers(
    args: argparse.Namespace, run_dir: Path, splits: Splits, pairs: Pairs, terms: Pairs, initial, languages
) -> None:
    """Write the run's source.model and target.model unless it has them (a resumed run keeps its own): the
    --init-from checkpoint's, extended where asked, or new ones learnt on the training split."""
    source_spm, target_spm = run_dir / "source.model", run_dir / "target.model"
    if source_spm.exists() and target_spm.exists():
        return
    src_lang, tgt_lang = languages
    if initial and initial.model.cfg.share_source_target_embeddings and extends_vocabulary(args):
        model_bytes = _extend_joint(args, splits, initial)
        source_spm.write_bytes(model_bytes)
        target_spm.write_bytes(model_bytes)
    elif initial and not args.new_tokenizers:
        for name, side in (("source.model", "source"), ("target.model", "target")):
            (run_dir / name).write_bytes(_extend_one(args, splits, pairs, terms, initial, side, tgt_lang))
    elif args.joint_vocab:
        # English and Chinese share only the Latin words of the machine-learning text (Transformer, softmax) and
        # names written in Latin; NFKC for both, and every rare Chinese character need not have a piece.
        chinese = "zh" in (src_lang, tgt_lang)
        joint = train_sentencepiece(
            [s for s, _ in pairs] + [t for _, t in pairs], args.src_vocab, 0.9995 if chinese else 1.0
        )
        source_spm.write_bytes(joint)
        target_spm.write_bytes(joint)
    else:
        source_spm.write_bytes(_learn_one(args, splits, [s for s, _ in pairs], args.src_vocab, src_lang, "source"))
        target_spm.write_bytes(_learn_one(args, splits, [t for _, t in pairs], args.tgt_vocab, tgt_lang, "target"))


def _extend_joint(args: argparse.Namespace, splits: Splits, initial) -> bytes:
    """One vocabulary, one embedding matrix: the same pieces appended for both languages."""
    tok = initial.source_tokenizer
    texts = [text for pair in splits.domain_train for text in pair]
    words = words_cut_finely(texts, tok.processor, EXTENSION_WORDS["joint"], args.extend_domain_words)
    if args.extend_terms:
        words += lexicon_words_cut_finely(
            [text for pair in splits.terms for text in pair], tok.processor, EXTENSION_WORDS["joint"], True
        )
    return extend_sentencepiece((Path(args.init_from) / "source.model").read_bytes(), words, True)


def _extend_one(
    args: argparse.Namespace, splits: Splits, pairs: Pairs, terms: Pairs, initial, side: str, tgt_lang: str
) -> bytes:
    """The checkpoint's tokenizer of one side, with the words the --extend-* options ask for appended."""
    model_bytes = (Path(args.init_from) / f"{side}.model").read_bytes()
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
        words += characters_it_cannot_write(texts + [t for _, t in splits.names], tok.processor, args.extend_characters)
    dictionary = {zh for _, zh in splits.lexicon + splits.names + splits.terms}
    if args.extend_chinese_words and chinese_target:
        words += chinese_words_cut_finely(texts, tok.processor, dictionary, args.extend_chinese_words)
    if words:
        model_bytes = extend_sentencepiece(model_bytes, words, word_start=not chinese_target)
    if args.retire_cross_word_pieces and chinese_target:
        model_bytes = retire_pieces(model_bytes, pieces_across_words(tok.processor, dictionary))
    return model_bytes


def _learn_one(args: argparse.Namespace, splits: Splits, texts: list[str], size: int, lang: str, side: str) -> bytes:
    """A new tokenizer for one side, learnt on its training text."""
    # Not every rare Chinese character gets a piece of its own (0.9995 is SentencePiece's advice for CJK), and no
    # "▁" before a sentence's first character (Chinese has no spaces). A Chinese target keeps its full-width
    # punctuation (no NFKC), so the model can write it; a Chinese source takes NFKC, so ？ and ?, typed either
    # way, read the same.
    chinese = lang == "zh"
    normalization = "identity" if chinese and side == "target" else "nmt_nfkc"
    model_bytes = train_sentencepiece(texts, size, 0.9995 if chinese else 1.0, normalization, dummy_prefix=not chinese)
    if side == "source" and words_as_source_pieces(args, lang, None):
        dictionary = {zh for zh, _ in splits.lexicon + splits.names + splits.terms}
        processor = spm.SentencePieceProcessor(model_proto=model_bytes)
        words = chinese_words_cut_finely(texts, processor, dictionary, args.extend_chinese_words)
        model_bytes = extend_sentencepiece(model_bytes, words, word_start=False)
        # and, as --retire-cross-word-pieces does for a Chinese target, no piece spans two words (的模型), so the
        # source axis of every map reads in words
        extended = spm.SentencePieceProcessor(model_proto=model_bytes)
        retired = pieces_across_words(extended, dictionary)
        model_bytes = retire_pieces(model_bytes, retired)
        print(
            f"Chinese source: {len(words)} dictionary words appended as pieces, {len(retired)} pieces across words "
            "retired"
        )
    return model_bytes


def model_shape(cfg: TransformerConfig) -> dict:
    """A configuration without the options a continued run sets itself (--dropout, --max-len): what it inherits."""
    return {k: v for k, v in asdict(cfg).items() if k not in ("dropout", "max_len")}


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
