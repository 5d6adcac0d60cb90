"""The page's link is one LinkState: what a page shows, written to query parameters, reads back as the same
state — for every view and lesson of the registry, and for links written by older versions of the app."""

from __future__ import annotations

import subprocess
import sys

import pytest

from model import attribute
from ui import links
from ui.views import lessons, linkable, view_groups, views

from ..conftest import ROOT

CHECKPOINTS = ["en-zh", "en-de"]
LANGUAGES = ["en", "zh"]


def parse(params: dict[str, str]) -> links.LinkState:
    return links.parse_link(params, CHECKPOINTS, LANGUAGES, 8, linkable(), attribute.METHODS)


def session_showing(view: str) -> dict:
    """A session as the app holds it, with every optional choice made, open on this view or lesson."""
    on_lesson = view in lessons()
    return dict(
        sentence="Tom chases Jerry.",
        second_sentence="Jerry chases Tom.",
        checkpoint="en-de",
        lang="zh",
        layer=3,
        head="mean",
        beam=4,
        present=True,
        word_level=True,
        page="lessons" if on_lesson else "explore",
        **({"lesson": view} if on_lesson else {"tab": view}),
        search_kind="cross",
        search_query=2,
        search_key=1,
        compare_query=1,
        compare_x=0,
        compare_y=2,
        qk_kind="decoder_self",
        qk_query=3,
        attribution="value-zeroing",
        trail=[[2, 1234], [5, 88]],
    )


@pytest.mark.parametrize("view", linkable())
def test_every_view_and_lesson_round_trips_through_its_link(view):
    first_view, first_lesson = next(iter(views())), next(iter(lessons()))
    state = links.link_from_session(session_showing(view), first_view, first_lesson)
    params = state.to_params()
    again = parse(params)
    assert again == state and not again.notices
    assert again.to_params() == params
    # the explorer's first view is the default: its link says nothing, and opens it all the same
    assert ("view" in params) == (view != first_view)


def test_a_fresh_session_writes_the_defaults_only():
    session = dict(sentence="I like tea.", second_sentence="", checkpoint="en-zh", lang="en", layer=1, head="1")
    session.update(beam=1, present=False, word_level=False, page="explore", tab=next(iter(views())))
    params = links.link_from_session(session, next(iter(views())), next(iter(lessons()))).to_params()
    assert params == dict(
        s="I like tea.", s2="", ckpt="en-zh", layer="1", head="1", lang="en", beam="1", present="0", words="0"
    )


@pytest.mark.parametrize(
    "old, expected",
    [
        # an older two-sentence link gave the first sentence's key twice: query.key.query.key
        ({"cmp": "2.1.2.0"}, dict(view_values={"cmp": (2, 1, 0)})),
        ({"view": "tab_cross", "flow": "attention"}, dict(view="tab_cross", attribution="attention")),
        ({"flow": "norm"}, dict(attribution="norm")),
        ({"force": "5:88,2:1234"}, dict(view_values={"force": ((2, 1234), (5, 88))})),
        ({"head": "03"}, dict(head="3")),
    ],
)
def test_older_links_still_open(old, expected):
    state = parse(old)
    assert not state.notices
    for name, value in expected.items():
        assert getattr(state, name) == value


def test_every_group_holds_what_fits_one_row_at_1024():
    groups = view_groups()
    assert sorted(v for keys in groups.values() for v in keys) == sorted(views())
    assert all(1 <= len(keys) <= 4 for keys in groups.values())


def test_a_lesson_opens_views_that_exist():
    assert all(lesson.explorer_view in views() for lesson in lessons().values() if lesson.explorer_view)


