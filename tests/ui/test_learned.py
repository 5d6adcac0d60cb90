"""What the lesson "Attention is learned" says of a run: only what its numbers show."""

from __future__ import annotations

from model import toy
from ui.lessons.learned import verdict


def toy_run(exact: list[float], aer: float) -> toy.ToyRun:
    snapshots = [
        toy.Snapshot(
            step=20 * k,
            loss=1.0,
            exact_match=e,
            aer=aer,
            layer=1,
            aer_by_layer=[0.5, aer],
            output=[],
            forced=[],
            cross=[],
            cross_heads=[],
        )
        for k, e in enumerate(exact)
    ]
    return toy.ToyRun(
        task="reorder",
        settings={},
        seconds=1.0,
        source=[],
        target=[],
        alignment=[],
        parameters=1000,
        held_out=300,
        snapshots=snapshots,
    )


def test_a_run_that_translates_but_attends_elsewhere_is_not_said_to_have_failed():
    # seed 3 with one head: every held-out sentence right, its attention off the true alignment for 19 % of words
    run = toy_run([0.0, 0.5, 1.0, 1.0], aer=0.19)
    text = verdict(run, toy.ToySettings(heads=1, seed=3), "en")
    assert "learnt to translate" in text and "from step 40 on" in text and "19%" in text
    assert "did not learn" not in text and "its one head" in text and "1 heads" not in text
    assert "学会了翻译" in verdict(run, toy.ToySettings(heads=1, seed=3), "zh")


def test_a_run_that_learnt_says_how_much_of_its_attention_is_right():
    text = verdict(toy_run([0.0, 1.0, 1.0], aer=0.0), toy.ToySettings(), "en")
    assert "learnt the task: from step 20 on" in text and "for 100% of the target words" in text
    assert "all but 0%" not in text


def test_a_run_that_did_not_learn_says_so_and_a_chinese_note_runs_on_without_a_space():
    run = toy_run([0.0, 0.1, 0.2], aer=0.3)
    assert "did not learn the task" in verdict(run, toy.ToySettings(), "en")
    zh = verdict(run, toy.ToySettings(positional_encoding=False), "zh")
    assert "没有学会" in zh and "。 " not in zh
