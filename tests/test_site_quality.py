"""The built site as a static host serves it: light, offline, accessible, findable, reproducible.

Static checks read the built HTML. Browser checks serve the site gzip-compressed
on localhost (tests/sitecheck.py: serve) and drive Debian's Chromium with
Playwright; they skip, with the reason printed, where Chromium or Playwright is
missing, and the axe-core checks where `npm ci` has not installed axe-core.
Lighthouse itself runs only in `make audit` (slow).
"""

from __future__ import annotations

import filecmp
import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from sitecheck import (
    AXE_JS,
    AXE_PAGES,
    DOCS,
    LIGHTHOUSE_PAGES,
    SCHEMES,
    allowed_to_differ,
    axe_in_page,
    make_html,
    soup_of,
)

pytestmark = pytest.mark.build

FIRST_VIEW_BUDGET_KIB = 300


def content_pages(site: Path) -> list[str]:
    return sorted(p.stem for p in site.glob("*.html"))


def chapter_pages(site: Path) -> list[str]:
    """The pages written from docs/*.md (not search, the index, the 404 page)."""
    return [n for n in content_pages(site) if (DOCS / f"{n}.md").exists() and n != "404"]


# --- findable ------------------------------------------------------------------------------


def test_every_page_has_its_own_meta_description(site):
    seen = {}
    for name in content_pages(site):
        tag = soup_of(site, name).find("meta", attrs={"name": "description"})
        assert tag is not None and len(tag["content"]) > 20, f"{name}.html has no meta description"
        assert len(tag["content"]) <= 160, f"{name}.html: description too long for a search result"
        seen.setdefault(tag["content"], []).append(name)
    duplicated = {d: n for d, n in seen.items() if len(n) > 1 and set(n) & set(chapter_pages(site))}
    assert not duplicated, duplicated


def test_sitemap_lists_every_chapter_page_and_robots_points_to_it(site):
    sitemap = (site / "sitemap.xml").read_text()
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert len(set(locs)) == len(locs)
    listed = {urlparse(u).path.rsplit("/", 1)[-1] for u in locs}
    for page in ("index.html", "position-independence.html", "glossary.html"):
        assert page in listed
    assert "404.html" not in listed and "search.html" not in listed
    base = locs[0].rsplit("/", 1)[0] + "/"
    assert f"Sitemap: {base}sitemap.xml" in (site / "robots.txt").read_text()


def test_404_page_and_favicon(site):
    page = (site / "404.html").read_text()
    assert re.search(r'<base href="/[^"]*"', page), "404.html needs a <base> to work at any address"
    assert "Page not found" in page
    for name in ("index", "404", "position-independence"):
        icon = soup_of(site, name).find("link", rel="icon")
        assert icon is not None and (site / "_static" / Path(icon["href"]).name).exists()


# --- downloads --------------------------------------------------------------------------------


