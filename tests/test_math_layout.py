"""Math as a reader sees it on a phone (390 px) and a laptop (1366 px), in Debian's Chromium.

Display equations sit in the middle of the text column; one wider than the
column scrolls inside its own box (a named tab stop, so the keyboard can
scroll it) rather than being cut off; inline formulas likewise. The book's
math rules (docs/_static/ffnbook.css) move nothing but the equations: the
page laid out without them has every other element in the same place. And no page is
wider than the phone's screen.

Each page is loaded once per width (the ``laid_out`` fixture) and measured there for every
test that reads its layout; the tests then assert on those measurements.

Skipped, with the reason printed, where Chromium or Playwright is missing.
"""

from __future__ import annotations

import functools

import pytest
from sitecheck import COVERAGE, SCHEMES, browser_api, covered, soup_of

pytestmark = pytest.mark.build
browser_api()  # skips this module where Chromium or Playwright is missing

WIDTHS = (390, 1366)
CENTRE_TOLERANCE_PX = 2


@functools.cache  # parsing every page takes seconds; the site does not change during the tests
def pages_with_display_math(site) -> list[str]:
    return sorted(p.name for p in site.glob("*.html") if soup_of(site, p.stem).select("article div.math"))


def open_at(browser, url: str, width: int, scheme: str = "light"):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(url)
    page.wait_for_load_state("load")
    # Folded answers open, so the formulas inside them are laid out and checked too.
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true; })")
    page.wait_for_timeout(50)
    return context, page


# Geometry of every formula box: the box, the <math> in it, and the content box of
# the column the box sits in (its parent, less padding and border).
MEASURE = """(selector) => [...document.querySelectorAll(selector)]
  .filter(box => !box.closest('.ffn-tip') && box.querySelector('math'))
  .map(box => {
    const col = box.parentElement, cs = getComputedStyle(col), c = col.getBoundingClientRect();
    const left = c.left + parseFloat(cs.paddingLeft) + parseFloat(cs.borderLeftWidth);
    const right = c.right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
    const b = box.getBoundingClientRect(), m = box.querySelector('math').getBoundingClientRect();
    return {text: box.textContent.replace(/\\s+/g, ' ').trim().slice(0, 50),
            colLeft: left, colRight: right, boxLeft: b.left, boxRight: b.right,
            mathLeft: m.left, mathRight: m.right, scrollWidth: box.scrollWidth,
            pieces: [...box.querySelectorAll(':scope.ffn-math-pieces > math')].map(p => {
              const r = p.getBoundingClientRect(); return [r.left, r.right]; }),
            clientWidth: box.clientWidth, overflowX: getComputedStyle(box).overflowX,
            tabindex: box.getAttribute('tabindex'), label: box.getAttribute('aria-label')};
  })"""


def reachability_problems(box: dict) -> list[str]:
    """What of a formula the reader could neither see nor scroll to, or not reach by keyboard."""
    problems = []
    if box["pieces"]:  # an inline formula in pieces flows with the text: each piece stays in the column
        return [
            f"a piece spans {left:.0f}..{right:.0f} px, outside the column {box['colLeft']:.0f}..{box['colRight']:.0f}"
            for left, right in box["pieces"]
            if left < box["colLeft"] - 1 or right > box["colRight"] + 1
        ]
    if box["mathLeft"] < box["boxLeft"] - 1:
        problems.append(f"starts {box['boxLeft'] - box['mathLeft']:.0f} px left of its box")
    if box["mathRight"] - box["boxLeft"] > box["scrollWidth"] + 1:
        problems.append("ends beyond what its box scrolls to")
    if box["boxRight"] > box["colRight"] + 1:
        problems.append("its box sticks out of the column")
    if box["scrollWidth"] > box["clientWidth"] + 1:
        if box["overflowX"] not in ("auto", "scroll"):
            problems.append(f"wider than its box, which does not scroll (overflow-x: {box['overflowX']})")
        if box["tabindex"] != "0" or not box["label"]:
            problems.append("scrolls but is not a named tab stop")
    return problems


