"""Each account of what flows checked on a property it must have: norm-weighted vectors add up to what the layer
really adds, rollout rows are shares that sum to 1, gradients match finite differences and respect the causal
mask, integrated gradients are complete."""

import json

import numpy as np
import pytest
import torch

from model.attribute import (
    METHODS,
    GradientTimesInput,
    IntegratedGradients,
    NormWeighted,
    Progress,
    Rollout,
    main,
    output_projections,
    residual_rollout,
)
from model.inside import NEEDS as INSIDE
from model.progress import Cancelled
from model.teacher_forcing import Needs, record_pass, teacher_forced_input
from model.tokenizer import EOS_ID


@pytest.fixture
def tiny_pass(tiny_model, tiny_tokenizers):
    src, tgt = tiny_tokenizers
    return record_pass(
        tiny_model, src.encode("Tom drinks tea.") + [EOS_ID], tgt.encode("汤姆喝茶。") + [EOS_ID], Needs(qkv=True)
    )


def test_norm_weighted_vectors_add_up_to_what_the_cross_attention_sublayer_adds(tiny_model, tiny_pass):
    """Σ_h Σ_j α_hij f_h(x_j) + b_O is the sub-layer's output exactly: the norms are of the model's own terms."""
    inside = record_pass(tiny_model, tiny_pass.source_ids, tiny_pass.target_ids, INSIDE)
    w = tiny_pass.attention["cross"].astype(np.float64)
    f = np.einsum("lhkd,lhde->lhke", tiny_pass.qkv["cross"]["v"], output_projections(tiny_model, "cross"))
    for layer, record in enumerate(inside.decoder):
        bias = tiny_model.decoder_layers[layer].cross_attention.w_o.bias.detach().numpy()
        rebuilt = np.einsum("hqk,hke->qe", w[layer], f[layer]) + bias
        np.testing.assert_allclose(rebuilt, record["cross_attention"].update, atol=1e-4)
    maps = NormWeighted().compute(tiny_model, tiny_pass)
    np.testing.assert_allclose(maps.maps["cross"], w * np.linalg.norm(f, axis=-1)[:, :, None, :], rtol=1e-4, atol=1e-6)


def test_one_views_norm_map_is_the_same_as_the_one_of_all_head_maps(tiny_model, tiny_pass):
    """A view computed from its layer alone equals the same view taken from the whole computation: the norms' rows
    as shares of their total."""
    maps = NormWeighted().compute(tiny_model, tiny_pass)

    def shares(x):
        return x / x.sum(-1, keepdims=True)

    for kind in ("encoder_self", "decoder_self", "cross"):
        for layer in (0, tiny_model.cfg.n_layers(kind) - 1):
            for head, whole in ((1, maps.maps[kind][layer, 1]), (None, maps.layer_maps[kind][layer])):
                alone = NormWeighted().view(tiny_model, tiny_pass, kind, layer, head)
                np.testing.assert_allclose(alone, shares(whole), rtol=1e-5, atol=1e-7)
                np.testing.assert_allclose(alone, NormWeighted().view(tiny_model, tiny_pass, kind, layer, head, maps))


def test_a_key_with_no_value_vector_gets_no_norm_however_much_weight(tiny_model, tiny_pass):
    tiny_pass.qkv["encoder_self"]["v"][:, :, 1] = 0.0
    maps = NormWeighted().compute(tiny_model, tiny_pass)
    assert (tiny_pass.attention["encoder_self"][:, :, :, 1] > 0).all()
    assert np.abs(maps.maps["encoder_self"][:, :, :, 1]).max() < 1e-4  # only the value bias' projection is left


def test_rollout_of_identity_attention_is_the_identity_and_rows_are_shares(tiny_pass):
    eye = np.stack([np.eye(4)] * 3)
    np.testing.assert_allclose(residual_rollout(eye)[-1], np.eye(4))
    uniform = np.full((1, 4, 4), 0.25)
    np.testing.assert_allclose(residual_rollout(uniform)[0], 0.5 * uniform[0] + 0.5 * np.eye(4))
    source, prefix = Rollout().per_layer(tiny_pass)
    np.testing.assert_allclose(source.sum(-1) + prefix.sum(-1), 1.0, atol=1e-5)
    assert np.allclose(np.triu(prefix[-1], 1), 0)  # no share from decoder inputs that come later


def test_gradient_times_input_matches_a_finite_difference_and_sees_no_future(tiny_model, tiny_pass):
    result = GradientTimesInput().steps(tiny_model, tiny_pass)
    assert np.isnan(result.target_prefix[0, 1:]).all() and not np.isnan(np.tril(result.target_prefix)).any()
    # Scaling source piece 1's embedding by (1 + eps) changes log p(piece 2) by about eps * (grad . x).
    src = torch.tensor([tiny_pass.source_ids])
    tgt = torch.tensor([teacher_forced_input(tiny_pass.target_ids)])

    def log_p(scale):
        emb = tiny_model.src_embed(src).detach().clone()
        emb[0, 1] *= scale
        with torch.no_grad():
            logits = tiny_model.decode(tgt, tiny_model.encode(src, embeddings=emb)).logits
        return logits[0, 2].log_softmax(-1)[tiny_pass.target_ids[2]].item()

    eps = 1e-3
    assert (log_p(1 + eps) - log_p(1 - eps)) / (2 * eps) == pytest.approx(result.source[2, 1], rel=1e-2, abs=1e-4)


