"""Word alignment from attention, scored by AER: the formula, the word/piece mapping, the rows each method reads,
and the command line on a tiny model."""

import json

import numpy as np
import pytest

from model.align import (
    GoldPair,
    PreparedPair,
    alignment_error_rate,
    detokenize,
    gold_file_for,
    links_from_scores,
    main,
    piece_word_overlap,
    read_gold,
    score_heads,
    word_scores,
)
from model.checkpoint import load_checkpoint
from model.teacher_forcing import record_pass
from tests.conftest import SHIPPED


def gold(sure, possible=()):
    return GoldPair(["a", "b", "c"], ["x", "y", "z"], set(sure), set(sure) | set(possible))


def test_aer_is_zero_for_the_sure_links_and_counts_possible_links_as_half_right():
    g = gold({(0, 0), (1, 1)}, {(2, 2)})
    assert alignment_error_rate([{(0, 0), (1, 1)}], [g]) == 0.0
    # A = {(0,0), (2,2)}: |A∩S| = 1, |A∩P| = 2, |A| + |S| = 4 -> 1 - 3/4
    assert alignment_error_rate([{(0, 0), (2, 2)}], [g]) == pytest.approx(0.25)
    assert alignment_error_rate([{(2, 0)}], [g]) == pytest.approx(1.0)
    # Counted over the whole set, not averaged per sentence.
    assert alignment_error_rate([{(0, 0), (1, 1)}, {(2, 0)}], [g, g]) == pytest.approx(1 - 4 / 7)


