"""Choice widgets whose options change during a session (a new sentence, another checkpoint, the other
interface language) without losing or corrupting their value; and widget values kept while their view is hidden.

Streamlit (1.67) keeps a keyed select widget's value in the browser as the option's *label*. When the options
or their labels change, the browser goes on sending the old label; the server cannot map it to an option and
hands the raw label string back as the widget's value (``"0: ▁Mary"`` where an ``int`` was expected). So before
each such widget is drawn, ``repair_choice`` puts a real option back into session state, mapping a stale label
through the labels of the previous run when it can (the same position stays chosen across sentences, the same
statistic across languages), and re-sends the value whenever the labels changed, so the browser holds a
current label again.

A session's first values (its link's, ui.session) are not written into session state but given to each widget as
its default where it is first drawn (``start_on``; ``repair_choice`` and ``first_value`` pass them as ``index=``
or ``value=``). A page open in a browser can reconnect to a server that was restarted: that server has no session
for it, and the page's first run there is its user's next action (a new sentence, another layer), sent together
with the values all its widgets hold. Streamlit lets a value the script writes into session state win over the one
the page sent, and uses a widget's default only where the page sent nothing; so as defaults the link's values open
a new page on the link and leave a reconnected page as its user left it. Which values a page sent is known only
once their widgets are drawn (no public API tells before): the script reads a value it needs earlier (the
checkpoint to load, the page whose selectors to offer) through ``current``, and ``rerun_if_drawn_otherwise`` runs
it again where the widget then showed another.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

_LABELS = "_choice_labels"  # session-state key: widget key -> {label: option} of the last run that drew it
_STARTING = "_starting_values"  # widget key -> the value it starts on, until the session's first run has drawn it
_READ = "_read_before_drawn"  # widget key -> the starting value this run read before the widget was drawn
_RERUNS = "_reruns_in_a_row"  # how many runs in a row ended in rerun_once_more
# A correction (a reconnected page's click followed, a widget drawn otherwise) needs one more run, two at most
# when both come together: a third in a row means corrections chase each other, and the run goes on as it is.
RERUNS_IN_A_ROW = 3


def _is_option(value: Any, options: Sequence) -> bool:
    # Type-exact: the stale label "1" must not pass for the option 1, nor True for 1.
    return any(type(value) is type(o) and value == o for o in options)


def _index(value: Any, options: Sequence) -> int:
    return next(i for i, o in enumerate(options) if type(value) is type(o) and value == o)


def repair_choice(
    key: str, options: Sequence, format_func: Callable[[Any], str] = str, *, multi: bool = False, default: Any = None
) -> dict:
    """Make st.session_state[key] a valid value of a selectbox / radio (or, multi=True, a multiselect) over
    options before that widget is drawn. default: the value used when nothing can be recovered (the first option,
    or [] for a multiselect). -> the widget's index= where it is first drawn (its starting value, else default):
    a default, not a session-state value, so that what a reconnected page sent stands (see the module's doc)."""
    labels = [format_func(o) for o in options]
    memory = st.session_state.setdefault(_LABELS, {})
    previous: dict = memory.get(key, {})
    memory[key] = dict(zip(labels, options))
    if key not in st.session_state:
        starting = st.session_state.get(_STARTING, {}).get(key)
        first = next((v for v in (starting, default) if v is not None and _is_option(v, options)), None)
        return {} if multi or first is None else {"index": _index(first, options)}  # else the first option

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
    return {}


def keep(keys: Sequence[str]) -> None:
    """Streamlit forgets a widget's value after a run that does not draw the widget (a view in a closed lazy
    tab): writing each value back at the start of the run makes it a session-state value, which Streamlit keeps,
    so a view's settings are still there when its tab is opened again. Widgets listed here must take their
    default from session state, not from a value= argument (Streamlit warns about having both)."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def start_on(values: dict[str, Any]) -> None:
    """The values the session's widgets start on, on its first run (see the module's doc)."""
    st.session_state[_STARTING] = dict(values)
    st.session_state[_READ] = {}


def current(key: str, default: Any = None, *, checked: bool = True) -> Any:
    """A widget's value where the script reads it before drawing the widget: its session-state value, or on the
    session's first run the value it starts on; that one is noted (checked=False: where only a label depends on it),
    and if the widget then shows another, ``rerun_if_drawn_otherwise`` runs the script again."""
    if key in st.session_state:
        return st.session_state[key]
    starting = st.session_state.get(_STARTING, {})
    if key not in starting:
        return default
    if checked:
        st.session_state.setdefault(_READ, {})[key] = starting[key]
    return starting[key]


def set_value(key: str, value: Any) -> None:
    """Sets a widget's value before it is drawn: on the session's first run, as the value it starts on (what a
    reconnected page sent still stands); after, in session state."""
    starting = st.session_state.get(_STARTING)
    if starting is None or key in st.session_state:
        st.session_state[key] = value
        return
    starting[key] = value
    read = st.session_state.get(_READ, {})
    if key in read:
        read[key] = value


def first_value(key: str, default: Any = None) -> dict:
    """value= for a widget that takes its default that way (text input, checkbox, toggle, slider) where it is first
    drawn: its starting value, else default; nothing once it has a value (Streamlit warns of both)."""
    if key in st.session_state:
        return {}
    value = st.session_state.get(_STARTING, {}).get(key, default)
    return {} if value is None else {"value": value}


def with_starting_values() -> Mapping[str, Any]:
    """Session state, and where the session's first run has not drawn a widget yet, the value it starts on: what
    the page shows (for its link)."""
    return ChainMap(st.session_state, st.session_state.get(_STARTING, {}))


def rerun_once_more() -> None:
    """st.rerun for the page's own corrections, bounded: at most RERUNS_IN_A_ROW runs in a row end in it, so a
    session settles whatever its client sends (issue 59: tabs that chased themselves reran without end, after
    their client had gone). run_reached_its_end starts the count again."""
    done = st.session_state.get(_RERUNS, 0)
    if done < RERUNS_IN_A_ROW:
        st.session_state[_RERUNS] = done + 1
        st.rerun()


def run_reached_its_end() -> None:
    st.session_state[_RERUNS] = 0


def rerun_if_drawn_otherwise() -> None:
    """Where a value read before its widget was drawn (``current``) differs from what the widget then showed (a
    reconnected page sent its own), the script runs again, once, now reading the widget's."""
    read = st.session_state.get(_READ, {})
    if any(key in st.session_state and st.session_state[key] != value for key, value in read.items()):
        st.session_state[_READ] = {}
        rerun_once_more()


