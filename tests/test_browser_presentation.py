"""Issue 22's presentation, held in a real browser at a phone's and a desktop's size.

Debian's Chromium driven by Playwright, at 390 x 844 with touch and at 1,366 x 900, in
the light and the dark theme where colours matter: the math font, self-checks, tables,
glossary terms on a touch screen, the reading tools' label, the search controls and the
glossary's letter bar. Skipped, with the reason printed, where Chromium or Playwright is
missing; .ci/run installs Chromium so CI runs these.
"""

from __future__ import annotations

import pytest
from sitecheck import COVERAGE, SAMPLE_PAGES, SCHEMES, SCREENS, browser_api, covered

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
DEVICES = {"phone": PHONE, "desktop": DESKTOP}

pytestmark = pytest.mark.build

playwright_api = browser_api()


def loaded(browser, server, name: str, device: str, scheme: str):
    """A new context at this screen and colour scheme with the page loaded: (context, page)."""
    context = browser.new_context(**DEVICES[device], color_scheme=scheme)
    context.set_default_navigation_timeout(60_000)  # a busy machine loads pages slowly
    page = context.new_page()
    page.goto(server + name)
    return context, page


@pytest.fixture
def open_page(browser, server):
    contexts = []

    def open_(name: str, device: str = "desktop", scheme: str = "light"):
        context, page = loaded(browser, server, name, device, scheme)
        contexts.append(context)
        return page

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def view_page(browser, server):
    """Like ``open_page``, but one load of each page per screen and colour scheme, shared by the
    tests of this module that only read it: they measure and scroll, never click, tap, type or
    hover (those open their own). Scrolled back to the top for each test. A page load costs
    Chromium ~2 CPU-seconds; seven fewer of them in `make test`."""
    opened: dict = {}  # the most recently used last; at most 8 kept open (test-full's every-page checks)

    def view(name: str, device: str = "desktop", scheme: str = "light"):
        key = (name, device, scheme)
        if key not in opened:
            if len(opened) == 8:
                opened.pop(next(iter(opened)))[0].close()
            opened[key] = loaded(browser, server, name, device, scheme)
        opened[key] = opened.pop(key)
        page = opened[key][1]
        page.evaluate("window.scrollTo(0, 0)")
        return page

    yield view
    for context, _ in opened.values():
        context.close()


def rgb(page, css_colour: str) -> str:
    """A CSS colour as the browser computes it (``rgb(r, g, b)``)."""
    return page.evaluate(
        """c => { const e = document.createElement('span'); e.style.color = c;
        document.body.append(e); const v = getComputedStyle(e).color; e.remove(); return v; }""",
        css_colour,
    )


@pytest.mark.parametrize("device", SCREENS)
def test_formulas_are_drawn_in_the_books_math_font_at_the_texts_size(view_page, device):
    page = view_page("parameter-count.html", device)
    page.evaluate("document.fonts.ready")
    family, loaded = page.evaluate("""() => [getComputedStyle(document.querySelector('math')).fontFamily,
        [...document.fonts].filter(f => f.family.replace(/"/g, '') === 'FFN Book Math')
                           .map(f => f.status)]""")
    assert family.startswith('"FFN Book Math"')
    assert loaded == ["loaded"]  # one face: the font inside the page's stylesheet (bookext.website.mathfont)
    # An inline formula's x is about as tall as the text's: its font size is 1.2 times the
    # paragraph's (Latin Modern's x-height 0.43 em against the theme font's 0.52 em).
    ratio = page.evaluate("""() => { const m = document.querySelector('p span.math math, p math');
        return parseFloat(getComputedStyle(m).fontSize) / parseFloat(getComputedStyle(m.closest('p')).fontSize); }""")
    assert ratio == pytest.approx(1.2, abs=0.01)


