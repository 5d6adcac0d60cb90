"""The lesson "Attention is learned" trains a tiny Transformer on a made-up task (model.toy): the task's alignments
are right by construction, the reordering is learnt with positional encoding and not without it, and a seed
always gives the same snapshots."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
import torch

from model import toy
from model.progress import Cancelled, Progress


@pytest.fixture(autouse=True)
def one_thread():
    # The lesson's runs are deterministic at one intra-op thread (the app's and the command's setting).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_the_generated_alignments_are_the_word_orders_the_lesson_describes():
    words = tuple(toy.TEST_SENTENCE.split())  # big Tom chases small Jerry
    reorder = toy.make_example("reorder", words)
    assert reorder.target == ("TOM", "BIG", "JERRY", "SMALL", "CHASE")
    assert reorder.alignment == (1, 0, 4, 3, 2)
    assert toy.make_example("copy", words).alignment == (0, 1, 2, 3, 4)
    reverse = toy.make_example("reverse", words)
    assert reverse.target == ("JERRY", "SMALL", "CHASE", "TOM", "BIG")
    # every target word is the gloss of the source word it is aligned with
    for task in toy.TASKS:
        for example in toy.task_data(task, n_held_out=50).held_out:
            assert [toy.gloss(example.source[i]) for i in example.alignment] == list(example.target)


def test_held_out_and_test_sentences_are_never_trained_on():
    data = toy.task_data("reorder")
    train = {e.source for e in data.train}
    assert data.test.source not in train
    assert not train & {e.source for e in data.held_out}
    assert len(train) + len(data.held_out) <= len(toy.reorder_sentences())
    # copy and reverse draw training sentences at random: never a held-out one, nor the test sentence
    for task in ("copy", "reverse"):
        other, rng = toy.task_data(task), random.Random(0)
        drawn = {e.source for _ in range(400) for e in toy.training_batch(task, other, rng, 32)}
        assert not drawn & ({e.source for e in other.held_out} | {other.test.source})
    # subjects and objects come from one set of nouns: many training sentences have their mirror image (the
    # same words, subject and object swapped), which only word order tells apart
    mirrored = sum((e.source[2:] + e.source[1:2] + e.source[:1]) in train for e in data.train if len(e.source) == 3)
    assert mirrored > 50


@pytest.mark.slow
def test_with_positional_encoding_the_reordering_is_learnt_and_cross_attention_finds_the_alignment():
    result = toy.run(toy.ToySettings(task="reorder"))
    last = result.snapshots[-1]
    assert last.exact_match >= 0.99
    assert last.aer <= 0.10
    assert last.output == result.target
    first = result.snapshots[0]
    assert first.exact_match == 0 and first.aer > 0.5  # learnt, not there from the start


@pytest.mark.slow
def test_without_positional_encoding_in_the_encoder_who_chases_whom_cannot_be_learnt():
    last = toy.run(toy.ToySettings(task="reorder", positional_encoding=False)).snapshots[-1]
    assert last.exact_match <= 0.60


def test_one_seed_gives_the_same_snapshots_and_another_seed_other_ones():
    settings = toy.ToySettings(steps=40, snapshots=4)
    a, b = toy.run(settings), toy.run(settings)
    assert a.snapshots == b.snapshots
    c = toy.run(replace(settings, seed=1))
    assert [s.cross_heads for s in c.snapshots] != [s.cross_heads for s in a.snapshots]


def test_a_run_reports_progress_and_can_be_stopped():
    seen = []
    settings = toy.ToySettings(steps=10, snapshots=2)
    toy.run(settings, Progress(lambda done, total: seen.append((done, total))))
    assert seen == [(step, 10) for step in range(11)]  # step 0 as soon as it is set up and holds its core
    with pytest.raises(Cancelled):
        toy.run(settings, Progress(should_stop=lambda: True))


def test_the_command_writes_the_run_as_json(tmp_path, capsys):
    out = tmp_path / "run.json"
    toy.main(["--task", "copy", "--seed", "2", "--steps", "20", "--json", str(out)])
    run = json.loads(out.read_text())
    assert run["task"] == "copy" and run["settings"]["seed"] == 2 and run["seconds"] > 0
    snapshot = run["snapshots"][-1]
    assert snapshot["step"] == 20
    assert {"loss", "exact_match", "aer", "cross"} <= set(snapshot)
    # the fixed test sentence's map: a row per target word and </s>, a column per source word and </s>
    assert len(snapshot["cross"]) == len(run["target"]) and len(snapshot["cross"][0]) == len(run["source"])
    assert all(abs(sum(row) - 1) < 1e-3 for row in snapshot["cross"])
    assert "step   20" in capsys.readouterr().out