def test_one_download_menu_offers_the_notebook_and_the_source(site):
    """Each chapter page offers its downloads in one place, the theme's download menu: its
    MyST source, and for a notebook page the reader's notebook (bookext.notebooks.reader_notebooks: the
    one Colab and Binder open), with numbered cell ids so that two builds offer one file."""
    for name in chapter_pages(site):
        soup = soup_of(site, name)
        menus = soup.select(".dropdown-download-buttons")
        assert len(menus) == 1, f"{name}.html: {len(menus)} download menus"
        offered = {a["href"] for a in menus[0].select("a")}
        elsewhere = [
            a["href"]
            for a in soup.select("a[download], a[href$='.ipynb']")
            if not a.find_parent(class_=["dropdown-download-buttons", "dropdown-launch-buttons"])
            # the whole book's PDF, offered once on the landing page when it was built
            and not (name == "index" and a["href"].endswith("/ffnbook.pdf"))
        ]
        assert not elsewhere, f"{name}.html offers downloads outside the menu: {elsewhere}"
        assert f"_sources/{name}.md" in offered, name
        source = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        front_matter = source.split("\n---\n", 1)[0] if source.startswith("---\n") else ""
        if "\nkernelspec:" not in front_matter:
            continue
        assert f"_sources/{name}.ipynb" in offered, name
        offered_file = (site / "_sources" / f"{name}.ipynb").read_text(encoding="utf-8")
        assert offered_file == (site / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"), name
        notebook = json.loads(offered_file)
        ids = [c["id"] for c in notebook["cells"]]
        assert ids == [f"cell-{i}" for i in range(len(ids))], name


# --- accessible figures ----------------------------------------------------------------------


def test_every_figure_has_real_alt_text(site):
    """Alt text says what a figure shows: a sentence, not a file name or a copy of the caption."""
    poor = []
    for name in content_pages(site):
        for figure in soup_of(site, name).select("article figure"):
            figcaption = figure.find("figcaption")
            caption = " ".join(figcaption.get_text(" ").split()) if figcaption else ""
            for img in figure.find_all("img"):
                alt = " ".join(img.get("alt", "").split())
                if len(alt) < 40 or alt == caption or alt.lower().endswith((".svg", ".png")):
                    poor.append(f"{name}.html: {img.get('src')}: alt={alt!r}")
    assert not poor, "\n".join(poor)


def test_figures_are_drawn_on_an_opaque_white_background(site):
    """Dark text on white reads in the dark theme too: no figure may be transparent."""
    transparent = []
    for svg in sorted((site / "_images").glob("*.svg")):
        match = re.search(r'<g id="patch_1">\s*<path d="[^"]*"\s*style="fill: (#[0-9a-f]{6})', svg.read_text())
        if not match or match.group(1) != "#ffffff":
            transparent.append(svg.name)
    assert not transparent, transparent


# --- light ---------------------------------------------------------------------------------


def test_pages_do_not_load_the_icon_script_or_the_search_index(site):
    for name in content_pages(site):
        html = (site / f"{name}.html").read_text()
        assert "fontawesome.js" not in html, name
        assert not re.search(r'<(i|span) class="[^"]*\bfa-(solid|regular|brands)\b', html), (
            f"{name}.html: an icon left for fontawesome.js to draw"
        )
        if name != "search":
            assert "searchindex.js" not in html, name


# --- reproducible ---------------------------------------------------------------------------


@pytest.mark.full  # a second clean build of the whole book: a minute (make test-full)
def test_two_clean_builds_give_identical_html(site, tmp_path):
    """A second clean build (its own execution cache) matches the first byte for byte,
    except the pages listed in sitecheck.PAGES_WITH_MEASURED_TIMES (and what derives from them)."""
    result = make_html(DOCS, tmp_path / "again")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    again = tmp_path / "again" / "html"
    files = {p.relative_to(root).as_posix() for root in (site, again) for p in root.rglob("*") if p.is_file()}
    differ = {
        f
        for f in files
        if not (site / f).exists() or not (again / f).exists() or not filecmp.cmp(site / f, again / f, shallow=False)
    }
    unexpected = sorted(differ - allowed_to_differ(site, again))
    assert not unexpected, f"differ between two clean builds: {unexpected}"


# --- in a browser ---------------------------------------------------------------------------


def open_page(browser, url: str, scheme: str = "light", width: int = 412):
    """Load ``url`` like a phone; record console errors, requests to other hosts, failures."""
    context = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 823})
    page = context.new_page()
    page.errors, page.foreign, page.failed, page.transferred = [], [], [], []
    # (A 404 page's own status is reported as a console error: not the page's fault.)
    page.on(
        "console", lambda m: page.errors.append(m.text) if m.type == "error" and m.location.get("url") != url else None
    )
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on(
        "request", lambda r: page.foreign.append(r.url) if urlparse(r.url).hostname not in ("127.0.0.1", None) else None
    )
    page.on("requestfailed", lambda r: page.failed.append(r.url))
    page.on("requestfinished", lambda r: page.transferred.append(r))
    response = page.goto(url)
    page.wait_for_load_state("load")
    page.status = response.status if response else None
    return context, page


