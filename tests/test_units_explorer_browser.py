"""The neuron explorer of the trained-FFN page in a real browser (Debian's Chromium, Playwright).

* **Loaded as it comes near, from the same site**: the units' JSON is not part of the
  page's first view; it is fetched as the box comes near the screen (or the reader touches
  it), and the initial unit's measurements are drawn without any interaction; nothing
  comes from another host.
* **Keyboard and touch**: the block select and the unit slider move by keyboard; on a phone
  (390 x 844, touch) the "Next unit" button moves by tap; after each, every value shown
  (the results, the facts table, the figure's labels) equals the JSON's for that unit.
* **Readable and accessible**: the figure's texts never overlap or leave it at either
  width, for the first and last unit of every block; no axe-core violation in the box, in light or dark.
* **Within budget**: the JSON at most 30 KiB gzipped.
"""

from __future__ import annotations

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import urlparse

import pytest
from sitecheck import AXE_JS, SCHEMES, axe_in_page, browser_api, soup_of
from test_explorables_browser import SET_AND_MEASURE

pytestmark = pytest.mark.build
browser_api()  # skips this module where Chromium or Playwright is missing

PAGE = "trained-ffn"
BOX = ".ffn-x-units"
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}
DATA_BUDGET = 30 * 1024


def shipped(site) -> tuple[dict, dict]:
    """The box's inline data and the JSON file it names."""
    box = json.loads(soup_of(site, PAGE).select_one(f"{BOX} script.ffn-x-data").get_text())
    return box, json.loads((site / box["src"]).read_text(encoding="utf-8"))


def open_page(browser, server, viewport: dict, scheme: str = "light", touch: bool = False):
    context = browser.new_context(viewport=viewport, color_scheme=scheme, has_touch=touch, is_mobile=touch)
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(server + PAGE + ".html")
    page.wait_for_load_state("load")
    page.locator(BOX).scroll_into_view_if_needed()
    return context, page


