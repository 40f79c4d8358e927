"""The explorables in a real browser (Debian's Chromium, driven by Playwright).

* **Parity.** The script's port of the formulas, evaluated in Chromium on every
  model of the sheet and hundreds of random settings, against
  ffnbook.explorables: integer counts exactly equal, ratios within 1e-12.
* **Keyboard.** Every control of every explorable is moved with the keyboard
  alone; after each key the numbers shown are those ffnbook computes for the
  settings the controls then show.
* **First view** equals the static figure's (or the glued prose's) numbers.
* **Degrades:** without JavaScript and in print only the static figure remains.
* **Light, local, accessible:** script and data within budget, loaded only where
  an explorable is, no request to another host, no axe-core violation before
  and after the controls move.

Skipped, with the reason, where Chromium, Playwright or axe-core is missing.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from sitecheck import AXE_JS, COVERAGE, SCHEMES, SCREENS, browser_api, glued, soup_of

from ffnbook import explorables, model_parameters, width
from ffnbook.models import get_model, load_models

pytestmark = pytest.mark.build
playwright_api = browser_api()

PAGES = {"width": "width", "parameters": "parameter-count", "compute": "compute", "moe": "mixture-of-experts"}
#: Every kind's page, with the neuron explorer, whose data the page glues (tests/test_units_explorer_browser.py).
ALL_PAGES = {**PAGES, "units": "trained-ffn"}
SCRIPTS = Path("_static") / "explorables"
#: Script + data, gzipped, per page. 8 KiB until the sheet grew from 19 to 25 models (issue 35):
#: their rows alone add about 290 bytes of data to the parameter-count page and 230 to compute's.
BUDGET_BYTES = 8.5 * 1024


@pytest.fixture
def open_page(browser, server):
    """Open a chapter page in a fresh context, recording console errors and foreign requests."""
    contexts = []

    def open_(name, **options):
        context = browser.new_context(**{"viewport": {"width": 1200, "height": 900}, **options})
        contexts.append(context)
        page = context.new_page()
        page.errors, page.foreign = [], []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on(
            "request",
            lambda r: page.foreign.append(r.url) if urlparse(r.url).hostname not in ("127.0.0.1", None) else None,
        )
        page.goto(server + name + ".html")
        page.wait_for_load_state("load")
        return page

    yield open_
    for context in contexts:
        context.close()


# --- reading a page ---------------------------------------------------------------------------


def shown_settings(page) -> dict:
    """The settings the explorable's controls show: a range's value as its output shows it."""
    return page.evaluate("""() => {
        const s = {};
        for (const e of document.querySelectorAll('.ffn-x-controls [data-key]')) {
            if (e.type === 'checkbox') s[e.dataset.key] = e.checked;
            else if (e.type === 'range') s[e.dataset.key] = +document.querySelector(`output[for="${e.id}"]`).dataset.value;
            else s[e.dataset.key] = e.value;
        }
        return s;
    }""")


def shown_results(page) -> dict:
    """Each result of the explorable: (exact value as data-value, text shown)."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.ffn-x-results output')]
        .map(o => [o.dataset.key, [o.dataset.value, o.textContent]]))""")


def expected(kind: str, s: dict) -> dict:
    """ffnbook's values for the settings ``s`` read from the page."""
    if kind == "width":
        return explorables.width_state(
            int(s["d_model"]), s["ratio"], s["gated"] == "true", int(s["multiple_of"]), s["bias"]
        )
    if kind == "compute":
        return explorables.compute_state(s["model"], int(s["n_ctx"]))
    if kind == "moe":
        return explorables.moe_state(
            s["model"],
            n_experts=int(s["n_experts"]),
            experts_per_token=int(s["experts_per_token"]),
            d_ff=int(s["d_ff"]),
            n_shared_experts=int(s["n_shared_experts"]),
        )
    mla = get_model(s["model"]).attention == "mla"
    return explorables.parameter_state(
        s["model"],
        n_layers=int(s["n_layers"]),
        d_model=int(s["d_model"]),
        vocab_size=int(s["vocab_size"]),
        tied_head=s["tied_head"],
        **({} if mla else {"n_kv_heads": int(s["n_kv_heads"])}),
    )