@pytest.mark.parametrize("name", LIGHTHOUSE_PAGES)
def test_first_view_is_light_and_local(browser, server, name):
    context, page = open_page(browser, server + name)
    total = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in page.transferred)
    context.close()
    assert not page.foreign and not page.failed and not page.errors
    assert total / 1024 <= FIRST_VIEW_BUDGET_KIB, f"{name}: {total / 1024:.0f} KiB on first view"


def test_404_page_works_at_a_deep_missing_address(browser, server, site):
    published = re.search(r'<base href="(/[^"]*)"', (site / "404.html").read_text()).group(1)
    context, page = open_page(browser, server.rstrip("/") + published + "no/such/page.html")
    styled = page.evaluate("getComputedStyle(document.body).fontFamily")
    home = page.locator("article a.reference").first.evaluate("a => a.href")
    context.close()
    assert page.status == 404
    assert not page.failed and not page.errors and not page.foreign
    assert "serif" in styled or "sans" in styled  # the theme's stylesheet loaded
    assert home.endswith(published + "index.html")


@pytest.fixture(scope="module")
def axe(browser):
    if not AXE_JS.exists():
        pytest.skip(f"axe-core checks need {AXE_JS}: `make test` installs it with npm (tests/node)")
    return AXE_JS


#: axe-core's pages in `make test`, one of each template: the landing page, an API page and a
#: chapter page whose check also answers a self-check and opens a tooltip (a chapter page's
#: explorable, problems and previews are checked where they are tested: test_explorables_browser,
#: test_problems_browser, test_previews_browser); `make test-full` and `make audit` check every
#: one of AXE_PAGES.
AXE_IN_MAKE_TEST = ("index.html", "api/feedforward.html", "position-independence.html")


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "name", [name if name in AXE_IN_MAKE_TEST else pytest.param(name, marks=pytest.mark.full) for name in AXE_PAGES]
)
def test_no_axe_violations(browser, server, axe, name, scheme):
    context, page = open_page(browser, server + name, scheme=scheme, width=1200)
    found = axe_in_page(page)
    if name == "position-independence.html":  # answered self-check and open tooltip too
        quiz = page.locator("form.ffn-quiz").first
        quiz.locator("input[type=radio]").first.check()
        quiz.locator("button").click()
        page.locator(".ffn-term.ffn-explained a").first.hover()
        found += axe_in_page(page)
    context.close()
    assert not found, "\n".join(found)


def test_every_control_is_reachable_with_the_keyboard(browser, server):
    """Tab from the top reaches every visible button, select, input and summary of a page,
    the reading tools' controls included (their panel opened)."""
    context, page = open_page(browser, server + "position-independence.html", width=1200)
    page.evaluate("document.querySelector('details.ffn-tools').open = true")
    # checkVisibility: not hidden by display or by a closed <details> (content-visibility).
    controls = page.evaluate("""() => [...document.querySelectorAll(
            'button, select, input, summary, [role=switch]')]
        .filter(e => e.checkVisibility() && !e.disabled && e.closest('dialog') === null)
        // one tab stop per radio group: the arrow keys move within it
        .filter(e => e.type !== 'radio' || e === document.querySelector(`input[name="${e.name}"]`))
        .map((e, i) => { e.dataset.ffnControl = i; return i; })""")
    reached = set()
    for _ in range(600):
        page.keyboard.press("Tab")
        index = page.evaluate("document.activeElement && document.activeElement.dataset.ffnControl")
        if index is not None:
            reached.add(int(index))
        if len(reached) == len(controls):
            break
    missing = page.evaluate(
        """(reached) => [...document.querySelectorAll('[data-ffn-control]')]
        .filter(e => !reached.includes(+e.dataset.ffnControl))
        .map(e => e.outerHTML.slice(0, 120))""",
        sorted(reached),
    )
    context.close()
    assert controls and not missing, missing
