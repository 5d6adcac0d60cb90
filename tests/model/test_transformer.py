"""The network: shapes, attention rows, masks, the paper's positional encoding, agreement with PyTorch."""

import math

import pytest
import torch

from model.teacher_forcing import pad_batch
from model.tokenizer import EOS_ID, PAD_ID
from model.transformer import (
    AttentionOptions,
    DecoderCache,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    count_parameters,
    sinusoidal_positional_encoding,
    subsequent_mask,
)


def batch_with_padding(model: Transformer):
    """Two sentences of different lengths, so the shorter is padded on both sides."""
    src = pad_batch([[5, 6, 7, 8, 9, EOS_ID], [10, 11, EOS_ID]])
    tgt_in = pad_batch([[2, 12, 13, 14, 15], [2, 16]])
    return src, tgt_in


def test_shapes_of_every_attention_tensor(tiny_model):
    cfg = tiny_model.cfg
    src, tgt_in = batch_with_padding(tiny_model)
    encoded, decoded = tiny_model(src, tgt_in, need_weights=True, need_qkv=True)
    b, s, t = 2, src.size(1), tgt_in.size(1)
    assert encoded.attention.shape == (b, cfg.n_encoder_layers, cfg.n_heads, s, s)
    assert decoded.self_attention.shape == (b, cfg.n_decoder_layers, cfg.n_heads, t, t)
    assert decoded.cross_attention.shape == (b, cfg.n_decoder_layers, cfg.n_heads, t, s)
    assert decoded.logits.shape == (b, t, cfg.tgt_vocab_size)
    assert encoded.qkv["q"].shape == (b, cfg.n_encoder_layers, cfg.n_heads, s, cfg.d_k)
    assert decoded.cross_qkv["k"].shape == (b, cfg.n_decoder_layers, cfg.n_heads, s, cfg.d_k)


@torch.no_grad()
def test_logits_at_projects_only_the_chosen_position_of_each_row(tiny_model):
    tiny_model.eval()
    src, tgt_in = batch_with_padding(tiny_model)
    encoded = tiny_model.encode(src)
    full = tiny_model.decode(tgt_in, encoded).logits
    chosen = tiny_model.decode(tgt_in, encoded, logits_at=torch.tensor([3, 1])).logits
    assert chosen.shape == (2, 1, tiny_model.cfg.tgt_vocab_size)
    torch.testing.assert_close(chosen[:, 0], full[[0, 1], [3, 1]])


def test_every_attention_row_sums_to_one(tiny_model):
    src, tgt_in = batch_with_padding(tiny_model)
    encoded, decoded = tiny_model(src, tgt_in, need_weights=True)
    for weights in (encoded.attention, decoded.self_attention, decoded.cross_attention):
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))


def test_future_positions_get_exactly_zero_weight(tiny_model):
    src, tgt_in = batch_with_padding(tiny_model)
    _, decoded = tiny_model(src, tgt_in, need_weights=True)
    t = tgt_in.size(1)
    future = ~torch.ones(t, t, dtype=torch.bool).tril()
    assert (decoded.self_attention[..., future] == 0).all()
    # ...and the allowed past really is used: the diagonal and below are positive for the unpadded sentence.
    assert (decoded.self_attention[0][..., ~future] > 0).all()


def test_padding_gets_exactly_zero_weight(tiny_model):
    src, tgt_in = batch_with_padding(tiny_model)
    encoded, decoded = tiny_model(src, tgt_in, need_weights=True)
    src_pad = src[1] == PAD_ID  # second sentence: 3 real source tokens, then padding
    tgt_pad = tgt_in[1] == PAD_ID
    assert src_pad.any() and tgt_pad.any()
    assert (encoded.attention[1][..., src_pad] == 0).all()
    assert (decoded.cross_attention[1][..., src_pad] == 0).all()
    assert (decoded.self_attention[1][..., tgt_pad] == 0).all()