def check_shown(results: dict, want: dict, where: str) -> None:
    """Every result shown equals ffnbook's: exactly for counts, to 1e-12 for ratios,
    and its text is that value as displayed (grouped integer, percentage or ratio)."""
    assert results, f"{where}: no results shown"
    for key, (raw, text) in results.items():
        value = want[key]
        if value is None:
            assert raw == "" and text in ("not computed", "not given", "none"), f"{where}: {key} shows {text!r}"
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            assert int(raw) == value, f"{where}: {key} = {raw}, ffnbook gives {value}"
            assert text.replace(",", "") == str(value), f"{where}: {key} reads {text!r}"
            continue
        assert abs(float(raw) - value) <= 1e-12 * max(1.0, abs(value)), f"{where}: {key} = {raw} vs {value}"
        number = float(re.sub(r"[,%\u00d7]", "", text))
        if text.endswith("%"):
            assert abs(number - 100 * value) <= 0.05 + 1e-9, f"{where}: {key} reads {text!r} for {value}"
        elif float(value).is_integer():
            assert number == value, f"{where}: {key} reads {text!r} for {value}"
        else:  # rounded to the decimals shown
            decimals = len(text.split(".")[1].rstrip("\u00d7")) if "." in text else 0
            assert abs(number - value) <= 0.5 * 10**-decimals + 1e-12, f"{where}: {key} reads {text!r} for {value}"


def wait_for_summary(page, want: dict, kind: str) -> None:
    """The text alternative (announced politely) catches up with the numbers."""
    key = {"width": "d_ff", "parameters": "total", "compute": "ffn", "moe": "ffn_flops_layer"}[kind]
    playwright_api.expect(page.locator(".ffn-x-summary")).to_contain_text(f"{want[key]:,}")


# --- parity: the port against ffnbook ----------------------------------------------------------

EVALUATE = """([kind, inputs]) => {
    const F = window.ffnExplorables.formulas;
    const data = JSON.parse(document.querySelector('.ffn-x-data').textContent);
    return inputs.map((s) => kind === 'width' ? F.width(s)
        : kind === 'compute' ? F.compute(data.models[s.model], s.n_ctx)
        : F[kind](data.models[s.model], s, data.mla));
}"""


def parity_inputs(kind: str, rng: random.Random) -> list[dict]:
    """Every model of the sheet (as it is and changed) and random settings, for one explorable."""
    inputs: list[dict] = []
    if kind == "width":
        for m in load_models():
            if not m.is_moe:
                inputs.append(
                    {
                        "d_model": m.d_model,
                        "ratio": m.d_ff / m.d_model,
                        "gated": False,
                        "multiple_of": 1,
                        "bias": m.ffn_bias,
                    }
                )
        for s in width.LLAMA_SETTINGS:
            inputs.append(
                {
                    "d_model": s.d_model,
                    "ratio": 4 * (s.ffn_dim_multiplier or 1),
                    "gated": True,
                    "multiple_of": s.multiple_of,
                    "bias": False,
                }
            )
        # Exact halves: Python's round() sends them to the even neighbour.
        inputs += [{"d_model": d, "ratio": 0.5, "gated": False, "multiple_of": 1, "bias": True} for d in (3, 5, 7, 9)]
        while len(inputs) < 300:
            ratio = rng.choice([rng.randrange(5, 81) / 10, rng.uniform(0.5, 8)])
            inputs.append(
                {
                    "d_model": rng.randrange(2, 20481),
                    "ratio": ratio,
                    "gated": rng.random() < 0.5,
                    "multiple_of": rng.choice([1, 8, 64, 256, 1024, 4096, rng.randrange(1, 5000)]),
                    "bias": rng.random() < 0.5,
                }
            )
    elif kind == "compute":
        for m in load_models():
            inputs += [{"model": m.name, "n_ctx": n} for n in (1, 2, 1024, 4096, 4097, 2**20)]
        names = [m.name for m in load_models()]
        while len(inputs) < 300:
            inputs.append({"model": rng.choice(names), "n_ctx": rng.randrange(1, 2**21)})
    else:
        names = sorted(explorables.explorable_data(kind)["models"])
        inputs += [{"model": n} for n in names]
        while len(inputs) < 300:
            m = get_model(rng.choice(names))
            s: dict = {"model": m.name}
            if kind == "moe":
                s["n_experts"] = rng.randrange(1, 300)
                s.update(
                    experts_per_token=rng.randrange(1, min(s["n_experts"], 40) + 1),
                    d_ff=rng.randrange(1, 40000),
                    n_shared_experts=rng.randrange(0, 5),
                )
            else:
                step = 2 if m.architecture == "encoder-decoder" else 1
                s.update(
                    n_layers=rng.randrange(m.n_dense_layers + 1 if m.is_moe else step, 200, step),
                    d_model=m.n_heads * rng.randrange(1, 300),
                    vocab_size=rng.randrange(1, 300000),
                    tied_head=rng.random() < 0.5,
                )
                if m.attention != "mla":
                    s["n_kv_heads"] = rng.choice([k for k in range(1, m.n_heads + 1) if m.n_heads % k == 0])
            inputs.append(s)
    return inputs


