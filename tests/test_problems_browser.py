"""The problems in a real browser (Debian's Chromium, driven by Playwright).

* **The reader's parser** (problems.js) reads every accepted form as ffnbook.problems does
  (tests/test_problems.py holds that one to values worked out by hand), and refuses
  what it refuses with the same reason: a table, then thousands of generated inputs.
* **Every problem of the book**: its glued answer, typed in every form a reader might
  use, is right; answers off by more than the tolerance are wrong; text that is no
  number says so and marks the field invalid. All with the keyboard alone.
* **Accessible and light**: the field is labelled and described, the verdict is in a
  live region, the hint and solution open from the keyboard; no axe-core violation after
  answering; the script is loaded only on pages with problems, within its budget; at
  390 px nothing overflows.
"""

from __future__ import annotations

import gzip
import math
import random
from pathlib import Path

import pytest
from sitecheck import AXE_JS, SCHEMES, axe_in_page, browser_api, chapter_order, soup_of
from test_problems import ACCEPTED, REFUSED

from ffnbook.problems import EXACT, AnswerError, parse_answer

pytestmark = pytest.mark.build
browser_api()  # skips this module where Chromium or Playwright is missing

SCRIPT = Path("_static") / "problems.js"
#: problems.js + problems.css, gzipped (4.0 KiB now; the parser of the accepted forms is most of it).
#: A page with problems adds this to its first view; the first view stays under 300 KiB.
BUDGET_BYTES = 4608


