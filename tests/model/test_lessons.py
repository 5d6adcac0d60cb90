"""The lessons' what-if runs: each invariant the app states, checked on a tiny model (tiny_model, random weights:
the invariants are properties of the architecture, not of training) and, where it matters, the shipped one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import decode, inside, what_if
from model.checkpoint import load_checkpoint
from model.teacher_forcing import record_pass
from model.transformer import Transformer

from ..conftest import SHIPPED, tiny_config


@pytest.fixture
def tokenizers(tiny_tokenizers):
    return tiny_tokenizers


def test_uniform_cross_attention_rows_are_equal_and_sum_to_one(tiny_model, tokenizers):
    tr = decode.translate(tiny_model, *tokenizers, "Tom drinks tea.", uniform_cross=True)
    cross = tr.attention("cross")  # (layers, heads, tgt, src)
    source_length = len(tr.source_pieces)
    np.testing.assert_allclose(cross.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(cross, np.full_like(cross, cross[0, 0, 0, 0]))
    assert cross[0, 0, 0, 0] == pytest.approx(1 / source_length)
    # The other kinds are the model's own: their rows are not uniform.
    assert np.ptp(tr.attention("encoder_self")[0, 0, 0]) > 0


def test_uniform_cross_attention_gives_every_step_the_same_context(tiny_model, tokenizers):
    """With uniform weights every decoder step receives the same vector from each cross-attention sub-layer:
    the fixed context C of an encoder-decoder without attention."""
    tr = decode.translate(tiny_model, *tokenizers, "The cat is sleeping.")
    learned = record_pass(tiny_model, tr.source_ids, tr.target_ids, inside.NEEDS)
    uniform = record_pass(tiny_model, tr.source_ids, tr.target_ids, inside.NEEDS, uniform_cross=True)
    for layer in range(len(uniform.decoder)):
        update = uniform.decoder[layer]["cross_attention"].update  # (tgt, d_model)
        np.testing.assert_array_equal(update, np.broadcast_to(update[0], update.shape))
        learned_update = learned.decoder[layer]["cross_attention"].update
        assert np.abs(learned_update - learned_update[0]).max() > 1e-3
    assert inside.largest_step_difference(uniform.decoder, "cross_attention") == 0.0  # what the lesson quotes
    assert inside.largest_step_difference(learned.decoder, "cross_attention") > 1e-3


def test_uniform_teacher_forcing_scores_the_original_translation(tiny_model, tokenizers):
    tr = decode.translate(tiny_model, *tokenizers, "Tom drinks tea.")
    forced = decode.teacher_force(
        tiny_model, *tokenizers, tr.source_text, reference_ids=tr.target_ids, uniform_cross=True
    )
    assert forced.target_ids == tr.target_ids
    assert np.allclose(forced.attention("cross"), 1 / len(tr.source_pieces))
    assert forced.log_prob != pytest.approx(tr.log_prob)


def test_word_units_split_trailing_punctuation():
    pieces = ["▁The", "▁dog", "▁", "chase", "s", "▁the", "▁cat", ".", "</s>"]
    assert what_if.word_units(pieces) == [[0], [1], [2, 3, 4], [5], [6], [7], [8]]
    assert what_if.swap_permutation(what_if.word_units(pieces), 1, 4) == [0, 6, 2, 3, 4, 5, 1, 7, 8]


def test_without_positions_swapping_words_permutes_attention_exactly(tokenizers):
    """Without the positional encoding the encoder cannot tell word order: its attention on the swapped sentence
    is the original's rows and columns permuted, and each word's output is the same vector. With it, not."""
    torch.manual_seed(0)
    model = Transformer(tiny_config(*tokenizers)).double().eval()  # float64: "exactly" up to 1e-12
    units = what_if.word_units(decode.encode_source(tokenizers[0], "Tom drinks tea.", 40)[1])
    result = what_if.word_order(model, tokenizers[0], "Tom drinks tea.", 0, len(units) - 3)
    assert result.swapped_pieces != result.pieces
    assert sorted(result.swapped_pieces) == sorted(result.pieces)
    assert result.attention_difference[False] < 1e-12
    assert result.output_difference[False] < 1e-12
    assert result.attention_difference[True] > 1e-3
    assert result.output_difference[True] > 1e-3


@pytest.mark.checkpoint
def test_without_positions_the_shipped_encoder_cannot_tell_dog_chases_cat_from_cat_chases_dog():
    loaded = load_checkpoint(SHIPPED)
    result = what_if.word_order(loaded.model, loaded.source_tokenizer, "The dog chases the cat.", 1, 4)
    assert result.swapped_text == "The cat chases the dog."
    assert result.attention_difference[False] < 1e-5 and result.output_difference[False] < 1e-5  # float32
    assert result.attention_difference[True] > 0.1 and result.output_difference[True] > 0.1


def test_padding_keys_get_exactly_zero_and_batching_changes_nothing(tiny_model, tokenizers):
    texts = ["Good morning.", "Tom reads a book and the cat is sleeping."]
    batch = what_if.padded_batch(tiny_model, *tokenizers, texts)
    assert batch.key_mask.sum(1).tolist()[0] < batch.key_mask.shape[1]  # the short one is padded
    assert batch.source_pieces[0][-1] == what_if.PAD_PIECE
    assert batch.padding_weight == {"encoder_self": 0.0, "decoder_self": 0.0, "cross": 0.0}
    # Exactly zero in every layer, head and query row (including the padded rows' own queries).
    pad_keys = ~batch.key_mask[0]
    assert (batch.encoder_attention[0][..., pad_keys] == 0).all()
    assert (batch.cross_attention[0][..., pad_keys] == 0).all()
    assert batch.translations == batch.alone_translations
    assert max(batch.difference_from_alone.values()) < 1e-5
    np.testing.assert_allclose(batch.encoder_attention.sum(-1), 1.0, atol=1e-5)


def test_layer_norm_standardizes_each_position_before_its_gain_and_bias(tiny_model, tokenizers):
    tr = decode.translate(tiny_model, *tokenizers, "I like tea.")
    for norm_first in (False, True):
        torch.manual_seed(1)
        model = Transformer(tiny_config(*tokenizers, norm_first=norm_first)).eval()
        with torch.no_grad():  # a gain and bias that are not 1 and 0, so "before" and "after" differ
            for module in model.modules():
                if isinstance(module, torch.nn.LayerNorm):
                    module.weight.uniform_(0.5, 2.0)
                    module.bias.uniform_(-0.5, 0.5)
        result = record_pass(model, tr.source_ids, tr.target_ids, inside.NEEDS)
        rows = inside.residual_rows(result.encoder, 1, result.layer_norm_eps)
        assert [r.sublayer for r in rows] == ["self_attention", "feed_forward"] * 2
        for r in rows + inside.residual_rows(result.decoder, 0, result.layer_norm_eps):
            assert abs(r.standardized_mean) < 1e-6 and r.standardized_var == pytest.approx(1.0, abs=1e-3)
            assert r.ratio == pytest.approx(r.update_norm / r.stream_norm)
        # The standardized input, through this LayerNorm's gain and bias, is what the model computed.
        layer = model.encoder_layers[0].sublayer_attention.norm
        record = result.encoder[0]["self_attention"]
        z = inside.standardize(record.norm_input, result.layer_norm_eps)
        expected = z * layer.weight.detach().double().numpy() + layer.bias.detach().double().numpy()
        np.testing.assert_allclose(record.norm_output, expected, atol=1e-4)
        # Pre-norm normalises the sub-layer's input (the stream itself), post-norm the sum after it.
        if norm_first:
            np.testing.assert_array_equal(record.norm_input, record.stream)
        else:
            np.testing.assert_allclose(record.norm_input, record.stream + record.update, atol=1e-6)


def test_relu_share_and_relative_updates_are_measured_from_the_pass(tiny_model, tokenizers):
    tr = decode.translate(tiny_model, *tokenizers, "I like tea.")
    result = record_pass(tiny_model, tr.source_ids, tr.target_ids, inside.NEEDS)
    share = inside.relu_zero_share(result.decoder)
    hidden = result.decoder[1]["feed_forward"].hidden
    assert hidden.shape[1] == tiny_model.cfg.d_ff and (hidden >= 0).all()
    assert share[1] == pytest.approx((hidden == 0).mean())
    updates = inside.relative_updates(result.encoder)
    assert set(updates) == {"self_attention", "feed_forward"} and updates["feed_forward"].shape == (2,)
    # The output layer's distribution at each decoder position is the one decoding chose from.
    probabilities = np.exp(result.log_probs)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-5)
    chosen = probabilities[np.arange(len(tr.target_ids)), tr.target_ids]
    np.testing.assert_allclose(chosen, tr.token_probs, atol=1e-5)
