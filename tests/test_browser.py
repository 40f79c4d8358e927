"""The reader tools in a real browser: Debian's Chromium driven by Playwright.

Skipped, with the reason printed, where Chromium or Playwright is missing;
.ci/run installs Chromium so CI runs these.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from sitecheck import COVERAGE, browser_api, covered

PAGE = "position-independence.html"

pytestmark = pytest.mark.build

playwright_api = browser_api()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    yield page
    context.close()


def explained(page) -> int:
    return page.locator(".ffn-term.ffn-explained").count()


def open_reading_tools(page) -> None:
    """Open the reading-tools panel in the article header, as a reader does: click its button."""
    page.click("details.ffn-tools > summary")


def test_hover_and_keyboard_focus_show_the_definition(server, page):
    page.goto(server + PAGE)
    term = page.locator(".ffn-term.ffn-explained").first
    link, tip = term.locator("a"), term.locator("[role=tooltip]")
    assert tip.is_hidden()
    link.hover()
    tip.wait_for(state="visible", timeout=3000)  # it opens after a short intent delay, not at once
    assert tip.is_visible()
    assert link.get_attribute("aria-describedby") == tip.get_attribute("id")
    page.keyboard.press("Escape")
    assert tip.is_hidden()

    page.mouse.move(0, 0)
    # Reach a term with the keyboard alone: Tab until a term link has focus.
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('.ffn-term') !== null"):
            break
    else:
        pytest.fail("no glossary term is reachable with Tab")
    focused_tip = page.evaluate(
        "document.getElementById(document.activeElement.getAttribute('aria-describedby')).hidden"
    )
    assert focused_tip is False
    page.keyboard.press("Escape")
    assert page.locator(".ffn-tip:not([hidden])").count() == 0


def test_reading_tools_panel_opens_and_closes_with_keyboard_and_mouse(server, page):
    page.goto(server + PAGE)
    select = page.locator("#ffn-expertise")
    assert select.is_hidden()
    page.focus("details.ffn-tools > summary")
    page.keyboard.press("Enter")
    assert select.is_visible()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "ffn-expertise"
    page.keyboard.press("Escape")  # closes the panel, focus back on its button
    assert select.is_hidden()
    assert page.evaluate("document.activeElement.matches('details.ffn-tools > summary')")
    open_reading_tools(page)
    page.mouse.click(600, 600)  # anywhere else on the page
    assert select.is_hidden()


def test_math_in_a_definition_renders(server, page):
    page.goto(server + PAGE)
    assert page.locator(".ffn-tip math").count() > 0


def test_advanced_level_explains_fewer_terms_and_persists(server, page):
    page.goto(server + PAGE)
    beginner = explained(page)
    open_reading_tools(page)
    page.select_option("#ffn-expertise", "advanced")
    advanced = explained(page)
    assert 0 < advanced < beginner
    # Exactly the advanced terms are explained: reader levels and term levels are one vocabulary.
    assert advanced == page.locator(".ffn-term[data-level=advanced]").count()
    plain = page.locator(".ffn-term.ffn-plain a").first
    assert plain.get_attribute("aria-describedby") is None

    page.reload()
    assert page.input_value("#ffn-expertise") == "advanced"
    assert explained(page) == advanced

    page.goto(server + "parameter-count.html")
    assert page.input_value("#ffn-expertise") == "advanced"
    open_reading_tools(page)
    page.select_option("#ffn-expertise", "intermediate")
    page.goto(server + PAGE)
    assert advanced <= explained(page) <= beginner


def test_the_level_offered_matches_the_glossary_levels(server, page):
    from bookext.content.glossary_data import LEVELS

    page.goto(server + PAGE)
    options = page.eval_on_selector_all("#ffn-expertise option", "os => os.map(o => o.value)")
    assert tuple(options) == LEVELS
    term_levels = set(page.eval_on_selector_all(".ffn-term", "ts => ts.map(t => t.dataset.level)"))
    assert term_levels <= set(LEVELS)


def test_a_preference_saved_as_expert_still_works(server, page):
    page.goto(server + PAGE)
    page.evaluate("localStorage.setItem('ffnbook.expertise', 'expert')")  # the earlier name
    page.reload()
    assert page.input_value("#ffn-expertise") == "advanced"
    assert explained(page) == page.locator(".ffn-term[data-level=advanced]").count()
    assert page.evaluate("localStorage.getItem('ffnbook.expertise')") == "advanced"
    assert page.console_errors == []


def test_self_check_shows_why_after_answering(server, page):
    page.goto(server + PAGE)
    quiz = page.locator("form.ffn-quiz").first
    assert quiz.locator(".ffn-why").first.is_hidden()
    wrong = quiz.locator(".ffn-option:has(input[data-correct=false])").first
    wrong.locator("label").click()  # the option's words select it, not only the radio
    assert wrong.locator("input").is_checked()
    quiz.locator("button").click()
    assert wrong.locator(".ffn-why").is_visible()
    right = quiz.locator(".ffn-option:has(input[data-correct=true]) .ffn-why")
    assert right.is_visible()  # the right answer's reason too
    assert "Not quite" in quiz.locator(".ffn-result").inner_text()


def test_references_switch_makes_links_plain_and_persists(server, page):
    page.goto(server + PAGE)
    citation = page.locator("article p a.reference.ffn-inline-ref").first
    assert citation.get_attribute("aria-disabled") is None
    open_reading_tools(page)
    page.uncheck("#ffn-links")
    assert citation.get_attribute("aria-disabled") == "true"
    page.reload()
    assert not page.is_checked("#ffn-links")
    assert page.locator("article p a.reference.ffn-inline-ref").first.get_attribute("aria-disabled") == "true"


def test_without_javascript_terms_are_plain_glossary_links(server, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server + PAGE)
    links = page.locator(".ffn-term > a")
    assert links.count() > 0
    assert all("glossary.html#term-" in links.nth(i).get_attribute("href") for i in range(links.count()))
    assert page.locator("[aria-describedby^=ffn-tip]").count() == 0
    context.close()


@pytest.mark.parametrize("coverage", COVERAGE)  # make test: sitecheck's sample of pages; test-full: every page
def test_pages_have_no_console_errors_and_load_nothing_from_other_hosts(server, site, page, coverage):
    foreign = []
    page.on("request", lambda r: foreign.append(r.url) if urlparse(r.url).hostname not in ("127.0.0.1", None) else None)
    for name in covered(sorted(p.name for p in site.glob("*.html")), coverage):
        page.goto(server + name)
        page.wait_for_load_state("load")
        assert not page.console_errors, f"{name}: {page.console_errors}"
    assert not foreign, foreign[:5]


def test_every_definition_stays_in_view_on_a_phone(server, browser):
    """At 390 px, a term near the right edge opens its definition inside the viewport."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        for name in ("position-independence.html", "mixture-of-experts.html"):
            page.goto(server + name)
            terms = page.locator(".ffn-term.ffn-explained > a")
            outside = []
            for i in range(terms.count()):
                link = terms.nth(i)
                link.focus()  # as a keyboard reader opens it (scrolls it into view)
                box = page.evaluate("""() => {
                    const tip = document.getElementById(document.activeElement.getAttribute('aria-describedby'));
                    const r = tip.getBoundingClientRect();
                    return [r.left, r.right, document.documentElement.clientWidth, tip.hidden];
                }""")
                left, right, width, hidden = box
                assert not hidden
                if left < 0 or right > width:
                    outside.append((name, link.inner_text(), round(left), round(right)))
            assert terms.count() > 5 and not outside, outside
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_takes_the_readers_theme_before_the_themes_script_runs(server, browser, scheme):
    # The page's first script (docs/_templates/layout.html, block css) resolves the
    # system's light/dark preference itself, so the browser styles the page once, in the
    # right theme, instead of restyling it when the theme's script runs. Shown here with
    # the theme's script not loaded at all.
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    page.route("**/_static/scripts/pydata-sphinx-theme.js*", lambda route: route.abort())
    page.goto(server + PAGE)
    assert page.evaluate("[document.documentElement.dataset.mode, document.documentElement.dataset.theme]") == [
        "auto",
        scheme,
    ]
    # A reader's own choice, which the theme's switch stores, still wins.
    other = "dark" if scheme == "light" else "light"
    page.evaluate(f"localStorage.setItem('mode', '{other}'); localStorage.removeItem('theme')")
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == other
    context.close()
