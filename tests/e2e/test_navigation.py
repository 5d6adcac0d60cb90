"""Issue 34: Streamlit's own navigation (st.navigation / st.Page) against the app's two rows of tabs, measured at
1024×768 with the sidebar open, in both languages, with the app's own .streamlit/config.toml. The app keeps its
tabs (ui.navigation) because each place Streamlit 1.67 offers for its navigation falls short of what they give a
teacher at a projector: the groups and every view of the open group visible and one click away
(test_projector.test_every_view_is_one_visible_click_away_at_1024), with the sentence box on the first screen.
At the top, the five sections fit but no view shows until a section's menu is opened; in the sidebar, the
expanded list pushes the sentence box below the first screen and the collapsed one hides views.

The pages here are the app's own registry (ui.views) in st.navigation's sections (navigation_probe.py). If a later
Streamlit shows them one click away, these tests fail: then adopt st.navigation instead of the tabs."""

from __future__ import annotations

import pytest

from ui import views as registry
from words import LANGUAGES, t

from .conftest import run_streamlit, wait_until_idle

PROBE = "tests/e2e/navigation_probe.py"
SCREEN = {"width": 1024, "height": 768}


@pytest.fixture(scope="module")
def probe_server():
    with run_streamlit(script=PROBE) as (url, _):
        yield url


def open_probe(browser, url: str, query: str):
    page = browser.new_page(viewport=SCREEN)
    page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
    page.locator("[data-testid='stSidebar'] [data-testid='stTextInputField']").wait_for(timeout=60_000)
    wait_until_idle(page)
    return page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_top_navigation_shows_no_view_until_a_section_menu_is_opened(probe_server, browser, lang):
    """position="top": the header holds the five sections (four groups and the lessons) but no view: every view
    is two clicks away (open the section's menu, pick the view), where the tabs show the open group's views and
    open each with one click. A teacher switching between the encoder, decoder and cross-attention maps would
    click twice each time, and nothing on the page says which views a section holds until it is opened."""
    page = open_probe(browser, probe_server, f"position=top&lang={lang}")
    section = page.locator("[data-testid='stTopNavSection']", has_text=t(registry.GROUPS[0], lang))
    section.wait_for(timeout=10_000)
    view_titles = [t(k, lang) for k in registry.views()]

    def reachable_views() -> list[str]:
        """The views whose title shows as something to click (not the open page's own heading)."""
        return [
            title
            for title in view_titles
            if any(
                item.is_visible() and item.evaluate("e => !e.closest('h4')")
                for item in page.get_by_text(title, exact=True).all()
            )
        ]

    assert reachable_views() == [], "views one click away in the header"
    section.click()
    page.wait_for_timeout(500)
    first_group = [t(k, lang) for k in registry.view_groups()[registry.GROUPS[0]]]
    assert set(first_group) <= set(reachable_views()), "the section's menu lists its views"
    page.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_sidebar_navigation_pushes_the_sentence_box_off_the_first_screen_or_hides_views(probe_server, browser, lang):
    """position="sidebar": expanded, the list of 11 views and 10 lessons fills the first screen and the sentence
    box starts below it; collapsed (Streamlit's default), views hide behind "View more"."""
    page = open_probe(browser, probe_server, f"position=sidebar&expanded=1&lang={lang}")
    box = page.locator("[data-testid='stSidebar'] [data-testid='stTextInputField']").bounding_box()
    assert box["y"] > SCREEN["height"], f"the sentence box is on the first screen at {box['y']:.0f} px"
    page.close()

    page = open_probe(browser, probe_server, f"position=sidebar&expanded=0&lang={lang}")
    links = page.locator("[data-testid='stSidebarNavLink']")
    titles = [t(k, lang) for k in registry.linkable()]
    listed = [
        title
        for title in titles
        if links.filter(has_text=title).count() and links.filter(has_text=title).first.is_visible()
    ]
    assert len(listed) < len(titles), "every view and lesson is listed: adopt st.navigation"
    page.close()
