"""The book's theme settings, template overrides and post-processing on a tiny book, built
in-process (tests/roots/test-theme reads html_theme, its options and templates_path from
the book's conf.py): what each override is for holds, without building the book. Then
the same book with a template standing for a theme release whose markup changed: the
build fails, naming the edits that no longer match."""

from __future__ import annotations

import json
from pathlib import Path

import pydata_sphinx_theme
import pytest

import bookext
from bookext.content.glossary_data import LEVELS
from bookext.website.postprocess import ThemeMarkupChanged

BOOK_TEMPLATES = str(Path(bookext.__file__).resolve().parents[2] / "_templates")
TESTROOT = "theme"
PAGES = ("index", "notebook", "404", "search", "genindex")


@pytest.fixture(scope="module")
def page(quiet_tiny_book, tiny_page):
    """Read a page of the tiny book, which built without a warning: ``page("index")``."""
    return tiny_page


def test_icons_are_inline_svg_and_no_page_loads_the_icon_script(page):
    for name in PAGES:
        html = page(name)
        assert html.select("svg.svg-inline--fa"), name
        assert not html.select("i[class*='fa-'], span[class*='fa-']"), name
        assert not html.find("script", src=lambda s: s and "fontawesome" in s), name
        assert not html.find("link", rel="preload"), name


def test_only_the_search_page_loads_the_search_index(page):
    for name in PAGES:
        sources = [s.get("src", "") for s in page(name).find_all("script")]
        assert any("searchindex.js" in s for s in sources) == (name == "search"), name


def test_search_button_is_named_by_its_visible_text(page):
    button = page("index").select_one("button.search-button-field")
    assert not button.has_attr("aria-label")
    assert " ".join(button.get_text(" ").split()) == "Search Ctrl + K"


def test_the_primary_sidebar_is_one_landmark(page):
    sidebar = page("index").find(id="pst-primary-sidebar")
    landmark = sidebar.find(recursive=False)
    assert landmark["role"] == "complementary" and landmark["aria-label"] == "Book navigation"
    assert landmark.select_one("button.search-button-field") and landmark.select_one("nav.bd-links")


def test_each_sidebar_toggle_is_the_only_one_of_its_kind(page):
    """Both themes' scripts bind the first ``.primary-toggle`` and ``.secondary-toggle``
    of a page (``document.querySelector``). pydata-sphinx-theme's top bar, which the book
    theme leaves empty, would write hidden ones before the article header's: then the
    visible toggles do nothing (conf.py's ``navbar_persistent``; the browser checks are in
    tests/test_browser_navigation.py)."""
    html = page("index")
    top_bar = html.find(id="pst-header")
    assert not top_bar.find_all(True), "pydata-sphinx-theme's top bar is not empty"
    for kind in ("primary-toggle", "secondary-toggle"):
        toggles = html.select(f"button.{kind}")
        assert len(toggles) == 1 and toggles[0].find_parent(class_="bd-header-article"), kind
    assert len(page("notebook").select("button.primary-toggle")) == 1


def test_reading_tools_sit_in_the_article_header_on_pages_with_content(page):
    for name in ("index", "notebook"):
        html = page(name)
        tools = html.select("details.ffn-tools")
        assert len(tools) == 1 and tools[0].find_parent(class_="bd-header-article"), name
        assert "pst-js-only" in tools[0]["class"]
        assert tools[0].select_one("select#ffn-expertise") and tools[0].select_one("#ffn-links")
        # The reader's levels are the glossary's: the tooltips carry the same names.
        options = [(o["value"], o.get_text()) for o in tools[0].select("select#ffn-expertise option")]
        assert options == [(level, level.capitalize()) for level in LEVELS]
        assert not html.select("article .ffn-tools")
    for name in ("404", "search", "genindex"):
        assert not page(name).select(".ffn-tools"), name


