"""Decoding: greedy = beam 1, the returned attention is what the model computed, overfitting a few pairs."""

import copy

import numpy as np
import pytest
import torch

from model.decode import beam_search, encode_source, greedy_batch, translate, translate_batch
from model.teacher_forcing import Needs, record_pass
from model.tokenizer import BOS_ID, EOS_ID
from model.training.batches import collate
from model.training.losses import loss_fn
from model.transformer import Transformer

from ..conftest import TINY_PAIRS, tiny_config


@pytest.fixture(scope="module")
def overfit_model(tiny_tokenizers):
    """A tiny model trained until it reproduces the tiny corpus."""
    source, target = tiny_tokenizers
    torch.manual_seed(0)
    model = Transformer(tiny_config(source, target, d_model=64, d_ff=128))
    data = [(source.encode(s), target.encode(t)) for s, t in TINY_PAIRS]
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    src, tgt_in, tgt_out = collate(data)
    model.train()
    for _ in range(300):
        loss = loss_fn(model(src, tgt_in)[1].logits, tgt_out, 0.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


@pytest.mark.slow
def test_tiny_model_overfits_and_reproduces_its_pairs_exactly(overfit_model, tiny_tokenizers):
    source, target = tiny_tokenizers
    sources = [encode_source(source, s, overfit_model.cfg.max_len)[0] for s, _ in TINY_PAIRS]
    outputs = [target.decode(o) for o in greedy_batch(overfit_model, sources)]
    assert outputs == [t for _, t in TINY_PAIRS]
    for s, t in TINY_PAIRS[:5]:
        assert translate(overfit_model, source, target, s, beam_size=3).target_text == t


@pytest.mark.slow
def test_beam_of_one_is_greedy(tiny_model, tiny_tokenizers):
    source, _ = tiny_tokenizers
    for sentence, _ in TINY_PAIRS[:6]:
        ids = encode_source(source, sentence, tiny_model.cfg.max_len)[0]
        greedy = greedy_batch(tiny_model, [ids])[0]
        best = beam_search(tiny_model, ids, beam_size=1)[0]
        assert [t for t in best.tokens if t != EOS_ID] == greedy


def test_wider_beam_never_scores_worse_than_greedy_here(overfit_model, tiny_tokenizers):
    source, target = tiny_tokenizers
    for sentence, _ in TINY_PAIRS[:4]:
        ids = encode_source(source, sentence, overfit_model.cfg.max_len)[0]
        greedy = beam_search(overfit_model, ids, beam_size=1)[0]
        beam = beam_search(overfit_model, ids, beam_size=4, length_penalty=0.0)[0]
        assert beam.log_prob >= greedy.log_prob - 1e-5


@pytest.mark.parametrize("beam_size", [1, 3])
def test_returned_attention_is_what_the_model_computed(overfit_model, tiny_tokenizers, beam_size):
    """A teacher-forced pass over the chosen output reproduces the attention and probabilities decoding returned."""
    source, target = tiny_tokenizers
    result = translate(overfit_model, source, target, "Tom drinks tea.", beam_size=beam_size)
    src = torch.tensor([result.source_ids])
    tgt_in = torch.tensor([[BOS_ID] + result.target_ids[:-1]])
    with torch.no_grad():
        encoded, decoded = overfit_model(src, tgt_in, need_weights=True, need_qkv=True)
    np.testing.assert_allclose(result.attention("encoder_self"), encoded.attention[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(result.attention("decoder_self"), decoded.self_attention[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(result.attention("cross"), decoded.cross_attention[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(result.record.qkv["cross"]["q"], decoded.cross_qkv["q"][0].numpy(), atol=1e-5)
    probs = decoded.logits[0].softmax(-1)
    chosen = probs[torch.arange(len(result.target_ids)), torch.tensor(result.target_ids)]
    np.testing.assert_allclose(result.token_probs, chosen.numpy(), atol=1e-5)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_translations_record_is_the_teacher_forced_pass_over_its_output(overfit_model, tiny_tokenizers, beam_size):
    """Issue 60: one record of a pass. The record a Translation made while decoding (one step at a time, with a
    cache) holds what teacher_forcing.record_pass computes over its output in one pass, kind by kind."""
    source, target = tiny_tokenizers
    tr = translate(overfit_model, source, target, "Tom drinks tea.", beam_size=beam_size)
    again = record_pass(overfit_model, tr.source_ids, tr.target_ids, Needs(qkv=True))
    assert (again.source_ids, again.target_ids) == (tr.record.source_ids, tr.record.target_ids)
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_allclose(tr.attention(kind), again.attention[kind], atol=1e-5, err_msg=kind)
        for name in ("q", "k", "v"):
            np.testing.assert_allclose(tr.record.qkv[kind][name], again.qkv[kind][name], atol=1e-4, err_msg=kind)


def test_translation_axes_match_attention_shapes(tiny_model, tiny_tokenizers):
    result = translate(tiny_model, *tiny_tokenizers, "I like tea.")
    for kind in ("encoder_self", "decoder_self", "cross"):
        queries, keys = result.axis_pieces(kind)
        assert result.attention(kind).shape[-2:] == (len(queries), len(keys))
    assert result.source_pieces[-1] == "</s>"
    assert result.decoder_input_pieces[0] == "<s>"
    assert len(result.token_probs) == len(result.target_pieces) == len(result.alternatives)
    for prob, alts in zip(result.token_probs, result.alternatives):
        assert 0 < prob <= 1 and len(alts) == 5
        assert alts[0][1] >= prob - 1e-6  # the top alternative is at least as likely as the chosen piece


def test_long_input_is_truncated_and_flagged(tiny_model, tiny_tokenizers):
    long_sentence = " ".join(["tea"] * 200)
    result = translate(tiny_model, *tiny_tokenizers, long_sentence)
    assert result.truncated
    assert len(result.source_pieces) == tiny_model.cfg.max_len
    assert not translate(tiny_model, *tiny_tokenizers, "I like tea.").truncated


def test_unknown_characters_become_unknown_tokens_with_their_text(tiny_model, tiny_tokenizers):
    result = translate(tiny_model, *tiny_tokenizers, "I like ß tea.")
    assert "ß" in result.unknown_source_pieces
    assert "<unk:ß>" in result.source_pieces


def test_empty_input_is_an_error(tiny_model, tiny_tokenizers):
    with pytest.raises(ValueError, match="empty"):
        translate(tiny_model, *tiny_tokenizers, "   ")


def test_decoding_never_runs_past_the_positional_table(tiny_model, tiny_tokenizers):
    result = translate(tiny_model, *tiny_tokenizers, " ".join(["tea"] * 200), beam_size=2)
    assert len(result.decoder_input_pieces) <= tiny_model.cfg.max_len


def _shipped_model():
    from model.checkpoint import load_checkpoint

    from ..conftest import SHIPPED

    return load_checkpoint(SHIPPED) if SHIPPED.exists() else None


@pytest.mark.slow
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 2e-6), (torch.float64, 1e-12)], ids=["fp32", "fp64"])
@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("which", ["overfit", "shipped"])
@pytest.mark.checkpoint
def test_cached_decoding_returns_the_attention_of_a_full_recomputation(
    overfit_model, tiny_tokenizers, which, beam_size, dtype, tolerance
):
    """The key/value cache changes how fast, never what: for every hypothesis of the beam, the same pieces,
    log-probabilities, and the same attention and Q/K/V in every kind, layer and head as re-running the decoder
    over the whole prefix at every step. In float64 they agree to 1e-12 (the same arithmetic); in float32, as
    the app runs, weights to 2e-6 and Q/K/V (larger numbers) to 1e-5: a one-row product sums in another order
    than a whole-prefix one (measured: weights at most 1.2e-6 apart, in one weight of 129,792 on a 20-word
    sentence; Q/K/V 2.4e-6)."""
    if which == "shipped":
        loaded = _shipped_model()
        if loaded is None:
            pytest.skip("needs the shipped checkpoint")
        model, source = loaded.model, loaded.source_tokenizer
        text = "The little girl gave her old teacher a beautiful red flower yesterday."
    else:
        model, source, text = overfit_model, tiny_tokenizers[0], "Tom drinks tea and she reads a book."
    model = copy.deepcopy(model).to(dtype)
    ids = encode_source(source, text, model.cfg.max_len)[0]
    runs = [
        beam_search(model, ids, beam_size, record=True, need_qkv=True, incremental=incremental)
        for incremental in (True, False)
    ]
    cached, full = runs
    assert [h.tokens for h in cached] == [h.tokens for h in full] and len(cached) >= min(beam_size, 2)
    for a, b in zip(cached, full):
        assert a.finished == b.finished
        np.testing.assert_allclose(a.token_log_probs, b.token_log_probs, atol=1e-5)
        assert set(a.record) == set(b.record) == {"decoder_self", "cross", "decoder_self_qkv", "cross_qkv"}
        for kind in ("decoder_self", "cross"):
            assert a.record[kind].shape == b.record[kind].shape
            np.testing.assert_allclose(a.record[kind].numpy(), b.record[kind].numpy(), atol=tolerance, rtol=0)
            for name in ("q", "k", "v"):
                np.testing.assert_allclose(
                    a.record[f"{kind}_qkv"][name].numpy(),
                    b.record[f"{kind}_qkv"][name].numpy(),
                    atol=5 * tolerance,
                    rtol=0,
                )
        future = np.triu(np.ones(a.record["decoder_self"].shape[-2:], dtype=bool), 1)
        assert (a.record["decoder_self"].numpy()[..., future] == 0).all()  # masked cells exactly zero


@pytest.mark.slow
def test_batched_greedy_with_the_cache_matches_one_sentence_at_a_time(overfit_model, tiny_tokenizers):
    source, _ = tiny_tokenizers
    sources = [encode_source(source, s, overfit_model.cfg.max_len)[0] for s, _ in TINY_PAIRS]
    batched = greedy_batch(overfit_model, sources)
    alone = [beam_search(overfit_model, ids, 1, incremental=False)[0].tokens for ids in sources]
    assert batched == [[t for t in tokens if t != EOS_ID] for tokens in alone]


@pytest.mark.parametrize("model_name", ["overfit_model", "tiny_model"])
def test_sentences_translated_together_each_get_what_they_get_alone(model_name, tiny_tokenizers, request):
    """A class typing at once is decoded in one batch (ui.models): every sentence must still show its own
    translation, probabilities, alternatives and maps, not the batch's padding. The trained model finishes its
    sentences at different steps; the untrained one runs to each sentence's own length limit."""
    model = request.getfixturevalue(model_name)
    source, target = tiny_tokenizers
    sentences = ["Tom drinks tea.", "Good morning.", "The cat is sleeping.", "I like coffee.", "Where is the station?"]
    together = translate_batch(model, source, target, sentences)
    for text, got in zip(sentences, together):
        alone = translate(model, source, target, text)
        assert (got.source_pieces, got.target_ids, got.target_text) == (
            alone.source_pieces,
            alone.target_ids,
            alone.target_text,
        )
        assert (got.finished, got.method, got.forced) == (alone.finished, alone.method, alone.forced)
        np.testing.assert_allclose(got.token_probs, alone.token_probs, rtol=1e-4)
        assert [[p for p, _ in step] for step in got.alternatives] == [
            [p for p, _ in step] for step in alone.alternatives
        ]
        for kind in ("encoder_self", "decoder_self", "cross"):
            assert got.attention(kind).shape == alone.attention(kind).shape, kind
            np.testing.assert_allclose(got.attention(kind), alone.attention(kind), atol=1e-5, err_msg=kind)
            for name in ("q", "k", "v"):
                np.testing.assert_allclose(
                    got.record.qkv[kind][name], alone.record.qkv[kind][name], atol=1e-4, err_msg=kind + name
                )
    assert len({len(tr.target_ids) for tr in together}) > 1 or model_name == "tiny_model"  # lengths differ
    with pytest.raises(ValueError):
        translate_batch(model, source, target, ["Good morning.", "  "])


# --- what-if decoding: force a piece at a step, decode on -----------------------------------------------------


@pytest.mark.parametrize("beam_size", [1, 3])
def test_forcing_the_models_own_choices_reproduces_the_translation_and_its_maps(
    overfit_model, tiny_tokenizers, beam_size
):
    source, target = tiny_tokenizers
    original = translate(overfit_model, source, target, "Tom drinks tea.", beam_size=beam_size)
    forced = translate(
        overfit_model, source, target, "Tom drinks tea.", beam_size=beam_size, forced={1: original.target_ids[1]}
    )
    assert forced.target_text == original.target_text and forced.forced == [[1, original.target_ids[1]]]
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_array_equal(forced.attention(kind), original.attention(kind))
    assert forced.token_probs == original.token_probs


def test_a_forced_piece_changes_the_path_and_its_rows_are_teacher_forcing_of_that_prefix(
    overfit_model, tiny_tokenizers
):
    from model.decode import teacher_force

    source, target = tiny_tokenizers
    original = translate(overfit_model, source, target, "I like tea.")
    other = original.alternatives[1][1][0]  # the model's second choice at step 1
    other_id = target.processor.PieceToId(other)
    assert other_id != original.target_ids[1]
    forced = translate(overfit_model, source, target, "I like tea.", forced={1: other_id})
    assert forced.target_ids[:2] == [original.target_ids[0], other_id]
    # the forced piece keeps the probability the model gave it, not 1
    assert forced.token_probs[1] == pytest.approx(original.alternatives[1][1][1], rel=1e-5)
    # rows 0..1 (reading <s> and the first piece, then the forced piece's step) as teacher forcing the prefix
    prefix = teacher_force(overfit_model, source, target, "I like tea.", reference_ids=forced.target_ids[:2])
    np.testing.assert_allclose(forced.attention("cross")[:, :, :2], prefix.attention("cross"), atol=1e-5)
    np.testing.assert_allclose(
        forced.attention("decoder_self")[:, :, :2, :2], prefix.attention("decoder_self"), atol=1e-5
    )


def test_force_names_a_piece_or_text_and_refuses_what_the_vocabulary_cannot_write(tiny_tokenizers):
    from model.decode import forced_steps

    _, target = tiny_tokenizers
    tea = target.processor.PieceToId("茶")
    assert forced_steps(target, [(2, "茶")]) == {2: tea}
    several = forced_steps(target, [(0, "喜欢茶")])
    assert sorted(several) == list(range(len(several))) and len(several) >= 2
    with pytest.raises(ValueError, match="cannot be written"):
        forced_steps(target, [(0, "☃")])


def test_logit_lens_last_layer_is_the_models_output_distribution(overfit_model, tiny_tokenizers):
    """The lens reads each decoder layer through the final LayerNorm and output layer; for the last layer that
    is the model's own computation, bit for bit, and an overfitted model has decided every piece by then."""
    from model.inside import NEEDS, logit_lens
    from model.teacher_forcing import record_pass

    source, target = tiny_tokenizers
    tr = translate(overfit_model, source, target, "I like tea.")
    lens = logit_lens(overfit_model, record_pass(overfit_model, tr.source_ids, tr.target_ids, NEEDS), tr.target_ids)
    with torch.inference_mode():  # the model's own teacher-forced pass over the same output
        _, decoded = overfit_model(torch.tensor([tr.source_ids]), torch.tensor([[BOS_ID] + tr.target_ids[:-1]]))
        own = decoded.logits[0].float().log_softmax(-1)[torch.arange(len(tr.target_ids)), tr.target_ids]
    np.testing.assert_array_equal(lens.log_probability[-1], own.numpy())
    np.testing.assert_allclose(lens.probability[-1], tr.token_probs, rtol=1e-5)  # what decoding reported
    assert lens.rank.shape == (overfit_model.cfg.n_decoder_layers, len(tr.target_ids))
    assert (lens.rank[-1] == 1).all()  # greedy wrote each layer-last top choice
    assert all(d is not None for d in lens.decided_at())
    assert lens.top_ids[-1, :, 0].tolist() == tr.target_ids