def test_read_gold_checks_links(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("Tom runs .\t汤 姆 跑 。\t0-0 0-1 1-2 2?3\n", encoding="utf-8")
    (pair,) = read_gold(path)
    assert pair.sure == {(0, 0), (0, 1), (1, 2)} and pair.possible == pair.sure | {(2, 3)}
    path.write_text("Tom runs .\t汤 姆 跑 。\t0-9\n", encoding="utf-8")
    with pytest.raises(ValueError, match="outside"):
        read_gold(path)


@pytest.mark.checkpoint
def test_chinese_is_joined_without_spaces_and_a_piece_can_cover_several_words():
    loaded = load_checkpoint(SHIPPED)
    text, spans = detokenize("我 昨 天 买 了 书 。".split(), "zh")
    assert text == "我昨天买了书。" and spans[1] == (1, 2)
    overlap = piece_word_overlap(loaded.target_tokenizer, text, spans)
    pieces = loaded.target_tokenizer.encode_with_pieces(text)[1]
    assert overlap.shape == (len(pieces), 7)
    assert (overlap.sum(0) >= 1).all()  # every character is in some piece
    multi = [p for p, row in enumerate(overlap) if row.sum() > 1]
    assert all(len(pieces[p]) == overlap[p].sum() for p in multi)  # a piece of k characters covers k words
    text, spans = detokenize("Tom chases Jerry .".split(), "en")
    assert text == "Tom chases Jerry ." and spans[1] == (4, 10)
    overlap = piece_word_overlap(loaded.source_tokenizer, text, spans)
    assert overlap.sum(0).tolist()[1] >= 1 and (overlap.sum(1) <= 1).all()


def constructed_pair():
    # 3 source words of one piece each + </s>; 3 target words of one piece each + </s>.
    g = GoldPair(["A", "B", "C"], ["x", "y", "z"], {(2, 0), (0, 1), (1, 2)}, {(2, 0), (0, 1), (1, 2)})
    eye = np.eye(3)
    return PreparedPair(g, [5, 6, 7, 3], [8, 9, 10, 3], eye, eye)


def test_shifted_reads_the_row_whose_input_is_the_word():
    pp = constructed_pair()
    # Decoder rows 0..3 (3 predicts </s>); the gold alignment appears one row late: row t+1 looks at the source
    # word of target word t. Attention puts most weight on </s> (column 3), which is not a word.
    attention = np.zeros((4, 4))
    attention[0, [0, 3]] = [0.2, 0.8]
    for t, s in enumerate([2, 0, 1]):
        attention[t + 1, s] = 0.3
        attention[t + 1, 3] = 0.7
    shifted = links_from_scores(word_scores(attention, pp, 1), pp.target_overlap)
    plain = links_from_scores(word_scores(attention, pp, 0), pp.target_overlap)
    assert alignment_error_rate([shifted], [pp.gold]) == 0.0
    assert alignment_error_rate([plain], [pp.gold]) == pytest.approx(1.0)


def test_a_word_of_two_pieces_sums_its_source_pieces_and_averages_its_target_rows():
    g = GoldPair(["chases", "Jerry"], ["追", "杰瑞"], {(0, 0), (1, 1)}, {(0, 0), (1, 1)})
    source_overlap = np.array([[1, 0], [1, 0], [0, 1]])  # chase + s, Jerry
    target_overlap = np.array([[1, 0], [0, 1], [0, 1]])  # 追, 杰 + 瑞
    pp = PreparedPair(g, [5, 6, 7, 3], [8, 9, 10, 3], source_overlap, target_overlap)
    m = np.array([[0.3, 0.3, 0.4, 0], [0.0, 0.1, 0.9, 0], [0.5, 0.1, 0.4, 0], [0, 0, 0, 1]])
    scores = word_scores(m, pp, 0)
    np.testing.assert_allclose(scores, [[0.6, 0.4], [0.35, 0.65]])
    assert links_from_scores(scores, target_overlap) == {(0, 0), (1, 1)}


def test_every_method_layer_and_head_is_scored_on_a_tiny_model(tiny_checkpoint, tmp_path):
    loaded = load_checkpoint(tiny_checkpoint)
    g = read_gold_text(
        tmp_path,
        "Tom drinks tea .\t汤 姆 喝 茶 。\t0-0 0-1 1-2 2-3 3-4\nI like tea .\t我 喜 欢 茶 。\t0-0 1-1 1-2 2-3 3-4\n",
    )
    results = score_heads(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        ("en", "zh"),
        read_gold(g),
        ("rollout", "gradient-x-input"),
    )
    cfg = loaded.model.cfg
    per_head = [r for r in results.rows if r["method"] == "attention"]
    assert len(per_head) == cfg.n_decoder_layers * (cfg.n_heads + 1)
    assert {r["method"] for r in results.rows} == {
        "attention",
        "shifted",
        "norm",
        "norm-shifted",
        "value-zeroing",
        "rollout",
        "gradient-x-input",
    }
    assert all(0.0 <= r["aer"] <= 1.0 for r in results.rows)
    grid = results.grid("norm", cfg.n_decoder_layers, cfg.n_heads)
    assert grid.shape == (cfg.n_decoder_layers, cfg.n_heads) and not np.isnan(grid).any()


def read_gold_text(tmp_path, text):
    path = tmp_path / "gold.tsv"
    path.write_text(text, encoding="utf-8")
    return path


def test_command_line_writes_results_and_links_that_recompute_the_same_aer(tiny_checkpoint, tmp_path, capsys):
    g = read_gold_text(
        tmp_path,
        "Tom drinks tea .\t汤 姆 喝 茶 。\t0-0 0-1 1-2 2-3 3-4\n"
        "We drink water .\t我 们 喝 水 。\t0-0 0-1 1-2 2-3 3?4\n",
    )
    out = tmp_path / "align.json"
    main(
        [
            "--checkpoint",
            str(tiny_checkpoint),
            "--gold",
            str(g),
            "--json",
            str(out),
            "--links-out",
            str(tmp_path / "links"),
            "--whole-model",
        ]
    )
    data = json.loads(out.read_text())
    assert data["sentences"] == 2
    assert {"method", "layer", "head", "aer"} <= set(data["results"][0])
    printed = capsys.readouterr().out
    for method in ("attention", "shifted", "norm", "norm-shifted"):
        best = min((r for r in data["results"] if r["method"] == method), key=lambda r: r["aer"])
        assert f"AER {best['aer']:.3f}" in printed
        lines = (tmp_path / "links" / f"{method}.links").read_text().splitlines()
        predicted = [{tuple(int(x) for x in link.split("-")) for link in line.split()} for line in lines]
        assert alignment_error_rate(predicted, read_gold(g)) == pytest.approx(best["aer"], abs=1e-4)


def test_a_chinese_source_reads_the_english_chinese_gold_reversed(tiny_zh_en_checkpoint, tmp_path):
    """Issue 58: zh-en is scored on en-zh.tsv read the other way round: Chinese characters are the source words,
    each link i-j becomes j-i, and the alignment.json it writes says so."""
    g = read_gold_text(tmp_path, "Tom drinks tea .\t汤 姆 喝 茶 。\t0-0 0-1 1-2 2?3 3-4\n")
    (pair,) = read_gold(g, reverse=True)
    assert pair.source == ["汤", "姆", "喝", "茶", "。"] and pair.target == ["Tom", "drinks", "tea", "."]
    assert pair.sure == {(0, 0), (1, 0), (2, 1), (4, 3)} and (3, 2) in pair.possible - pair.sure
    assert gold_file_for("zh", "en") == (gold_file_for("en", "zh")[0], True)
    out = tmp_path / "align.json"
    main(["--checkpoint", str(tiny_zh_en_checkpoint), "--gold", str(g), "--json", str(out), "--whole-model"])
    data = json.loads(out.read_text())
    assert data["reversed"] is True and data["sentences"] == 1
    assert all(0.0 <= r["aer"] <= 1.0 for r in data["results"])


@pytest.mark.checkpoint
def test_shipped_gold_sets_read_and_fit_the_tokenizers():
    """Every shipped checkpoint's gold set (zh-en's: en-zh.tsv reversed) reads, and each gold word of the language
    it writes is reached by some piece."""
    for folder in sorted(p.parent for p in SHIPPED.parent.glob("*/config.json")):
        loaded = load_checkpoint(folder)
        languages = (loaded.metadata["source_language"], loaded.metadata["target_language"])
        pairs = read_gold(*gold_file_for(*languages))
        assert len(pairs) >= 100
        for pair in pairs[:20]:
            text, spans = detokenize(pair.target, languages[1])
            overlap = piece_word_overlap(loaded.target_tokenizer, text, spans)
            assert (overlap.sum(0) >= 1).all(), text  # every gold word is reached by some piece


def test_a_pass_records_attention_rows_that_sum_to_one(tiny_model, tiny_tokenizers):
    src, tgt = tiny_tokenizers
    fp = record_pass(tiny_model, src.encode("I like tea.") + [3], tgt.encode("我喜欢茶。") + [3])
    for kind, w in fp.attention.items():
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