def every_page(site) -> list[str]:
    """Every page a reader can open, the API pages and the index included."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not {"_static", "notebooks", "_sources"} & set(p.parts)
    )


# Glued values drawn on more than one line (a number broken after its hyphen).
BROKEN_GLUED_VALUES = """() => [...document.querySelectorAll('article span.pasted-text')]
  .filter(s => s.getClientRects().length > 1).map(s => s.textContent)"""


@pytest.fixture(scope="module", params=COVERAGE)
def laid_out(request, browser, server, site) -> dict[tuple[str, int], dict]:
    """What every test below measures, from one load of each page at each width it is
    checked at: every page at the phone's width, the pages with formulas at every width;
    in `make test` only sitecheck's SAMPLE_PAGES (``covered``), every page in `make test-full`.

    ``{(name, width): {"page_width", "display", "inline", "glued_broken", "layout",
    "layout_without_math_rules", "math_rules_dropped"}}``; a key is absent where that page
    is not checked. The book's math rules are dropped last, after every other measurement.
    """
    display = set(pages_with_display_math(site))
    measured = {}
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        for name in covered(every_page(site), request.param):
            html = (site / name).read_text(encoding="utf-8")
            top_level = "/" not in name
            has_math = top_level and 'class="math' in html
            if width != 390 and not has_math:
                continue
            page.goto(server + name)
            page.wait_for_load_state("load")
            # Folded answers open, so the formulas inside them are laid out and checked too.
            page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true; })")
            page.wait_for_timeout(50)
            found = {"page_width": page.evaluate("document.documentElement.scrollWidth")}
            if has_math:
                found["inline"] = page.evaluate(MEASURE, "article span.math")
            if top_level and width == 390 and "pasted-text" in html:
                found["glued_broken"] = page.evaluate(BROKEN_GLUED_VALUES)
            if name in display:
                found["display"] = page.evaluate(MEASURE, "article div.math")
                found["layout"] = page.evaluate(LAYOUT)
                found["math_rules_dropped"] = page.evaluate(DROP_BOOK_MATH_RULES)
                found["layout_without_math_rules"] = page.evaluate(LAYOUT)
            measured[name, width] = found
        context.close()
    return measured


def measured(laid_out, names) -> list[str]:
    """The pages among ``names`` that ``laid_out`` measured (at the phone's width, as it does
    every page it measures); never none."""
    found = [name for name in names if (name, 390) in laid_out]
    assert found, names
    return found


@pytest.mark.parametrize("width", WIDTHS)
def test_display_equations_are_centred_and_never_cut_off(laid_out, site, width):
    names = pages_with_display_math(site)
    assert len(names) >= 5, names  # the chapter has display math on most pages
    wrong, seen = [], 0
    for name in measured(laid_out, names):
        boxes = laid_out[name, width]["display"]
        seen += len(boxes)
        for box in boxes:
            where = f"{name} at {width}px: {box['text']!r}"
            wrong += [f"{where}: {p}" for p in reachability_problems(box)]
            if box["mathRight"] - box["mathLeft"] <= box["clientWidth"]:
                off = (box["mathLeft"] + box["mathRight"]) / 2 - (box["colLeft"] + box["colRight"]) / 2
                if abs(off) > CENTRE_TOLERANCE_PX:
                    wrong.append(f"{where}: centre {off:+.0f} px from the column's centre")
            elif box["mathLeft"] > box["boxLeft"] + 1:
                wrong.append(f"{where}: wider than the column but does not start at its left edge")
    assert seen >= 10
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("width", WIDTHS)
def test_inline_formulas_are_never_cut_off(laid_out, site, width):
    wrong = []
    with_math = [p.name for p in sorted(site.glob("*.html")) if 'class="math' in p.read_text(encoding="utf-8")]
    for name in measured(laid_out, with_math):
        boxes = laid_out[name, width]["inline"]
        wrong += [f"{name} at {width}px: {box['text']!r}: {p}" for box in boxes for p in reachability_problems(box)]
    assert not wrong, "\n".join(wrong)


# In make test-full only until its intermittent failure is understood: it timed out once in a
# fresh clone's make test and once in five runs alone (a wait for scrolling or re-measuring).
@pytest.mark.full
def test_a_wide_equation_scrolls_with_the_keyboard(browser, server, site):
    context, page = open_at(browser, server + "transformer-block.html", 390)
    box = page.locator("article div.math").first  # the layer-norm equations, side by side
    assert box.get_attribute("tabindex") == "0", "no longer wider than a phone's column?"
    assert box.get_attribute("role") == "group" and "Equation" in box.get_attribute("aria-label")
    # Reach it with Tab from the element before it, as a keyboard user does.
    box.evaluate(
        "b => { const s = document.createElement('button'); s.id = 'ffn-test-start'; b.before(s); s.focus(); }"
    )
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.matches('div.math')")
    for _ in range(40):  # each press scrolls a step (smoothly: wait for it to settle)
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "b => b.scrollLeft + b.clientWidth >= b.scrollWidth - 1", arg=box.element_handle(), timeout=15000
    )
    # Wider again, the same equation fits: it leaves the tab order.
    page.set_viewport_size({"width": 1366, "height": 900})
    page.wait_for_function(  # re-measured after the resize; 5 s timed out once with both workers busy
        "b => !b.hasAttribute('tabindex') && !b.hasAttribute('aria-label')", arg=box.element_handle(), timeout=15000
    )
    context.close()


def test_a_page_with_formulas_draws_them_in_the_math_font_from_its_first_layout(browser, server):
    # The font comes inside the page's stylesheet (bookext.website.mathfont): no request of the
    # font file, and the font is ready when the parsed page is first styled, so the
    # formulas are never laid out a second time when it arrives.
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if "ffnbook-math" in r.url else None)
    page.add_init_script(
        """document.addEventListener('DOMContentLoaded', () => {
             window.mathFontAtDCL = [...document.fonts].filter(f => f.family.includes('FFN Book Math'))
                                                       .map(f => f.status); });"""
    )
    page.goto(server + "width.html")
    page.wait_for_load_state("load")
    at_dcl = page.evaluate("window.mathFontAtDCL")
    family = page.evaluate("getComputedStyle(document.querySelector('article math')).fontFamily")
    context.close()
    assert fetched == [], fetched
    assert at_dcl == ["loaded"]
    assert family.startswith('"FFN Book Math"'), family


def test_formulas_are_measured_again_when_the_math_font_arrives_late(browser, server):
    # readertools.js measures the formulas before the first frame. A page without
    # formulas of its own fetches the font file only when a preview shows one; here a
    # page's stylesheet names the file instead of carrying the font, and the file comes
    # late: its arrival makes the boxes be measured again, so the tab stops match what scrolls.
    import re
    import time

    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()

    def late(route):
        time.sleep(1.5)
        route.continue_()

    def font_as_a_file(route):
        css = route.fetch().text()
        assert "base64," in css
        route.fulfill(
            body=re.sub(r'url\("data:font/woff2;base64,[^"]*"\)', 'url("fonts/ffnbook-math.woff2")', css),
            content_type="text/css",
        )

    page.route("**/_static/styles-*.css*", font_as_a_file)
    page.route("**/_static/fonts/ffnbook-math.woff2*", late)
    page.goto(server + "transformer-block.html")
    page.wait_for_load_state("load")
    page.wait_for_function("document.fonts.check('1em \"FFN Book Math\"')", timeout=10_000)
    page.wait_for_timeout(200)  # the frame after the font's arrival
    boxes = page.evaluate(MEASURE, "article div.math, article span.math")
    context.close()
    assert len(boxes) > 10
    wrong = [f"{box['text']!r}: {p}" for box in boxes for p in reachability_problems(box)]
    wrong += [
        f"{box['text']!r}: fits its box but is a tab stop"
        for box in boxes
        if box["scrollWidth"] <= box["clientWidth"] + 1 and box["tabindex"] is not None
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_numbered_equation_keeps_its_number_at_the_right(browser, server, scheme):
    """No page numbers an equation yet; give two the number markup bookext/content/mathml.py writes."""
    for width in WIDTHS:
        context, page = open_at(browser, server + "transformer-block.html", width, scheme)
        found = page.evaluate("""() => [...document.querySelectorAll('article div.math')].slice(0, 2)
          .map((box, i) => {
            box.insertAdjacentHTML('afterbegin', `<span class="eqno">(${i + 1})<a class="headerlink"`
              + ` href="#equation-${i}" title="Link to this equation">#</a></span>`);
            box.scrollLeft = box.scrollWidth;  // scrolled to its end, the number still shows
            const b = box.getBoundingClientRect(), n = box.querySelector('.eqno');
            const r = n.getBoundingClientRect(), m = box.querySelector('math').getBoundingClientRect();
            return {fits: box.scrollWidth <= box.clientWidth,
                    mathOff: (m.left + m.right) / 2 - (b.left + b.right) / 2,
                    numberRight: b.right - r.right, numberTop: r.top - b.top,
                    numberBottom: b.bottom - r.bottom,
                    background: getComputedStyle(n).backgroundColor,
                    page: getComputedStyle(document.body).backgroundColor};
          })""")
        context.close()
        for eq in found:
            assert abs(eq["numberRight"]) <= 1, (width, eq)  # flush with the column's right edge
            assert eq["numberTop"] <= 1 and eq["numberBottom"] <= 1, (width, eq)  # covers the box
            assert eq["background"] == eq["page"], (width, eq)  # hides what scrolls beneath it
            if eq["fits"]:
                assert abs(eq["mathOff"]) <= CENTRE_TOLERANCE_PX, (width, eq)


# The book's math rules removed from the page (what the theme alone does): the text, code,
# figures and headings around the formulas keep their left edge and width. (They may move
# down: spacing display equations from the text around them is one of those rules.)
# The page loads ffnbook.css inside one bundle of stylesheets (bookext.website.stylesheet_bundles): the
# rules to drop are those of the bundle that ffnbook.css itself holds.
DROP_BOOK_MATH_RULES = """async () => {
  const own = new CSSStyleSheet();
  own.replaceSync(await (await fetch('_static/ffnbook.css')).text());
  const math = new Set([...own.cssRules].map(r => r.cssText)
    .filter((text, i) => /\\.math\\b|\\.eqno\\b/.test(own.cssRules[i].selectorText || '')));
  const sheet = [...document.styleSheets].find(s => /_static\\/styles-[0-9a-f]+\\.css/.test(s.href || ''));
  const rules = [...sheet.cssRules];
  for (let i = rules.length - 1; i >= 0; i--) {
    if (math.has(rules[i].cssText)) sheet.deleteRule(i);
  }
  return rules.length - sheet.cssRules.length;
}"""
LAYOUT = """() => [...document.querySelectorAll('article *')]
  .filter(e => !e.closest('.math') && e.matches('p, li, pre, figure, h1, h2, h3, table, img, dt, dd'))
  .map(e => { const r = e.getBoundingClientRect();
              return [e.tagName, Math.round(r.left), Math.round(r.top + scrollY), Math.round(r.width)]; })"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_math_rules_move_nothing_else(laid_out, site, width):
    moved = []
    for name in measured(laid_out, pages_with_display_math(site)):
        found = laid_out[name, width]
        with_rules, without = found["layout"], found["layout_without_math_rules"]
        assert found["math_rules_dropped"] >= 2, f"{name}: the book's math rules are missing from ffnbook.css"
        assert [a[0] for a in with_rules] == [b[0] for b in without], name
        moved += [
            f"{name} at {width}px: {a} -> {b}" for a, b in zip(with_rules, without) if (a[1], a[3]) != (b[1], b[3])
        ]
    assert not moved, "\n".join(moved[:20])


def test_no_glued_value_breaks_across_lines_on_a_phone(laid_out, site):
    """A number such as 1.05e-15 used to break after its hyphen at 390 px."""
    pages = sorted(p.name for p in site.glob("*.html") if "pasted-text" in p.read_text(encoding="utf-8"))
    broken = [f"{name}: {text!r}" for name in measured(laid_out, pages) for text in laid_out[name, 390]["glued_broken"]]
    assert len(pages) > 10 and not broken, "\n".join(broken)


def test_no_page_is_wider_than_a_phone(laid_out, site):
    """At 390 px every page, the API pages and the index included, fits the screen: long
    names in signatures and inline code, the index's columns and headings wrap; wide
    formulas, code blocks and tables scroll inside their own boxes."""
    names = every_page(site)
    assert len(names) > 35
    wide = {name: width for name in measured(laid_out, names) if (width := laid_out[name, 390]["page_width"]) > 390}
    assert not wide, wide
