"""The reference previews in a real browser (Debian's Chromium, driven by Playwright).

* **Loaded on first use, from the same site, only where there are references**: the
  script is on exactly the pages whose build wrote previews; the page's previews are
  fetched at the first hover, not before, and nothing comes from another host.
* **Mouse, keyboard and touch, as the glossary's tooltips**: hover shows the preview of a
  figure (its image, loaded, and its numbered caption); keyboard focus shows a
  reference's preview and ties it to the link (aria-describedby), Escape closes it; on a
  phone (390 x 844, touch) the first tap shows the preview and the second follows the link.
* **In view and readable**: the preview stays inside the viewport at both widths, in the
  theme's colours in light and dark mode, with no axe-core violation while one is open.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from sitecheck import AXE_JS, COVERAGE, SCHEMES, SCREENS, axe_in_page, browser_api, soup_of

pytestmark = pytest.mark.build
browser_api()  # skips this module where Chromium or Playwright is missing

FIGURE_PAGE = "key-value-memory"
FIGURE_LINK = 'article a.reference.internal[href="#fig-kv-accuracy"]'
CITATION_LINK = 'article a.reference.internal[href^="bibliography.html#"]'
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}


def open_page(browser, name: str, viewport: dict, scheme: str = "light", touch: bool = False):
    context = browser.new_context(viewport=viewport, color_scheme=scheme, has_touch=touch, is_mobile=touch)
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(page_url(name))
    page.wait_for_load_state("load")
    return context, page


def page_url(name: str) -> str:
    return open_page.server + name + ".html"


@pytest.fixture(autouse=True)
def _server(server):
    open_page.server = server


def preview_box(page) -> dict:
    """The visible preview's box and colours (None if none is shown)."""
    return page.evaluate("""() => {
        const tip = document.getElementById('ffn-preview');
        if (!tip || tip.hidden) return null;
        const r = tip.getBoundingClientRect(), s = getComputedStyle(tip);
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                width: document.documentElement.clientWidth, height: window.innerHeight,
                background: s.backgroundColor, color: s.color, text: tip.innerText};
    }""")


def luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_script_is_only_on_pages_whose_previews_were_written(site):
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts and "_previews" not in p.parts]
    with_script = 0
    for html in pages:
        name = html.relative_to(site).with_suffix("").as_posix()
        soup = soup_of(site, name)
        loads = any(s.get("src", "").split("?")[0].endswith("previews.js") for s in soup.select("script[src]"))
        written = (site / "_previews" / f"{name}.json").is_file()
        assert loads == written == bool(soup.select('meta[name="ffnbook:previews"]')), name
        with_script += loads
    assert 0 < with_script < len(pages)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_hover_shows_the_figure_fetched_on_first_use(browser, scheme):
    context, page = open_page(browser, FIGURE_PAGE, DESKTOP, scheme)
    try:
        previews = [u for u in page.requests if "/_previews/" in u]
        assert previews == [], "the previews were fetched before any reference was used"
        link = page.locator(FIGURE_LINK).first
        link.scroll_into_view_if_needed()
        link.hover()
        page.wait_for_selector("#ffn-preview:not([hidden]) figure img")
        assert [u for u in page.requests if "/_previews/" in u] == [
            page_url("_previews/" + FIGURE_PAGE).replace(".html", ".json")
        ]
        page.wait_for_function("document.querySelector('#ffn-preview img').naturalWidth > 0")
        box = preview_box(page)
        assert box["text"].startswith("Fig.") or "Fig." in box["text"]
        assert 0 <= box["left"] and box["right"] <= box["width"] and 0 <= box["top"] and box["bottom"] <= box["height"]
        dark = luminance(box["background"]) < 0.5
        assert dark == (scheme == "dark") and (luminance(box["color"]) > 0.5) == dark, box
        assert link.get_attribute("aria-describedby") == "ffn-preview"
        page.screenshot(path=f"/tmp/previews-desktop-{scheme}.png")
        page.mouse.move(5, 5)
        page.wait_for_selector("#ffn-preview", state="hidden")
        assert not [u for u in page.requests if urlparse(u).hostname not in ("127.0.0.1", None)]
        assert not page.errors, page.errors
    finally:
        context.close()