def test_a_page_without_formulas_does_not_fetch_the_math_font(open_page):
    page = open_page("glossary.html")
    page.evaluate("document.fonts.ready")
    if page.locator("article math").count():
        pytest.skip("the glossary shows formulas now")
    statuses = page.evaluate("""() => [...document.fonts].filter(f => f.family.replace(/"/g, '') === 'FFN Book Math')
        .map(f => f.status)""")
    assert "loaded" not in statuses


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("device", SCREENS)
def test_self_check_uses_the_themes_button_and_keeps_the_question_clear_of_the_border(view_page, device, scheme):
    page = view_page("position-independence.html", device, scheme)
    quiz = page.locator("form.ffn-quiz").first
    quiz.scroll_into_view_if_needed()
    button = quiz.locator("button.ffn-check")
    primary = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--pst-color-primary')")
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") == rgb(page, primary.strip())
    legend, question, fieldset = (quiz.locator(s).bounding_box() for s in ("legend", ".ffn-quiz-question", "fieldset"))
    assert question["y"] >= legend["y"] + legend["height"] - 1  # below the legend on the border
    assert question["x"] + question["width"] <= fieldset["x"] + fieldset["width"]
    group = quiz.locator("[role=radiogroup]")
    assert group.get_attribute("aria-labelledby") == quiz.locator(".ffn-quiz-question").get_attribute("id")


@pytest.mark.parametrize("device", SCREENS)
def test_tables_put_words_left_and_numbers_right_and_fit_the_phone(view_page, device):
    page = view_page("width.html", device)
    table = page.locator("article table:has(td.text-left)").first
    aligns = table.evaluate(
        """t => [...t.rows[1].cells].map(c => [c.textContent.trim(), getComputedStyle(c).textAlign])"""
    )
    words = [a for text, a in aligns if not any(ch.isdigit() for ch in text)]
    numbers = [a for text, a in aligns if text.replace(",", "").replace(".", "").replace("%", "").isdigit()]
    assert words and set(words) == {"left"}
    assert numbers and set(numbers) == {"right"}
    # A model's name wraps onto three lines at most (not four).
    lines = table.evaluate("""t => { const c = t.rows[1].cells[0], p = c.querySelector('p') || c;
        return Math.round(p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight)); }""")
    assert lines <= 3


def test_first_tap_on_a_term_shows_its_definition_and_the_second_goes_to_the_glossary(open_page):
    page = open_page("position-independence.html", "phone")
    link = page.locator(".ffn-term.ffn-explained > a").first
    link.scroll_into_view_if_needed()
    link.tap()
    tip = page.locator(".ffn-tip:visible")
    tip.first.wait_for()
    assert "position-independence" in page.url
    link.tap()
    page.wait_for_url("**/glossary.html#*")


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("device", SCREENS)
def test_reading_tools_are_labelled_in_words_beside_the_other_header_buttons(view_page, device, scheme):
    page = view_page("position-independence.html", device, scheme)
    button = page.locator("details.ffn-tools > summary")
    assert button.is_visible() and button.inner_text().strip() == "Reading tools"
    boxes = page.evaluate("""() => [...document.querySelectorAll('.bd-header-article .btn, .bd-header-article summary')]
        .filter(b => b.offsetParent).map(b => { const r = b.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })""")  # noqa: E501 - one line of JavaScript
    overlapping = [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[1] - 1 and b[0] < a[1] - 1 and a[2] < b[3] - 1 and b[2] < a[3] - 1
    ]
    assert not overlapping
    width = page.evaluate("document.documentElement.clientWidth")
    assert all(right <= width for _, right, _, _ in boxes)


@pytest.mark.parametrize("device", SCREENS)
def test_the_search_page_has_one_search_field(open_page, device):
    page = open_page("search.html", device)
    fields = page.locator("input[type=search]:visible, .search-button-field:visible")
    assert fields.count() == 1


def test_a_desktop_reader_who_hides_the_sidebar_keeps_a_search_button(open_page):
    page = open_page("position-independence.html", "desktop")
    header_search = page.locator(".bd-header-article .search-button")
    assert page.locator(".bd-sidebar-primary .search-button-field").is_visible()
    assert header_search.is_hidden()  # the sidebar's field is the one search control
    page.locator(".bd-header-article .primary-toggle").click()
    header_search.wait_for(state="visible")
    header_search.click()
    page.locator(".search-button__search-container input, #pst-search-dialog input").first.wait_for(state="visible")


@pytest.mark.parametrize("device", SCREENS)
def test_glossary_has_a_letter_bar_and_names_on_their_own_line(open_page, device):
    page = open_page("glossary.html", device)
    letters = page.locator("nav.ffn-az a")
    assert letters.count() > 10
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("() => document.querySelector('nav.ffn-az').getBoundingClientRect().right") <= width
    letters.last.click()
    target = page.evaluate("location.hash.slice(1)")
    top = page.evaluate("id => document.getElementById(decodeURIComponent(id)).getBoundingClientRect().top", target)
    assert 0 <= top < 844
    also = page.locator("dd > p.ffn-also").first
    definition = also.locator("xpath=following-sibling::p[1]")
    assert also.bounding_box()["y"] + also.bounding_box()["height"] <= definition.bounding_box()["y"] + 1


