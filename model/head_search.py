"""Which heads link these two words? Every layer x head of one attention kind, ranked by what it does from one
query position (or word) to one key position (or word) of the current sentence.

Two scores, both read from the attention maps the model computed (no re-computation):
- weight: the attention weight from the query to the key;
- lift: that weight divided by the head's mean weight on the same key over every query that can see it. A head
  that sends every query to the key (a "sink" on </s> or the full stop) has a lift near 1 however large its
  weight; a head that links *this* query to the key stands out. (Dividing by the head's mean weight *from* the
  query would change nothing: every row sums to 1, so that mean is 1 / visible keys for every head alike.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .probe import word_level

SCORES = ("weight", "lift")


@dataclass(frozen=True)
class HeadScore:
    layer: int  # from 0, as everywhere in model/ (the app shows it from 1)
    head: int  # from 0
    weight: float
    lift: float


def maps_at_level(
    attention: np.ndarray,
    queries: list[str],
    keys: list[str],
    masked: np.ndarray | None,
    words: bool,
    query_language: str = "en",
    key_language: str = "en",
):
    """(layers, heads, queries, keys) maps at piece level, or merged into words (probe.word_level, head by
    head). -> (maps, query labels, key labels, masked or None)"""
    if not words:
        return np.asarray(attention), queries, keys, masked
    merged = [
        [
            word_level(attention[layer, head], queries, keys, query_language, key_language, masked)
            for head in range(attention.shape[1])
        ]
        for layer in range(attention.shape[0])
    ]
    _, query_words, key_words, masked_words = merged[0][0]
    maps = np.array([[m[0] for m in row] for row in merged])
    return maps, query_words, key_words, masked_words


def visible_keys(masked: np.ndarray | None, query: int, n_keys: int) -> list[int]:
    """The keys a query may look at (all of them, or in the decoder those up to itself)."""
    return [k for k in range(n_keys) if masked is None or not masked[query, k]]


def rank_heads(
    maps: np.ndarray, query: int, key: int, masked: np.ndarray | None = None, by: str = "weight"
) -> list[HeadScore]:
    """Every head of maps (layers, heads, queries, keys), best first by `by` ("weight" or "lift"); ties keep
    layer-then-head order."""
    if by not in SCORES:
        raise ValueError(f"unknown score {by!r}; expected one of {SCORES}")
    n_q, n_k = maps.shape[-2:]
    if not (0 <= query < n_q and 0 <= key < n_k):
        raise ValueError(f"query {query} / key {key} outside a {n_q} x {n_k} map")
    if masked is not None and masked[query, key]:
        raise ValueError(f"query {query} may not look at key {key} (masked)")
    seeing = [q for q in range(n_q) if masked is None or not masked[q, key]]
    weight = maps[:, :, query, key]
    mean_on_key = maps[:, :, seeing, key].mean(axis=-1)
    lift = np.divide(weight, mean_on_key, out=np.zeros_like(weight, dtype=np.float64), where=mean_on_key > 0)
    score = weight if by == "weight" else lift
    order = np.argsort(-score, axis=None, kind="stable")
    n_heads = maps.shape[1]
    return [HeadScore(int(i // n_heads), int(i % n_heads), float(weight.flat[i]), float(lift.flat[i])) for i in order]


# --- Two sentences: does a head follow the word that fits each one? ------------------------------------------
# A minimal pair changes one word, and with it which earlier word fits ("…because it was too tired": it = the
# animal; "…too wide": it = the street). A head tracks that when it gives the fitting word more weight in the
# sentence where it fits than in the other one. Weight on a pair in one sentence minus the same pair's weight in
# the other would reward a head that links it → animal strongly in *both* sentences; this measure gives it 0.
TRACKING_MARGIN = 0.1  # a head "tracks" when, in each sentence, the fitting word gets this much more weight


@dataclass(frozen=True)
class Tracking:
    """Per head (layers, heads): from the query, the weight on word X (fits the first sentence) and on word Y
    (fits the second), in each sentence; and the tracking score."""

    x_first: np.ndarray
    y_first: np.ndarray
    x_second: np.ndarray
    y_second: np.ndarray

    @property
    def score(self) -> np.ndarray:
        """½ [(X's weight in the first − in the second) + (Y's weight in the second − in the first)]: how much
        more weight each fitting word gets where it fits. 0 for a head that does the same in both sentences."""
        return 0.5 * ((self.x_first - self.x_second) + (self.y_second - self.y_first))

    @property
    def tracks(self) -> np.ndarray:
        """True where, in both sentences, the fitting word gets at least TRACKING_MARGIN more than the other."""
        return ((self.x_first - self.y_first) >= TRACKING_MARGIN) & ((self.y_second - self.x_second) >= TRACKING_MARGIN)


def referent_tracking(
    maps_first: np.ndarray, maps_second: np.ndarray, query: tuple[int, int], x: tuple[int, int], y: tuple[int, int]
) -> Tracking:
    """maps_*: (layers, heads, queries, keys) of each sentence; query, x, y: (position in the first, position
    in the second) of the query and of the two candidate words."""

    def weights(maps, which, key):
        return np.asarray(maps[:, :, query[which], key[which]], dtype=np.float64)

    return Tracking(
        weights(maps_first, 0, x), weights(maps_first, 0, y), weights(maps_second, 1, x), weights(maps_second, 1, y)
    )


def same_label_position(labels_from: list[str], position: int, labels_to: list[str]) -> int | None:
    """Where the label at `position` of one sentence is in the other: the same occurrence of the same label
    (the second "the" stays the second "the"), or None."""
    label = labels_from[position]
    occurrence = labels_from[:position].count(label)
    found = [i for i, other in enumerate(labels_to) if other == label]
    return found[occurrence] if occurrence < len(found) else None