def python_values(kind: str, s: dict) -> dict:
    if kind == "width":
        return explorables.width_state(**s)
    if kind == "compute":
        return explorables.compute_state(s["model"], s["n_ctx"])
    changes = {k: v for k, v in s.items() if k != "model"}
    return (explorables.moe_state if kind == "moe" else explorables.parameter_state)(s["model"], **changes)


@pytest.mark.parametrize("kind", explorables.KINDS)
def test_the_script_computes_what_ffnbook_computes(open_page, kind):
    page = open_page(PAGES[kind])
    inputs = parity_inputs(kind, random.Random(13))
    got = page.evaluate(EVALUATE, [kind, inputs])
    assert len(got) == len(inputs) >= 300
    for s, js in zip(inputs, got):
        py = python_values(kind, s)
        assert set(js) == set(py), f"{kind} {s}: keys {sorted(set(js) ^ set(py))} differ"
        for key, want in py.items():
            have = js[key]
            if want is None or isinstance(want, (bool, str)):
                assert have == want and type(have) is type(want), f"{kind} {s}: {key} = {have!r}, ffnbook {want!r}"
            elif isinstance(want, int):
                assert have == want and float(have).is_integer(), f"{kind} {s}: {key} = {have!r}, ffnbook {want}"
            else:
                assert math.isclose(have, want, rel_tol=1e-12, abs_tol=1e-12), (
                    f"{kind} {s}: {key} = {have!r}, ffnbook {want!r}"
                )
    assert not page.errors


#: The kinds a check whose mechanism every explorable shares runs on: `make test` one (compute, on a
#: page of sitecheck's sample), `make test-full` every kind. The shared mechanism: one core script,
#: the browser's own controls (keyboard), the static fallback, the page's accessibility. What each
#: kind computes (above, hundreds of settings against ffnbook), where it starts and how its labels
#: fit run on every kind in both.
SHARED_MECHANISM_KINDS = [
    kind if kind == "compute" else pytest.param(kind, marks=pytest.mark.full) for kind in explorables.KINDS
]


# --- moving every control by keyboard -------------------------------------------------------------

# Keys that move each kind of control: a range and a select step by one, a checkbox toggles.
KEYS = {
    "range": ["ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home", "PageUp"],
    "select-one": ["ArrowDown", "ArrowDown", "ArrowUp"],
    "checkbox": ["Space", "Space"],
}


@pytest.mark.parametrize("kind", SHARED_MECHANISM_KINDS)
def test_every_control_moves_by_keyboard_and_shows_ffnbooks_numbers(open_page, kind):
    page = open_page(PAGES[kind])
    check_shown(shown_results(page), expected(kind, shown_settings(page)), f"{kind} first view")
    # The figure's text alternative is the summary, which screen readers announce politely.
    summary = page.locator(".ffn-x-summary")
    assert page.locator(".ffn-x svg").get_attribute("role") == "img"
    assert page.locator(".ffn-x svg").get_attribute("aria-labelledby") == summary.get_attribute("id")
    assert summary.get_attribute("aria-live") == "polite"
    assert page.evaluate("""() => [...document.querySelectorAll('.ffn-x-controls [data-key]')]
        .every(e => e.labels.length === 1 && e.labels[0].textContent.trim())"""), "a control without a label"
    controls = page.locator(".ffn-x-controls [data-key]")
    keys = [controls.nth(i).get_attribute("data-key") for i in range(controls.count())]
    assert len(keys) >= 2
    for key in keys:
        control = page.locator(f'.ffn-x-controls [data-key="{key}"]')
        if control.is_disabled():
            continue  # (the width's rounding block while the FFN is classic: checked below)
        kind_of = control.evaluate("e => e.type")
        moved = False
        for press in KEYS[kind_of]:
            before = shown_settings(page)
            control.focus()
            page.keyboard.press(press)
            now = shown_settings(page)
            moved |= now != before
            want = expected(kind, now)
            check_shown(shown_results(page), want, f"{kind} after {press} on {key} ({now})")
        assert moved, f"{kind}: the keyboard did not move {key}"
        wait_for_summary(page, want, kind)
    assert not page.errors and not page.foreign