def test_padding_does_not_change_a_sentence(tiny_model):
    """A sentence translated alone and beside a longer one gets the same logits and attention."""
    src, tgt_in = batch_with_padding(tiny_model)
    _, alone = tiny_model(src[1:, :3], tgt_in[1:, :2], need_weights=True)
    _, batched = tiny_model(src[1:], tgt_in[1:], need_weights=True)
    torch.testing.assert_close(alone.logits, batched.logits[:, :2], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(alone.cross_attention, batched.cross_attention[..., :2, :3], atol=1e-6, rtol=1e-5)


def test_subsequent_mask_is_lower_triangular():
    mask = subsequent_mask(4)[0, 0]
    assert mask.tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, True, False],
        [True] * 4,
    ]


@pytest.mark.parametrize("d_model", [8, 16, 256])
def test_positional_encoding_is_the_papers_formula(d_model):
    pe = sinusoidal_positional_encoding(50, d_model)
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_positional_encoding_is_added_to_scaled_embeddings(tiny_model):
    ids = torch.tensor([[5, 6, 7]])
    expected = tiny_model.src_embed.lookup.weight[ids] * math.sqrt(tiny_model.cfg.d_model)
    expected = expected + sinusoidal_positional_encoding(3, tiny_model.cfg.d_model)
    torch.testing.assert_close(tiny_model.positional(tiny_model.src_embed(ids)), expected)


def test_too_long_input_is_a_clear_error(tiny_model):
    too_long = torch.full((1, tiny_model.cfg.max_len + 1), 5)
    with pytest.raises(ValueError, match="longer than the model's limit"):
        tiny_model.encode(too_long)


def test_matches_torch_multihead_attention():
    """Our layer, with its weights copied into nn.MultiheadAttention, gives the same output and per-head weights."""
    torch.manual_seed(0)
    d_model, heads = 32, 4
    ours = MultiHeadAttention(d_model, heads, dropout=0.0).eval()
    theirs = torch.nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
    query, memory = torch.randn(2, 5, d_model), torch.randn(2, 7, d_model)
    key_is_pad = torch.tensor([[False] * 7, [False] * 4 + [True] * 3])
    ours_out = ours(query, memory, (~key_is_pad)[:, None, None, :], need_weights=True)
    theirs_out, theirs_weights = theirs(
        query, memory, memory, key_padding_mask=key_is_pad, need_weights=True, average_attn_weights=False
    )
    torch.testing.assert_close(ours_out.output, theirs_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours_out.weights, theirs_weights, atol=1e-6, rtol=1e-5)


def test_explicit_and_fast_attention_paths_agree(tiny_model):
    src, tgt_in = batch_with_padding(tiny_model)
    _, explicit = tiny_model(src, tgt_in, need_weights=True)
    _, fast = tiny_model(src, tgt_in, need_weights=False)
    assert fast.self_attention is None
    torch.testing.assert_close(explicit.logits, fast.logits, atol=1e-5, rtol=1e-5)


def test_ablating_no_heads_changes_nothing_and_all_heads_changes_output(tiny_model):
    src, tgt_in = batch_with_padding(tiny_model)
    cfg = tiny_model.cfg
    _, plain = tiny_model(src, tgt_in)
    keep_all = {"cross": torch.ones(cfg.n_decoder_layers, cfg.n_heads)}
    _, same = tiny_model(src, tgt_in, head_mask=keep_all)
    assert torch.equal(plain.logits, same.logits)
    drop_layer = torch.ones(cfg.n_decoder_layers, cfg.n_heads)
    drop_layer[0] = 0
    _, changed = tiny_model(src, tgt_in, head_mask={"cross": drop_layer})
    assert not torch.allclose(plain.logits, changed.logits)


