"""BLEU and chrF of a checkpoint on a split: `python -m model.evaluate --checkpoint checkpoints/en-zh --split test`."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import sacrebleu
import torch
from tqdm import tqdm

from .cli import check_output, corpus_of, fail, open_checkpoint, positive_int
from .data import CORPORA, DEFAULT_DATA_DIR, Example, load_splits, read_everyday
from .decode import beam_search, encode_source, greedy_batch
from .tokenizer import EOS_ID, Tokenizer
from .transformer import Transformer


def bleu_tokenizer_for(target_language: str) -> str:
    # sacrebleu's "zh" tokenizer splits Chinese characters; "13a" is its standard for other languages.
    return "zh" if target_language.startswith("zh") else "13a"


def contains_in_order(text: str, words: list[str], whole_words: bool = False) -> bool:
    """Each word (or one of its a|b alternatives) found after the previous one. whole_words (German): as a word,
    or with a genitive s ("Toms"), so "Rom" is not found in "Rome" or "Romärer"; Chinese has no spaces to
    mark a word."""
    position = 0
    for word in words:
        pattern = (lambda w: rf"\b{re.escape(w)}s?\b") if whole_words else re.escape
        found = [m.end() for w in word.split("|") for m in [re.search(pattern(w), text[position:])] if m]
        if not found:
            return False
        position += min(found)
    return True


def translated_right(output: str, words: list[str], language: str) -> bool:
    """A must-translate row's check in its target language: German word by word (contains_in_order's
    whole_words), English case ignored and by stem ("chas" finds chases and chasing), Chinese as written."""
    if language == "en":
        return contains_in_order(output.lower(), [w.lower() for w in words])
    return contains_in_order(output, words, whole_words=language == "de")


def reference_streams(examples: list[Example]) -> list[list[str | None]]:
    """sacrebleu's reference streams: the i-th reference of every sentence, None where a sentence has fewer."""
    n_refs = max(len(e.references) for e in examples)
    return [[e.references[i] if i < len(e.references) else None for e in examples] for i in range(n_refs)]


def score(hypotheses: list[str], examples: list[Example], tokenize: str, lowercase: bool = False) -> dict:
    """Multi-reference corpus BLEU and chrF; for a set whose examples name words to keep (the names sets), the
    share of translations that keep them all (names_kept)."""
    streams = reference_streams(examples)
    bleu_metric = sacrebleu.BLEU(tokenize=tokenize, lowercase=lowercase)
    bleu = bleu_metric.corpus_score(hypotheses, streams)
    chrf = sacrebleu.CHRF().corpus_score(hypotheses, streams)
    scores = {
        "bleu": round(bleu.score, 2),
        "chrf": round(chrf.score, 2),
        "bleu_detail": str(bleu),
        "bleu_signature": str(bleu_metric.get_signature()),
    }
    if any(e.keep for e in examples):
        scores["names_kept"] = round(names_kept(hypotheses, examples), 4)
    return scores


def names_kept(hypotheses: list[str], examples: list[Example]) -> float:
    """The share of translations that hold the target word of every name their example must keep, as written: a
    Chinese name anywhere (爱玛 in 爱玛和莉莎住在慕尼黑。), a Latin one as a word (Emma, not Emmanuel); examples with
    nothing to keep are left out."""

    def holds(hypothesis: str, word: str) -> bool:
        return bool(re.search(rf"\b{re.escape(word)}\b", hypothesis)) if word.isascii() else word in hypothesis

    judged = [all(holds(h, target) for _, target in e.keep) for h, e in zip(hypotheses, examples) if e.keep]
    return sum(judged) / len(judged) if judged else float("nan")


def stutters(ids: list[int], times: int = 3) -> bool:
    """Whether one piece is written `times` or more times in a row (方法方法方法, 段段段段段): the decoder looping,
    which a BLEU score barely notices."""
    run = 1
    for previous, current in zip(ids, ids[1:]):
        run = run + 1 if current == previous else 1
        if run >= times:
            return True
    return False


def stutter_share(outputs: list[list[int]]) -> float:
    """The share of outputs (target ids) that stutter."""
    return sum(map(stutters, outputs)) / len(outputs)


