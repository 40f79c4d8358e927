"""What bookext.website's page parts (page_assets, accessible_markup, meta_description, notfound,
sitemap) do to each page through Sphinx's hooks, built in-process on a
tiny book (tests/roots/test-pages, not executed): the meta description, the page's
scripts and stylesheets, accessible markup from node overrides, the 404 page's <base>,
the sitemap and robots.txt."""

from __future__ import annotations

import re

import pytest

TESTROOT = "pages"


@pytest.fixture(scope="module")
def page(quiet_tiny_book, tiny_page):
    """Read a page of the tiny book, which built without a warning: ``page("index")``."""
    return tiny_page


def descriptions(page, name: str) -> list[str]:
    return [m["content"] for m in page(name).find_all("meta", attrs={"name": "description"})]


# --- meta description ------------------------------------------------------------------------


def test_description_is_the_learning_goals_else_the_first_long_paragraph(page):
    assert descriptions(page, "index") == [
        "Learn where the description of a page comes from; which scripts a page loads."
    ]
    assert descriptions(page, "plain") == [
        "This paragraph, the first one longer than forty characters, describes the page."
    ]


def test_a_page_that_sets_its_own_description_keeps_it(page):
    assert descriptions(page, "own") == ["The page's own words."]


def test_pages_without_a_doctree_are_described_too(page):
    assert descriptions(page, "search") == ["Search Tiny book."]
    assert descriptions(page, "genindex") == ["Index of the terms and names in Tiny book."]


# --- scripts and stylesheets ----------------------------------------------------------------------


def scripts(page, name: str) -> list:
    return page(name).find_all("script")


def test_every_script_with_a_file_is_deferred_and_the_options_are_inline(page, quiet_tiny_book):
    for name in ("index", "plain", "cards", "notebook"):
        page_scripts = scripts(page, name)
        external = [s for s in page_scripts if s.get("src")]
        assert external and all(s.has_attr("defer") or s.has_attr("async") for s in external), name
        assert not any("documentation_options" in s.get("src", "") for s in page_scripts)
        inline = [s.get_text() for s in page_scripts if not s.get("src")]
        options = next(i for i, text in enumerate(inline) if "const DOCUMENTATION_OPTIONS" in text)
        assert "LANGUAGE: 'en'" in inline[options]
        # Written the way Sphinx writes documentation_options.js from the same template.
        written = (quiet_tiny_book.outdir / "_static" / "documentation_options.js").read_text()
        assert inline[options].strip() == written.strip()


def test_the_search_page_keeps_sphinx_script_order(page):
    external = [s["src"] for s in scripts(page, "search") if s.get("src")]
    assert any("documentation_options.js" in src for src in external)
    assert not any(s.has_attr("defer") for s in scripts(page, "search") if "searchtools" in s.get("src", ""))


def test_sphinx_design_files_only_on_pages_that_use_it(page, quiet_tiny_book):
    def design_files(name):
        html = page(name)
        # The page's stylesheets come as one bundle (bookext.website.stylesheet_bundles).
        styles = "".join(
            (quiet_tiny_book.outdir / link["href"].split("?")[0]).read_text()
            for link in html.find_all("link", rel="stylesheet")
        )
        return re.findall(r"/\* _static/sphinx-design[^ ]* \*/", styles) + [
            s["src"] for s in html.find_all("script", src=re.compile("design-tabs"))
        ]

    assert len(design_files("cards")) == 2
    for name in ("index", "plain", "refs", "notebook", "search"):
        assert design_files(name) == [], name


# --- accessible markup (node overrides) -------------------------------------------------------


def test_bibliography_entries_are_list_items_without_the_deprecated_role(page):
    html = page("refs")
    wrapper = html.select_one("div[role=list].citation-list")
    assert [c.get("role") for c in wrapper.select("div.citation")] == ["listitem", "listitem"]
    assert "doc-biblioentry" not in str(page)


def test_a_folded_cell_is_named_by_its_visible_summary(page):
    summary = page("notebook").select_one("details.hide > summary")
    assert summary is not None and not summary.has_attr("aria-label")
    assert [p.get_text() for p in summary.find_all("p")] == ["Show code cell source", "Hide code cell source"]


# --- 404, sitemap, robots.txt ---------------------------------------------------------------------


def test_the_404_page_resolves_its_links_from_the_site_root(page):
    head = page("404").head
    base = head.find("base")
    assert base["href"] == "/book/"
    first_address = head.find(lambda tag: tag.has_attr("href") or tag.has_attr("src"))
    assert first_address is base, "the <base> must come before any other address in <head>"
    assert page("index").find("base") is None


def test_sitemap_lists_the_content_pages_and_robots_points_to_it(page, quiet_tiny_book):
    sitemap = (quiet_tiny_book.outdir / "sitemap.xml").read_text()
    assert re.findall(r"<loc>([^<]+)</loc>", sitemap) == [
        f"https://example.org/book/{name}.html" for name in ("cards", "index", "notebook", "own", "plain", "refs")
    ]
    robots = (quiet_tiny_book.outdir / "robots.txt").read_text()
    assert "Sitemap: https://example.org/book/sitemap.xml" in robots
