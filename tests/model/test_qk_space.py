"""A head's query-key space: the projection keeps what it says it keeps; an offset is named only when it holds."""

import numpy as np
import pytest

from model import qk_space, roles

from ..conftest import ROOT


def test_points_on_a_line_keep_all_their_variance_in_the_first_component():
    rng = np.random.default_rng(0)
    direction = rng.normal(size=8)
    line = np.outer(rng.normal(size=40), direction)
    projection = qk_space.project(line[:5], line[5:10], line[10:25], line[25:])
    assert projection.explained[0] > 0.999 and projection.explained[1] < 1e-6
    # distances along the line are kept: the projection is a rotation of the centred points
    np.testing.assert_allclose(
        np.abs(projection.queries[:, 0] - projection.queries[0, 0]),
        np.linalg.norm(line[:5] - line[0], axis=1),
        rtol=1e-4,
    )


def test_the_projection_is_the_principal_components_an_svd_finds():
    rng = np.random.default_rng(1)
    points = rng.normal(size=(300, 6)) * np.array([5.0, 3.0, 1.0, 0.5, 0.2, 0.1])
    projection = qk_space.project(points[:10], points[10:20], points[20:150], points[150:])
    centred = points - points.mean(0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    got = np.concatenate([projection.queries, projection.keys, projection.sample_queries, projection.sample_keys])
    np.testing.assert_allclose(np.abs(got), np.abs(expected), atol=1e-4)  # each component up to its sign
    np.testing.assert_allclose(projection.explained, (singular[:2] ** 2) / (singular**2).sum(), rtol=1e-6)


def test_a_previous_token_head_is_named_by_its_offset_and_a_diffuse_one_is_not():
    """The query-key view names a positional head by the one definition of model.roles."""
    n = 6
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0
    offset, share = roles.positional_offset(previous)
    assert offset == -1 and share == (n - 1) / n
    uniform = np.full((n, n), 1 / n)
    uniform[np.arange(n), (np.arange(n) * 3) % n] += 0.1  # strongest keys scattered
    assert roles.positional_offset(uniform)[1] < roles.POSITIONAL_SHARE
    assert roles.positional_offset(np.eye(n)) == (0, 1.0)


def test_the_batched_sample_holds_exactly_what_each_sentence_computes_alone(tiny_checkpoint):
    from model.checkpoint import load_checkpoint
    from model.decode import translate

    loaded = load_checkpoint(tiny_checkpoint)
    # unequal lengths: padding in the batch. (The untrained tiny model writes the padding id after "a cat"; a
    # trained one never does, and the batched pass would read such a piece as padding, so it is left out.)
    sentences = ["the dog sees a bird near the house", "hello", "a dog"]
    alone = [translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, s) for s in sentences]
    assert all(0 not in tr.target_ids for tr in alone)
    sample = qk_space.sample_qk(loaded, sentences)
    for kind in ("encoder_self", "decoder_self", "cross"):
        for name, stacked in (("q", sample.queries), ("k", sample.keys)):
            expected = np.concatenate([tr.record.qkv[kind][name] for tr in alone], axis=2)
            assert stacked[kind].shape == expected.shape, (kind, name)
            np.testing.assert_allclose(stacked[kind], expected, atol=2e-5)
    assert sample.sentences == 3


def _fake_sample(points: int, sentences: int, offset: float = 0.0) -> qk_space.QKSample:
    """Points numbered along d_k's first entry so a draw can be traced back to its position."""

    def kind_array():
        a = np.zeros((2, 3, points, 4), dtype=np.float32)
        a[..., 0] = offset + np.arange(points)
        a[..., 1] = np.arange(3)[None, :, None]  # the head's number
        return a

    kinds = ("encoder_self", "decoder_self", "cross")
    return qk_space.QKSample({k: kind_array() for k in kinds}, {k: kind_array() for k in kinds}, sentences)


def test_combining_batches_draws_the_same_positions_for_every_head_without_repeats():
    parts = [_fake_sample(700, 10), _fake_sample(900, 12, offset=700)]
    sample = qk_space.combine(parts, max_points=1000)
    assert sample.sentences == 22
    for kind in ("encoder_self", "cross"):
        drawn = sample.queries[kind]
        assert drawn.shape == (2, 3, 1000, 4) and drawn.dtype == np.float16
        positions = drawn[0, 0, :, 0].astype(int)
        assert len(set(positions)) == 1000 and positions.max() < 1600
        assert (positions >= 700).sum() > 400  # both batches are drawn from, about in proportion (~562 of 1000)
        for head in range(3):  # every head has the same positions, and its own values
            np.testing.assert_array_equal(drawn[1, head, :, 0], drawn[0, 0, :, 0])
            assert (drawn[1, head, :, 1] == head).all()
    small = qk_space.combine([_fake_sample(50, 1)], max_points=1000)  # fewer than the cap: all, in order
    np.testing.assert_array_equal(small.keys["cross"][0, 0, :, 0], np.arange(50))


@pytest.mark.slow
def test_the_sample_in_batches_is_the_sample_at_once_and_takes_the_lock_per_batch(tiny_checkpoint):
    from contextlib import contextmanager

    from model.checkpoint import load_checkpoint

    loaded = load_checkpoint(tiny_checkpoint)
    sentences = ["the dog sees a bird near the house", "hello", "a dog", "the cat", "a bird near the dog"]
    entered = []

    @contextmanager
    def lock():
        entered.append(1)
        yield

    class Lock:
        def __enter__(self):
            self._cm = lock()
            return self._cm.__enter__()

        def __exit__(self, *exc):
            return self._cm.__exit__(*exc)

    batched = qk_space.sample_qk_in_batches(loaded, sentences, Lock(), batch=2)
    whole = qk_space.sample_qk(loaded, sentences)
    assert len(entered) == 3 and batched.sentences == 5
    for kind in whole.queries:
        np.testing.assert_allclose(batched.queries[kind], whole.queries[kind], atol=2e-3, rtol=2e-3)  # float16
        np.testing.assert_allclose(batched.keys[kind], whole.keys[kind], atol=2e-3, rtol=2e-3)


@pytest.mark.checkpoint
def test_each_shipped_checkpoint_has_a_few_hundred_held_out_sample_sentences():
    for name in ("en-zh", "en-de"):
        checkpoint = ROOT / "checkpoints" / name
        sentences = qk_space.read_sample_sentences(checkpoint)
        assert len(sentences) >= qk_space.SAMPLE_SENTENCES, checkpoint
        assert len(set(sentences)) > 0.95 * len(sentences)
