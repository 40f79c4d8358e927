"""Getting around the book in a real browser: the sidebar toggles in the article header.

On a phone (under the theme's 992 px breakpoint) the primary toggle opens the chapter
list and the secondary toggle the page's contents, each as a drawer (a modal
``<dialog>`` of pydata-sphinx-theme) that its close button, a tap on the dimmed page or
Escape closes; a link in either drawer takes the reader there. On a desktop the primary
toggle hides and shows the sidebar (sphinx-book-theme). Checked with touch and with the
keyboard alone, in the light and the dark theme, in Debian's Chromium driven by
Playwright.

Skipped, with the reason printed, where Chromium or Playwright is missing;
.ci/run installs Chromium so CI runs these.
"""

from __future__ import annotations

import pytest
from sitecheck import SCHEMES, browser_api

PAGE = "position-independence.html"  # a chapter page: sections, and pages before and after it
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}

pytestmark = pytest.mark.build

playwright_api = browser_api()

PRIMARY = {
    "toggle": ".bd-header-article .primary-toggle",
    "drawer": "#pst-primary-sidebar-modal",
    "link": "nav.bd-links a.reference",
}
SECONDARY = {
    "toggle": ".bd-header-article .secondary-toggle",
    "drawer": "#pst-secondary-sidebar-modal",
    "link": "nav.page-toc a.nav-link",
}


def open_page(browser, server, device: dict, scheme: str, name: str = PAGE):
    """A new tab on ``name`` as the reader's device and colour preference show it."""
    context = browser.new_context(**device, color_scheme=scheme, reduced_motion="reduce")
    context.set_default_timeout(10_000)  # a drawer opens at once, or not at all
    context.set_default_navigation_timeout(60_000)  # a busy machine loads pages slowly
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server + name)
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    return page


def only_visible(page, selector: str):
    """The one element ``selector`` names, which must be visible."""
    found = page.locator(selector)
    assert found.count() == 1, f"{found.count()} elements match {selector}"
    assert found.is_visible(), f"{selector} is not visible"
    return found


def drawer_is_open(page, drawer: str) -> bool:
    return page.evaluate("d => document.querySelector(d).open", drawer)


def wait_until(page, condition: str, arg, failure: str) -> None:
    """Wait for the JavaScript ``condition(arg)``; fail with ``failure`` if it never holds."""
    try:
        page.wait_for_function(condition, arg=arg)
    except playwright_api.TimeoutError:
        pytest.fail(failure)


def assert_drawer_shows_links(page, side: dict) -> None:
    """The drawer is open, in view, opaque, and its links can be tapped."""
    drawer = page.locator(side["drawer"])
    wait_until(
        page,
        "d => document.querySelector(d).open",
        side["drawer"],
        f"{side['drawer']} did not open: its toggle {side['toggle']} did nothing",
    )
    assert drawer.is_visible()
    box = drawer.bounding_box()
    right = box["x"] + box["width"]
    assert box["width"] >= 200 and box["x"] >= 0 and right <= PHONE["viewport"]["width"] + 1, box
    background = drawer.evaluate("d => getComputedStyle(d).backgroundColor")
    assert background not in ("transparent", "rgba(0, 0, 0, 0)"), background
    link = drawer.locator(side["link"]).first
    assert link.is_visible()


def tap_open_close_and_open(page, side: dict) -> None:
    """Open the drawer with a tap on its toggle; it closes by Escape and by a tap on the
    dimmed page beside it; open it again."""
    only_visible(page, side["toggle"]).tap()
    assert_drawer_shows_links(page, side)
    page.keyboard.press("Escape")
    assert not drawer_is_open(page, side["drawer"]), "Escape did not close the drawer"
    page.locator(side["toggle"]).tap()
    assert_drawer_shows_links(page, side)
    box = page.locator(side["drawer"]).bounding_box()
    beside = box["x"] - 20 if box["x"] > 40 else box["x"] + box["width"] + 20
    page.touchscreen.tap(beside, PHONE["viewport"]["height"] / 2)
    assert not drawer_is_open(page, side["drawer"]), "a tap beside the drawer did not close it"
    page.locator(side["toggle"]).tap()
    assert_drawer_shows_links(page, side)
    tap_the_close_button(page, side)
    page.locator(side["toggle"]).tap()
    assert_drawer_shows_links(page, side)