@pytest.mark.parametrize("first", ["ui.attention", "ui.lessons", "ui.lessons.masks", "ui.navigation"])
def test_the_registry_is_complete_whichever_module_is_imported_first(first):
    """A server imports app.py's modules in its own order; the registry must hold every view all the same."""
    code = (
        f"import {first}; from ui.views import view_groups, lessons; "
        "print(sum(map(len, view_groups().values())), len(lessons()))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(len(views())), str(len(lessons()))]


def test_an_older_names_bad_value_is_named_as_the_link_wrote_it():
    """Issue 59: flow=bogus was reported as "method"; issue 60: the link's name is attribution=."""
    state = parse({"flow": "bogus"})
    assert [(n.parameter, n.value) for n in state.notices] == [("flow", "bogus")]
    assert [(n.parameter, n.value) for n in parse({"method": "bogus"}).notices] == [("method", "bogus")]


def test_a_lesson_is_one_name_for_its_key_its_module_and_its_prose():
    """Issue 60: lesson_masks lived in padding.py with padding.en.md; a lesson now registers where it is drawn,
    and its key, module and prose files share one name."""
    from ui.views import LESSONS
    from words import WRITTEN_IN

    assert list(lessons()) == [f"lesson_{name}" for name in LESSONS]
    for name in LESSONS:
        assert (ROOT / "ui" / "lessons" / f"{name}.py").exists(), name
        assert WRITTEN_IN[f"lesson_{name}_intro"] == f"lessons/{name}", name
        assert lessons()[f"lesson_{name}"].own_view is None or lessons()[f"lesson_{name}"].own_view.__module__ == (
            f"ui.lessons.{name}"
        )
    prose = {path.name.split(".")[0] for path in (ROOT / "ui" / "lessons").glob("*.md")}
    assert prose == set(LESSONS)


def test_the_registry_imports_neither_the_model_nor_streamlit():
    """Issue 60: importing ui.views imported the model layer (through Context); its entries import what they
    draw with, the registry itself nothing."""
    code = (
        "import sys, ui.views; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'streamlit', 'model')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_kind_opens_its_own_map_view_and_a_minimal_pair_the_view_that_reads_the_second_sentence():
    """Issue 60: view keys were written outside their modules (KIND_TAB, MAP_TABS, "tab_compare", "tab_cross");
    the registry says which view draws each kind's map and which reads the second sentence."""
    from model.transformer import ATTENTION_KINDS
    from ui.views import map_view, map_views, view_reading

    assert [views()[map_view(kind)].kind for kind in ATTENTION_KINDS] == list(ATTENTION_KINDS)
    assert set(map_views()) == {map_view(kind) for kind in ATTENTION_KINDS}
    assert "second_sentence" in views()[view_reading("second_sentence")].reads


def test_a_new_views_link_parameter_is_one_declaration_in_its_own_module():
    """Issue 60: adding a view that keeps a choice in the link is its module alone. A throwaway view declares a
    parameter; the session's choice reaches the link, a link's value comes back to the same choice, a bad value is
    ignored with a notice, and neither ui.links nor ui.session knows its name."""
    from ui.views import LinkParam, View, link_params, register, unregister

    colour = LinkParam(
        "colour",
        read=lambda session: session.get("throwaway_colour"),
        write=str,
        parse=lambda text: (text if text in ("red", "blue") else None, []),
        restore=lambda value: {"throwaway_colour": value},
    )
    register(View("tab_throwaway", "group_heads", lambda ctx: None, ("throwaway_colour",), link=(colour,)))
    try:
        assert colour in link_params()
        first_view, first_lesson = next(iter(views())), next(iter(lessons()))
        session = session_showing("tab_throwaway") | {"throwaway_colour": "blue"}
        params = links.link_from_session(session, first_view, first_lesson).to_params()
        assert params["colour"] == "blue" and params["view"] == "tab_throwaway"
        again = links.parse_link(params, CHECKPOINTS, LANGUAGES, 8, linkable(), attribute.METHODS)
        assert again.view_values["colour"] == "blue" and colour.restore(again.view_values["colour"]) == {
            "throwaway_colour": "blue"
        }
        bad = parse({"colour": "green"})
        assert "colour" not in bad.view_values and [(n.parameter, n.action) for n in bad.notices] == [
            ("colour", "ignored")
        ]
        with pytest.raises(ValueError, match="taken"):  # a parameter name is one view's
            register(View("tab_throwaway2", "group_maps", lambda ctx: None, link=(colour,)))
    finally:
        unregister("tab_throwaway")
    for module in ("links.py", "session.py"):
        assert "colour" not in (ROOT / "ui" / module).read_text()


def test_the_page_wide_parameters_the_registry_reserves_are_those_a_link_writes():
    """ui.views.PAGE_PARAMETERS (the names a view's own parameter may not take) and LinkState.to_params spell the
    page-wide parameters in two places: a session with every choice made, on a view that is not the first and with
    no view parameter of its own, writes exactly those names."""
    from ui.views import PAGE_PARAMETERS

    first_view, first_lesson = next(iter(views())), next(iter(lessons()))
    state = links.link_from_session(session_showing("tab_cross"), first_view, first_lesson)
    own = {param.name for param in links.link_params()}
    assert set(state.to_params()) - own == set(PAGE_PARAMETERS)