SIDEWAYS_PAGES = ("index.html", "parameter-count.html", "position-independence.html", "glossary.html")


@pytest.mark.parametrize("pages", COVERAGE)
@pytest.mark.parametrize("device", SCREENS)
def test_no_page_scrolls_sideways(view_page, device, pages):
    # make test: the pages sitecheck's sample leaves out (test_math_layout measures the sample's
    # width on the phone); make test-full: all four.
    for name in SIDEWAYS_PAGES if pages == "every" else [n for n in SIDEWAYS_PAGES if n not in SAMPLE_PAGES]:
        page = view_page(name, device)
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), name


def test_a_tap_on_a_figure_opens_its_svg_full_size(open_page, site):
    page = open_page("anatomy.html", "phone")
    links = page.locator("figure a.ffn-figure-link")
    assert links.count() == page.locator("figure img[src$='.svg']").count() > 0
    href = links.first.get_attribute("href")
    assert href.startswith("_images/") and (site / href).is_file()
    links.first.scroll_into_view_if_needed()
    links.first.tap()
    page.wait_for_url("**/_images/*.svg")


def ink_pixels(png: bytes, background: tuple[int, int, int]) -> int:
    """How many pixels of a screenshot differ clearly from the page's background."""
    import io

    from PIL import Image

    pixels = Image.open(io.BytesIO(png)).convert("RGB").tobytes()
    triples = zip(pixels[0::3], pixels[1::3], pixels[2::3])
    return sum(1 for pixel in triples if sum(abs(a - b) for a, b in zip(pixel, background)) > 120)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("device", SCREENS)
def test_square_roots_are_drawn_with_their_radical_sign(view_page, device, scheme):
    """The layer norm's and GELU's square roots: the strip of each <msqrt> left of its
    content, where the browser draws the radical from the math font, has ink."""
    for name in ("transformer-block.html", "activations.html"):
        page = view_page(name, device, scheme)
        page.evaluate("document.fonts.ready")
        background = page.evaluate("""() => getComputedStyle(document.body).backgroundColor
            .match(/\\d+/g).slice(0, 3).map(Number)""")
        roots = [r for r in page.locator("article msqrt").all() if r.is_visible()]
        assert roots, name
        for root in roots:
            root.scroll_into_view_if_needed()
            box = root.bounding_box()
            content_left = root.evaluate("r => Math.min(...[...r.children].map(c => c.getBoundingClientRect().left))")
            radical_width = content_left - root.evaluate("r => r.getBoundingClientRect().left")
            assert radical_width >= 4, (name, radical_width)
            strip = {"x": box["x"], "y": box["y"], "width": radical_width, "height": box["height"]}
            ink = ink_pixels(page.screenshot(clip=strip), tuple(background))
            assert ink >= 0.1 * radical_width * box["height"], (name, root.inner_text(), ink)


FORMULA_PAGES = ("transformer-block.html", "anatomy.html", "compute.html", "glossary.html", "summary.html")


@pytest.mark.parametrize("pages", COVERAGE)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_phone_wide_equations_show_they_go_on_and_inline_formulas_never_scroll(view_page, scheme, pages):
    for name in covered(FORMULA_PAGES, pages):
        page = view_page(name, "phone", scheme)
        page.evaluate("document.fonts.ready")
        if name == "transformer-block.html":  # the layer norm is twice the phone's column: it has the cue
            page.wait_for_selector("article div.math[data-ffn-wide]", state="attached")
        found = page.evaluate("""() => {
            const visible = e => e.offsetParent && !e.closest('.ffn-tip');
            const inline = [...document.querySelectorAll('article span.math')].filter(visible)
                .filter(s => s.scrollWidth > s.clientWidth + 1).map(s => s.textContent.trim().slice(0, 40));
            const wide = [...document.querySelectorAll('article div.math')].filter(visible)
                .filter(d => d.scrollWidth > d.clientWidth + 1);
            const cue = wide.map(d => d.hasAttribute('data-ffn-wide') &&
                getComputedStyle(d).backgroundImage.split('gradient').length - 1);
            return {inline, cue, sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth};
        }""")
        assert found["inline"] == [], (name, found["inline"])
        assert all(c == 4 for c in found["cue"]), (name, found["cue"])  # covers and shadows
        assert not found["sideways"], name
        assert found["cue"] or name != "transformer-block.html", name


