"""Training runs end to end on a tiny corpus: loss goes down, a killed run resumes, torchrun works,
checkpoints round-trip, and broken checkpoints give errors that name the file."""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file, save_file

from model import train
from model.checkpoint import CheckpointError, load_checkpoint, save_checkpoint, weights_to_save
from model.decode import translate
from model.tokenizer import BOS_ID, EOS_ID, train_sentencepiece
from model.training import batches, loop, losses, vocabulary
from model.transformer import Transformer

from ..conftest import ROOT, TINY_PAIRS, tiny_config

TINY_ARGS = [
    "--d-model",
    "32",
    "--d-ff",
    "64",
    "--heads",
    "4",
    "--layers",
    "2",
    "--dropout",
    "0.0",
    "--max-tokens",
    "400",
    "--warmup",
    "20",
    "--src-vocab",
    "80",
    "--tgt-vocab",
    "80",
    "--valid-bleu-sentences",
    "2",
    "--no-progress",
    "--average-last",
    "2",
    "--export-dtype",
    "float32",
]


def metrics(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_tiny_training_lowers_the_loss_resumes_and_exports(tiny_corpus_dir, tmp_path):
    run_dir, export = tmp_path / "run", tmp_path / "export"
    common = ["--data-dir", str(tiny_corpus_dir), "--run-dir", str(run_dir), *TINY_ARGS]
    train.main([*common, "--epochs", "3"])
    first = metrics(run_dir)
    assert [m["epoch"] for m in first] == [1, 2, 3]
    assert first[-1]["train_loss"] < first[0]["train_loss"]

    # Started again with more epochs, the run continues after epoch 3 instead of starting over.
    train.main([*common, "--epochs", "5", "--export", str(export)])
    resumed = metrics(run_dir)
    assert [m["epoch"] for m in resumed] == [1, 2, 3, 4, 5]
    assert resumed[3]["step"] > resumed[2]["step"]
    assert resumed[-1]["train_loss"] < first[0]["train_loss"]
    assert not (run_dir / "epoch003.safetensors").exists()  # only the last --average-last epochs are kept

    loaded = load_checkpoint(export)
    assert loaded.metadata["epochs"] == 5 and loaded.metadata["target_language"] == "zh"
    assert (export / "metrics.jsonl").exists()
    result = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.")
    assert result.target_pieces  # a model this small may say nothing yet, but it decodes

    # A finished run exports the average of epochs chosen afterwards, without training again.
    chosen = tmp_path / "chosen"
    train.main([*common, "--epochs", "5", "--average-epochs", "4", "5", "--export", str(chosen)])
    assert [m["epoch"] for m in metrics(run_dir)] == [1, 2, 3, 4, 5]
    averaged = load_checkpoint(chosen)
    assert averaged.metadata["weights"] == "average of epochs 4-5"
    expected = loop.average_weights([run_dir / "epoch004.safetensors", run_dir / "epoch005.safetensors"])
    for key, value in averaged.model.state_dict().items():
        if key in expected:
            torch.testing.assert_close(value, expected[key].float())
    with pytest.raises(SystemExit, match="epoch003.safetensors"):  # not kept: --average-last 2
        train.main([*common, "--epochs", "5", "--average-epochs", "3", "5", "--export", str(tmp_path / "gone")])


@pytest.mark.slow
@pytest.mark.parametrize("sampling", [[], ["--subword-alpha", "0.1"]], ids=["best-split", "subword-sampling"])
def test_resuming_gives_the_same_weights_as_an_uninterrupted_run(tiny_corpus_dir, tmp_path, sampling):
    common = ["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, *sampling]
    train.main([*common, "--run-dir", str(tmp_path / "straight"), "--epochs", "2"])
    train.main([*common, "--run-dir", str(tmp_path / "stopped"), "--epochs", "1"])
    train.main([*common, "--run-dir", str(tmp_path / "stopped"), "--epochs", "2"])
    straight = torch.load(tmp_path / "straight" / "state.pt", weights_only=True)["model"]
    stopped = torch.load(tmp_path / "stopped" / "state.pt", weights_only=True)["model"]
    for key in straight:
        torch.testing.assert_close(straight[key], stopped[key])


@pytest.mark.slow
def test_a_run_killed_inside_an_epoch_resumes_at_the_batch_after_its_last_save(tiny_corpus_dir, tmp_path):
    """An en-de epoch is over an hour: the state is also written inside an epoch (--save-every-minutes), and a
    run resumed from it trains on the remaining batches only, ending with the weights and the epoch's logged
    loss of a run never stopped."""
    common = ["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, "--max-tokens", "120", "--epochs", "2"]
    train.main([*common, "--run-dir", str(tmp_path / "straight")])
    assert metrics(tmp_path / "straight")[0]["step"] >= 5  # several batches an epoch
    stopped = ["--run-dir", str(tmp_path / "stopped"), "--save-every-minutes", "0"]
    train.main([*common, *stopped, "--stop-after-steps", "3"])  # killed right after a save, 3 batches in
    state = torch.load(tmp_path / "stopped" / "state.pt", weights_only=True)
    assert state["epoch"] == 0 and state["partial"]["batches_done"] == 3
    assert not (tmp_path / "stopped" / "metrics.jsonl").exists()
    train.main([*common, *stopped])
    straight = torch.load(tmp_path / "straight" / "state.pt", weights_only=True)
    resumed = torch.load(tmp_path / "stopped" / "state.pt", weights_only=True)
    assert resumed["schedule"]["last_epoch"] == straight["schedule"]["last_epoch"]  # no batch trained twice
    for key in straight["model"]:
        torch.testing.assert_close(straight["model"][key], resumed["model"][key])
    assert [m["train_loss"] for m in metrics(tmp_path / "stopped")] == [
        m["train_loss"] for m in metrics(tmp_path / "straight")
    ]


@pytest.mark.slow
def test_joint_vocabulary_is_one_tokenizer_and_one_embedding_matrix(tiny_corpus_dir, tmp_path):
    """--joint-vocab (Section 3.4): one tokenizer on both languages, one matrix for both embeddings and the output
    layer; the exported checkpoint loads with the matrix shared and stores it once."""
    from safetensors.torch import load_file

    run_dir, export = tmp_path / "run", tmp_path / "export"
    de_dir = tmp_path / "data"
    (de_dir / "tatoeba-en-de").mkdir(parents=True)
    pairs = [
        ("Tom drinks tea.", "Tom trinkt Tee."),
        ("Mary reads a book.", "Mary liest ein Buch."),
        ("I like coffee.", "Ich mag Kaffee."),
        ("The dog runs.", "Der Hund rennt."),
    ] * 8
    import gzip

    with gzip.open(de_dir / "tatoeba-en-de" / "deu-eng.tsv.gz", "wt", encoding="utf-8") as f:
        f.write("".join(f"{en} {i}\t{de} {i}\n" for i, (en, de) in enumerate(pairs)))
    train.main(
        [
            "--corpus",
            "tatoeba-en-de",
            "--data-dir",
            str(de_dir),
            "--run-dir",
            str(run_dir),
            *TINY_ARGS,
            "--joint-vocab",
            "--epochs",
            "1",
            "--export",
            str(export),
        ]
    )
    assert (export / "source.model").read_bytes() == (export / "target.model").read_bytes()
    loaded = load_checkpoint(export)
    assert loaded.model.cfg.share_source_target_embeddings
    model = loaded.model
    assert model.src_embed.lookup.weight is model.tgt_embed.lookup.weight is model.generator.weight
    assert "tgt_embed.lookup.weight" not in load_file(str(export / "model.safetensors"))
    tom = loaded.source_tokenizer.encode("Tom")
    assert tom == loaded.target_tokenizer.encode("Tom")  # a name is the same pieces on both sides


def test_subword_sampling_cuts_a_sentence_differently_but_decodes_to_it(tiny_tokenizers):
    source, _ = tiny_tokenizers
    text = "I like tea and the cat likes milk."
    cuts = {tuple(source.sample(text, alpha=0.1)) for _ in range(30)}
    assert len(cuts) > 1
    assert all(source.decode(list(cut)) == source.decode(source.encode(text)) for cut in cuts)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun") is None, reason="torchrun not on PATH")
def test_two_process_torchrun_training(tiny_corpus_dir, tmp_path):
    run_dir = tmp_path / "ddp"
    cmd = [
        "torchrun",
        "--standalone",
        "--nproc_per_node=2",
        "-m",
        "model.train",
        "--data-dir",
        str(tiny_corpus_dir),
        "--run-dir",
        str(run_dir),
        "--epochs",
        "3",
        "--threads",
        "1",
        *TINY_ARGS,
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = metrics(run_dir)
    assert [m["epoch"] for m in rows] == [1, 2, 3]
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]


def test_noam_schedule_warms_up_then_decays():
    rates = [loop.noam_rate(step, 256, warmup=100, factor=1.0) for step in (1, 50, 100, 400)]
    assert rates[0] < rates[1] < rates[2] and rates[3] == pytest.approx(rates[2] / 2)


def test_batches_respect_the_token_budget_and_cover_every_example():
    lengths = [(n % 17 + 1, n % 13 + 2) for n in range(500)]
    packed = batches.make_batches(lengths, max_tokens=200, seed=0)
    assert sorted(i for b in packed for i in b) == list(range(500))
    for batch in packed:
        assert len(batch) * max(max(lengths[i]) for i in batch) <= 200


def test_checkpoint_round_trip(tiny_tokenizers, tiny_spm, tmp_path):
    torch.manual_seed(0)
    model = Transformer(tiny_config(*tiny_tokenizers)).eval()
    save_checkpoint(tmp_path / "ckpt", model, *tiny_spm, metadata={"corpus": "tatoeba-en-zh"})
    loaded = load_checkpoint(tmp_path / "ckpt")
    for key, value in model.state_dict().items():
        torch.testing.assert_close(loaded.model.state_dict()[key], value)
    assert loaded.model.generator.weight is loaded.model.tgt_embed.lookup.weight  # tying survives loading
    a = translate(model, *tiny_tokenizers, "I like tea.")
    b = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.")
    assert a.target_ids == b.target_ids


def test_fp16_checkpoint_loads_as_float32(tiny_tokenizers, tiny_spm, tmp_path):
    model = Transformer(tiny_config(*tiny_tokenizers))
    save_checkpoint(tmp_path / "half", model, *tiny_spm, dtype=torch.float16)
    loaded = load_checkpoint(tmp_path / "half")
    assert loaded.model.src_embed.lookup.weight.dtype == torch.float32
    torch.testing.assert_close(
        loaded.model.src_embed.lookup.weight, model.src_embed.lookup.weight, atol=1e-3, rtol=1e-3
    )


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: (d / "model.safetensors").unlink(), "checkpoint file missing: .*model.safetensors"),
        (
            lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:200]),
            "model.safetensors is not a readable safetensors file",
        ),
        (lambda d: (d / "config.json").write_text("{"), "broken/config.json is not readable JSON"),
        (lambda d: (d / "target.model").write_bytes(b"junk"), "target.model is not a valid SentencePiece model"),
        (
            lambda d: (d / "config.json").write_text(
                (d / "config.json").read_text().replace('"d_ff": 64', '"d_ff": 96')
            ),
            "model.safetensors: .* has shape",
        ),
        (
            lambda d: (d / "config.json").write_text(
                (d / "config.json").read_text().replace('"n_encoder_layers": 2', '"n_encoder_layers": 3')
            ),
            "does not match .*config.json",
        ),
        (lambda d: edit_config(d, lambda c: c["model"].update(n_heads=0)), '"model.n_heads" = 0 is out of range'),
        (lambda d: edit_config(d, lambda c: c.update(metadata="hello")), '"metadata" must be an object'),
        (
            lambda d: edit_config(d, lambda c: c["metadata"].update(target_language=7)),
            '"metadata.target_language" must be text',
        ),
        (lambda d: edit_config(d, lambda c: c["model"].update(d_model="256")), '"model.d_model" must be a number'),
        (lambda d: edit_config(d, lambda c: c["model"].update(norm_first="yes")), '"model.norm_first" must be true'),
        (lambda d: edit_config(d, lambda c: c["model"].update(d_model=30)), "divisible by n_heads"),
        (lambda d: edit_config(d, lambda c: c.update(model=[1])), 'needs an object "model"'),
        (lambda d: edit_config(d, lambda c: c["model"].update(decoder_only=True)), "decoder-only model is not"),
    ],
    ids=[
        "missing",
        "truncated",
        "bad-config",
        "bad-tokenizer",
        "wrong-shape",
        "wrong-layers",
        "zero-heads",
        "metadata-not-object",
        "language-not-text",
        "d_model-as-text",
        "bool-as-text",
        "indivisible",
        "model-list",
        "decoder-only",
    ],
)
def test_broken_checkpoints_give_errors_naming_the_file(tiny_checkpoint, tmp_path, damage, message):
    directory = tmp_path / "broken"
    shutil.copytree(tiny_checkpoint, directory)
    damage(directory)
    with pytest.raises(CheckpointError, match=message) as error:
        load_checkpoint(directory)
    assert str(tmp_path) not in str(error.value)  # the checkpoint's name, never where the server keeps it


