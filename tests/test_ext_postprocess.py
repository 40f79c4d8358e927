"""The edits of the theme's output that no hook can make (bookext.website.postprocess) check that they
did their work: on saved theme HTML they leave nothing undone; on variants standing for a
theme whose markup changed, each reports itself by name, with the page and the markup."""

from __future__ import annotations

import logging
from pathlib import Path

import pydata_sphinx_theme
import pytest

from bookext.website import postprocess
from bookext.website.postprocess import (
    ThemeMarkupChanged,
    admonition_icons_as_masks,
    edit_page,
    fontawesome_icons,
    page_edits,
    subset_icon_fonts,
    trim_theme_css,
)

SAVED = Path(__file__).resolve().parent / "roots" / "saved-html" / "article-header.html"
THEME_STATIC = Path(pydata_sphinx_theme.__file__).parent / "theme/pydata_sphinx_theme/static"


@pytest.fixture(scope="module")
def edits():
    """The edits, with the icons of the installed theme's fontawesome.js."""
    return page_edits(fontawesome_icons(THEME_STATIC / "scripts" / "fontawesome.js"))


@pytest.fixture(scope="module")
def saved() -> str:
    return SAVED.read_text(encoding="utf-8")


def test_on_the_saved_theme_output_every_edit_is_done(edits, saved):
    icons = saved.count('class="fa') + saved.count('class="theme-switch fa')
    text, problems = edit_page(saved, "notebook.html", edits)
    assert problems == []
    assert icons > 0 and text.count('<svg class="svg-inline--fa ') == icons
    assert 'class="fa' not in text and "theme-switch fa-solid" not in text
    # The icon keeps its other classes and attributes (the theme's script finds it by them).
    assert (
        '<svg class="svg-inline--fa fa-sun theme-switch fa-lg fa-fw" data-mode="light" title="Light" aria-hidden="true"'
    ) in text
    assert text.count('<img loading="lazy" alt=') == 2


def test_the_edits_are_idempotent(edits, saved):
    once, _ = edit_page(saved, "notebook.html", edits)
    twice, problems = edit_page(once, "notebook.html", edits)
    assert twice == once and problems == []


@pytest.mark.parametrize(
    "original, changed, edit",
    [
        # An attribute Font Awesome's script would accept, but the edit's pattern does not.
        (
            '<span class="fa-solid fa-bars"></span>',
            '<span class="fa-solid fa-bars" role="presentation">',
            "icons as inline SVG",
        ),
        # Font Awesome 4's class names.
        ('<i class="fas fa-rocket"></i>', '<i class="fa fa-rocket">', "icons as inline SVG"),
        # An icon the theme's script does not have (by this name).
        ('<i class="fas fa-download"></i>', '<i class="fas fa-download-alt">', "icons as inline SVG"),
        # The logo's attributes in another order.
        (
            '<img alt="Binder logo" src="_static/images/logo_binder.svg">',
            '<img src="_static/images/logo_binder.svg" alt="Binder logo">',
            "lazy launch-menu logos",
        ),
    ],
)
def test_changed_theme_markup_is_reported_by_the_edit_that_missed_it(edits, saved, original, changed, edit):
    """``changed`` is the opening tag a changed theme writes instead of ``original``."""
    closing = original[original.index(">") + 1 :]
    assert original in saved
    _, problems = edit_page(saved.replace(original, changed + closing, 1), "notebook.html", edits)
    assert problems == [f"{edit}: notebook.html still has {changed!r}"]


# --- the theme's stylesheet and fonts ------------------------------------------------------

CSS = (
    '.fa-bars{--fa:"\\f0c9"}.fa-close,.fa-xmark{--fa:"\\f00d"}.fa-unused{--fa:"\\f000"}'
    ".x{color:red}/*# sourceMappingURL=pydata-sphinx-theme.css.map*/"
)


def test_glyph_rules_of_unused_icons_go_and_the_rest_stay_whole():
    css = trim_theme_css(CSS, {"bars"})
    assert '.fa-bars{--fa:"\\f0c9"}' in css
    assert '.fa-close,.fa-xmark{--fa:"\\f00d"}' in css  # xmark: drawn by the theme's script
    assert "fa-unused" not in css and ".x{color:red}" in css
    assert "sourceMappingURL" not in css and ".svg-inline--fa{" in css


def test_a_stylesheet_without_glyph_rules_or_source_map_fails_the_build():
    with pytest.raises(ThemeMarkupChanged, match="no Font Awesome glyph rules"):
        trim_theme_css(".fa-bars::before{content:'\\f0c9'}" + postprocess.SOURCE_MAP, set())
    with pytest.raises(ThemeMarkupChanged, match="sourceMappingURL"):
        trim_theme_css('.fa-bars{--fa:"\\f0c9"}', {"bars"})


