"""Which view runs: the explorer's two rows of tabs (groups, then the views of the open group) and the lessons'
tabs, over the registry of ui.views; only the open tab runs. And the page's fixed style.

Not st.navigation: at 1024×768 its top menu shows no view until a section is opened (two clicks for each view,
where the tabs show the open group's views) and its sidebar list pushes the sentence box off the first screen or
hides views behind "View more" (tests/e2e/test_navigation.py measures both, with the registry's own pages)."""

from __future__ import annotations

import streamlit as st

from ui import views as registry
from ui import widgets
from ui.common import Context
from ui.lessons import show_lesson
from ui.views import view_groups
from words import LANGUAGES, t


def page_style(present: bool) -> None:
    """Less empty space above the page, so the map fits the first screen of a 1024×768 projector; every lesson tab
    in view; in presentation mode, larger captions and translation for the back row. Fixed CSS, no user text."""
    css = f".block-container {{padding-top: {1.5 if present else 2.5}rem; padding-bottom: 1rem;}}"
    # The lessons do not fit one row at 1024 px (nor in Chinese at 1280): they wrap to a second row instead of
    # hiding behind the tab bar's scroll arrow.
    # Eleven English titles took three rows at 1024 px (sidebar open): closer and a little smaller, they take two;
    # twelve take two at 12 px with 4 px between them, also beside a scroll bar (a classroom PC's browser shows
    # one: the main column is 554 px, and at 6 px apart the English titles took three rows). The rows lie close
    # (32 px tabs, no gap between rows: Streamlit's 40 px and 16 px took 152 px for three).
    css += (
        " [class*='st-key-lesson_tab_'] [role='tablist'] {flex-wrap: wrap; overflow: visible; column-gap: 4px;"
        " row-gap: 0;}"
    )
    css += " [class*='st-key-lesson_tab_'] [role='tab'] {height: 2rem;}"
    css += " [class*='st-key-lesson_tab_'] [role='tab'] p {font-size: 12px;}"
    # Head ablation's checkbox grids need no search, download or full screen: their toolbar, shown on hover, lay
    # over the lower part of the "None off" button above the grid (a click there downloaded a CSV).
    css += " [class*='st-key-ablation_grid_'] [data-testid='stElementToolbar'] {display: none;}"
    # Every other table's toolbar (search, download, full screen), shown on hover, is 44 px tall and lies *above* the
    # table, over the right end of whatever precedes it: the end of a heading, a chart's last axis label. A text
    # before a table keeps its lines clear of that corner; a chart before one leaves room under it.
    before_table = (
        "[data-testid='stElementContainer']:has(+ [data-testid='stElementContainer'] [data-testid='stDataFrame'])"
    )
    css += f" {before_table}:not(:has(.js-plotly-plot)) {{padding-right: 7.5rem;}}"
    css += f" {before_table}:has(.js-plotly-plot) {{margin-bottom: 1.75rem;}}"
    if present:
        css += (
            " [data-testid='stCaptionContainer'] {font-size: 1.1rem;}"
            " [data-testid='stMarkdownContainer'] h3 {font-size: 2.2rem;}"
            # The page starts under Streamlit's 60 px header, which is white: the translation's heading would be
            # cut by it. A see-through header lets it show; only the sidebar button in it stays clickable.
            " [data-testid='stHeader'], [data-testid='stToolbar'] {background: transparent; pointer-events: none;}"
            " [data-testid='stHeader'] button {pointer-events: auto;}"
        )
    st.markdown(f"<style>{css}</style>", unsafe_allow_html=True)


def remember_tab(label: str, keys: tuple[str, ...], state_key: str) -> None:
    """The tabs widget holds the open tab's *label*, which changes with the interface language; the session
    keeps the tab's key, so a language switch stays on the same tab."""
    by_label = {t(key, lang): key for key in keys for lang in LANGUAGES}
    st.session_state[state_key] = by_label.get(label, keys[0])