def test_keyboard_focus_shows_the_preview_and_escape_closes_it(browser):
    context, page = open_page(browser, FIGURE_PAGE, DESKTOP)
    try:
        page.keyboard.press("Tab")  # the reader is on the keyboard
        link = page.locator(CITATION_LINK).first
        link.focus()
        page.wait_for_selector("#ffn-preview:not([hidden])")
        assert link.get_attribute("aria-describedby") == "ffn-preview"
        assert page.locator("#ffn-preview").get_attribute("role") == "tooltip"
        page.keyboard.press("Escape")
        page.wait_for_selector("#ffn-preview", state="hidden")
        assert link.get_attribute("aria-describedby") is None
        assert not page.errors, page.errors
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_phone_the_first_tap_shows_and_the_second_follows(browser, scheme):
    context, page = open_page(browser, FIGURE_PAGE, PHONE, scheme, touch=True)
    try:
        link = page.locator(CITATION_LINK).first
        link.scroll_into_view_if_needed()
        start = page.url
        link.tap()
        page.wait_for_selector("#ffn-preview:not([hidden])")
        assert page.url == start
        box = preview_box(page)
        assert 0 <= box["left"] and box["right"] <= box["width"], box
        page.screenshot(path=f"/tmp/previews-phone-{scheme}.png")
        figure = page.locator(FIGURE_LINK).first
        figure.scroll_into_view_if_needed()
        figure.tap()  # another reference: its preview replaces the first
        page.wait_for_selector("#ffn-preview:not([hidden]) figure img")
        box = preview_box(page)
        assert 0 <= box["left"] and box["right"] <= box["width"], box
        page.screenshot(path=f"/tmp/previews-phone-figure-{scheme}.png")
        link.scroll_into_view_if_needed()
        link.tap()
        page.wait_for_selector("#ffn-preview:not([hidden])")
        with page.expect_navigation():
            link.tap()
        assert "bibliography.html#" in page.url
        assert not page.errors, page.errors
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_with_a_preview_open(browser, scheme):
    if not AXE_JS.exists():
        pytest.skip("axe-core is not installed (make test installs tests/node)")
    context, page = open_page(browser, FIGURE_PAGE, DESKTOP, scheme)
    try:
        link = page.locator(FIGURE_LINK).first
        link.scroll_into_view_if_needed()
        link.hover()
        page.wait_for_selector("#ffn-preview:not([hidden]) figure img")
        # The pointer moves onto the preview (which keeps it open): the theme's hover colour of
        # the link is not the preview's to answer for.
        page.hover("#ffn-preview figcaption")
        assert page.locator("#ffn-preview").is_visible()
        # The preview only: the page around it is tests/test_site_quality.py's (and make audit's).
        violations = axe_in_page(page, "#ffn-preview")
        assert violations == [], "\n".join(violations)
    finally:
        context.close()


def put_at(page, link, y: float) -> None:
    """Scroll the page so that ``link``'s top is ``y`` px below the viewport's top."""
    page.evaluate("([l, y]) => window.scrollBy(0, l.getBoundingClientRect().top - y)", [link.element_handle(), y])