def test_the_installed_theme_stylesheet_still_has_what_the_edits_change():
    css = (THEME_STATIC / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    trimmed = trim_theme_css(css, {"bars"})
    kept = postprocess.GLYPH_RULE.findall(trimmed)
    assert len(postprocess.GLYPH_RULE.findall(css)) > len(kept) > 0
    assert all({"bars", "xmark"} & {s[len(".fa-") :] for s in rule.split(",")} for rule in kept)


def test_a_theme_without_the_icon_script_or_fonts_fails_the_build(tmp_path):
    with pytest.raises(ThemeMarkupChanged, match="no longer ships fontawesome.js"):
        fontawesome_icons(tmp_path / "fontawesome.js")
    (tmp_path / "fontawesome.js").write_text("console.log('icons elsewhere')")
    with pytest.raises(ThemeMarkupChanged, match="found no icon definitions"):
        fontawesome_icons(tmp_path / "fontawesome.js")
    with pytest.raises(ThemeMarkupChanged, match="found 0 fonts"):
        subset_icon_fonts(tmp_path, '--pst-icon-bell:"\\f0f3"')


def test_each_admonition_icon_becomes_a_mask_of_the_same_icon():
    icons = {("fas", "U+f0eb"): (384, 512, "M1 2z"), ("fas", "U+f0f3"): (448, 512, "M3 4z")}
    css = (
        '--pst-icon-lightbulb:"\uf0eb";--pst-icon-bell:"\\f0f3";'
        "--pst-icon-admonition-default:var(--pst-icon-bell);--pst-icon-admonition-tip:var(--pst-icon-lightbulb);"
        ".admonition>.admonition-title:after{color:red;content:var(--pst-icon-admonition-default);font:x}"
        ".admonition.tip>.admonition-title:after{content:var(--pst-icon-admonition-tip)}"
    )
    masks = admonition_icons_as_masks(css, icons)
    assert ".admonition.tip>.admonition-title:after{mask-image:var(--ffn-icon-lightbulb)}" in masks
    assert ".admonition>.admonition-title:after{mask-image:var(--ffn-icon-bell)}" in masks
    assert "viewBox='0 0 384 512'%3E%3Cpath d='M1 2z'/%3E" in masks
    assert 'content:"";font:inherit' in masks


def test_an_admonition_icon_without_its_drawing_fails_the_build():
    css = (
        '--pst-icon-bell:"\uf0f3";--pst-icon-admonition-default:var(--pst-icon-bell);'
        ".admonition>.admonition-title:after{content:var(--pst-icon-admonition-default)}"
    )
    with pytest.raises(ThemeMarkupChanged, match="no solid icon found"):
        admonition_icons_as_masks(css, {})
    with pytest.raises(ThemeMarkupChanged, match="expected the default and several kinds"):
        admonition_icons_as_masks(".x{color:red}", {})


def test_the_installed_theme_has_an_icon_for_every_admonition():
    css = (THEME_STATIC / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    icons = fontawesome_icons(THEME_STATIC / "scripts" / "fontawesome.js")
    masks = admonition_icons_as_masks(css, icons)
    for kind in ("note", "tip", "warning", "error", "hint", "important", "seealso"):
        assert f".admonition.{kind}>.admonition-title:after" in masks, kind


# --- only what Sphinx wrote since is edited again ------------------------------------------------


def _theme_book_build(srcdir: Path, builddir: Path):
    import io

    from sphinx.testing.util import SphinxTestApp

    app = SphinxTestApp("html", srcdir=srcdir, builddir=builddir, status=io.StringIO(), warning=io.StringIO())
    try:
        app.build()
    finally:
        app.cleanup()
    assert app.statuscode == 0, app._warning.getvalue()
    return app


def _pages(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.html") if "_static" not in p.parts}


def test_a_rebuild_edits_only_the_pages_sphinx_wrote_again_and_publishes_what_a_clean_build_does(
    rootdir, tmp_path, calls
):
    import shutil

    srcdir = tmp_path / "src"
    shutil.copytree(rootdir / "test-theme", srcdir)
    _theme_book_build(srcdir, tmp_path / "build")
    edited = calls(postprocess, "edit_page")
    masks, fonts = calls(postprocess, "admonition_icons_as_masks"), calls(postprocess, "subset_icon_font")
    page = srcdir / "index.md"
    page.write_text(page.read_text().replace("A page of prose with no code.", "A page of prose, edited."))
    app = _theme_book_build(srcdir, tmp_path / "build")
    # The edited page and the pages Sphinx writes on every build; not the others.
    pages_edited = {page for _, page, _ in edited}
    assert {"index.html", "genindex.html", "search.html"} <= pages_edited
    assert not {"notebook.html", "404.html"} & pages_edited
    # Sphinx copied the theme's stylesheet and fonts again: cut down as before, not again.
    assert masks == [] and fonts == []

    edited.clear()
    postprocess.finish(app, None)  # nothing written since: nothing edited
    assert edited == []

    clean = _theme_book_build(srcdir, tmp_path / "clean")
    assert _pages(app.outdir) == _pages(clean.outdir)
    styles = "_static/styles/pydata-sphinx-theme.css"
    assert (app.outdir / styles).read_bytes() == (clean.outdir / styles).read_bytes()
    fonts = sorted((app.outdir / "_static/vendor/fontawesome/webfonts").glob("fa-*.woff2"))
    assert fonts and all(f.read_bytes() == (clean.outdir / f.relative_to(app.outdir)).read_bytes() for f in fonts)


def test_cutting_the_icon_font_down_prints_nothing_on_a_root_logger_at_info(caplog):
    """A package that calls ``logging.basicConfig(level=INFO)`` (a11y-pygments does) must not
    bring fontTools' step-by-step INFO lines into the build's output; the font is still cut."""
    font = THEME_STATIC / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.woff2"
    with caplog.at_level(logging.INFO):
        cut = postprocess.subset_icon_font(font, {0xF0F3})
    assert [r.getMessage() for r in caplog.records if r.name.startswith("fontTools")] == []
    assert 0 < len(cut) < font.stat().st_size / 10
    assert logging.getLogger("fontTools").level == logging.NOTSET  # left as it was