@pytest.mark.slow
def test_integrated_gradients_are_complete_within_one_percent(tiny_model, tiny_pass):
    result = IntegratedGradients().steps(tiny_model, tiny_pass)
    assert result.completeness_error.max() <= 0.01
    total = result.source.sum(1) + np.nansum(result.target_prefix, 1)
    np.testing.assert_allclose(total, result.extra["delta"], rtol=0.011, atol=1e-3)
    one = IntegratedGradients().steps(tiny_model, tiny_pass, only_step=2)
    np.testing.assert_allclose(one.source[0], result.source[2], rtol=0.05, atol=0.02)


def test_integrated_gradients_report_their_progress_and_stop_when_told(tiny_model, tiny_pass):
    """The page shows how far the slow method is and can cancel it (issue 36 item 1)."""
    seen = []
    ig = IntegratedGradients(steps=4, max_steps=8, rows_per_batch=4)
    ig.compute(tiny_model, tiny_pass, progress=Progress(lambda done, total: seen.append((done, total))))
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and all(d <= t for d, t in seen)
    assert seen[-1][0] == seen[-1][1] >= 4 * len(tiny_pass.target_ids)  # every planned row done
    asked = []
    with pytest.raises(Cancelled):
        ig.compute(tiny_model, tiny_pass, progress=Progress(should_stop=lambda: asked.append(1) or len(asked) > 2))
    assert len(asked) == 3  # it stopped at the first question answered yes


@pytest.mark.slow
def test_every_method_gives_a_map_with_the_translations_axes(tiny_model, tiny_pass):
    for method in METHODS.values():
        r = method.steps(tiny_model, tiny_pass)
        assert r.source.shape == (len(tiny_pass.target_ids), len(tiny_pass.source_ids))
        assert r.target_prefix.shape == (len(tiny_pass.target_ids),) * 2
        one = method.steps(tiny_model, tiny_pass, only_step=1)
        np.testing.assert_allclose(one.source[0], r.source[1], rtol=0.05, atol=0.02)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_keeps_what_it_declares(tiny_model, tiny_pass, method):
    """Each method's map has the view's axes for every kind it declares, at every layer and head it declares
    (1-head, 1-layer or one map), and is signed only if it says so."""
    chosen = METHODS[method]
    computed = None if chosen.per_view else chosen.compute(tiny_model, tiny_pass)
    n_source, n_target = len(tiny_pass.source_ids), len(tiny_pass.target_ids)
    shapes = {"encoder_self": (n_source, n_source), "decoder_self": (n_target, n_target), "cross": (n_target, n_source)}
    heads = {"head": [None, 0, 1], "layer": [None], "model": [None]}[chosen.granularity]
    for kind in chosen.kinds:
        layers = range(tiny_model.cfg.n_layers(kind)) if chosen.granularity != "model" else [None]
        for layer in layers:
            for head in heads:
                m = chosen.view(tiny_model, tiny_pass, kind, layer, head, computed)
                assert m.shape == shapes[kind], (kind, layer, head)
                assert np.isfinite(m).all()
                if not chosen.signed:
                    assert (m >= -1e-6).all(), (kind, layer, head)
    for kind in set(shapes) - set(chosen.kinds):
        with pytest.raises(ValueError):
            chosen.view(tiny_model, tiny_pass, kind, 0, None, computed)
    if chosen.recorded:  # the views draw the recorded weights themselves: they must be exactly these maps
        for kind in chosen.kinds:
            np.testing.assert_array_equal(
                chosen.view(tiny_model, tiny_pass, kind, 0, 0, computed), tiny_pass.attention[kind][0, 0]
            )


@pytest.mark.slow
def test_command_line_writes_each_step_with_its_completeness_error(tiny_checkpoint, tmp_path):
    out = tmp_path / "ig.json"
    main(["--checkpoint", str(tiny_checkpoint), "I like tea.", "--method", "integrated-gradients", "--json", str(out)])
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["source_pieces"][-1] == "</s>" and len(data["steps"]) == len(data["target_pieces"])
    for t, step in enumerate(data["steps"]):
        assert len(step["source"]) == len(data["source_pieces"]) and len(step["target_prefix"]) == t + 1
        assert 0 <= step["completeness_error"] <= 0.01


def test_value_zeroing_gives_nothing_to_a_silent_head_or_a_future_key(tiny_model, tiny_pass):
    from model.attribute import ValueZeroing

    d_k = tiny_model.decoder_layers[0].cross_attention.d_k
    with torch.no_grad():
        tiny_model.decoder_layers[0].cross_attention.w_o.weight[:, d_k : 2 * d_k] = 0  # head 2 writes nothing
    maps = ValueZeroing().compute(tiny_model, tiny_pass)
    assert np.abs(maps.maps["cross"][0, 1]).max() < 1e-6
    assert np.abs(maps.maps["cross"][0, 0]).max() > 0
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_allclose(maps.layer_maps[kind].sum(-1), 1.0, atol=1e-4)
    future = np.triu(np.ones(maps.layer_maps["decoder_self"].shape[-2:], dtype=bool), 1)
    assert np.abs(maps.layer_maps["decoder_self"][:, future]).max() < 1e-6
    one = ValueZeroing().view(tiny_model, tiny_pass, "cross", 1, None)
    np.testing.assert_allclose(one, maps.layer_maps["cross"][1], atol=1e-6)


def test_value_zeroing_of_one_view_equals_that_head_of_the_full_computation(tiny_model, tiny_pass):
    from model.attribute import ValueZeroing

    maps = ValueZeroing().compute(tiny_model, tiny_pass)
    for kind in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_allclose(
            ValueZeroing().view(tiny_model, tiny_pass, kind, 1, 1), maps.maps[kind][1, 1], atol=1e-5
        )
        np.testing.assert_allclose(
            ValueZeroing().view(tiny_model, tiny_pass, kind, 0, None), maps.layer_maps[kind][0], atol=1e-5
        )
