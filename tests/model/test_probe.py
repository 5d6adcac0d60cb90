"""Head statistics on hand-made attention with known answers; ablation, teacher forcing, hypotheses."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from model import roles
from model.checkpoint import load_checkpoint
from model.data import Example
from model.decode import teacher_force, translate, translate_hypotheses
from model.probe import (
    ablation_ranking,
    alignment_agreement,
    corpus_statistics,
    head_statistics,
    is_punctuation,
    name_heads,
    statistics_frame,
    word_level,
)

from ..conftest import TINY_PAIRS


def as_heads(*matrices) -> np.ndarray:
    """Stack (queries, keys) matrices as one layer of heads: (1, heads, queries, keys)."""
    return np.stack(matrices)[None]


def shifted_identity(n: int) -> np.ndarray:
    """Every query looks at the previous position; the first looks at itself."""
    m = np.zeros((n, n))
    m[0, 0] = 1
    for i in range(1, n):
        m[i, i - 1] = 1
    return m


def test_identity_head_has_distance_zero_and_all_weight_on_the_same_position():
    keys = ["▁a", "▁b", "▁c", "."]
    stats = head_statistics(as_heads(np.eye(4)), keys, boundary_key=3)
    assert stats["distance"][0, 0] == 0
    assert stats["same"][0, 0] == 1 and stats["previous"][0, 0] == 0 and stats["next"][0, 0] == 0
    assert stats["entropy"][0, 0] == 0 and stats["max_weight"][0, 0] == 1
    assert stats["boundary"][0, 0] == pytest.approx(0.25)  # only the last row looks at key 3
    assert stats["punctuation"][0, 0] == pytest.approx(0.25)


def test_shifted_identity_puts_its_weight_on_the_previous_position_and_is_named_positional_by_roles_alone():
    """Issue 60: one definition of a positional head. The statistics table measures the weight on q - 1; the
    role is model.roles's (largest weight at one offset in at least 90 % of the queries), not the table's."""
    stats = head_statistics(as_heads(shifted_identity(5)), list("abcde"), boundary_key=4)
    assert stats["previous"][0, 0] == 1  # every row that has a previous position puts all weight there
    assert stats["distance"][0, 0] == pytest.approx(4 / 5)
    frame = name_heads(statistics_frame({"encoder_self": stats}))
    assert frame.loc[0, "role"] == ""
    assert roles.positional_offset(shifted_identity(5)) == (-1, pytest.approx(4 / 5))  # row 0 has no q - 1
    assert roles.positional_offset(shifted_identity(20))[1] >= roles.POSITIONAL_SHARE


def test_uniform_head_has_maximal_entropy_and_boundary_sink_is_named():
    n = 4
    uniform = np.full((n, n), 1 / n)
    sink = np.zeros((n, n))
    sink[:, -1] = 1
    stats = head_statistics(as_heads(uniform, sink), list("abcd"), boundary_key=3)
    assert stats["entropy"][0, 0] == pytest.approx(np.log(n))
    assert stats["boundary"][0, 1] == 1
    frame = name_heads(statistics_frame({"cross": dict(stats, alignment_agreement=np.zeros((1, 2)))}))
    assert list(frame["role"]) == ["", "boundary sink"]


def test_alignment_agreement():
    diagonal = np.eye(3)
    reversed_ = np.eye(3)[::-1]
    cross = np.stack([np.stack([diagonal, reversed_]), np.stack([diagonal, diagonal])])  # (2 layers, 2 heads, 3, 3)
    agreement = alignment_agreement(cross)
    assert agreement[1].tolist() == [1.0, 1.0] and agreement[0, 0] == 1.0 and agreement[0, 1] == pytest.approx(1 / 3)


def test_source_order_is_one_for_a_monotone_head_and_negative_for_a_reversed_one():
    from model.probe import source_order

    monotone, reversed_ = np.eye(4), np.eye(4)[::-1]
    order = source_order(np.stack([monotone, reversed_])[None])
    assert order[0, 0] == pytest.approx(1.0) and order[0, 1] == pytest.approx(-1.0)


def test_strongest_heads_picks_lowest_entropy_and_highest_previous():
    from model.probe import strongest_heads

    stats = head_statistics(as_heads(np.full((4, 4), 0.25), shifted_identity(4)), list("abcd"), boundary_key=3)
    table = strongest_heads(statistics_frame({"encoder_self": stats})).set_index("statistic")
    assert table.loc["entropy", "head"] == 2 and table.loc["previous", "head"] == 2
    assert table.loc["entropy", "value"] == 0.0


def test_punctuation_pieces():
    assert is_punctuation("。") and is_punctuation("▁?") and is_punctuation(".")
    assert not is_punctuation("▁tea") and not is_punctuation("▁")
    assert not is_punctuation("'") and not is_punctuation("-")  # inside words: didn't, well-known


def test_word_level_attention_sums_keys_and_averages_queries():
    pieces = ["▁I", "▁li", "ke", "▁tea", "</s>"]
    weights = np.full((5, 5), 0.2)
    words, queries, keys, _ = word_level(weights, pieces, pieces)
    assert keys == ["▁I", "▁like", "▁tea", "</s>"] and queries == keys
    np.testing.assert_allclose(words[0], [0.2, 0.4, 0.2, 0.2])
    np.testing.assert_allclose(words.sum(-1), 1.0)


def test_word_level_keeps_chinese_pieces_and_masks_only_fully_masked_words():
    from viz.attention import causal_mask

    decoder = ["<s>", "▁汤姆", "在", "看"]
    mask = causal_mask(4)
    weights = np.tril(np.ones((4, 4)))
    weights /= weights.sum(-1, keepdims=True)
    words, queries, keys, masked = word_level(weights, decoder, decoder, "zh", "zh", masked=mask)
    assert queries == decoder and (masked == mask).all()
    english = ["<s>", "▁li", "ke", "▁tea"]
    _, q, _, masked = word_level(weights, english, english, masked=mask)
    assert q == ["<s>", "▁like", "▁tea"]
    # "▁like" (pieces 1-2) as a query sees its own first piece, so that cell is not masked; "▁tea" is.
    assert masked.tolist() == [[False, True, True], [False, False, True], [False, False, False]]


def test_teacher_forcing_the_models_own_output_reproduces_its_attention(tiny_model, tiny_tokenizers):
    own = translate(tiny_model, *tiny_tokenizers, "Tom drinks tea.", beam_size=2)
    forced = teacher_force(tiny_model, *tiny_tokenizers, "Tom drinks tea.", reference_ids=own.target_ids)
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_allclose(forced.attention(kind), own.attention(kind), atol=1e-6)
    np.testing.assert_allclose(forced.token_probs, own.token_probs, atol=1e-5)
    assert forced.target_pieces == own.target_pieces and forced.log_prob == pytest.approx(own.log_prob, abs=1e-4)


def test_teacher_forcing_a_typed_reference(tiny_model, tiny_tokenizers):
    forced = teacher_force(tiny_model, *tiny_tokenizers, "I like tea.", reference="我喜欢茶。")
    assert "".join(forced.target_pieces).replace("▁", "").startswith("我喜欢茶")
    assert forced.target_pieces[-1] == "</s>"
    assert forced.attention("cross").shape[-2] == len(forced.target_pieces)
    with pytest.raises(ValueError, match="reference"):
        teacher_force(tiny_model, *tiny_tokenizers, "I like tea.", reference=" ")


def test_ablating_no_heads_reproduces_the_output_and_a_whole_layer_changes_it(tiny_model, tiny_tokenizers):
    plain = translate(tiny_model, *tiny_tokenizers, "Tom drinks tea.")
    same = translate(tiny_model, *tiny_tokenizers, "Tom drinks tea.", ablate={"cross": []})
    assert same.target_ids == plain.target_ids
    np.testing.assert_array_equal(same.attention("cross"), plain.attention("cross"))
    heads = tiny_model.cfg.n_heads
    changed = translate(
        tiny_model, *tiny_tokenizers, "Tom drinks tea.", ablate={"encoder_self": [(0, h) for h in range(heads)]}
    )
    assert not np.allclose(changed.attention("encoder_self")[1], plain.attention("encoder_self")[1])


def test_concurrent_sessions_ablating_different_heads_get_their_own_results(tiny_model, tiny_tokenizers):
    """Ablation is an argument, not model state: threads ablating different heads at once don't interfere."""
    settings = [None, {"encoder_self": [(0, 0), (0, 1)]}, {"cross": [(1, h) for h in range(4)]}]
    expected = [translate(tiny_model, *tiny_tokenizers, "I like tea.", ablate=a) for a in settings]
    results: dict[int, list] = {i: [] for i in range(len(settings))}

    def work(i):
        for _ in range(5):
            results[i].append(translate(tiny_model, *tiny_tokenizers, "I like tea.", ablate=settings[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(settings))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, exp in enumerate(expected):
        for got in results[i]:
            np.testing.assert_allclose(got.attention("encoder_self"), exp.attention("encoder_self"), atol=1e-6)
            np.testing.assert_allclose(got.attention("cross"), exp.attention("cross"), atol=1e-6)
    assert not np.allclose(expected[0].attention("encoder_self")[1], expected[1].attention("encoder_self")[1])


def test_every_beam_hypothesis_comes_with_its_own_attention(tiny_model, tiny_tokenizers):
    hypotheses = translate_hypotheses(tiny_model, *tiny_tokenizers, "Good morning.", beam_size=3)
    assert len(hypotheses) >= 2
    for h in hypotheses:
        assert h.attention("cross").shape[-2] == len(h.target_pieces)
        forced = teacher_force(tiny_model, *tiny_tokenizers, "Good morning.", reference_ids=h.target_ids)
        np.testing.assert_allclose(forced.attention("cross"), h.attention("cross"), atol=1e-6)


@pytest.mark.slow
def test_corpus_probe_and_ablation_ranking_on_a_tiny_model(tiny_checkpoint):
    loaded = load_checkpoint(tiny_checkpoint)
    frame = corpus_statistics(loaded, [s for s, _ in TINY_PAIRS[:4]], progress=False)
    cfg = loaded.model.cfg
    assert len(frame) == (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers) * cfg.n_heads
    assert {"entropy", "distance", "previous", "boundary", "role"} <= set(frame.columns)
    assert frame["alignment_agreement"].notna().sum() == cfg.n_decoder_layers * cfg.n_heads

    examples = [Example(s, [t]) for s, t in TINY_PAIRS[:3]]
    ranking = ablation_ranking(loaded, examples, progress=False)
    assert len(ranking) == len(frame)
    assert set(ranking.columns) >= {"kind", "layer", "head", "bleu_drop", "log_prob_drop"}
    assert ranking["log_prob_drop"].abs().sum() > 0


def test_batched_reference_log_prob_equals_teacher_forcing(tiny_model, tiny_tokenizers):
    from model.decode import encode_source
    from model.probe import reference_log_prob

    source, target = tiny_tokenizers
    pairs = [("I like tea.", "我喜欢茶。"), ("The dog is running.", "狗在跑。")]  # different lengths: padding
    sources = [encode_source(source, s, tiny_model.cfg.max_len)[0] for s, _ in pairs]
    references = [target.encode(t) for _, t in pairs]
    expected = [teacher_force(tiny_model, source, target, s, reference=t).log_prob for s, t in pairs]
    assert reference_log_prob(tiny_model, sources, references) == pytest.approx(np.mean(expected), abs=1e-4)


# ------------------------------------------------------------------------------- what each statistic may claim


def test_cross_attention_gets_no_position_identity_statistics(tiny_model, tiny_tokenizers):
    from model.probe import translation_statistics

    tr = translate(tiny_model, *tiny_tokenizers, "Tom reads a book.")
    stats = translation_statistics(tr)
    assert not {"distance", "same", "previous", "next"} & set(stats["cross"])
    assert {"alignment_agreement", "source_order", "entropy"} <= set(stats["cross"])
    assert "next" not in stats["decoder_self"]  # key t+1 is masked: 0 by construction
    assert {"same", "previous", "next", "distance"} <= set(stats["encoder_self"])


def test_decoder_row_zero_is_left_out_because_its_choice_is_forced():
    from model.probe import head_statistics

    # 4 decoder positions; row 0 can only see <s>; rows 1-3 put half their weight on themselves
    a = np.zeros((1, 1, 4, 4))
    a[0, 0, 0, 0] = 1.0
    for t in range(1, 4):
        a[0, 0, t, t] = 0.5
        a[0, 0, t, :t] = 0.5 / t
    stats = head_statistics(a, ["<s>", "a", "b", "c"], boundary_key=0, kind="decoder_self")
    assert stats["same"][0, 0] == pytest.approx(0.5)  # row 0 would have pulled it up to 0.625
    assert stats["boundary"][0, 0] == pytest.approx(np.mean([0.5, 0.25, 0.5 / 3]))


def test_undefined_statistics_are_missing_not_zero():
    from model.probe import head_statistics, source_order

    one_row = np.ones((2, 3, 1, 1))  # a decoder that only ever saw <s>
    stats = head_statistics(one_row, ["<s>"], boundary_key=0, kind="decoder_self")
    assert all(np.isnan(v).all() for v in stats.values())
    assert np.isnan(source_order(np.full((2, 3, 1, 5), 0.2))).all()
    still = np.zeros((1, 1, 3, 4))
    still[..., 2] = 1.0  # the strongest key never moves: no correlation to speak of
    assert np.isnan(source_order(still)).all()