@pytest.mark.parametrize("places", COVERAGE)
@pytest.mark.parametrize("device", SCREENS)
def test_a_figure_preview_stays_inside_the_viewport_wherever_its_link_is(browser, device, places):
    """The link at the viewport's top, middle and bottom (`make test`); two links every 100 px
    down the viewport (`make test-full`)."""
    viewport, touch = (DESKTOP, False) if device == "desktop" else (PHONE, True)
    context, page = open_page(browser, FIGURE_PAGE, viewport, touch=touch)
    height = viewport["height"]
    try:
        links = page.locator('article a.reference.internal[href^="#fig-"]')
        assert links.count() >= 2
        if places == "sample":
            placed = [(links.nth(0), y) for y in (20, height // 2, height - 60)]
        else:
            placed = [(links.nth(i), y) for i in range(2) for y in range(20, height - 20, 100)]
        for link, y in placed:
            put_at(page, link, y)
            page.mouse.move(0, 0)
            if touch:
                link.tap()
            else:
                link.hover()
            page.wait_for_selector("#ffn-preview:not([hidden]) figure img")
            page.wait_for_function("document.querySelector('#ffn-preview img').naturalWidth > 0")
            page.wait_for_timeout(50)  # placed again once the image has loaded
            box = preview_box(page)
            assert box["top"] >= 0 and box["bottom"] <= box["height"], (y, box)
            assert box["left"] >= 0 and box["right"] <= box["width"], (y, box)
            if touch:  # most of a phone's screen stays on the text
                assert box["bottom"] - box["top"] <= 0.5 * box["height"], (y, box)
                page.locator("article h1").first.tap()
                page.wait_for_selector("#ffn-preview", state="hidden")
            # The figure and its caption are seen whole: the image shrinks, nothing scrolls.
            heights = page.evaluate("(t => [t.scrollHeight, t.clientHeight])(document.getElementById('ffn-preview'))")
            assert heights[0] <= heights[1] + 1, (y, heights)
    finally:
        context.close()


def test_a_preview_opens_only_once_the_pointer_rests_on_the_link(browser):
    context, page = open_page(browser, FIGURE_PAGE, DESKTOP)
    try:
        link = page.locator(CITATION_LINK).first
        link.scroll_into_view_if_needed()
        link.hover()
        # Passing over: nothing yet, though the previews are being fetched.
        assert page.evaluate("() => { const t = document.getElementById('ffn-preview'); return !t || t.hidden; }")
        page.wait_for_selector("#ffn-preview:not([hidden])")
        page.mouse.move(1, 1)
        page.wait_for_selector("#ffn-preview", state="hidden")
        # Crossing the link on the way elsewhere opens nothing.
        box = link.bounding_box()
        page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)
        page.mouse.move(1, 1)
        page.wait_for_timeout(600)
        assert page.locator("#ffn-preview").is_hidden()
    finally:
        context.close()


def test_a_section_preview_is_the_sections_text_with_formulas_and_no_tooltips(browser, site):
    import json

    found = json.loads((site / "_previews" / "mixture-of-experts.json").read_text(encoding="utf-8"))
    sections = [href for href, entry in found.items() if entry["kind"] == "section"]
    assert sections
    context, page = open_page(browser, "mixture-of-experts", DESKTOP)
    try:
        page.keyboard.press("Tab")
        for href in sections:
            link = page.locator(f'article a.reference.internal[href="{href}"]').first
            link.focus()
            page.wait_for_selector("#ffn-preview:not([hidden])")
            inside = page.evaluate("""() => { const t = document.getElementById('ffn-preview');
                return [t.querySelectorAll('.ffn-tip, .ffn-term, [role=tooltip], button, input, a').length,
                        t.querySelectorAll('math').length, t.innerText]; }""")
            assert inside[0] == 0, (href, inside[2])
            # Formulas are drawn as formulas, not flattened to their characters.
            assert inside[1] == found[href]["html"].count("<math"), href
            assert "feed-forward network :" not in inside[2], href  # no definition spliced in
        assert any("<math" in found[href]["html"] for href in sections)
    finally:
        context.close()


@pytest.mark.parametrize("device", SCREENS)
def test_a_glossary_definition_near_the_bottom_opens_above_its_term(browser, device):
    viewport, touch = (DESKTOP, False) if device == "desktop" else (PHONE, True)
    context, page = open_page(browser, "position-independence", viewport, touch=touch)
    try:
        term = page.locator(".ffn-term.ffn-explained > a").nth(2)
        put_at(page, term, viewport["height"] - 30)
        if touch:
            term.tap()
        else:
            term.hover()
        tip = page.locator(".ffn-tip:visible").first
        tip.wait_for()
        box = tip.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    finally:
        context.close()
