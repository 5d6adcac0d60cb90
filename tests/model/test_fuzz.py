"""Arbitrary Unicode through the translate-and-capture path the app uses: every result is consistent with its
own pieces, or the input is refused with a clear error. Run with --hypothesis-show-statistics for the count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.decode import teacher_force, translate_hypotheses

TRICKY = "\u202e\u202d\u200d\u200b\u2066\ufeff\u0000\u0007\n\t😀👩‍👩‍👧汉字かな한글ÅÄÖß<>&\"'*_`$\\"
sentences = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.sampled_from(TRICKY + "abc xyz."), max_size=60),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=100, max_size=400),  # past the model's length
)
EXAMPLES = 150


def check(tr) -> None:
    n_src, n_tgt = len(tr.source_pieces), len(tr.target_pieces)
    assert tr.attention("encoder_self").shape[2:] == (n_src, n_src)
    assert tr.attention("decoder_self").shape[2:] == (n_tgt, n_tgt)
    assert tr.attention("cross").shape[2:] == (n_tgt, n_src)
    for attention in (tr.attention("encoder_self"), tr.attention("decoder_self"), tr.attention("cross")):
        assert np.isfinite(attention).all()
        np.testing.assert_allclose(attention.sum(-1), 1.0, atol=1e-5)
    future = np.triu(np.ones((n_tgt, n_tgt), dtype=bool), 1)
    assert (tr.attention("decoder_self")[..., future] == 0).all()
    assert len(tr.token_probs) == len(tr.alternatives) == n_tgt
    for piece in tr.source_pieces + tr.target_pieces:  # nothing invisible or direction-changing reaches a label
        assert not any(c in piece for c in "\u202e\u202d\u200d\u200b\u2066\ufeff\x00\x07")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=sentences, beam=st.sampled_from([1, 3]))
def test_any_text_gives_consistent_maps_or_a_clear_error(tiny_model, tiny_tokenizers, text, beam):
    try:
        hypotheses = translate_hypotheses(tiny_model, *tiny_tokenizers, text, beam_size=beam)
    except ValueError as e:
        assert not text.strip() and "empty" in str(e)
        return
    assert hypotheses
    for tr in hypotheses:
        check(tr)
    forced = teacher_force(tiny_model, *tiny_tokenizers, text, reference=text + "。")
    check(forced)