def settle() -> None:
    """Ends the session's starting values: the widgets the first run did not draw take theirs as session-state
    values (as those drawn have theirs). Called once the page's choices are drawn, and at every later run's start
    (for a first run that stopped before)."""
    starting = st.session_state.pop(_STARTING, None)
    st.session_state.pop(_READ, None)
    for key, value in (starting or {}).items():
        if key not in st.session_state:
            st.session_state[key] = value


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
    first = repair_choice(key, options, format_func, default=default)
    return container.selectbox(label, options, key=key, format_func=format_func, **first, **kwargs)


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
    first = repair_choice(key, options, format_func, default=default)
    return container.radio(label, options, key=key, format_func=format_func, **first, **kwargs)


def multiselect(
    container, label: str, options: Sequence, *, key: str, format_func: Callable[[Any], str] = str, **kwargs
):
    repair_choice(key, options, format_func, multi=True)
    return container.multiselect(label, options, key=key, format_func=format_func, **kwargs)


def grid_config(columns: Sequence) -> dict:
    """st.dataframe's column_config for columns sized by viz.tables.grid_columns (the grid cuts a heading or value
    longer than its column); a shortened heading shows the column's full name on hover."""
    return {
        c.name: st.column_config.NumberColumn(
            c.heading, help=c.name if c.heading != c.name else None, format=c.number_format, width=c.width_px
        )
        if c.number_format
        else st.column_config.Column(c.heading, help=c.name if c.heading != c.name else None, width=c.width_px)
        for c in columns
    }


def fitted_dataframe(parent, frame, columns: Sequence, key: str | None = None) -> None:
    """A table in the data grid with each column sized as grid_config says."""
    parent.dataframe(frame, hide_index=True, width="stretch", key=key, column_config=grid_config(columns))
