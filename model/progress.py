"""How a long computation says how far it is and learns that it should stop: one protocol for every one of them
(integrated gradients, the query–key sample, the toy training runs of lesson 11). The computation calls
`progress.report(done, total)` after each batch or step (total may grow) and `progress.check()` between them,
which raises Cancelled once `should_stop()` says so (the user cancelled it, or the server is stopping)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class Cancelled(Exception):
    """A computation stopped because its Progress said so."""


@dataclass
class Progress:
    report: Callable[[int, int], None] = lambda done, total: None
    should_stop: Callable[[], bool] = lambda: False

    def check(self) -> None:
        if self.should_stop():
            raise Cancelled()
