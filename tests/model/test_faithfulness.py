"""The corpus check of which explanation agrees with the model: rank correlation, occlusion, the table."""

import numpy as np
import pytest
import torch

from model.decode import translate
from model.faithfulness import COLUMNS, faithfulness_table, occlusion_drops, source_words, spearman
from model.tokenizer import BOS_ID


def test_spearman_is_one_for_the_same_order_and_minus_one_for_the_reverse():
    assert spearman(np.array([1, 2, 3, 4.0]), np.array([10, 20, 30, 45.0])) == pytest.approx(1.0)
    assert spearman(np.array([1, 2, 3, 4.0]), np.array([4, 3, 2, 1.0])) == pytest.approx(-1.0)
    assert np.isnan(spearman(np.array([1, 1, 1.0]), np.array([1, 2, 3.0])))


def test_occlusion_is_the_log_probability_lost_without_the_word(tiny_model, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    tr = translate(tiny_model, src_tok, tgt_tok, "Tom drinks tea.", need_qkv=False)
    words = source_words(tr.source_pieces)
    assert sum(len(w) for w in words) == len(tr.source_ids) - 1  # every piece but </s>
    drops = occlusion_drops(tiny_model, tr.source_ids, tr.target_ids, words)
    assert drops.shape == (len(tr.target_ids), len(words))

    def log_p(source):
        with torch.no_grad():
            logits = (
                tiny_model.decode(
                    torch.tensor([[BOS_ID] + tr.target_ids[:-1]]), tiny_model.encode(torch.tensor([source]))
                )
                .logits[0]
                .log_softmax(-1)
            )
        return logits[torch.arange(len(tr.target_ids)), torch.tensor(tr.target_ids)].numpy()

    without_first = [i for k, i in enumerate(tr.source_ids) if k not in words[0]]
    np.testing.assert_allclose(drops[:, 0], log_p(tr.source_ids) - log_p(without_first), atol=1e-4)


@pytest.mark.slow
def test_the_table_has_a_row_per_method_and_layer_with_correlations(tiny_model, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    alignment = {
        "results": [
            {"method": "attention", "layer": 1, "head": "mean", "aer": 0.5},
            {"method": "rollout", "layer": 0, "head": "model", "aer": 0.7},
        ]
    }
    table = faithfulness_table(
        tiny_model,
        src_tok,
        tgt_tok,
        ["Tom drinks tea.", "I like coffee very much."],
        ("attention", "norm", "rollout", "gradient-x-input", "integrated-gradients"),
        slow_sentences=1,
        alignment=alignment,
    )
    assert list(table.columns) == COLUMNS
    layers = tiny_model.cfg.n_decoder_layers
    assert len(table) == 2 * layers + 3
    assert table["spearman"].dropna().between(-1, 1).all()
    assert table.set_index(["method", "layer"]).loc[("attention", 1), "aer"] == 0.5
    assert table.set_index(["method", "layer"]).loc[("rollout", 0), "aer"] == 0.7
    assert table.set_index(["method", "layer"]).loc[("integrated-gradients", 0), "sentences"] == 1


def test_the_chance_level_of_a_rank_correlation_over_few_words_matches_the_published_table():
    from model.faithfulness import chance_correlation

    # two-sided 5 % critical values of Spearman's rho (exact, e.g. Zar 1972): n = 6, 7, 8
    assert chance_correlation(6)[0] == pytest.approx(0.886, abs=0.01)
    assert chance_correlation(7)[0] == pytest.approx(0.786, abs=0.01)
    assert chance_correlation(8)[0] == pytest.approx(0.738, abs=0.01)
    # with four words no value is that rare: even rho = +-1 comes from 2 of the 24 orders
    assert chance_correlation(4) == (None, pytest.approx(2 / 24))
    assert chance_correlation(20)[0] == pytest.approx(0.45, abs=0.01)  # the normal approximation from 9 words


def test_the_corpus_mean_comes_with_a_bootstrap_interval_over_sentences(tiny_model, tiny_tokenizers, tmp_path):
    from model import faithfulness as f

    sentences = ["Tom drinks tea.", "I like coffee very much.", "The cat sleeps on the sofa.", "We walk home now."]
    scored = f.score_sentences(tiny_model, *tiny_tokenizers, sentences, ("attention", "rollout"), slow_sentences=0)
    per = f.sentence_correlations(scored)
    assert list(per.columns) == f.SENTENCE_COLUMNS
    table = f.with_intervals(f.summarize(scored), per)
    for row in table.itertuples():
        rows = per[(per["method"] == row.method) & (per["layer"] == row.layer)]
        # the per-sentence sums give back the table's mean, and the interval holds it
        assert rows["rho_sum"].sum() / rows["pieces"].sum() == pytest.approx(row.spearman, abs=1e-4)
        assert row.ci_low <= row.spearman + 1e-4 and row.spearman - 1e-4 <= row.ci_high
    # the same resampling gives the same interval; half the sentences, a wider one (on made-up sums)
    rng = np.random.default_rng(1)
    sums, pieces = rng.normal(2.0, 1.5, 300), rng.integers(4, 12, 300).astype(float)
    wide, narrow = f.bootstrap_interval(sums[:30], pieces[:30]), f.bootstrap_interval(sums, pieces)
    assert f.bootstrap_interval(sums, pieces) == narrow
    assert wide[1] - wide[0] > 2 * (narrow[1] - narrow[0])
    assert f.sentences_path(tmp_path / "faithfulness.csv").name == "faithfulness_sentences.csv"
