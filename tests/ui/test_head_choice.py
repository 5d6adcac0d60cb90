"""Issue 60: layers and heads are parsed once at the interface's edge, 1-based as a person reads them, into the
0-based indices model/ uses (head None: the layer's heads together), and shown 1-based again."""

import numpy as np
import pytest

from ui.common import HeadChoice, selected_weights


@pytest.mark.parametrize(("layer", "head", "parsed"), [(1, "1", (0, 0)), ("6", "8", (5, 7)), (3, "mean", (2, None))])
def test_a_choice_is_parsed_once_and_shown_as_it_was_chosen(layer, head, parsed):
    chosen = HeadChoice.shown_as(layer, head)
    assert (chosen.layer, chosen.head) == parsed
    assert (chosen.shown_layer, chosen.shown_head) == (int(layer), head)


def test_the_weights_of_a_choice_are_that_head_or_its_layers_mean():
    attention = np.random.default_rng(0).random((2, 3, 4, 5))
    np.testing.assert_array_equal(selected_weights(attention, HeadChoice.shown_as(2, "3")), attention[1, 2])
    np.testing.assert_allclose(selected_weights(attention, HeadChoice.shown_as(1, "mean")), attention[0].mean(0))
    assert HeadChoice.shown_as(1, "mean").one_head == 0 and HeadChoice.shown_as(1, "2").one_head == 1