def test_a_glued_number_is_never_parted_from_its_unit(open_page):
    page = open_page("mixture-of-experts.html", "phone")
    parted = page.evaluate("""() => [...document.querySelectorAll('article .pasted-text')].filter(n => {
        const after = n.nextSibling;
        return after && after.nodeType === 3 && /^\\s+[A-Za-z%]/.test(after.textContent)
            && !/^\\u00a0/.test(after.textContent);
    }).map(n => n.textContent + n.nextSibling.textContent.slice(0, 12))""")
    assert parted == []
    assert "\u00a0billion" in page.locator(".ffn-x-summary").first.inner_text()
    # After a formula ending in its relation ("d_ff = 2,048") the number stays on the "="'s line.
    lines = page.evaluate("""() => [...document.querySelectorAll('article .pasted-text')].filter(n => {
        const math = n.previousElementSibling;
        return math && math.matches('span.math') && /[=≈<>≤≥×]\\s*$/.test(math.textContent);
    }).map(n => [n.closest('.ffn-together') !== null, n.parentElement.getClientRects().length])""")
    assert lines and all(together and count == 1 for together, count in lines), lines


FIGURE_TEXT_JS = """async () => {
    const out = [];
    for (const img of document.querySelectorAll('article figure img')) {
        if (!img.currentSrc.endsWith('.svg')) continue;
        img.scrollIntoView();
        await img.decode().catch(() => null);
        const svg = await (await fetch(img.currentSrc)).text();
        const box = +svg.match(/viewBox="0 0 ([\\d.]+)/)[1];
        const sizes = [...svg.matchAll(/font-size: ([\\d.]+)px/g)].map(m => +m[1]);
        const scale = img.getBoundingClientRect().width / box;
        out.push({id: img.closest('figure').id, src: img.currentSrc.split('/').pop(),
                  smallest: Math.min(...sizes) * scale, width: img.getBoundingClientRect().width});
    }
    return out;
}"""


def figure_pages():
    """The chapter's pages: make test checks the one with the figure that was the smallest on
    a phone (transformer-block), make test-full every page (the every-page matrix)."""
    from sitecheck import chapter_order

    return [n if n == "transformer-block" else pytest.param(n, marks=pytest.mark.full) for n in chapter_order()]


@pytest.mark.parametrize("name", figure_pages())
@pytest.mark.parametrize("device", DEVICES)
def test_figure_text_is_at_least_11_css_px_on_a_phone_and_the_desktop_drawing_stays(view_page, site, device, name):
    """On a 390 px phone a figure shows its drawing for phones, whose smallest text is 11 CSS
    px or more (5 px on main's build); on a desktop, the column's drawing."""
    if 'src="_images/' not in (site / f"{name}.html").read_text(encoding="utf-8"):
        pytest.skip(f"{name} has no figure")
    page = view_page(f"{name}.html", device)
    figures = page.evaluate(FIGURE_TEXT_JS)
    assert figures
    for figure in figures:
        desktop_src = page.locator(f"#{figure['id']} img").get_attribute("src").split("/")[-1]
        if device == "phone":
            assert figure["src"] != desktop_src, (name, figure)  # the phone's drawing
            assert figure["smallest"] >= 11, (name, figure)
        else:
            assert figure["src"] == desktop_src, (name, figure)


@pytest.mark.parametrize("query", ["feed-forward", pytest.param("activation", marks=pytest.mark.full)])
def test_search_logs_no_policy_error_and_its_snippets_are_the_pages_text(open_page, query):
    page = open_page(f"search.html?q={query}")
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.reload()
    page.wait_for_selector("#search-results li p.context, #search-results li span", timeout=30_000)
    page.wait_for_function("document.querySelector('#search-results .search-summary')")
    page.wait_for_timeout(1_000)  # the last result pages' snippets
    assert errors == []  # the result pages hold no inline handler the search page refuses
    snippets = page.evaluate("[...document.querySelectorAll('#search-results p.context')].map(p => p.textContent)")
    assert snippets
    for snippet in snippets:
        # Not the header's buttons and contents list, nor a glossary tooltip's definition.
        assert "Light Dark" not in snippet and " Contents " not in snippet[:40], snippet
        assert "feed-forward network: The second sublayer" not in snippet, snippet