def two(v: float) -> str:
    """``Number(v).toFixed(2)``: the double's exact value, a tie rounded away from zero (0.125 -> 0.13).

    Like JavaScript, it writes no sign for a zero (``(-0).toFixed(2)`` is "0.00").
    """
    return str(Decimal(v + 0.0).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def expected(data: dict, block: int, unit: int) -> dict:
    """What the explorer must show for one unit, from the JSON."""
    d, names = data["blocks"][block], data["tokens"]
    facts = []
    for f, a in zip(d["facts"][unit], d["fact_act"][unit]):
        s, r, o = data["facts"][f]
        facts.append([f"{names[s]} {names[r]}", names[o], two(a)])
    return {
        "values": {
            "kind": data["kinds"][d["kind"][unit]],
            "strong": str(d["strong"][unit]),
            "lost_all": str(d["lost"][unit][0]),
            "lost_site": str(d["lost"][unit][1]),
            "margin_all": str(d["margin"][unit][0]),
            "margin_site": str(d["margin"][unit][1]),
        },
        "facts": facts,
        "labels": [two(v) for v in d["act"][unit]] + [names[t] for t in d["tokens"][unit]],
    }


def shown(page) -> dict:
    return page.evaluate(
        """(box) => {
        const root = document.querySelector(box);
        const values = {};
        root.querySelectorAll('.ffn-x-results output[data-key]')
            .forEach(o => { values[o.dataset.key] = o.dataset.value; });
        const facts = [...root.querySelectorAll('.ffn-x-facts tbody tr')]
            .map(tr => [...tr.cells].map(c => c.textContent));
        const labels = [...root.querySelectorAll('svg text')].map(t => t.textContent);
        return {values, facts, labels, block: +root.querySelector('[data-key=block]').value,
                unit: +root.querySelector('[data-key=unit]').value};
    }""",
        BOX,
    )


def check_shows(page, data: dict) -> tuple[int, int]:
    page.wait_for_function("(box) => document.querySelector(box + ' .ffn-x-facts tbody tr')", arg=BOX)
    now = shown(page)
    want = expected(data, now["block"], now["unit"])
    # Margins compared as numbers (JavaScript writes a negative zero as "0"), the rest as the text shown.
    assert {k: float(v) if k.startswith("margin") else v for k, v in now["values"].items()} == {
        k: float(v) if k.startswith("margin") else v for k, v in want["values"].items()
    }
    assert now["facts"] == want["facts"]
    for label in want["labels"]:
        assert any(t.startswith(label) or t.endswith(label) for t in now["labels"]), (label, now["labels"])
    return now["block"], now["unit"]


def test_the_data_fits_its_budget_and_comes_from_the_page(site):
    box, data = shipped(site)
    raw = (site / box["src"]).read_bytes()
    size = len(gzip.compress(raw, 9, mtime=0))
    print(f"units data: {len(raw)} bytes, {size} gzipped")
    assert size <= DATA_BUDGET
    assert box["d_ff"] == len(data["blocks"][0]["act"]) and box == {**data["box"], "src": box["src"]}


@pytest.mark.parametrize("viewport", [PHONE, pytest.param(DESKTOP, marks=pytest.mark.full)], ids=["phone", "desktop"])
def test_the_initial_unit_is_shown_untouched_once_the_box_comes_near(browser, server, site, viewport):
    box, data = shipped(site)
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(server + PAGE + ".html")
    page.wait_for_load_state("load")
    assert not any(box["src"] in url for url in requests), "the data is part of the page's first view"
    summary = """(box) => { const r = document.querySelector(box), s = r.querySelector('.ffn-x-summary');
        return [s.textContent, getComputedStyle(s).clipPath !== 'none', r.querySelector('svg').textContent]; }"""
    # Before the data: the figure says it is loading, once on screen; its text alternative
    # (the summary) says the same for a screen reader, so the figure is never unnamed.
    said, hidden, drawn = page.evaluate(summary, BOX)
    assert said.startswith("Loading") and hidden and said.replace(" ", "") == drawn.replace(" ", "")  # lines drawn
    page.evaluate("(box) => document.querySelector(box).scrollIntoView()", BOX)
    assert check_shows(page, data) == tuple(box["initial"])  # no focus, no tap, no control moved
    # Nothing blank: every value shown, one message at most, no empty table.
    assert all(v != "" for v in shown(page)["values"].values())
    said, hidden, _ = page.evaluate(summary, BOX)
    assert said.startswith(f"Block {box['initial'][0]}, unit {box['initial'][1]} ") and not hidden
    context.close()


def test_keyboard_moves_and_shows_the_json(browser, server, site):
    box, data = shipped(site)
    context, page = open_page(browser, server, DESKTOP)
    page.locator(f"{BOX} [data-key=unit]").focus()
    assert check_shows(page, data) == tuple(box["initial"])
    assert [url for url in page.requests if box["src"] in url]
    for key, press in (("unit", "ArrowRight"), ("unit", "ArrowRight"), ("block", "ArrowUp"), ("unit", "ArrowLeft")):
        before = shown(page)
        page.locator(f"{BOX} [data-key={key}]").focus()
        page.keyboard.press(press)
        after = check_shows(page, data)
        assert after != (before["block"], before["unit"])
    assert not [u for u in page.requests if urlparse(u).hostname not in ("127.0.0.1", None)]
    assert not page.errors
    context.close()


def test_touch_steps_through_units_and_shows_the_json(browser, server, site):
    box, data = shipped(site)
    context, page = open_page(browser, server, PHONE, touch=True)
    page.locator(f"{BOX} button[data-step='1']").tap()
    block, unit = check_shows(page, data)
    assert (block, unit) == (box["initial"][0], box["initial"][1] + 1)
    page.locator(f"{BOX} button[data-step='-1']").tap()
    page.locator(f"{BOX} button[data-step='-1']").tap()
    assert check_shows(page, data) == (block, unit - 2)
    assert not page.errors
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, pytest.param(DESKTOP, marks=pytest.mark.full)], ids=["phone", "desktop"])
def test_labels_never_overlap_or_leave_the_figure(browser, server, site, viewport):
    box, data = shipped(site)
    context, page = open_page(browser, server, viewport, touch=viewport is PHONE)
    page.locator(f"{BOX} [data-key=unit]").focus()
    check_shows(page, data)
    problems = []
    for block in range(len(data["blocks"])):
        for unit in (0, box["d_ff"] - 1, box["initial"][1]):
            page.evaluate(
                "([b]) => { const s = document.querySelector('.ffn-x-units [data-key=block]');"
                " s.value = String(b); s.dispatchEvent(new Event('input')); }",
                [block],
            )
            found = page.evaluate(
                SET_AND_MEASURE.replace(".ffn-x svg", ".ffn-x-units svg").replace(
                    ".ffn-x-controls", ".ffn-x-units .ffn-x-controls"
                ),
                ["unit", unit],
            )
            problems += [f"{block}/{unit}: {o}" for o in found["overlaps"]]
            problems += [f"{block}/{unit}: {t!r} leaves the figure" for t in found["outside"]]
            assert found["W"] == found["box"], found
            assert check_shows(page, data) == (block, unit)
    page.screenshot(path=str(site.parent / f"units-{viewport['width']}.png"), full_page=False)
    assert not problems, problems
    context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violations_before_and_after_loading(browser, server, site, scheme):
    if not AXE_JS.exists():
        pytest.skip(f"axe-core checks need {AXE_JS}: `make test` installs it with npm (tests/node)")
    _, data = shipped(site)
    context, page = open_page(browser, server, DESKTOP, scheme)
    found = axe_in_page(page, BOX)  # the box: the rest of the page is not this test's
    page.locator(f"{BOX} [data-key=unit]").focus()
    page.keyboard.press("ArrowRight")
    check_shows(page, data)
    found += axe_in_page(page, BOX)
    assert not found, "\n".join(found)
    context.close()