@torch.no_grad()
def translate_corpus_ids(
    model: Transformer,
    source_tokenizer: Tokenizer,
    sentences: list[str],
    beam_size: int = 1,
    length_penalty: float = 0.6,
    batch_size: int = 64,
    progress: bool = False,
) -> list[list[int]]:
    """The target ids the model writes for each sentence (without <s> and </s>), in input order."""
    sources = [encode_source(source_tokenizer, s, model.cfg.max_len)[0] for s in sentences]
    outputs: list[list[int] | None] = [None] * len(sources)
    if beam_size == 1:
        # Sort by length so batches carry little padding; put results back in input order.
        order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
        batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        for batch in tqdm(batches, desc="greedy", disable=not progress):
            for i, out in zip(batch, greedy_batch(model, [sources[i] for i in batch])):
                outputs[i] = out
    else:
        for i, src in enumerate(tqdm(sources, desc=f"beam {beam_size}", disable=not progress)):
            best = beam_search(model, src, beam_size, length_penalty)[0]
            outputs[i] = [t for t in best.tokens if t != EOS_ID]
    return outputs


def translate_corpus(
    model: Transformer,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    sentences: list[str],
    beam_size: int = 1,
    length_penalty: float = 0.6,
    batch_size: int = 64,
    progress: bool = False,
) -> list[str]:
    ids = translate_corpus_ids(model, source_tokenizer, sentences, beam_size, length_penalty, batch_size, progress)
    return [target_tokenizer.decode(o) for o in ids]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--checkpoint", required=True, type=Path)
    p.add_argument(
        "--split",
        default="test",
        help="train, valid, test, everyday (our own everyday sentences, tests/data/everyday.tsv, no "
        "corpus needed) or a held-out set of another domain the corpus has (ml_valid, ml_test)",
    )
    p.add_argument("--corpus", choices=sorted(CORPORA), help="read this corpus's split instead of the checkpoint's own")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--beam", type=positive_int, nargs="+", default=[1], help="beam sizes to score; 1 = greedy")
    p.add_argument("--length-penalty", type=float, default=0.6)
    p.add_argument("--limit", type=positive_int, default=None, help="score only the first N sentences")
    p.add_argument("--lowercase", action="store_true", help="also report lowercased BLEU")
    p.add_argument("--output", type=Path, help="write the scores as JSON here")
    p.add_argument("--hypotheses", type=Path, help="write the translations (greedy, or the first beam size) here")
    args = p.parse_args(argv)

    check_output(args.output)
    check_output(args.hypotheses)
    loaded = open_checkpoint(args.checkpoint)
    meta = loaded.metadata
    if args.split == "everyday":
        try:
            examples = read_everyday(
                meta.get("target_language", ""), source_language=meta.get("source_language", "en")
            )[: args.limit]
        except ValueError as e:
            fail(str(e))
    else:
        corpus = corpus_of(loaded, args.corpus, args.data_dir)
        splits = load_splits(corpus, args.data_dir)
        if args.split not in ("train", "valid", "test", *splits.domains):
            fail(
                f"{corpus} has no split {args.split!r}: train, valid, test, everyday"
                + "".join(f", {name}" for name in splits.domains)
            )
        examples = splits[args.split][: args.limit]
    tokenize = bleu_tokenizer_for(meta.get("target_language", "zh"))
    results = {}
    for beam in args.beam:
        start = time.time()
        ids = translate_corpus_ids(
            loaded.model,
            loaded.source_tokenizer,
            [e.source for e in examples],
            beam,
            args.length_penalty,
            progress=True,
        )
        hyps = [loaded.target_tokenizer.decode(i) for i in ids]
        r = score(hyps, examples, tokenize)
        r["stutter_share"] = round(stutter_share(ids), 4)
        if args.lowercase:
            r["bleu_lowercase"] = score(hyps, examples, tokenize, lowercase=True)["bleu"]
        r.update(seconds=round(time.time() - start, 1), sentences=len(examples), length_penalty=args.length_penalty)
        name = "greedy" if beam == 1 else f"beam{beam}"
        results[name] = r
        if args.hypotheses and beam == args.beam[0]:
            args.hypotheses.write_text("\n".join(hyps) + "\n", encoding="utf-8")
        kept = f"  names kept {r['names_kept']:.1%}" if "names_kept" in r else ""
        print(
            f"{args.split} {name}: BLEU {r['bleu']}  chrF {r['chrf']}{kept}  stutter {r['stutter_share']:.1%}  "
            f"({r['seconds']} s)  {r['bleu_detail']}"
        )
        print(f"  {r['bleu_signature']}")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
