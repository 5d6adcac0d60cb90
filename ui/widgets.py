"""Choice widgets whose options change during a session (a new sentence, another checkpoint, the other
interface language) without losing or corrupting their value; and widget values kept while their view is hidden.

Streamlit (1.67) keeps a keyed select widget's value in the browser as the option's *label*. When the options
or their labels change, the browser goes on sending the old label; the server cannot map it to an option and
hands the raw label string back as the widget's value (``"0: ▁Mary"`` where an ``int`` was expected). So before
each such widget is drawn, ``repair_choice`` puts a real option back into session state, mapping a stale label
through the labels of the previous run when it can (the same position stays chosen across sentences, the same
statistic across languages), and re-sends the value whenever the labels changed, so the browser holds a
current label again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

_LABELS = "_choice_labels"  # session-state key: widget key -> {label: option} of the last run that drew it


def _is_option(value: Any, options: Sequence) -> bool:
    # Type-exact: the stale label "1" must not pass for the option 1, nor True for 1.
    return any(type(value) is type(o) and value == o for o in options)


def repair_choice(
    key: str, options: Sequence, format_func: Callable[[Any], str] = str, *, multi: bool = False, default: Any = None
) -> None:
    """Make st.session_state[key] a valid value of a selectbox / radio (or, multi=True, a multiselect) over
    options before that widget is drawn. default: the value used when nothing can be recovered (the first option,
    or [] for a multiselect)."""
    labels = [format_func(o) for o in options]
    memory = st.session_state.setdefault(_LABELS, {})
    previous: dict = memory.get(key, {})
    memory[key] = dict(zip(labels, options))
    if key not in st.session_state:
        if default is not None and _is_option(default, options):
            st.session_state[key] = default  # the first draw starts at the default, not at the first option
        return

    def recover(value):
        if _is_option(value, options):
            return value
        if isinstance(value, str) and value in previous and _is_option(previous[value], options):
            return previous[value]
        return None

    value = st.session_state[key]
    if multi:
        values = value if isinstance(value, (list, tuple)) else []
        repaired = list(dict.fromkeys(v for v in (recover(v) for v in values) if v is not None))
    else:
        repaired = recover(value)
        if repaired is None:
            repaired = default if _is_option(default, options) else (options[0] if options else None)
    if repaired != value or list(previous) != labels:
        st.session_state[key] = repaired


def keep(keys: Sequence[str]) -> None:
    """Streamlit forgets a widget's value after a run that does not draw the widget (a view in a closed lazy
    tab): writing each value back at the start of the run makes it a session-state value, which Streamlit keeps,
    so a view's settings are still there when its tab is opened again. Widgets listed here must take their
    default from session state, not from a value= argument (Streamlit warns about having both)."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def selectbox(
    container,
    label: str,
    options: Sequence,
    *,
    key: str,
    format_func: Callable[[Any], str] = str,
    default: Any = None,
    **kwargs,
):
    repair_choice(key, options, format_func, default=default)
    return container.selectbox(label, options, key=key, format_func=format_func, **kwargs)


def radio(
    container,
    label: str,
    options: Sequence,
    *,
    key: str,
    format_func: Callable[[Any], str] = str,
    default: Any = None,
    **kwargs,
):
    repair_choice(key, options, format_func, default=default)
    return container.radio(label, options, key=key, format_func=format_func, **kwargs)


def multiselect(
    container, label: str, options: Sequence, *, key: str, format_func: Callable[[Any], str] = str, **kwargs
):
    repair_choice(key, options, format_func, multi=True)
    return container.multiselect(label, options, key=key, format_func=format_func, **kwargs)