def test_the_rounding_block_applies_to_the_gated_ffn(open_page):
    page = open_page("width")
    block = page.locator('.ffn-x-controls [data-key="multiple_of"]')
    assert block.is_disabled()
    page.locator('.ffn-x-controls [data-key="gated"]').select_option("true")
    assert block.is_enabled()
    block.focus()
    page.keyboard.press("ArrowDown")
    s = shown_settings(page)
    check_shown(shown_results(page), expected("width", s), f"width {s}")
    assert s["multiple_of"] == "512" and s["gated"] == "true"


def test_the_model_select_resets_the_controls_to_that_model(open_page):
    page = open_page("parameter-count")
    page.locator('.ffn-x-controls [data-key="model"]').select_option("DeepSeek-V3")
    s = shown_settings(page)
    m = get_model("DeepSeek-V3")
    assert (s["n_layers"], s["d_model"], s["vocab_size"]) == (m.n_layers, m.d_model, m.vocab_size)
    assert page.locator('.ffn-x-controls [data-key="n_kv_heads"]').is_disabled()  # latent attention
    check_shown(shown_results(page), expected("parameters", s), "DeepSeek-V3")
    moe = open_page("mixture-of-experts")
    experts = moe.locator('.ffn-x-controls [data-key="n_experts"]')
    experts.focus()
    moe.keyboard.press("Home")  # one expert: top-k cannot stay at two
    s = shown_settings(moe)
    assert (s["n_experts"], s["experts_per_token"]) == (1, 1)
    check_shown(shown_results(moe), expected("moe", s), "one expert")


# --- the first view is the static figure's ---------------------------------------------------------


def first_view(open_page, kind) -> dict:
    page = open_page(PAGES[kind])
    return {k: (None if raw == "" else float(raw)) for k, (raw, _) in shown_results(page).items()}


def test_width_starts_at_the_figures_first_model(open_page, site):
    shown = first_view(open_page, "width")
    row = width.width_rows()[0]  # the figure's first bar
    assert shown["d_ff"] == row["d_ff"] and shown["d_ff_over_d_model"] == row["ratio"]
    assert shown["ffn_params"] == glued(site, "parameter-count", "pc_ffn_formula")  # 512 and 2048, biases


def test_parameters_start_at_the_figures_first_bar(open_page, site):
    shown = first_view(open_page, "parameters")
    row = model_parameters.share_rows()[0]
    assert shown["ffn_share"] == row["ffn"] and shown["total"] == row["total"]
    assert shown["total"] == glued(site, "parameter-count", "pc_gpt2_total")


def test_compute_starts_at_the_pages_counted_example(open_page, site):
    shown = first_view(open_page, "compute")
    assert shown["ffn"] == glued(site, "compute", "cp_ffn_formula")
    assert shown["projections"] == glued(site, "compute", "cp_proj_counted")
    assert shown["scores"] == glued(site, "compute", "cp_scores_counted")
    assert shown["crossover"] == glued(site, "compute", "cp_n_gpt2")


def test_moe_starts_at_mixtral_as_the_prose_counts_it(open_page, site):
    shown = first_view(open_page, "moe")
    assert shown["stored"] / 1e9 == glued(site, "mixture-of-experts", "moe_mixtral_stored_b")
    assert shown["active"] / 1e9 == glued(site, "mixture-of-experts", "moe_mixtral_active_b")
    assert shown["ffn_share"] == glued(site, "mixture-of-experts", "moe_mixtral_ffn_stored")


# --- degrades, light, local, accessible --------------------------------------------------------------

STATIC = {
    "width": "#fig-width-ratio",
    "parameters": "#fig-parameter-shares",
    "compute": "table",
    "moe": "#stored-and-active-parameters p",
}


@pytest.mark.parametrize("kind", SHARED_MECHANISM_KINDS)
def test_without_javascript_and_in_print_the_static_figure_remains(open_page, kind):
    page = open_page(PAGES[kind], java_script_enabled=False)
    assert page.locator(".ffn-x").count() == 1 and page.locator(".ffn-x").is_hidden()
    assert page.locator(STATIC[kind]).first.is_visible()
    printed = open_page(PAGES[kind])
    assert printed.locator(".ffn-x svg").is_visible()
    printed.emulate_media(media="print")
    assert printed.locator(".ffn-x").is_hidden() and printed.locator(STATIC[kind]).first.is_visible()


