"""A least-recently-used cache of translations, bounded by the bytes their arrays hold.

Streamlit's st.cache_data bounds entries by count, not size: one beam-8 translation of a long sentence holds
tens of MiB of attention maps and Q/K/V, so 128 entries could take gigabytes. This cache evicts the least recently
used results once their arrays pass a byte budget. It hands out the stored object itself (no pickling, no copy
per rerun), which is safe because a Translation's arrays are read-only.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np


def array_bytes(value: Any) -> int:
    """Bytes held by the numpy arrays inside value (dataclasses, lists, tuples, dicts), each array counted once
    (hypotheses of one beam share their encoder arrays)."""
    seen: set[int] = set()

    def walk(item) -> int:
        if isinstance(item, np.ndarray):
            if id(item) in seen:
                return 0
            seen.add(id(item))
            return item.nbytes
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            return sum(walk(getattr(item, f.name)) for f in dataclasses.fields(item))
        if isinstance(item, (list, tuple)):
            return sum(walk(x) for x in item)
        if isinstance(item, dict):
            return sum(walk(x) for x in item.values())
        return 0

    return walk(value)


class ByteBudgetCache:
    """get(key, compute): the cached value, or compute() stored under key; thread-safe (the app's sessions run
    in threads of one process). The newest value is always kept, even when it alone is over the budget."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def values(self) -> list[Any]:
        with self._lock:
            return [value for value, _ in self._items.values()]

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
        value = compute()  # outside the lock: other sessions keep reading while this one translates
        size = array_bytes(value)
        with self._lock:
            if key in self._items:  # another session computed it meanwhile
                return self._items[key][0]
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted
        return value
