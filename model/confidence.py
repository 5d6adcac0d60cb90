"""When is the model unsure? A translation's mean log-probability per output piece, against a threshold chosen
on held-out sentences.

    python -m model.confidence --checkpoint checkpoints/en-zh     # writes checkpoints/en-zh/confidence.json

What counts as a *bad* translation: where the checkpoint ships `confidence_labels.tsv` (held-out translations of
this very model judged by hand), those judgements; otherwise a sentence chrF below `BAD_CHRF` (a noisy judge for
short Chinese sentences). The threshold is chosen on the validation sentences, and its precision and recall are
measured on the test sentences, which played no part in choosing it. Judged by hand, it is the highest threshold
whose flags are wrong translations at least CHOICE_PRECISION of the time (a false alarm in front of a class costs
more than a missed one: issue 59), the validation sentences joined by the sentences the app offers, judged by
the words their translations must hold (offered_judgements); by chrF, the one that maximises F1 of "flagged"
against "bad".

Why 0.95 to hold 0.9: chosen for exactly 0.9, the threshold sits where the share of wrong translations has just
fallen to 0.9 on the sentences it was chosen on, and on other sentences it falls below (zh-en: 0.63 on its first
50 test judgements). cross_validated() measures the rule itself: over many random halves of all the judgements,
chosen on one half and measured on the other.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import sacrebleu
import torch

from .cli import corpus_of, open_checkpoint
from .data import DEFAULT_DATA_DIR, Example, load_splits, must_translate_rows
from .decode import encode_source, greedy_batch, max_output_length
from .evaluate import translated_right
from .teacher_forcing import run_batch
from .tokenizer import EOS_ID
from .transformer import Transformer

FILE = "confidence.json"
LABELS = "confidence_labels.tsv"  # split <tab> source <tab> translation <tab> good|bad [<tab> the judge's note]
# Sentence chrF (sacrebleu, character 6-grams, best of the references) below which a translation counts as bad.
# Sentence chrF of short Chinese sentences is a noisy judge (a correct paraphrase can score 30, a wrong one 37):
# 10 keeps the clear failures (13 % of the en-zh test split); the model card adds a check by hand.
BAD_CHRF = 10.0
# Of the held-out translations the note marks, at least this share should be wrong (issue 59)...
TARGET_PRECISION = 0.9
# ...so the threshold is chosen on the validation judgements for this share: chosen for 0.9 itself, the
# cross-validated precision was 0.89 (en-de, zh-en); chosen for 0.95, 0.92-1.00 (cross_validated below).
CHOICE_PRECISION = 0.95


def mean_log_prob(token_probs: list[float]) -> float:
    """Mean natural-log probability per output piece (</s> included): the model's own confidence."""
    return sum(math.log(max(p, 1e-12)) for p in token_probs) / max(len(token_probs), 1)


@dataclass
class Calibration:
    threshold: float  # flag a translation whose mean log-probability per piece is below this
    bad_chrf: float | None  # what "bad" meant when it was chosen: chrF below this, or None for judgements by hand
    valid_sentences: int
    test_sentences: int
    test_bad: int  # bad translations in the test split
    test_flagged: int
    precision: float  # of the flagged test translations, the share that are bad
    recall: float  # of the bad test translations, the share that are flagged
    good_flagged: float  # of the good test translations, the share flagged anyway
    min_precision: float | None = None  # the threshold flags wrong translations at least this often on validation
    # every judged translation (validation and test): [mean log-probability, bad?]
    judged: list[tuple[float, bool]] = field(default_factory=list)
    # the choice rule measured on every judgement: mean precision and recall on random held-out halves
    cross_validated_precision: float | None = None
    cross_validated_recall: float | None = None

    def unsure(self, token_probs: list[float]) -> bool:
        return mean_log_prob(token_probs) < self.threshold

    def wrong_at_most(self, score: float) -> tuple[int, int]:
        """(wrong, all) among the judged translations whose score is at most this one: how sure a note on a
        translation this unsure can be that it is wrong."""
        below = [bad for judged_score, bad in self.judged if judged_score <= score]
        return sum(below), len(below)

    def evidence(self, score: float) -> tuple[int, int, bool]:
        """(wrong, judged, lower than all): what a note on a translation of this score can rest on. The judged
        translations that scored as low; where none did (the translation is less sure than any a reader judged:
        stage 10 wrote "0 of 0 as low were wrong" under the farmer's daughter), those under the threshold, the
        translations a note would have been shown on, and True."""
        wrong, judged = self.wrong_at_most(score)
        if judged:
            return wrong, judged, False
        return *self.wrong_at_most(self.threshold), True


