"""A head's query-key space: the projection keeps what it says it keeps; an offset is named only when it holds."""

import numpy as np

from model import qk_space


def test_points_on_a_line_keep_all_their_variance_in_the_first_component():
    rng = np.random.default_rng(0)
    direction = rng.normal(size=8)
    line = np.outer(rng.normal(size=40), direction)
    projection = qk_space.project(line[:5], line[5:10], line[10:25], line[25:])
    assert projection.explained[0] > 0.999 and projection.explained[1] < 1e-6
    # distances along the line are kept: the projection is a rotation of the centred points
    np.testing.assert_allclose(np.abs(projection.queries[:, 0] - projection.queries[0, 0]),
                               np.linalg.norm(line[:5] - line[0], axis=1), rtol=1e-4)


def test_a_previous_token_head_is_named_by_its_offset_and_a_diffuse_one_is_not():
    n = 6
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0
    offset, share = qk_space.dominant_offset(previous)
    assert offset == -1 and share == (n - 1) / n
    uniform = np.full((n, n), 1 / n)
    uniform[np.arange(n), (np.arange(n) * 3) % n] += 0.1  # strongest keys scattered
    assert qk_space.dominant_offset(uniform)[1] < qk_space.POSITIONAL_SHARE
    # in the masked decoder, row 0 sees one key only and is left out
    causal = np.tril(np.ones((n, n), dtype=bool))
    diagonal = np.eye(n)
    assert qk_space.dominant_offset(diagonal, ~causal) == (0, 1.0)


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
            expected = np.concatenate([tr.qkv[kind][name] for tr in alone], axis=2)
            assert stacked[kind].shape == expected.shape, (kind, name)
            np.testing.assert_allclose(stacked[kind], expected, atol=2e-5)
    assert sample.sentences == 3