def test_unscaled_attention_is_more_peaked(tiny_model):
    """Dropping 1/sqrt(d_k) multiplies every score by sqrt(d_k) > 1, so the largest weight can only grow."""
    torch.manual_seed(1)
    layer = tiny_model.encoder_layers[0].self_attention
    x = torch.randn(1, 6, tiny_model.cfg.d_model) * 3
    scaled = layer(x, x, None, need_weights=True).weights
    unscaled = layer(x, x, None, need_weights=True, scale=False).weights
    assert (unscaled.max(-1).values >= scaled.max(-1).values - 1e-6).all()
    assert unscaled.max() > scaled.max()


def test_model_holds_no_per_input_state(tiny_model):
    """Attention is returned, never stored: a forward pass leaves the module's attributes as they were."""
    before = {name: sorted(vars(m)) for name, m in tiny_model.named_modules()}
    src, tgt_in = batch_with_padding(tiny_model)
    tiny_model(src, tgt_in, need_weights=True, need_qkv=True)
    assert {name: sorted(vars(m)) for name, m in tiny_model.named_modules()} == before


def test_pre_norm_variant_keeps_every_guarantee(tiny_tokenizers):
    """norm_first (pre-norm) changes where LayerNorm sits, not what attention is: rows sum to 1, masks are
    exact, and the explicit and fast attention paths agree."""
    from ..conftest import tiny_config

    torch.manual_seed(0)
    model = Transformer(tiny_config(*tiny_tokenizers, norm_first=True)).eval()
    assert isinstance(model.encoder_norm, torch.nn.LayerNorm)
    src, tgt_in = batch_with_padding(model)
    encoded, explicit = model(src, tgt_in, need_weights=True)
    _, fast = model(src, tgt_in)
    torch.testing.assert_close(explicit.logits, fast.logits, atol=1e-5, rtol=1e-5)
    for weights in (encoded.attention, explicit.self_attention, explicit.cross_attention):
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    t = tgt_in.size(1)
    assert (explicit.self_attention[..., ~torch.ones(t, t, dtype=torch.bool).tril()] == 0).all()


def test_a_decoder_only_model_is_the_decoder_stack_without_cross_attention():
    """Issue 61: GPT keeps only the decoder. The same code with decoder_only: no encoder, no cross-attention, no
    source embedding; one sequence "source <sep> target" read by causal self-attention, whose rows see only
    earlier positions; its cache decodes the next position as the full pass does."""
    torch.manual_seed(0)
    both = TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, n_heads=2, d_ff=32, max_len=16)
    alone = TransformerConfig(**{**both.__dict__, "n_encoder_layers": 0, "decoder_only": True, "dropout": 0.0})
    encoder_decoder, decoder = Transformer(both), Transformer(alone).eval()
    names = {name for name, _ in decoder.named_parameters()}
    assert not any(n.startswith(("encoder_layers", "src_embed")) or ".cross" in n for n in names)
    dropped = sum(p.numel() for n, p in encoder_decoder.named_parameters() if n not in names)
    assert count_parameters(decoder) == count_parameters(encoder_decoder) - dropped > 0
    assert alone.n_layers("cross") == 0 and alone.n_layers("decoder_self") == 6

    sequence = torch.tensor([[2, 5, 6, 7, 4, 8, 9]])  # <s> source <sep> target
    full = decoder.decode(sequence, None, AttentionOptions(need_weights=True))
    assert full.cross_attention is None and full.logits.shape == (1, 7, 20)
    weights = full.self_attention[0]  # (layers, heads, 7, 7)
    assert torch.all(weights.triu(1) == 0)  # causal: a row never reads a later position
    torch.testing.assert_close(weights.sum(-1), torch.ones(6, 2, 7))
    cached = decoder.decode(sequence[:, :6], None, cache=DecoderCache([], []))
    step = decoder.decode(sequence[:, 6:], None, cache=cached.cache)
    torch.testing.assert_close(step.logits[0, -1], full.logits[0, -1], atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="no encoder layers"):
        TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, decoder_only=True)