def tap_the_close_button(page, side: dict) -> None:
    """The open drawer shows a labelled close button at its top, inside the screen and
    clear of the drawer's links; a tap on it closes the drawer."""
    close = page.locator(f"{side['drawer']} > button.ffn-drawer-close")
    assert close.count() == 1, "the drawer has no close button"
    assert close.get_attribute("aria-label").startswith("Close")
    drawer, box = page.locator(side["drawer"]).bounding_box(), close.bounding_box()
    assert close.is_visible() and box["width"] >= 44 and box["height"] >= 44, box
    assert drawer["y"] - 1 <= box["y"] and box["y"] + box["height"] <= PHONE["viewport"]["height"] / 4, (box, drawer)
    assert box["x"] + box["width"] <= drawer["x"] + drawer["width"] + 1, (box, drawer)
    first_link = page.locator(f"{side['drawer']} {side['link']}").first.bounding_box()
    assert first_link["y"] >= box["y"] + box["height"], ("the close button covers a link", box, first_link)
    close.tap()
    assert not drawer_is_open(page, side["drawer"]), "the close button did not close the drawer"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_phone_the_chapter_list_opens_and_its_link_goes_to_the_page(server, browser, scheme):
    page = open_page(browser, server, PHONE, scheme)
    assert page.locator("#pst-primary-sidebar").is_hidden()
    tap_open_close_and_open(page, PRIMARY)
    link = page.locator(f"{PRIMARY['drawer']} {PRIMARY['link']}:not([href^='#']):not([href='{PAGE}'])").first
    href = link.get_attribute("href")
    with page.expect_navigation():
        link.tap()
    assert page.url == server + href
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_phone_the_page_contents_open_and_a_link_goes_to_its_section(server, browser, scheme):
    page = open_page(browser, server, PHONE, scheme)
    assert page.locator("#pst-secondary-sidebar").is_hidden()
    tap_open_close_and_open(page, SECONDARY)
    # A section link in the drawer goes to its section, and the drawer gets out of the way.
    link = page.locator(f"{SECONDARY['drawer']} {SECONDARY['link']}").nth(1)
    target = link.get_attribute("href")
    assert target.startswith("#")
    link.tap()
    wait_until(page, "h => location.hash === h", target, f"the link to {target} did not go there")
    wait_until(
        page,
        "d => !document.querySelector(d).open",
        SECONDARY["drawer"],
        f"the drawer stayed open over section {target}",
    )
    top = page.locator(f"[id={target[1:]!r}]").evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < PHONE["viewport"]["height"] / 2, top
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_desktop_the_toggle_hides_and_shows_the_sidebar(server, browser, scheme):
    page = open_page(browser, server, DESKTOP, scheme)
    sidebar = page.locator("#pst-primary-sidebar")
    links = sidebar.locator(PRIMARY["link"]).first
    assert links.is_visible()
    toggle = only_visible(page, PRIMARY["toggle"])
    toggle.click()
    sidebar_becomes(links, "hidden", "a click on the primary toggle did not hide the sidebar")
    assert not drawer_is_open(page, PRIMARY["drawer"])  # no drawer on a wide screen
    article = page.locator("article.bd-article").bounding_box()
    toggle.click()
    sidebar_becomes(links, "visible", "a second click on the primary toggle did not show it")
    assert page.locator("article.bd-article").bounding_box()["x"] > article["x"]  # room made
    assert page.locator(".ffn-drawer-close").evaluate_all("bs => bs.every(b => !b.checkVisibility())"), (
        "a drawer's close button shows on a wide screen, where there is no drawer"
    )
    assert page.errors == []
    page.context.close()


def sidebar_becomes(links, state: str, failure: str) -> None:
    """Wait until the sidebar's first link is ``state`` ("hidden"/"visible"), else fail."""
    try:
        links.wait_for(state=state)
    except playwright_api.TimeoutError:
        pytest.fail(failure)


def tab_to(page, selector: str, presses: int = 40) -> None:
    """Press Tab until ``selector`` has the keyboard focus, as a keyboard user reaches it."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return
    pytest.fail(f"{selector} is not reachable with Tab")


@pytest.mark.parametrize("side", (PRIMARY, SECONDARY), ids=("primary", "secondary"))
def test_on_a_phone_the_drawers_work_from_the_keyboard(server, browser, side):
    page = open_page(browser, server, PHONE, "light")
    tab_to(page, side["toggle"])
    page.keyboard.press("Enter")
    wait_until(
        page,
        "d => document.querySelector(d).open",
        side["drawer"],
        f"Enter on {side['toggle']} did not open {side['drawer']}",
    )
    # Focus moves into the drawer, and Tab reaches its links.
    assert page.evaluate(f"document.querySelector({side['drawer']!r}).contains(document.activeElement)")
    tab_to(page, f"{side['drawer']} {side['link']}")
    page.keyboard.press("Escape")
    assert not drawer_is_open(page, side["drawer"])
    # Focus is back on the toggle that opened the drawer (navigation.js returns it
    # in a task after the dialog's close event, so wait for it rather than sample).
    wait_until(
        page,
        "t => document.activeElement.matches(t)",
        side["toggle"],
        "closing the drawer did not give the focus back to its toggle",
    )
    # The close button works from the keyboard too, and gives the focus back as well.
    page.keyboard.press("Enter")
    wait_until(page, "d => document.querySelector(d).open", side["drawer"], "Enter did not open the drawer again")
    tab_to(page, f"{side['drawer']} > button.ffn-drawer-close")
    page.keyboard.press("Enter")
    assert not drawer_is_open(page, side["drawer"]), "Enter on the close button did not close the drawer"
    wait_until(
        page,
        "t => document.activeElement.matches(t)",
        side["toggle"],
        "the close button did not give the focus back to the drawer's toggle",
    )
    page.context.close()


def test_on_a_desktop_the_sidebar_toggle_works_from_the_keyboard(server, browser):
    page = open_page(browser, server, DESKTOP, "light")
    links = page.locator("#pst-primary-sidebar").locator(PRIMARY["link"]).first
    tab_to(page, PRIMARY["toggle"])
    page.keyboard.press("Enter")
    sidebar_becomes(links, "hidden", "Enter on the primary toggle did not hide the sidebar")
    wait_until(page, "t => document.activeElement.matches(t)", PRIMARY["toggle"], "the toggle lost the keyboard focus")
    page.keyboard.press("Enter")
    sidebar_becomes(links, "visible", "a second Enter on the primary toggle did not show it")
    page.context.close()
