"""Every mistake a user can make on the command line gets one clear line and a non-zero exit code, before any
translating starts."""

from __future__ import annotations

import json
import shutil

import pytest

from model import evaluate, probe, translate


def run(main, argv, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    code = done.value.code
    message = code if isinstance(code, str) else capsys.readouterr().err
    return (1 if isinstance(code, str) else code), message.strip().splitlines()[-1]


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any translating starts."""

    def refuse(*args, **kwargs):
        raise AssertionError("translating started before the arguments were checked")

    monkeypatch.setattr(translate, "translate_corpus", refuse)
    monkeypatch.setattr(evaluate, "translate_corpus", refuse)


@pytest.fixture
def files(tmp_path):
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    good = tmp_path / "good.txt"
    good.write_text("I like tea.\n", encoding="utf-8")
    return {"binary": binary, "empty": empty, "good": good, "missing": tmp_path / "nope.txt", "folder": tmp_path}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--beam", "0", "Hi."], "must be at least 1"),
        (["--beam", "-3", "Hi."], "must be at least 1"),
        (["--batch-size", "0", "Hi."], "must be at least 1"),
        (["--beam", "two", "Hi."], "not a whole number"),
        (["--input", "{binary}"], "not UTF-8 text"),
        (["--input", "{missing}"], "input file not found"),
        (["--input", "{folder}"], "input is not a file"),
        (["--input", "{empty}"], "holds no sentences"),
        (["--input", "{good}", "--output", "{folder}/no/such/dir/out.txt"], "output folder does not exist"),
        (["--input", "{good}", "--output", "{folder}"], "output is a folder"),
        (["--force", "two=茶", "Hi."], "takes STEP=PIECE"),
        (["--force", "2", "Hi."], "takes STEP=PIECE"),
        (["--force", "1=茶", "--input", "{good}"], "exactly one sentence"),
        (["--force", "1=☃", "Hi."], "cannot be written"),
    ],
)
def test_translate_rejects_bad_arguments_before_any_work(tiny_checkpoint, files, capsys, no_work, args, message):
    argv = ["--checkpoint", str(tiny_checkpoint)] + [a.format(**files) for a in args]
    code, line = run(translate.main, argv, capsys)
    assert code != 0 and message in line


def test_force_decodes_on_from_the_forced_piece(tiny_checkpoint, capsys):
    from model.checkpoint import load_checkpoint
    from model.decode import translate as decode_one

    loaded = load_checkpoint(tiny_checkpoint)
    expected = decode_one(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        "I like tea.",
        forced={0: loaded.target_tokenizer.processor.PieceToId("茶")},
    )
    translate.main(["--checkpoint", str(tiny_checkpoint), "I like tea.", "--force", "0=茶"])
    assert capsys.readouterr().out == expected.target_text + "\n"
    assert expected.target_ids[0] == loaded.target_tokenizer.processor.PieceToId("茶")


def test_translate_names_a_missing_checkpoint_by_folder(tmp_path, capsys):
    code, line = run(translate.main, ["--checkpoint", str(tmp_path / "gone"), "Hi."], capsys)
    assert code != 0 and line == "error: checkpoint folder not found: gone"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--beam", "0"], "must be at least 1"),
        (["--limit", "0"], "must be at least 1"),
        (["--data-dir", "{folder}/nowhere"], "data is not under"),
        (["--output", "{folder}/no/such/dir/scores.json"], "output folder does not exist"),
    ],
)
def test_evaluate_rejects_bad_arguments_before_any_work(tiny_checkpoint, files, capsys, no_work, args, message):
    argv = ["--checkpoint", str(tiny_checkpoint)] + [a.format(**files) for a in args]
    code, line = run(evaluate.main, argv, capsys)
    assert code != 0 and message in line


@pytest.mark.parametrize("main", [evaluate.main, probe.main], ids=["evaluate", "probe"])
def test_evaluate_and_probe_name_a_missing_checkpoint(main, tmp_path, capsys):
    code, line = run(main, ["--checkpoint", str(tmp_path / "gone")], capsys)
    assert code != 0 and line == "error: checkpoint folder not found: gone"


@pytest.mark.parametrize("main", [evaluate.main, probe.main], ids=["evaluate", "probe"])
def test_a_checkpoint_without_a_corpus_asks_for_one(main, tiny_checkpoint, tmp_path, capsys):
    directory = tmp_path / "nocorpus"
    shutil.copytree(tiny_checkpoint, directory)
    config = json.loads((directory / "config.json").read_text())
    del config["metadata"]["corpus"]
    (directory / "config.json").write_text(json.dumps(config))
    code, line = run(main, ["--checkpoint", str(directory)], capsys)
    assert code != 0 and "names no corpus" in line and "--corpus" in line


def test_probe_names_a_missing_data_folder(tiny_checkpoint, tmp_path, capsys):
    code, line = run(probe.main, ["--checkpoint", str(tiny_checkpoint), "--data-dir", str(tmp_path / "x")], capsys)
    assert code != 0 and "data is not under" in line


def test_evaluate_scores_the_everyday_set_without_any_corpus(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "everyday.json"
    evaluate.main(
        [
            "--checkpoint",
            str(tiny_checkpoint),
            "--split",
            "everyday",
            "--limit",
            "3",
            "--data-dir",
            str(tmp_path / "nowhere"),
            "--output",
            str(out),
        ]
    )
    scores = json.loads(out.read_text())
    assert scores["greedy"]["sentences"] == 3 and "chrf" in scores["greedy"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--layer", "0"], "must be at least 1"),
        (["--layer", "9"], "the decoder has 2 layers"),
        (["--head", "7"], "a head from 1 to 4"),
        (["--head", "first"], "a head from 1 to 4"),
    ],
)
def test_attribution_cli_refuses_a_layer_or_head_the_model_lacks(tiny_checkpoint, tmp_path, capsys, args, message):
    from model import attribute

    argv = ["--checkpoint", str(tiny_checkpoint), "Hi.", "--method", "norm", "--json", str(tmp_path / "o.json")]
    code, line = run(attribute.main, argv + args, capsys)
    assert code != 0 and message in line


def test_attribution_cli_names_a_missing_checkpoint_in_one_line(tmp_path, capsys):
    from model import attribute

    argv = ["--checkpoint", str(tmp_path / "nope"), "Hi.", "--json", str(tmp_path / "o.json")]
    code, line = run(attribute.main, argv, capsys)
    assert code != 0 and "nope" in line and "Traceback" not in line


@pytest.mark.parametrize(
    "args, message",
    [
        (["--heads", "0"], "must be at least 1"),
        (["--learning-rate", "-1"], "must be above 0"),
        (["--heads", "3", "--d-model", "32"], "does not split evenly among 3 heads"),
        (["--json", "/no/such/folder/run.json"], "output folder does not exist"),
    ],
)
def test_the_toy_run_rejects_bad_arguments_before_training(capsys, monkeypatch, args, message):
    from model import toy

    monkeypatch.setattr(toy, "run", lambda *a, **k: pytest.fail("training started before the arguments were checked"))
    code, said = run(toy.main, args, capsys)
    assert code != 0 and message in said