def load_calibration(checkpoint_dir: Path | str) -> Calibration | None:
    path = Path(checkpoint_dir) / FILE
    if not path.is_file():
        return None
    fields = json.loads(path.read_text(encoding="utf-8"))
    fields["judged"] = [(score, bad) for score, bad in fields.get("judged", [])]
    return Calibration(**fields)


@torch.no_grad()
def greedy_with_confidence(
    model: Transformer, source_tokenizer, target_tokenizer, sentences: list[str], batch_size: int = 64
) -> list[tuple[str, float]]:
    """(greedy translation, mean log-probability per piece) for each sentence. The probabilities come from one
    teacher-forced pass over the greedy output, which is what greedy decoding computed step by step."""
    results: list[tuple[str, float]] = []
    for start in range(0, len(sentences), batch_size):
        sources = [
            encode_source(source_tokenizer, s, model.cfg.max_len)[0] for s in sentences[start : start + batch_size]
        ]
        outputs = greedy_batch(model, sources)
        log_probs = run_batch(model, sources, [o + [EOS_ID] for o in outputs]).output_log_probs()
        for i, (src, out) in enumerate(zip(sources, outputs)):
            # </s> counts when decoding wrote it, not when it stopped at the length limit
            n = len(out) + (len(out) < max_output_length(model, len(src)))
            results.append((target_tokenizer.decode(out), float(log_probs[i, :n].mean())))
    return results


def sentence_chrf(hypothesis: str, example: Example) -> float:
    return sacrebleu.sentence_chrf(hypothesis, example.references).score


def choose_threshold(scores: list[float], bad: list[bool], min_precision: float | None = None) -> float:
    """The threshold (a midpoint between two observed scores) for score < threshold meaning bad: the one that
    maximises F1, or with min_precision, the highest whose flags are bad at least that often (the lowest score
    minus one, which flags none of these, where no threshold reaches it)."""
    values = sorted(set(scores))
    best, best_f1 = values[0] - 1.0, -1.0
    for low, high in zip(values, values[1:]):
        threshold = (low + high) / 2
        flagged = [s < threshold for s in scores]
        tp = sum(f and b for f, b in zip(flagged, bad))
        if tp == 0:
            continue
        precision, recall = tp / sum(flagged), tp / sum(bad)
        if min_precision is not None:
            if precision >= min_precision:
                best = threshold
            continue
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best_f1:
            best, best_f1 = threshold, f1
    return best


def calibrate(
    model, source_tokenizer, target_tokenizer, valid: list[Example], test: list[Example], bad_chrf: float = BAD_CHRF
) -> Calibration:
    def judged(examples):
        out = greedy_with_confidence(model, source_tokenizer, target_tokenizer, [e.source for e in examples])
        return [s for _, s in out], [sentence_chrf(h, e) < bad_chrf for (h, _), e in zip(out, examples)]

    valid_scores, valid_bad = judged(valid)
    threshold = choose_threshold(valid_scores, valid_bad)
    test_scores, test_bad = judged(test)
    return _measured(threshold, bad_chrf, len(valid), test_scores, test_bad)