def tabs_opening(labels: list[str], open_label: str, widget_key: str, on_change, args: tuple) -> list:
    """Tabs that open on open_label (the session's tab, see explorer_tabs), given as their default rather than
    written into session state; on_change(clicked label, *args) follows a click.

    Each drawing of the tabs that opens another tab than the last one is a new widget, whose key counts the
    drawings (widget_key_0, widget_key_1, ...), and so is the drawing after a click: its id has never been seen, so
    no value a client still holds for earlier tabs can reach it. (Streamlit's id of a tabs widget includes its
    default: keyed by widget_key alone, the tabs drawn on a tab got the same id each time that tab was open again,
    and a client that kept sending an earlier click, as a load tester does and as a browser did while a run was
    cut short, had the page chase its own tabs without end: issue 59.)

    A page that reconnects to a restarted server draws there, from its link, the tabs it last had, and sends its
    user's click with that first run: the click opens its tab, while a new page, which sends nothing, opens
    open_label. That click reached no on_change (the new server did not know the widget yet): it is followed here
    as on_change would have been, and the script runs once more, on tabs with a new id."""
    drawn = st.session_state.setdefault(f"{widget_key}_drawn", {"count": 0, "open": open_label})
    if drawn["open"] != open_label:
        drawn.update(count=drawn["count"] + 1, open=open_label)
    key = f"{widget_key}_{drawn['count']}"

    def clicked() -> None:
        drawn["count"] += 1  # the next drawing is new tabs, whatever tab the click opened
        on_change(st.session_state[key], *args)

    tabs = st.tabs(labels, key=key, default=open_label, on_change=clicked)
    if not next(tab.open for tab, label in zip(tabs, labels) if label == open_label):
        clicked()
        widgets.rerun_once_more()  # and if not (a bound reached), this run draws the clicked tab, open here
    return tabs


def lazy_tabs(keys: tuple[str, ...], state_key: str, widget_key: str, lang: str) -> dict:
    """Tabs of which only the open one runs (lazy tabs: a hidden view costs nothing, and a layer or head change
    redraws one view instead of all of them). -> tab key -> tab; check tab.open before drawing into it."""
    open_key = st.session_state.setdefault(state_key, keys[0])
    labels = [t(k, lang) for k in keys]
    open_label = t(open_key if open_key in keys else keys[0], lang)
    tabs = tabs_opening(labels, open_label, widget_key, remember_tab, (keys, state_key))
    return dict(zip(keys, tabs))


def open_group(label: str, lang_keys: tuple[str, ...]) -> None:
    """A click on a group tab opens the view last open in that group (its first, the first time)."""
    by_label = {t(key, lang): key for key in lang_keys for lang in LANGUAGES}
    group = by_label.get(label, lang_keys[0])
    st.session_state.tab = st.session_state.get("last_view", {}).get(group, view_groups()[group][0])


def explorer_tabs(ctx: Context) -> None:
    """The group tabs, then the open group's view tabs; only the open view runs. st.session_state.tab (the view's
    key) decides both, so view= links, "open this head" buttons and a language switch land on the same view."""
    lang, groups, views = ctx.lang, view_groups(), registry.views()
    view = st.session_state.setdefault("tab", next(iter(views)))
    st.session_state.group = views[view].group
    labels = [t(g, lang) for g in groups]
    tabs = tabs_opening(labels, t(st.session_state.group, lang), "group_tab", open_group, (tuple(groups),))
    for group, tab in zip(groups, tabs):
        if not tab.open:
            continue
        with tab:
            st.session_state.setdefault("last_view", {})[group] = view
            for key, view_tab in lazy_tabs(groups[group], "tab", f"view_tab_{group}", lang).items():
                if view_tab.open:
                    with view_tab:
                        views[key].draw(ctx)


def lesson_tabs(ctx: Context) -> None:
    """The lessons, one tab each; only the open one runs."""
    lessons = registry.lessons()
    for key, tab in lazy_tabs(tuple(lessons), "lesson", "lesson_tab", ctx.lang).items():
        if tab.open:
            with tab:
                show_lesson(lessons[key], ctx)
