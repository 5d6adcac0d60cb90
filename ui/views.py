"""The registry of the explorer's views and of the lessons: one place that says which exist, in which order,
under which group, which widgets each owns and how it is drawn.

Each view module registers its own views once, when it is imported (`register(View(...))` at its end); the
router in app.py, the links (which `view=` values exist), the lessons' "open in the explorer" buttons, the widgets
kept while a view is closed and the tests all read this registry. To add a view: write its module with a
`draw(ctx)` and a `register` call, add the module to VIEW_MODULES (its place there is its place in its group), and
put its title under its key in the words catalogue. A view that keeps a choice in the page's link declares it as a
`LinkParam` in its `link`: the links (ui.links) and the session (ui.session) loop over every view's parameters.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the registry itself imports no model code and no Streamlit: its entries do
    from ui.common import Context

# The explorer's views in four groups: one row of four group tabs, then one row of at most four view tabs, so
# every view is one visible click away on a 1024 px screen (eleven tabs in one row overflowed behind an arrow).
GROUPS = ("group_maps", "group_design", "group_heads", "group_generation")
MAX_VIEWS_PER_GROUP = 4
# The modules that register views, in the order their views are shown within a group.
VIEW_MODULES = (
    "ui.attention",  # encoder self-attention, masked decoder self-attention, cross-attention
    "ui.compare",
    "ui.positional",
    "ui.scaling",
    "ui.steps",
    "ui.head_stats",
    "ui.search",
    "ui.ablation",
    "ui.qk_space",
    "ui.decoding",
    "ui.lens",
)
# The lessons, in the order the seed articles argue. A lesson is one name: ui/lessons/<name>.py registers
# Lesson("lesson_<name>", ...) at its end, and its prose is ui/lessons/<name>.en.md and <name>.zh.md.
LESSONS = (
    "qkv",
    "scaling",
    "multihead",
    "masks",
    "positions",
    "residual",
    "ffn",
    "encoder_decoder",
    "output",
    "explanation",
    "learned",
    "decoder_only",
)
LESSON_MODULES = tuple(f"ui.lessons.{name}" for name in LESSONS)


# The link's page-wide parameters (ui.links); a view's own (LinkParam) take other names.
PAGE_PARAMETERS = ("s", "s2", "ckpt", "lang", "layer", "head", "beam", "present", "words", "view", "attribution")
# Older links' names for a page-wide parameter, still read.
OLDER_NAMES = ("method", "flow")

# The page-wide choices a view may read, drawn in the sidebar (or above the maps when presenting): the layer and
# head, the account the attention maps show (model.attribute), pieces or words.
SELECTORS = ("layer", "head", "attribution", "word_level")


@dataclass(frozen=True)
class LinkParam:
    """A choice one view keeps in the page's link, beside the page-wide ones (sentence, checkpoint, layer, head...).

    name: its query parameter ("qk=decoder_self.3"), the same in every version of the app;
    read: the session (a mapping) -> its value, or None when the page has none to keep (no parameter then);
    write: the value -> the parameter's text; parse reads that text back to an equal value;
    parse: a link's text -> (the value, or None where unusable: the parameter is ignored with a notice; and notices
           of its own as (shown value, action, value used) for what it used otherwise than given);
    restore: the value -> the session keys a page opened on the link starts with."""

    name: str
    read: Callable[[Mapping], object | None]
    write: Callable[[object], str]
    parse: Callable[[str], tuple[object | None, list[tuple[str, str, str]]]]
    restore: Callable[[object], dict]


@dataclass(frozen=True)
class View:
    """One view of the explorer."""

    key: str  # its name in links (view=tab_cross) and the catalogue key of its tab's title
    group: str  # one of GROUPS
    draw: Callable[[Context], None]
    widgets: tuple[str, ...] = ()  # session keys of the widgets it owns, kept while it is closed (widgets.keep)
    reads: tuple[str, ...] = ("layer", "head")  # which SELECTORS it reads: only those are offered while it is open
    # (and "second_sentence" where it shows the sidebar's second sentence: the minimal-pair menu opens it)
    kind: str | None = None  # the attention kind whose map it is (a head opened from elsewhere opens here)
    link: tuple[LinkParam, ...] = ()  # the choices it keeps in the page's link


@dataclass(frozen=True)
class Lesson:
    """One lesson (drawn by ui.lessons.show_lesson): its prose (catalogue key `{key}_intro`), then the proof on the
    current sentence: the explorer's view itself (shows_view), then the lesson's own view, then a button that opens
    the explorer view."""

    key: str  # its name in links (view=lesson_positions) and the catalogue key of its tab's title
    explorer_view: str | None  # the explorer view that shows the same thing in full (None: the lesson alone does)
    shows_view: bool = False  # draws that explorer view itself, on the same sentence, layer and head
    own_view: Callable[[Context], None] | None = None
    heading: str = ""  # catalogue key of a heading above its own view
    widgets: tuple[str, ...] = ()
    # the values its prose's placeholders name, from the current model (a number in the prose stays true when the
    # checkpoint changes); None: the prose has no placeholders
    intro_values: Callable[[Context], dict] | None = None
    reads: tuple[str, ...] = ()  # which SELECTORS its own view reads (the explorer view it shows reads its own)


_VIEWS: dict[str, View] = {}
_LESSONS: dict[str, Lesson] = {}


def register(entry: View | Lesson) -> None:
    """Called once per view or lesson by the module that draws it, when that module is imported."""
    table = _VIEWS if isinstance(entry, View) else _LESSONS
    if isinstance(entry, Lesson) and entry.key.removeprefix("lesson_") not in LESSONS:
        raise ValueError(f"{entry.key}: a lesson is named lesson_<name> after its module, one of LESSONS")
    if entry.key in _VIEWS or entry.key in _LESSONS:
        raise ValueError(f"{entry.key} is registered twice")
    if isinstance(entry, View) and entry.group not in GROUPS:
        raise ValueError(f"{entry.key}: unknown group {entry.group}")
    taken = {p.name for v in _VIEWS.values() for p in v.link} | set(PAGE_PARAMETERS) | set(OLDER_NAMES)
    for param in entry.link if isinstance(entry, View) else ():
        if param.name in taken:
            raise ValueError(f"{entry.key}: the link parameter {param.name}= is taken")
    table[entry.key] = entry


def unregister(key: str) -> None:
    """Take a view or lesson out again (a test's throwaway view)."""
    _VIEWS.pop(key, None)
    _LESSONS.pop(key, None)


def _load() -> None:
    """Import every module that registers (each registers once, when first imported; some may already be)."""
    for module in VIEW_MODULES + LESSON_MODULES:
        importlib.import_module(module)


def views() -> dict[str, View]:
    """View key -> view, in the order of VIEW_MODULES (and, within a module, of its register calls), whichever
    module happened to be imported first."""
    _load()

    def place(item: tuple[int, View]) -> tuple[int, int]:
        sequence, view = item
        module = view.draw.__module__
        return (VIEW_MODULES.index(module) if module in VIEW_MODULES else len(VIEW_MODULES), sequence)

    return {view.key: view for _, view in sorted(enumerate(_VIEWS.values()), key=place)}


def lessons() -> dict[str, Lesson]:
    """Lesson key -> lesson, in the order of LESSONS, whichever module happened to be imported first."""
    _load()
    return {key: _LESSONS[key] for key in sorted(_LESSONS, key=lambda k: LESSONS.index(k.removeprefix("lesson_")))}


def view_groups() -> dict[str, tuple[str, ...]]:
    """Group key -> the keys of its views, in order; every group has at least one view."""
    groups = {group: tuple(k for k, v in views().items() if v.group == group) for group in GROUPS}
    crowded = [g for g, keys in groups.items() if len(keys) > MAX_VIEWS_PER_GROUP or not keys]
    if crowded:
        raise ValueError(f"groups with no view or more than {MAX_VIEWS_PER_GROUP}: {crowded}")
    return groups


def map_view(kind: str) -> str:
    """The view that draws this attention kind's map."""
    return next(key for key, view in views().items() if view.kind == kind)


def map_views() -> tuple[str, ...]:
    """Every attention kind's map view."""
    return tuple(key for key, view in views().items() if view.kind)


def view_reading(name: str) -> str:
    """The first view that reads this page-wide input (e.g. "second_sentence")."""
    return next(key for key, view in views().items() if name in view.reads)


def group_of(view: str) -> str:
    return views()[view].group


def link_params() -> tuple[LinkParam, ...]:
    """Every view's link parameters, in the order of the views."""
    return tuple(param for view in views().values() for param in view.link)


def linkable() -> tuple[str, ...]:
    """Every key a link's view= may name: the explorer's views, then the lessons."""
    return tuple(views()) + tuple(lessons())


def selectors_for(page: str, view: str | None, lesson: str | None = None) -> tuple[str, ...]:
    """The SELECTORS to offer: those the open explorer view reads, or on the lessons page those the open lesson
    reads (its own view's and those of the explorer view it shows); every one where neither is known."""
    if page == "lessons":
        if lesson not in lessons():
            return SELECTORS
        entry = lessons()[lesson]
        shown = views()[entry.explorer_view].reads if entry.shows_view else ()
        return tuple(s for s in SELECTORS if s in entry.reads or s in shown)
    if view not in views():
        return SELECTORS
    return tuple(s for s in SELECTORS if s in views()[view].reads)


def kept_widgets() -> tuple[str, ...]:
    """The session keys of every view's and lesson's own widgets."""
    return tuple(w for entry in (*views().values(), *lessons().values()) for w in entry.widgets)