def read_labels(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """split -> [(english, the translation judged, bad?)]."""
    out: dict[str, list[tuple[str, str, bool]]] = {"valid": [], "test": []}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            split, english, translation, judgement, *_note = line.split("\t")
            if judgement.strip() not in ("good", "bad"):
                raise ValueError(f"{path}: a row judged {judgement.strip()!r}, not good or bad: {english}")
            out[split].append((english, translation, judgement.strip() == "bad"))
    return out


def calibrate_by_hand(model, source_tokenizer, target_tokenizer, labels: dict) -> Calibration:
    """The same choice as calibrate, on translations judged by hand (labels: "valid", "test" and optionally
    "offered", the app's own sentences, which join the validation ones in choosing). A label whose translation is
    no longer what the model writes (another checkpoint) is an error: judge the new translations again."""

    def judged(rows):
        out = greedy_with_confidence(model, source_tokenizer, target_tokenizer, [english for english, _, _ in rows])
        stale = [english for (english, translation, _), (now, _) in zip(rows, out) if translation != now]
        if stale:
            raise ValueError(f"{len(stale)} judged translations are not what the model writes now, e.g. {stale[0]!r}")
        return [score for _, score in out], [bad for _, _, bad in rows]

    valid_scores, valid_bad = judged(labels["valid"])
    offered_scores, offered_bad = judged(labels.get("offered", []))
    choosing_scores, choosing_bad = valid_scores + offered_scores, valid_bad + offered_bad
    threshold = choose_threshold(choosing_scores, choosing_bad, CHOICE_PRECISION)
    test_scores, test_bad = judged(labels["test"])
    calibration = _measured(threshold, None, len(choosing_scores), test_scores, test_bad)
    calibration.min_precision = CHOICE_PRECISION
    calibration.cross_validated_precision, calibration.cross_validated_recall = cross_validated(
        list(zip(valid_scores + test_scores, valid_bad + test_bad)), list(zip(offered_scores, offered_bad))
    )
    calibration.judged = sorted(
        (round(score, 4), bad) for score, bad in zip(choosing_scores + test_scores, choosing_bad + test_bad)
    )
    return calibration


def cross_validated(
    judged: list[tuple[float, bool]], always_choosing: list[tuple[float, bool]] = (), rounds: int = 400
) -> tuple[float, float]:
    """(mean precision, mean recall) of the note on held-out judgements, the threshold chosen for CHOICE_PRECISION:
    each round splits the judged translations at random into halves, chooses on one (with always_choosing, the
    app's own sentences) and measures on the other. Rounds whose threshold flags none of the other half do not
    count towards precision (there is nothing to be wrong about)."""
    rng = random.Random(0)
    precisions, recalls = [], []
    for _ in range(rounds):
        shuffled = list(judged)
        rng.shuffle(shuffled)
        choosing, held = shuffled[: len(shuffled) // 2] + list(always_choosing), shuffled[len(shuffled) // 2 :]
        threshold = choose_threshold([s for s, _ in choosing], [b for _, b in choosing], CHOICE_PRECISION)
        flagged = [bad for score, bad in held if score < threshold]
        if flagged:
            precisions.append(sum(flagged) / len(flagged))
        recalls.append(sum(flagged) / max(sum(bad for _, bad in held), 1))
    return round(sum(precisions) / max(len(precisions), 1), 3), round(sum(recalls) / len(recalls), 3)


def offered_judgements(
    model, source_tokenizer, target_tokenizer, source_language: str, language: str
) -> list[tuple[str, str, bool]]:
    """The sentences the app offers (the must-translate list's "app" rows into this target language), judged by
    their words: (english, the greedy translation, bad?). Right translations the class sees first, beside the
    judged validation sentences, so the threshold is not chosen above one of them."""
    rows = [r for r in must_translate_rows(source_language) if r.language == language and r.group == "app"]
    out = greedy_with_confidence(model, source_tokenizer, target_tokenizer, [r.english for r in rows])
    return [(r.english, text, not translated_right(text, r.words, language)) for r, (text, _) in zip(rows, out)]


def _measured(
    threshold: float, bad_chrf: float | None, n_valid: int, test_scores: list[float], test_bad: list[bool]
) -> Calibration:
    flagged = [s < threshold for s in test_scores]
    tp = sum(f and b for f, b in zip(flagged, test_bad))
    n_good = len(test_bad) - sum(test_bad)
    return Calibration(
        threshold=round(threshold, 4),
        bad_chrf=bad_chrf,
        valid_sentences=n_valid,
        test_sentences=len(test_bad),
        test_bad=sum(test_bad),
        test_flagged=sum(flagged),
        precision=round(tp / max(sum(flagged), 1), 3),
        recall=round(tp / max(sum(test_bad), 1), 3),
        good_flagged=round((sum(flagged) - tp) / max(n_good, 1), 3),
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True, type=Path)
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--bad-chrf", type=float, default=BAD_CHRF)
    args = p.parse_args(argv)
    loaded = open_checkpoint(args.checkpoint)
    if (args.checkpoint / LABELS).is_file():
        labels = read_labels(args.checkpoint / LABELS)
        languages = (loaded.metadata.get("source_language", "en"), loaded.metadata.get("target_language", "zh"))
        labels["offered"] = offered_judgements(
            loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, *languages
        )
        calibration = calibrate_by_hand(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, labels)
    else:
        splits = load_splits(corpus_of(loaded, None, args.data_dir), args.data_dir)
        calibration = calibrate(
            loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, splits.valid, splits.test, args.bad_chrf
        )
    (args.checkpoint / FILE).write_text(json.dumps(asdict(calibration), indent=2) + "\n", encoding="utf-8")
    print(json.dumps(asdict(calibration), indent=2))


if __name__ == "__main__":
    main()