def test_no_page_has_an_inline_event_handler(site):
    import re

    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts]
    with_handlers = [p.name for p in pages if re.search(r'<[a-zA-Z][^>]*?\son[a-z]+="', p.read_text(encoding="utf-8"))]
    assert with_handlers == []


def test_on_a_phone_no_tooltip_stays_after_the_search_dialog_closes(open_page):
    page = open_page("width.html", "phone")
    page.locator(".bd-header-article .search-button").first.tap()
    page.wait_for_selector("#pst-search-dialog[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#pst-search-dialog:not([open])", state="attached")
    page.wait_for_timeout(700)  # Bootstrap's tooltip shows after 500 ms
    assert page.locator(".tooltip").count() == 0


def test_desktop_lines_hold_about_75_characters(open_page):
    page = open_page("width.html", "desktop")
    per_line = page.evaluate("""() => {
        const p = [...document.querySelectorAll('article p')].find(p => p.textContent.length > 500);
        const probe = document.createElement('span');
        probe.textContent = p.textContent.replace(/\\s+/g, ' ');
        probe.style.whiteSpace = 'nowrap';
        p.after(probe);
        const perChar = probe.getBoundingClientRect().width / probe.textContent.length;
        probe.remove();
        return p.getBoundingClientRect().width / perChar;
    }""")
    assert 65 <= per_line <= 85, per_line
    page.locator(".bd-header-article .primary-toggle").click()  # the sidebar hidden: the same
    assert page.evaluate("document.querySelector('article p').getBoundingClientRect().width") <= 40 * 16


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_wide_table_fades_where_it_goes_on(view_page, scheme):
    page = view_page("parameter-count.html", "phone", scheme)
    box = page.locator("article .pst-scrollable-table-container[data-ffn-wide]").first
    box.wait_for(state="attached")
    box.scroll_into_view_if_needed()
    assert "linear-gradient" in box.evaluate("b => getComputedStyle(b).maskImage")
    box.evaluate("b => b.scrollLeft = b.scrollWidth")
    page.wait_for_function("b => b.hasAttribute('data-ffn-at-end')", arg=box.element_handle())
    # Scrolled to its end: the fade moves to the start, where the hidden columns now are.
    mask = box.evaluate("b => getComputedStyle(b).maskImage")
    assert mask.startswith("linear-gradient(to right, rgba(0, 0, 0, 0), rgb(0, 0, 0)"), mask


def test_on_a_phone_header_controls_are_44_px_targets(view_page):
    page = view_page("width.html", "phone")
    boxes = page.evaluate("""() => [...document.querySelectorAll(
            '.bd-header-article .btn, .bd-header-article summary, .bd-header-article .dropdown-toggle')]
        .filter(b => b.offsetParent).map(b => { const r = b.getBoundingClientRect();
            return [b.className, r.left, r.right, r.width, r.height]; })""")
    assert len(boxes) >= 6
    for name, _, _, width, height in boxes:
        assert width >= 44 - 0.5 and height >= 44 - 0.5, (name, width, height)
    assert max(right for _, _, right, _, _ in boxes) <= 390


@pytest.mark.parametrize("scheme", SCHEMES)
def test_captions_have_the_body_texts_colour_and_weight(view_page, scheme):
    page = view_page("width.html", "desktop", scheme)
    caption, body = page.evaluate("""() => [document.querySelector('article figure figcaption .caption-text'),
        document.querySelector('article section > p')]
        .map(e => [getComputedStyle(e).color, getComputedStyle(e).fontWeight])""")
    assert caption[0] == body[0] and int(caption[1]) >= 400, (caption, body)


def test_the_print_and_full_screen_buttons_still_work_without_inline_handlers(open_page):
    page = open_page("width.html", "desktop")
    page.evaluate("window.print = () => { window.printed = true; };")
    page.evaluate("window.toggleFullScreen = () => { window.full = true; };")
    page.locator(".dropdown-download-buttons .dropdown-toggle").click()
    page.locator("[data-ffn-action=print]").click()
    page.locator("[data-ffn-action=fullscreen]").click()
    assert page.evaluate("[window.printed, window.full]") == [True, True]