def gzipped(data: bytes) -> int:
    return len(gzip.compress(data, 9, mtime=0))  # as sitecheck.serve sends it


def test_scripts_load_only_where_an_explorable_is_and_fit_the_budget(site):
    """Each page loads the core and its own kind's script, nothing on other pages;
    script and data together at most 8 KiB gzipped."""
    for page in sorted(site.glob("*.html")):
        soup = soup_of(site, page.stem)
        boxes = soup.select("div.ffn-x[data-kind]")
        loaded = [
            Path(s["src"].split("?")[0]).stem for s in soup.find_all("script", src=True) if "/explorables/" in s["src"]
        ]  # in document order: the core runs first
        kinds = sorted(box["data-kind"] for box in boxes)
        assert loaded == (["core", *kinds] if kinds else []), f"{page.name} loads {loaded}"
        assert [b["data-kind"] for b in boxes] == ([k for k, n in ALL_PAGES.items() if n == page.stem]), page.name
        if kinds:
            scripts = sum(gzipped((site / SCRIPTS / f"{name}.js").read_bytes()) for name in loaded)
            data = sum(gzipped(box.select_one("script.ffn-x-data").get_text().encode()) for box in boxes)
            print(f"{page.name}: scripts {scripts} + data {data} = {scripts + data} bytes gzipped")
            assert scripts + data <= BUDGET_BYTES, f"{page.name}: {scripts + data} bytes of script and data"


def test_the_page_ships_exactly_ffnbooks_data(site):
    for kind, name in PAGES.items():
        shipped = json.loads(soup_of(site, name).select_one(f".ffn-x-{kind} script.ffn-x-data").get_text())
        assert shipped == json.loads(json.dumps(explorables.explorable_data(kind)))


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("kind", SHARED_MECHANISM_KINDS)
def test_no_axe_violations_before_and_after_moving_the_controls(open_page, kind, scheme):
    if not AXE_JS.exists():
        pytest.skip(f"axe-core checks need {AXE_JS}: `make test` installs it with npm (tests/node)")
    from sitecheck import axe_in_page

    page = open_page(PAGES[kind], color_scheme=scheme)
    page.locator(".ffn-x").scroll_into_view_if_needed()
    # The explorable only: the whole page is tests/test_site_quality.py's (and make audit's).
    found = axe_in_page(page, ".ffn-x")
    for i in range(page.locator(".ffn-x-controls [data-key]").count()):
        control = page.locator(".ffn-x-controls [data-key]").nth(i)
        if control.is_enabled():
            control.focus()
            page.keyboard.press({"checkbox": "Space"}.get(control.evaluate("e => e.type"), "ArrowDown"))
    found += axe_in_page(page, ".ffn-x")
    assert not found, "\n".join(found)
    assert not page.errors


# --- drawn to fit: at the box's width, labels clear of each other ------------------------------

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}

# In the page: set a control to a value (a range by its index), as the reader's input does.
SET_AND_MEASURE = """([key, value]) => {
    const input = document.querySelector(`.ffn-x-controls [data-key="${key}"]`);
    if (key !== null) {
        if (input.type === 'checkbox') input.checked = value;
        else input.value = String(value);
        input.dispatchEvent(new Event('input'));
    }
    const svg = document.querySelector('.ffn-x svg'), [, , W, H] = svg.getAttribute('viewBox').split(' ').map(Number);
    const boxes = [...svg.querySelectorAll('text')].map(t => { const b = t.getBBox(); return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; });
    const overlaps = [], outside = [];
    boxes.forEach((a, i) => {
        if (a[1] < -0.5 || a[3] > W + 0.5 || a[2] < -0.5 || a[4] > H + 0.5) outside.push(a[0]);
        boxes.slice(i + 1).forEach(b => {
            if (Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 0.5 && Math.min(a[4], b[4]) - Math.max(a[2], b[2]) > 0.5)
                overlaps.push(a[0] + ' / ' + b[0]);
        });
    });
    const style = getComputedStyle(svg.parentNode);
    const box = svg.parentNode.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return {W, box: Math.floor(box), shown: svg.getBoundingClientRect().width, overlaps, outside,
            labels: boxes.map(b => b[0])};
}"""