def opened(browser, server):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.errors = []
    page.on("console", lambda msg: page.errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.goto(server + "gated-ffn.html")
    page.wait_for_load_state("load")
    return context, page


@pytest.fixture
def page(browser, server):
    context, page = opened(browser, server)
    yield page
    context.close()


@pytest.fixture(scope="module")
def parser_page(browser, server):
    """One load for the parser's tests, which only call window.ffnProblems.parse (the page is
    left as loaded: nothing typed, clicked or opened)."""
    context, page = opened(browser, server)
    yield page
    context.close()


def js_parse(page, inputs: list[tuple[str, str]]) -> list:
    """What problems.js makes of each (typed, unit): a number, or ["error", reason]."""
    return page.evaluate(
        """(inputs) => inputs.map(([typed, unit]) => {
        try { return window.ffnProblems.parse(typed, unit); }
        catch (e) { if (e instanceof window.ffnProblems.AnswerError) return ['error', e.message]; throw e; }
    })""",
        inputs,
    )


def py_parse(typed: str, unit: str):
    try:
        return parse_answer(typed, unit)
    except AnswerError as err:
        return ["error", str(err)]


def same(js, py) -> bool:
    if isinstance(py, list) or isinstance(js, list):
        return js == py
    return math.isclose(js, py, rel_tol=1e-15, abs_tol=0.0) or js == py


# --- the parser -----------------------------------------------------------------------------------


def test_the_script_reads_every_accepted_form_as_python_does(parser_page):
    results = js_parse(parser_page, [(typed, unit) for typed, unit, _ in ACCEPTED])
    for (typed, _unit, value), js in zip(ACCEPTED, results, strict=True):
        assert not isinstance(js, list) and math.isclose(js, value, rel_tol=1e-15), (typed, js, value)


def test_the_script_refuses_what_python_refuses_for_the_same_reason(parser_page):
    results = js_parse(parser_page, [(typed, unit) for typed, unit, _ in REFUSED])
    for (typed, unit, reason), js in zip(REFUSED, results, strict=True):
        assert isinstance(js, list) and js[1].startswith(reason), (typed, js)
        assert js == py_parse(typed, unit), typed


def generated_inputs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Typed answers a reader might write, and near misses: digits, groups, exponents,
    scales, units, fractions, percentages, stray characters."""
    rng = random.Random(seed)
    scales = [
        "",
        "k",
        "K",
        "M",
        "B",
        "G",
        "T",
        "bn",
        " billion",
        " Million",
        " thousand",
        "GB",
        " GiB",
        " MiB",
        "kB",
        "m",
        "x",
        " parameters",
        " bytes",
        "%",
        " %",
    ]
    units = ["", "parameters", "bytes", "FLOPs", "keys"]
    out = []
    for _ in range(n):
        digits = str(rng.randint(0, 10 ** rng.randint(1, 12)))
        number = rng.choice(
            [
                digits,
                f"{rng.uniform(0, 1000):.{rng.randint(0, 4)}f}",
                f"{rng.uniform(1, 10):.{rng.randint(0, 3)}f}e{rng.randint(-12, 15)}",
                f"{int(digits):,}",
                f"{int(digits):,}".replace(",", rng.choice([" ", "_", "\u202f", ".", ","])),
                f"{rng.uniform(1, 10):.2f}{rng.choice(['x', '*', '×', '·', ' x '])}10{rng.choice(['^', '**'])}{rng.randint(-9, 12)}",  # noqa: E501
                f"{rng.randint(1, 9)}×10" + "".join(rng.choice("⁰¹²³⁴⁵⁶⁷⁸⁹") for _ in range(rng.randint(1, 2))),
                f"{rng.randint(-50, 50)}/{rng.randint(-5, 50)}",
                "." + digits,
                digits + ".",
                "−" + digits,
                "+" + digits,
                digits + "..",
                ",".join([digits] * 2),
            ]
        )
        typed = number + rng.choice(scales)
        if rng.random() < 0.1:
            typed = " " + typed + " "
        if rng.random() < 0.05:
            pos = rng.randint(0, len(typed))
            typed = typed[:pos] + rng.choice("abe/^,.- ") + typed[pos:]
        out.append((typed, rng.choice(units)))
    return out


def test_the_script_and_python_agree_on_thousands_of_generated_inputs(parser_page):
    inputs = generated_inputs(4000)
    results = js_parse(parser_page, inputs)
    differ = [
        (typed, unit, js, py_parse(typed, unit))
        for (typed, unit), js in zip(inputs, results, strict=True)
        if not same(js, py_parse(typed, unit))
    ]
    assert not differ, differ[:10]
    read = sum(not isinstance(js, list) for js in results)
    assert 0.4 * len(inputs) < read < 0.95 * len(inputs)  # both kinds were exercised


# --- every problem of the book ---------------------------------------------------------------------


def right_forms(answer: float, tolerance: float, shown: str, unit: str) -> list[str]:
    """How a reader who has the answer might type it (bytes with a byte unit: 45 GB, as B
    alone is refused where it could mean bytes)."""
    forms = [shown, repr(answer), f"{answer:.16e}"]
    if float(answer).is_integer() and abs(answer) < 1e16:
        forms += [str(int(answer)), f"{int(answer):,}"]
    if tolerance > EXACT:
        forms += [f"{answer:.3g}", f"{answer:.2e}"]
        for scale, word in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
            if abs(answer) >= scale:
                forms.append(
                    f"{answer / scale:.3g}{word}"
                    if unit != "bytes"
                    else f"{answer / scale:.3g} {'GB' if word == 'B' else word + 'B'}"
                )
                break
        if 0 < abs(answer) < 1:
            forms.append(f"{answer * 100:.3g}%")
    return forms


def wrong_forms(answer: float, tolerance: float) -> list[str]:
    far = max(tolerance * 3, 1e-6)
    return [repr(answer * (1 + far)), repr(answer * (1 - far)), repr(answer * 2), repr(-answer)]


def check(page, box, typed: str) -> tuple[str, bool]:
    """The verdict on an answer put in the field (as a paste puts it: typing key by key is
    test_keyboard_alone_answers_and_opens_hint_and_solution's) and sent with Enter."""
    field = box.locator("input.ffn-problem-input")
    field.fill(typed)
    field.press("Enter")
    verdict = box.locator(".ffn-result").inner_text()
    return verdict, field.get_attribute("aria-invalid") == "true"


#: The every-page matrix: make test checks the page the other tests here use, make test-full every page.
PROBLEM_PAGES = [
    name if name == "gated-ffn" else pytest.param(name, marks=pytest.mark.full) for name in chapter_order()
]


@pytest.mark.parametrize("name", PROBLEM_PAGES)
def test_every_problem_takes_its_answer_in_every_form_and_refuses_others(site, browser, server, name):
    boxes = soup_of(site, name).select("div.ffn-problem")
    if not boxes:
        pytest.skip(f"{name} has no problems")
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        page.goto(server + name + ".html")
        page.wait_for_load_state("load")
        for i, box_html in enumerate(boxes):
            form = box_html.select_one("form")
            answer, tolerance = float(form["data-answer"]), float(form["data-tolerance"])
            box = page.locator("div.ffn-problem").nth(i)
            box.scroll_into_view_if_needed()
            for typed in right_forms(answer, tolerance, form["data-answer-text"], form.get("data-unit", "")):
                verdict, invalid = check(page, box, typed)
                assert verdict.startswith("Right") and not invalid, (name, i, typed, verdict)
                assert form["data-answer-text"] in verdict
            for typed in wrong_forms(answer, tolerance):
                verdict, invalid = check(page, box, typed)
                assert verdict.startswith("Not yet") and not invalid, (name, i, typed, verdict)
            verdict, invalid = check(page, box, "about a million")
            assert verdict.startswith("Cannot read that") and invalid, (name, i, verdict)
        assert not errors, errors
    finally:
        context.close()


def test_keyboard_alone_answers_and_opens_hint_and_solution(page):
    box = page.locator("div.ffn-problem").first
    field = box.locator("input.ffn-problem-input")
    assert page.get_by_label("Your answer").first.evaluate("e => e.id") == field.evaluate("e => e.id")
    described = field.get_attribute("aria-describedby")
    assert box.locator(f"#{described}").inner_text().startswith("Answer in")
    field.focus()
    page.keyboard.type("12")
    page.keyboard.press("Tab")  # to the Check button
    assert page.evaluate("document.activeElement.textContent") == "Check"
    page.keyboard.press("Enter")
    assert box.locator(".ffn-result").inner_text().startswith("Not yet")
    assert box.locator(".ffn-result").get_attribute("aria-live") == "polite"
    page.keyboard.press("Tab")  # to the hint's summary
    page.keyboard.press("Enter")
    assert box.locator("details.ffn-problem-hint").evaluate("d => d.open")
    page.keyboard.press("Tab")  # to the worked solution's summary
    page.keyboard.press("Enter")
    solution = box.locator("details.ffn-problem-solution")
    assert solution.evaluate("d => d.open") and solution.locator("div.cell.tag_solution").is_visible()
    assert not page.errors, page.errors


@pytest.mark.skipif(not AXE_JS.exists(), reason="axe-core is not installed (make test installs tests/node)")
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_after_answering(browser, server, scheme):
    context = browser.new_context(viewport={"width": 1366, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(server + "gated-ffn.html")
        page.evaluate(f"localStorage.setItem('theme', '{scheme}')")
        page.goto(server + "gated-ffn.html")
        page.wait_for_load_state("load")
        boxes = page.locator("div.ffn-problem")
        for i in range(boxes.count()):
            box = boxes.nth(i)
            check(page, box, "1.2B" if i % 2 else "nonsense")
            box.locator("details").evaluate_all("ds => ds.forEach(d => { d.open = true; })")
        violations = axe_in_page(page)
        assert not violations, violations
    finally:
        context.close()


def test_nothing_overflows_on_a_phone(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(server + "compute.html")
        page.wait_for_load_state("load")
        boxes = page.locator("div.ffn-problem")
        assert boxes.count() >= 2
        for i in range(boxes.count()):
            box = boxes.nth(i)
            box.scroll_into_view_if_needed()
            check(page, box, "1")
            outside = box.evaluate("""b => {
                const edge = b.getBoundingClientRect();
                return [...b.querySelectorAll('form *, .ffn-problem-title, .ffn-problem-rule, summary')]
                  .filter(e => { const r = e.getBoundingClientRect();
                                 return r.width && (r.left < edge.left - 0.5 || r.right > edge.right + 0.5); })
                  .map(e => e.outerHTML.slice(0, 80));
            }""")
            assert not outside, outside
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()


def test_a_miss_is_stated_with_the_precision_it_has(page):
    stated = page.evaluate(
        "pairs => pairs.map(([v, a]) => window.ffnProblems.distance(v, a))",
        [[6401, 6400], [6336, 6400], [6500, 6400], [7400, 6400], [3000, 6400], [0.9, 1]],
    )
    # 1/6400 = 0.0156 %; 64/6400 = 1 %; 100/6400 = 1.5625 %; 1000/6400 = 15.6 %; 3000 is 2.1 times too low.
    assert stated == [
        "is 0.016% too high",
        "is 1% too low",
        "is 1.6% too high",
        "is 16% too high",
        "is too low, by a factor of about 2.1",
        "is 10% too low",
    ]


def test_a_long_paste_is_quoted_short_and_the_verdict_wraps_on_a_phone(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(server + "compute.html")
        box = page.locator("div.ffn-problem").first
        box.scroll_into_view_if_needed()
        field = box.locator("input.ffn-problem-input")
        field.fill("9." * 1150)  # 2,300 characters, no space to break at
        field.press("Enter")
        verdict = box.locator(".ffn-result")
        assert verdict.inner_text().startswith("Cannot read that")
        assert len(verdict.inner_text()) < 120
        assert verdict.evaluate("v => v.getBoundingClientRect().right") <= 390
        field.fill("ab" * 1150)
        field.press("Enter")
        assert len(verdict.inner_text()) < 120
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()


def test_the_script_loads_only_where_problems_are_and_stays_small(site):
    for html in sorted(site.glob("*.html")):
        soup = soup_of(site, html.stem)
        loads = any("problems.js" in s.get("src", "") for s in soup.select("script[src]"))
        assert loads == bool(soup.select("div.ffn-problem")), html.name
    size = sum(
        len(gzip.compress((site / "_static" / name).read_bytes(), 9)) for name in ("problems.js", "problems.css")
    )
    assert size <= BUDGET_BYTES, size