def edit_config(directory, change) -> None:
    config = json.loads((directory / "config.json").read_text())
    change(config)
    (directory / "config.json").write_text(json.dumps(config))


def test_translate_cli_reports_a_missing_checkpoint(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "model.translate", "--checkpoint", str(tmp_path / "nope"), "Hello."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "checkpoint folder not found" in done.stderr and "Traceback" not in done.stderr


def test_translate_cli_file_mode_keeps_line_alignment(tiny_checkpoint, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("I like tea.\n\nGood morning.\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "model.translate",
            "--checkpoint",
            str(tiny_checkpoint),
            "--input",
            str(source),
            "--output",
            str(out),
            "--beam",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[0] and lines[2]


@pytest.mark.slow
def test_resume_drops_metrics_of_an_epoch_whose_state_was_never_saved(tiny_corpus_dir, tmp_path):
    run_dir = tmp_path / "run"
    common = ["--data-dir", str(tiny_corpus_dir), "--run-dir", str(run_dir), *TINY_ARGS]
    train.main([*common, "--epochs", "1"])
    with open(run_dir / "metrics.jsonl", "a") as f:  # as if killed after logging epoch 2, before saving it
        f.write(json.dumps({"epoch": 2, "step": 0, "train_loss": 0.0}) + "\n")
    train.main([*common, "--epochs", "2"])
    assert [m["epoch"] for m in metrics(run_dir)] == [1, 2]
    assert metrics(run_dir)[1]["step"] > 0


def test_warm_start_under_new_tokenizers_keeps_the_layers_and_the_shared_pieces(tiny_checkpoint):
    """--init-from with --new-tokenizers: every non-embedding weight is copied, and so is the embedding row of
    every piece the two vocabularies share ("我" also from an old "▁我")."""
    from model.tokenizer import Tokenizer, train_sentencepiece

    from ..conftest import TINY_PAIRS

    initial = load_checkpoint(tiny_checkpoint)
    source = Tokenizer.from_bytes(train_sentencepiece([s for s, _ in TINY_PAIRS] * 5, vocab_size=60))
    target = Tokenizer.from_bytes(
        train_sentencepiece([t for _, t in TINY_PAIRS] * 5, vocab_size=60, normalization="identity", dummy_prefix=False)
    )
    assert not any(target.piece(i) == "\u2581" for i in range(target.vocab_size))  # no lone word-start piece
    cfg = initial.model.cfg
    model = Transformer(
        type(cfg)(**{**cfg.__dict__, "src_vocab_size": source.vocab_size, "tgt_vocab_size": target.vocab_size})
    )
    copied_source, copied_target = vocabulary.transfer_weights(initial, model, source, target)
    assert copied_source > 10 and copied_target > 10
    old, new = initial.model.state_dict(), model.state_dict()
    assert torch.equal(
        new["encoder_layers.0.self_attention.w_q.weight"], old["encoder_layers.0.self_attention.w_q.weight"]
    )
    old_target = {initial.target_tokenizer.piece(i): i for i in range(initial.target_tokenizer.vocab_size)}
    for i in range(4, target.vocab_size):
        piece = target.piece(i)
        j = old_target.get(piece, old_target.get("\u2581" + piece))
        if j is not None:
            assert torch.equal(new["tgt_embed.lookup.weight"][i], old["tgt_embed.lookup.weight"][j]), piece


def test_a_continued_run_exports_the_average_of_where_it_started_and_its_epochs(
    tiny_corpus_dir, tiny_checkpoint, tmp_path
):
    """--average-with-init: the weights the run continued from are one more set in the average (how the shipped
    en-zh weights were chosen), and a run with nothing to continue from is refused."""
    run_dir, export = tmp_path / "run", tmp_path / "export"
    common = ["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, "--run-dir", str(run_dir)]
    common += ["--init-from", str(tiny_checkpoint), "--warmup", "2"]
    train.main([*common, "--epochs", "1"])
    train.main([*common, "--epochs", "1", "--average-epochs", "1", "1", "--average-with-init", "--export", str(export)])

    started = load_checkpoint(tiny_checkpoint).model.state_dict()
    epoch_one = load_file(str(run_dir / "epoch001.safetensors"))
    exported = load_checkpoint(export)
    assert exported.metadata["weights"] == "average of the --init-from weights and epochs 1-1"
    changed = 0
    for key, value in epoch_one.items():
        torch.testing.assert_close(exported.model.state_dict()[key], (started[key] + value.float()) / 2)
        changed += not torch.equal(value.float(), started[key])
    assert changed  # the epoch moved the weights, so the average is neither end

    without_init = [*common[:-4], "--epochs", "1", "--average-epochs", "1", "1", "--average-with-init"]
    with pytest.raises(SystemExit, match="needs --init-from"):
        train.main([*without_init, "--export", str(export)])
    with pytest.raises(SystemExit, match="name the epochs"):
        train.main([*common, "--epochs", "1", "--average-with-init", "--export", str(export)])


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_a_gpu_asked_for_on_a_machine_without_one_stops_before_training(tiny_corpus_dir, tmp_path):
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        train.main(
            ["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, "--run-dir", str(tmp_path / "run"), "--device", "cuda"]
        )
    assert not (tmp_path / "run").exists()


def test_bf16_on_a_cpu_without_native_bfloat16_stops_before_training(tiny_corpus_dir, tmp_path, monkeypatch):
    """On an AVX2 CPU autocast emulates bfloat16 (a step of the 6+6 model: 90 s instead of 4 s): say so at once
    instead of training for hours."""
    monkeypatch.setattr(loop, "bf16_is_native", lambda: False)
    with pytest.raises(SystemExit, match="no native bfloat16"):
        train.main(["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, "--run-dir", str(tmp_path / "run"), "--bf16"])
    assert not (tmp_path / "run").exists()


def test_extended_vocabulary_keeps_every_id_and_starts_new_rows_from_the_pieces_they_replace(tiny_checkpoint):
    """--extend-vocab: the tokenizers gain whole-word pieces at new ids after the old ones; every old piece keeps
    its id and its weights (the model still translates as before), and a new piece's row is the mean of the rows
    of the pieces its word was cut into."""
    from model.tokenizer import EXTENSION_WORDS, Tokenizer, extend_sentencepiece, words_cut_finely

    initial = load_checkpoint(tiny_checkpoint)
    old_source, old_target = initial.source_tokenizer, initial.target_tokenizer
    texts = ["The Transformer reads tokens.", "A Transformer has layers."] * 3
    words = words_cut_finely(texts, old_source.processor, EXTENSION_WORDS["source"], min_count=6)
    assert "Transformer" in words and "The" not in words  # seen 6 times, and cut into 3 or more pieces
    source = Tokenizer.from_bytes(
        extend_sentencepiece((tiny_checkpoint / "source.model").read_bytes(), words, word_start=True)
    )
    target = Tokenizer.from_bytes(
        extend_sentencepiece((tiny_checkpoint / "target.model").read_bytes(), ["Transformer"], word_start=False)
    )
    assert source.vocab_size == old_source.vocab_size + len(words)
    assert [source.piece(i) for i in range(old_source.vocab_size)] == old_source.pieces(range(old_source.vocab_size))
    assert "\u2581Transformer" in source.processor.EncodeAsPieces("A Transformer")
    assert "Transformer" in target.processor.EncodeAsPieces("我喜欢Transformer。")
    assert source.decode(source.encode("The Transformer reads tokens.")) == "The Transformer reads tokens."

    cfg = initial.model.cfg
    model = Transformer(
        type(cfg)(**{**cfg.__dict__, "src_vocab_size": source.vocab_size, "tgt_vocab_size": target.vocab_size})
    ).eval()
    added = vocabulary.extend_weights(initial, model, source, target)
    assert added == (len(words), 1)
    new_row = model.state_dict()["src_embed.lookup.weight"][source.processor.PieceToId("\u2581Transformer")]
    old_rows = initial.model.state_dict()["src_embed.lookup.weight"][old_source.encode("Transformer")]
    assert torch.allclose(new_row, old_rows.mean(0))
    before = translate(initial.model, old_source, old_target, "I like tea.", need_qkv=False)
    after = translate(model, source, target, "I like tea.", need_qkv=False)
    assert after.target_ids == before.target_ids


def test_extend_vocab_needs_a_checkpoint_to_extend(tiny_corpus_dir, tmp_path):
    with pytest.raises(SystemExit, match="extend the tokenizers of --init-from"):
        train.main(
            ["--data-dir", str(tiny_corpus_dir), *TINY_ARGS, "--run-dir", str(tmp_path / "run"), "--extend-vocab", "5"]
        )


def test_characters_the_target_tokenizer_cannot_write_become_pieces(tiny_tokenizers, tiny_spm):
    """--extend-characters: a Chinese character the tokenizer only knows as <unk> (嵌 of 嵌入, embedding) and seen
    often enough gets a piece, and the tokenizer then writes it."""
    from model.tokenizer import Tokenizer, characters_it_cannot_write, extend_sentencepiece

    _, target = tiny_tokenizers
    texts = ["模型学习词嵌入。"] * 3 + ["嵌"] + ["鞍点。"]
    assert target.decode(target.encode("嵌入")) != "嵌入"
    missing = characters_it_cannot_write(texts, target.processor, min_count=3)
    assert "嵌" in missing and "鞍" not in missing and "我" not in missing
    extended = Tokenizer.from_bytes(extend_sentencepiece(tiny_spm[1], missing, word_start=False))
    assert "嵌" in extended.processor.EncodeAsPieces("词嵌入")
    assert extended.piece(target.vocab_size) == missing[0]


def test_term_and_name_words_become_whole_pieces_and_a_capital_starts_as_the_lower_case_word(tiny_checkpoint):
    """--extend-terms / --extend-names: a term's word cut into 3 or more pieces becomes a piece, and so does its
    capitalised form (a teacher's sentence starts with "Softmax", the machine-learning text writes "softmax"); a
    name only as written; no count is needed. "▁Tea" starts from the row of "▁tea", which the model has read, not
    from ▁T ea (a capital cut more finely than its lower-case word starts as that word); the model translates as
    before; and --average-with-init finds the weights the run started from under the extended vocabulary."""
    from model.tokenizer import EXTENSION_WORDS, Tokenizer, extend_sentencepiece, lexicon_words_cut_finely

    initial = load_checkpoint(tiny_checkpoint)
    old_source, target = initial.source_tokenizer, initial.target_tokenizer
    assert old_source.processor.EncodeAsPieces("tea") == ["\u2581tea"]
    pattern = EXTENSION_WORDS["source"]
    words = lexicon_words_cut_finely(["tea", "raining"], old_source.processor, pattern, with_capital=True)
    assert words == ["raining", "Raining"]  # tea / Tea are 1 / 2 pieces: fine as they are
    assert lexicon_words_cut_finely(["tea"], old_source.processor, pattern, with_capital=True, min_pieces=2) == ["Tea"]
    assert lexicon_words_cut_finely(["Munich"], old_source.processor, pattern, with_capital=False) == ["Munich"]

    words = ["Tea", "raining", "Raining", "Munich"]
    source = Tokenizer.from_bytes(
        extend_sentencepiece((tiny_checkpoint / "source.model").read_bytes(), words, word_start=True)
    )
    assert source.processor.EncodeAsPieces("Raining Munich") == ["\u2581Raining", "\u2581Munich"]
    cfg = initial.model.cfg
    extended_cfg = type(cfg)(**{**cfg.__dict__, "src_vocab_size": source.vocab_size})
    model = Transformer(extended_cfg).eval()
    assert vocabulary.extend_weights(initial, model, source, target) == (4, 0)
    rows = model.state_dict()["src_embed.lookup.weight"]
    old_rows = initial.model.state_dict()["src_embed.lookup.weight"]
    row = lambda piece: rows[source.processor.PieceToId(piece)]  # noqa: E731
    torch.testing.assert_close(row("\u2581Tea"), old_rows[old_source.processor.PieceToId("\u2581tea")])
    torch.testing.assert_close(row("\u2581Raining"), old_rows[old_source.encode("raining")].mean(0))
    torch.testing.assert_close(row("\u2581raining"), old_rows[old_source.encode("raining")].mean(0))
    torch.testing.assert_close(row("\u2581Munich"), old_rows[old_source.encode("munich")].mean(0))  # 4 < 5 pieces
    before = translate(initial.model, old_source, target, "I like tea.", need_qkv=False)
    after = translate(model, source, target, "I like tea.", need_qkv=False)
    assert after.target_ids == before.target_ids

    started = vocabulary.starting_weights(str(tiny_checkpoint), extended_cfg, source, target)
    for key, value in weights_to_save(model).items():
        torch.testing.assert_close(started[key], value)
    # a tokenizer learnt afresh (--new-tokenizers), even of the same size, has no weights to start from
    texts = [s for s, _ in TINY_PAIRS] * 5 + ["Raining tea and coffee every day."] * 10
    retrained = Tokenizer.from_bytes(train_sentencepiece(texts, vocab_size=old_source.vocab_size))
    everyone = range(old_source.vocab_size)
    assert retrained.vocab_size == old_source.vocab_size and retrained.pieces(everyone) != old_source.pieces(everyone)
    with pytest.raises(SystemExit, match="another shape or vocabulary"):
        vocabulary.starting_weights(str(tiny_checkpoint), cfg, retrained, target)


def test_the_gpu_sweep_picks_most_rows_and_best_bleu_near_the_shipped_scores_and_halves_join_to_the_average(
    tmp_path,
):
    """benchmarks/gpu_sweep_pick.py: weights far below the shipped ones on the test split are passed over however
    many rows they get right; of the rest, the most rows and then the best BLEU come back, each as two files that
    join to the mean of its epochs."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_sweep_pick import choose, main, merge_halves

    def line(weights, app, lesson, test, valid=40.0, everyday=44.0):
        return {"weights": weights, "must_app": f"{app}/26", "must_lesson": f"{lesson}/54", "test_bleu": test,
                "everyday_bleu": everyday, "valid_bleu": valid}  # fmt: skip

    runs = tmp_path / "runs"
    for variant, epochs in (("a", 2), ("b", 1)):
        (runs / variant).mkdir(parents=True)
        for e in range(1, epochs + 1):
            save_file(
                {"w": torch.full((4, 3), float(e)), "b": torch.arange(3.0) * e},
                str(runs / variant / f"epoch{e:03d}.safetensors"),
            )
    a = [
        line("shipped", 23, 40, 41.0),
        line("2", 23, 41, 41.1),
        line("1+2", 24, 41, 40.9, valid=39.0),
        line("1", 21, 39, 42.5, valid=44.0),  # fewer rows, best BLEU: the second pick
    ]
    b = [line("1", 26, 54, 39.0)]  # every row right, 2 BLEU below the shipped weights on the test split
    (runs / "a.scores").write_text("".join(json.dumps(d) + "\n" for d in a))
    (runs / "b.scores").write_text("".join(json.dumps(d) + "\n" for d in b))
    lines = [{**d, "variant": "a"} for d in a] + [{**d, "variant": "b"} for d in b]
    assert [(d["variant"], d["weights"]) for d in choose(lines)] == [("a", "1+2"), ("a", "1")]

    out = tmp_path / "out"
    out.mkdir()
    main([str(runs), str(out), "a", "b"])
    best = merge_halves(out / "best1")
    assert best["w"].dtype == torch.float16 and torch.equal(best["w"].float(), torch.full((4, 3), 1.5))
    assert torch.equal(best["b"].float(), torch.arange(3.0) * 1.5)
    assert torch.equal(merge_halves(out / "best2")["w"].float(), torch.full((4, 3), 1.0))
    assert len((out / "scores.jsonl").read_text().splitlines()) == 5


def test_an_omission_negative_leaves_out_one_span_of_word_pieces_and_never_punctuation():
    # Pieces 5-9 write words, 1 is punctuation: a negative is the target with 1-3 neighbouring word pieces cut.
    deletable = [False, False] + [False] * 3 + [True] * 5
    target = [5, 6, 1, 7, 8, 9, 1]
    rng = random.Random(0)
    seen = set()
    for _ in range(300):
        omitted = losses.omit_a_span(target, deletable, rng)
        cut = len(target) - len(omitted)
        assert 1 <= cut <= 3
        assert omitted.count(1) == 2  # the punctuation stays
        start = next((i for i in range(len(omitted)) if omitted[i] != target[i]), len(omitted))
        assert omitted == target[:start] + target[start + cut :]  # one contiguous span
        assert all(deletable[p] for p in target[start : start + cut])
        seen.add(tuple(omitted))
    assert (5, 1, 7, 8, 9, 1) in seen and (5, 6, 1, 1) in seen  # any word piece may go, and up to three at once
    assert losses.omit_a_span([1, 1], deletable, rng) is None


def test_the_omission_hinge_pushes_only_where_the_whole_translation_does_not_lead_by_the_margin():
    full = torch.tensor([-2.0, -10.0, -3.0])
    omitted = torch.tensor([-9.0, -4.0, -4.0])  # leads by 7, trails by 6, leads by 1
    assert losses.omission_hinge(full, omitted, 3.0).item() == pytest.approx((0 + 9 + 2) / 3)
    assert losses.omission_hinge(full, omitted - 100, 3.0).item() == 0.0
    # The score it compares is the sum of the target pieces' log-probabilities, padding left out.
    logits = torch.log(torch.tensor([[[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]]]).clamp_min(1e-12))
    assert losses.sequence_log_probs(logits, torch.tensor([[1, 0]])).item() == pytest.approx(math.log(0.5))
    assert losses.sequence_log_probs(logits, torch.tensor([[1, 2]])).item() == pytest.approx(math.log(0.5 * 0.7))


def test_with_word_dropout_the_omission_contrast_still_compares_whole_targets(tiny_tokenizers):
    """--target-word-dropout thins what the decoder reads; the omission contrast must score the whole target
    against the one missing a word, both read whole, or the hidden pieces alone open a gap it pushes on."""
    source, target = tiny_tokenizers
    torch.manual_seed(0)
    model = Transformer(tiny_config(source, target)).eval()
    pairs = [(source.encode(en), target.encode(zh)) for en, zh in TINY_PAIRS[:6]]
    src, tgt_in, tgt_out = batches.collate(pairs)
    deletable = losses.word_pieces(target)
    thinned = losses.drop_target_words(tgt_in, 0.5, torch.Generator().manual_seed(0))
    assert not torch.equal(thinned, tgt_in)

    def contrast(decoder_in, passed):
        encoded, decoded = model(src, decoder_in)
        decoded = decoded if passed else None
        return losses.omission_loss(
            model, encoded, decoded, pairs, tgt_in, tgt_out, deletable, random.Random(3), 1000.0, False
        ).item()

    with torch.no_grad():
        whole = contrast(tgt_in, True)
        assert contrast(thinned, False) == pytest.approx(whole, abs=1e-4)  # decoded again, whole
        assert abs(contrast(thinned, True) - whole) > 0.1  # what the thinned pass would have compared instead


@pytest.mark.slow
def test_training_with_the_omission_contrast_makes_translations_missing_a_word_less_likely(tiny_corpus_dir, tmp_path):
    """The property the contrast exists for: after the same training, a model trained with it prefers each whole
    training target to that target with a word left out by more than a model trained without it."""
    gaps = {}
    for name, extra in (("plain", []), ("contrast", ["--omission-margin", "8"])):
        export = tmp_path / name
        common = ["--data-dir", str(tiny_corpus_dir), "--run-dir", str(tmp_path / f"{name}-run"), *TINY_ARGS]
        train.main([*common, "--epochs", "6", "--average-last", "1", "--export", str(export), *extra])
        loaded = load_checkpoint(export)
        model, source, target = loaded.model.eval(), loaded.source_tokenizer, loaded.target_tokenizer
        deletable = losses.word_pieces(target)
        rng = random.Random(1)
        full_pairs = [(source.encode(en), target.encode(zh)) for en, zh in TINY_PAIRS]
        omitted_pairs = [(s, losses.omit_a_span(t, deletable, rng)) for s, t in full_pairs]
        with torch.no_grad():
            scores = []
            for pairs in (full_pairs, omitted_pairs):
                src, tgt_in, tgt_out = batches.collate(pairs)
                _, decoded = model(src, tgt_in)
                scores.append(losses.sequence_log_probs(decoded.logits, tgt_out))
        gaps[name] = (scores[0] - scores[1]).mean().item()
    assert gaps["contrast"] > gaps["plain"] + 1.0, gaps


def test_repeat_unlikelihood_penalises_writing_the_last_piece_again_only_where_the_target_moves_on():
    # Vocabulary of 6; target 4 5 5 </s>: the repeat of 5 at step 3 is the target's own, so it is not penalised.
    tgt_in = torch.tensor([[BOS_ID, 4, 5, 5]])
    tgt_out = torch.tensor([[4, 5, 5, EOS_ID]])
    probs = torch.full((1, 4, 6), 0.1)
    probs[0, 1, 4] = 0.5  # step 2 (true next 5) gives the piece just written (4) one half
    probs[0, 2, 5] = 0.5  # step 3: the true next is 5 again, no penalty
    probs[0, 3, 5] = 0.5  # step 4 (true next </s>) gives 5 one half
    logits = torch.log(probs / probs.sum(-1, keepdim=True))
    expected_p = 0.5 / 1.0  # 0.5 + 5 * 0.1 = 1.0
    expected = -math.log(1 - expected_p)  # the same at the two steps that count
    assert losses.repeat_unlikelihood(logits, tgt_in, tgt_out).item() == pytest.approx(expected)
    lower = probs.clone()
    lower[0, 1, 4] = lower[0, 3, 5] = 0.1
    assert losses.repeat_unlikelihood(torch.log(lower / lower.sum(-1, keepdim=True)), tgt_in, tgt_out).item() < expected


# Stage 9 appended 1,336 whole Chinese words to the shipped target tokenizer (--extend-chinese-words), after its
# 8,130 earlier pieces; cut back to those, it is stage 8's tokenizer byte for byte.
STAGE8_TARGET_PIECES = 8130


def shipped_target_proto_before_stage9():
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString((ROOT / "checkpoints" / "en-zh" / "target.model").read_bytes())
    del proto.pieces[STAGE8_TARGET_PIECES:]
    return proto


def test_retired_cross_word_pieces_are_no_longer_chosen_but_keep_their_ids_and_still_decode():
    """--retire-cross-word-pieces: the shipped Chinese tokenizer has pieces that join words (在医院 "at hospital",
    有两 "has two", 只猫 classifier + "cat"); retired, the same sentences are cut at word boundaries, every piece
    keeps its id (the model's rows stay valid), dictionary words stay whole, and decoding an old piece still
    writes its text."""
    from sentencepiece import sentencepiece_model_pb2

    from model.tokenizer import Tokenizer, pieces_across_words, retire_pieces

    # the shipped tokenizer as it was before stage 8 retired its joined pieces: every piece in use again
    proto = shipped_target_proto_before_stage9()
    piece_type = sentencepiece_model_pb2.ModelProto.SentencePiece
    for piece in proto.pieces:
        if piece.type == piece_type.UNUSED:
            piece.type = piece_type.NORMAL
    model_bytes = proto.SerializeToString()
    old = Tokenizer.from_bytes(model_bytes)
    assert old.processor.EncodeAsPieces("安娜在医院工作。") == ["安", "娜", "在医院", "工作", "。"]
    dictionary = {"医院", "工作", "邻居", "两只"}
    across = pieces_across_words(old.processor, dictionary)
    assert {"在医院", "有两", "只猫"} <= set(across)
    assert not {"医院", "工作", "邻居", "两只", "安", "。"} & set(across)

    new = Tokenizer.from_bytes(retire_pieces(model_bytes, across))
    assert new.vocab_size == old.vocab_size
    assert all(new.piece(i) == old.piece(i) for i in range(old.vocab_size))
    assert new.processor.EncodeAsPieces("安娜在医院工作。") == ["安", "娜", "在", "医院", "工作", "。"]
    assert new.processor.EncodeAsPieces("我的邻居有两只猫。")[2:] == ["邻居", "有", "两只", "猫", "。"]
    for text in ("安娜在医院工作。", "我的邻居有两只黑猫。", "汤姆在波士顿学习。"):
        assert new.decode(new.encode(text)) == text
    assert new.decode([old.processor.PieceToId("在医院"), old.processor.PieceToId("工作")]) == "在医院工作"


def test_chinese_words_the_tokenizer_cuts_into_characters_get_a_piece_each_and_keep_every_old_id():
    """--extend-chinese-words: the shipped Chinese tokenizer of stage 8 wrote 模型 (model) as 模 型 and 注意力
    (attention) as 注意 力, so the decoder could stop halfway (注意: "pay attention"). Frequent dictionary words it
    cuts get a piece of their own; a word is counted where the dictionary segments the text, not where its
    characters happen to meet (面的 "minivan" inside 上面的), rare words and words already whole get none, and every
    old id stays."""
    from model.tokenizer import Tokenizer, chinese_words_cut_finely, extend_sentencepiece

    model_bytes = shipped_target_proto_before_stage9().SerializeToString()  # as it was before this option ran
    old = Tokenizer.from_bytes(model_bytes)
    assert old.processor.EncodeAsPieces("注意力告诉模型往哪里看。")[:4] == ["注意", "力", "告诉", "模"]
    texts = ["注意力告诉模型往哪里看。", "模型很大。", "上面的模型有注意力。", "这个模型不大。", "编码器很好。"]
    dictionary = {"模型", "注意力", "上面", "面的", "编码器", "告诉", "哪里"}
    words = chinese_words_cut_finely(texts, old.processor, dictionary, min_count=2)
    assert words == ["模型", "注意力"]  # 4 and 2 times; 面的 never (上面 comes first), 编码器 once, 告诉 is whole

    new = Tokenizer.from_bytes(extend_sentencepiece(model_bytes, words, word_start=False))
    assert new.vocab_size == old.vocab_size + 2
    assert all(new.piece(i) == old.piece(i) for i in range(old.vocab_size))
    pieces = new.processor.EncodeAsPieces("注意力告诉模型往哪里看。")
    assert pieces == ["注意力", "告诉", "模型", "往", "哪里", "看", "。"]
    assert new.decode(new.encode("上面的模型有注意力。")) == "上面的模型有注意力。"
    # the shipped tokenizer (stage 9, these pieces appended) writes the lesson's words whole
    shipped = Tokenizer.load(ROOT / "checkpoints" / "en-zh" / "target.model")
    assert shipped.processor.EncodeAsPieces("注意力告诉模型往哪里看。")[:3] == ["注意力", "告诉", "模型"]
    assert shipped.processor.EncodeAsPieces("编码器")[-1] == "编码器"


def test_target_word_dropout_thins_only_the_decoder_input_and_keeps_start_and_padding():
    """--target-word-dropout P: about P of the decoder's input pieces become <unk>, never <s> or padding, and
    the same seed drops the same pieces (a resumed run repeats its batches exactly)."""
    from model.tokenizer import BOS_ID, PAD_ID, UNK_ID
    from model.training.losses import drop_target_words

    tgt_in = torch.tensor([[BOS_ID] + list(range(10, 210)) + [PAD_ID] * 50 for _ in range(20)])
    thinned = drop_target_words(tgt_in, 0.2, torch.Generator().manual_seed(7))
    assert (thinned[:, 0] == BOS_ID).all() and (thinned[:, 201:] == PAD_ID).all()
    changed = thinned != tgt_in
    assert (thinned[changed] == UNK_ID).all()
    assert 0.17 < changed[:, 1:201].float().mean() < 0.23
    again = drop_target_words(tgt_in, 0.2, torch.Generator().manual_seed(7))
    assert torch.equal(thinned, again)
    assert torch.equal(drop_target_words(tgt_in, 0.0, torch.Generator().manual_seed(7)), tgt_in)


def test_translate_cli_reads_a_chinese_source(tiny_zh_en_checkpoint, tmp_path):
    """Issue 58: python -m model.translate --checkpoint checkpoints/zh-en "猫追狗。" (here the tiny zh-en): the
    Chinese pieces are the source, and the handout names Chinese as the source language."""
    page = tmp_path / "cat.html"
    command = [sys.executable, "-m", "model.translate", "--checkpoint", str(tiny_zh_en_checkpoint), "猫追狗。"]
    done = subprocess.run([*command, "--html", str(page)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r"const DATA = (\{.*?\});\n", text).group(1))
    assert "猫" in "".join(data["kinds"]["encoder_self"]["keys"])  # the encoder reads the Chinese typed
    assert "猫追狗。" in text and "Chinese → English" in text