# What each control is set to: a range to its two ends, a select to each option, a checkbox both ways.
EXTREMES = """() => [...document.querySelectorAll('.ffn-x-controls [data-key]')].filter(e => !e.disabled).map(e =>
    [e.dataset.key, e.type === 'range' ? [0, +e.max] : e.type === 'checkbox' ? [true, false]
                  : [...e.options].map(o => o.value)])"""


#: Texts each figure always shows (the key of the compute figure names its lines).
REQUIRED_LABELS = {
    "width": ["this FFN: ", "8/3", "4", "FFN ", "attention "],
    "parameters": ["as in the sheet", "as set here", "FFN", "attention", "embeddings"],
    "compute": ["FLOPs per token"],
    "moe": ["as released, stored", "as set here, active", "FFN (experts)", "everything else"],
}


KINDS_WITH_MODELS = ("parameters", "compute", "moe")


@pytest.mark.parametrize("models", COVERAGE)
@pytest.mark.parametrize("device", SCREENS)
@pytest.mark.parametrize("kind", explorables.KINDS)
def test_labels_never_overlap_or_leave_the_figure_at_any_extreme(open_page, kind, device, models):
    """Every model at its own settings, and every control at each of its extremes (from the first
    model in `make test`, from every model in `make test-full`: the models' own extremes too): no two
    texts of the figure overlap and none leaves it, measured by the browser's boxes. The models
    offered are the sheet's, in its order."""
    page = open_page(PAGES[kind], **(PHONE if device == "phone" else {}))
    problems, seen = [], 0

    def check(key, value, where):
        nonlocal seen
        found = page.evaluate(SET_AND_MEASURE, [key, value])
        seen += 1
        # Drawn at its box's width: one figure unit is one pixel, nothing is scaled down.
        assert found["W"] == found["box"] and abs(found["shown"] - found["W"]) < 1, (where, found)
        problems.extend(f"{where}: {o}" for o in found["overlaps"])
        problems.extend(f"{where}: {t!r} leaves the figure" for t in found["outside"])
        # The labels the reader needs are drawn, not dropped for want of room.
        for needed in REQUIRED_LABELS[kind]:
            if not any(label.startswith(needed) for label in found["labels"]):
                problems.append(f"{where}: no label {needed!r} among {found['labels']}")

    offered = page.evaluate(
        "() => [...(document.querySelector('.ffn-x-controls [data-key=model]')?.options || [])].map(o => o.value)"
    ) or [None]
    if kind in KINDS_WITH_MODELS:  # the models offered are the sheet's, in its order
        sheet = [m.name for m in load_models()]
        assert offered == [n for n in sheet if n in offered] and len(offered) >= 2, (kind, offered)
    else:
        assert offered == [None], (kind, offered)
    for model in offered:
        if model is not None:
            check("model", model, model)
        if models == "sample" and model != offered[0]:
            continue
        for key, values in page.evaluate(EXTREMES):
            if key == "model":
                continue
            for value in values:
                check(key, value, f"{model} {key}={value}")
            if model is not None:
                check("model", model, model)  # back to the model's own settings
            elif key in ("gated", "bias"):
                check(key, values[0], f"{key} back")
        if kind == "width":  # the widest ratio axis: a small model rounded up to a large block
            for key, value in (("gated", "true"), ("d_model", 0), ("multiple_of", "4096"), ("ratio", 0)):
                check(key, value, f"{key}={value}")
    assert seen > 10
    assert not problems, "\n".join(problems[:40])
    assert not page.errors


def test_a_window_the_sheet_does_not_give_reads_not_given(open_page):
    page = open_page(PAGES["compute"])
    window = page.locator(".ffn-x-results output[data-key=window]")
    for name, shown in (("GPT-3 175B", "not given"), ("GPT-2 small", "none"), ("Mistral 7B", "4,096")):
        page.select_option(".ffn-x-controls [data-key=model]", name)
        assert window.text_content() == shown, name
    assert get_model("GPT-3 175B").attention_window_known is False  # what "not given" stands for


def test_dense_models_show_no_active_parameters(open_page):
    page = open_page(PAGES["parameters"])
    active = page.locator(".ffn-x-results output[data-key$=_active]")
    assert active.count() == 3
    for name, moe in (("GPT-2 small", False), ("Mixtral 8x7B", True)):
        page.select_option(".ffn-x-controls [data-key=model]", name)
        assert all(active.nth(i).is_visible() == moe for i in range(3)), name