def test_one_download_menu_and_its_notebook(page, quiet_tiny_book):
    for name in ("index", "notebook"):
        html = page(name)
        assert len(html.select(".dropdown-download-buttons")) == 1
        offered = [a["href"] for a in html.select(".dropdown-download-buttons a")]
        ipynb = [f"_sources/{name}.ipynb"] if name == "notebook" else []
        assert offered == ipynb + [f"_sources/{name}.md"], name
    notebook = json.loads((quiet_tiny_book.outdir / "_sources" / "notebook.ipynb").read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert ["".join(c["source"]) for c in code] == ["x = 1", "x + 1"]
    ids = [c["id"] for c in notebook["cells"]]
    assert ids == [f"cell-{i}" for i in range(len(ids))]


def test_launch_menu_logos_load_lazily(page):
    logos = page("notebook").select(".dropdown-launch-buttons img")
    assert len(logos) == 2 and all(img["loading"] == "lazy" for img in logos)


def test_theme_stylesheet_and_icon_fonts_are_cut_down(page, quiet_tiny_book):
    installed = Path(pydata_sphinx_theme.__file__).parent / "theme/pydata_sphinx_theme/static"
    css = (quiet_tiny_book.outdir / "_static" / "styles" / "pydata-sphinx-theme.css").read_text()
    assert "bookext.website.postprocess" in css and "sourceMappingURL" not in css
    webfonts = quiet_tiny_book.outdir / "_static" / "vendor" / "fontawesome" / "webfonts"
    fonts = sorted(webfonts.glob("*.woff2"))
    assert fonts
    for font in fonts:
        original = installed / "vendor" / "fontawesome" / "webfonts" / font.name
        assert font.stat().st_size < original.stat().st_size / 4, font.name


def test_the_policy_names_each_inline_script_and_handler_of_the_themes_pages(page):
    from bookext.website.security_policy import script_hash

    for name in PAGES:
        soup = page(name)
        policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
        script_src = next(d.split() for d in policy.split(";") if d.split()[:1] == ["script-src"])
        inline = [
            s.string or ""
            for s in soup.find_all("script")
            if not s.get("src") and s.get("type") in (None, "text/javascript")
        ]
        handlers = [v for tag in soup.find_all(True) for k, v in tag.attrs.items() if k.startswith("on")]
        assert inline, name  # the theme's own: colour mode, page name...
        assert set(script_src) == {
            "script-src",
            "'self'",
            *(["'unsafe-hashes'"] if handlers else []),
            *(script_hash(t) for t in inline + handlers),
        }, name


def test_with_script_hashes_skips_data_blocks_and_needs_one_policy():
    from bookext.website.meta_tags import meta_tag
    from bookext.website.security_policy import CONTENT_SECURITY_POLICY, script_hash, with_script_hashes

    head = meta_tag("Content-Security-Policy", CONTENT_SECURITY_POLICY, "http-equiv")
    page = (
        f"<head>{head}<script>a()</script><script src='x.js'></script>"
        '<script type="application/json">{"b": 1}</script></head><body><button onclick="c()">'
    )
    text, problems = with_script_hashes(page, "p.html")
    policy = text.split('content="')[1].split('"')[0].replace("&#x27;", "'")
    assert problems == [] and "script-src 'self' 'unsafe-hashes' " in policy
    assert sorted(policy.split("script-src 'self' 'unsafe-hashes' ")[1].split(";")[0].split()) == sorted(
        [script_hash("a()"), script_hash("c()")]
    )
    assert with_script_hashes(text, "p.html")[0] == text  # applied again: the same page
    assert with_script_hashes("<head></head>", "q.html")[1] == [
        "content security policy: q.html has 0 policies, expected one"
    ]


@pytest.mark.sphinx(
    "html",
    testroot="theme",
    srcdir="theme-changed",
    freshenv=True,
    confoverrides={"templates_path": ["_changed_templates", BOOK_TEMPLATES]},
)
def test_a_theme_whose_markup_changed_fails_the_build_naming_the_edits(app):
    with pytest.raises(ThemeMarkupChanged) as failure:
        app.build()
    message = str(failure.value)
    assert (
        'icons as inline SVG: index.html still has \'<i class="fa-solid fa-magnifying-glass" role="presentation">\''
    ) in message
    assert (
        'lazy launch-menu logos: index.html still has \'<img src="_static/images/logo_binder.svg" alt="Binder logo">\''
    ) in message


def test_make_live_pages_allow_sphinx_autobuilds_reload_script():
    """`make live` serves the pages with sphinx-autobuild, which adds an inline reload script."""
    import re
    from types import SimpleNamespace

    from sphinx_autobuild.middleware import web_socket_script

    from bookext.website.security_policy import live_reload_script

    makefile = (Path(bookext.__file__).resolve().parents[3] / "Makefile").read_text()
    assert re.search(
        r"--host 127\.0\.0\.1 --port \$\(LIVE_PORT\).*"
        r"-D ffnbook_live_reload_host=127\.0\.0\.1:\$\(LIVE_PORT\)",
        makefile,
        re.S,
    )
    app = SimpleNamespace(config=SimpleNamespace(ffnbook_live_reload_host="127.0.0.1:8000"))
    (script,) = live_reload_script(app)
    assert f"<script>{script}</script>" in web_socket_script("127.0.0.1:8000")
    assert live_reload_script(SimpleNamespace(config=SimpleNamespace(ffnbook_live_reload_host=""))) == ()


def test_a_page_has_three_stylesheets_basic_the_themes_and_one_bundle_of_the_rest(page, quiet_tiny_book):
    """Each stylesheet is a request the first paint waits for: basic.css is linked in the
    place of the theme's theme.css (which only @imports it), and the other stylesheets
    (Pygments, the book theme, myst-nb, the book's) come as one bundle, in their order."""
    static = quiet_tiny_book.outdir / "_static"
    for name in PAGES:
        links = [link["href"].split("?")[0] for link in page(name).find_all("link", rel="stylesheet")]
        assert links[:2] == ["_static/basic.css", "_static/styles/pydata-sphinx-theme.css"], name
        assert len(links) == 3 and links[2].startswith("_static/styles-"), name
    bundle = (quiet_tiny_book.outdir / links[2]).read_text()
    parts = ["pygments.css", "styles/sphinx-book-theme.css", "ffnbook.css"]
    starts = [bundle.index(f"/* _static/{part} */") for part in parts]
    assert starts == sorted(starts)
    own = (static / "ffnbook.css").read_text().strip()
    assert own in bundle and "sourceMappingURL" not in bundle


def test_admonition_icons_need_no_icon_font(page, quiet_tiny_book):
    css = (quiet_tiny_book.outdir / "_static" / "styles" / "pydata-sphinx-theme.css").read_text()
    appended = css[css.index("admonition icons as SVG masks") :]
    assert ".admonition.tip>.admonition-title:after" in appended
    assert "mask-image:var(--ffn-icon-lightbulb)" in appended
    assert '--ffn-icon-lightbulb:url("data:image/svg+xml,' in appended
