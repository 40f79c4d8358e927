"""The book's math font (bookext.website.mathfont): the committed subset, its licence, and the
build check that fails when a formula needs a character the font lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookext.website import mathfont


def test_a_one_letter_identifier_is_drawn_in_its_italic_form():
    chars = mathfont.needed_characters(
        '<math><mi>x</mi><mi>h</mi><mi>β</mi><mi>FFN</mi><mi mathvariant="normal">d</mi>'
        "<mo>&#x2061;</mo><mo>&lt;</mo><mtext> in </mtext><mn>12</mn></math>"
    )
    # U+1D465 MATHEMATICAL ITALIC SMALL X, U+210E PLANCK CONSTANT (italic h), U+1D6FD italic beta.
    assert chars == {"\U0001d465", "\u210e", "\U0001d6fd", "F", "N", "d", "<", "i", "n", "1", "2"}


def test_the_committed_font_is_a_renamed_subset_with_a_math_table_and_its_licence():
    from fontTools.ttLib import TTFont

    font = TTFont(mathfont.FONT_FILE)
    assert "MATH" in font  # what makes fractions, radicals and stretchy brackets right
    assert font["name"].getDebugName(1) == mathfont.FAMILY  # not "Latin Modern Math"
    assert "Jackowski" in font["name"].getDebugName(0)  # the copyright stays
    assert mathfont.FONT_FILE.stat().st_size < 40_000  # a subset, not the 380 KB font
    licence = (mathfont.FONT_DIR / "ffnbook-math-LICENSE.txt").read_text(encoding="utf-8")
    assert "GUST Font License" in licence and "LaTeX Project Public License" in licence
    have = mathfont.font_characters()
    for c in "0123456789+-=()[]abcxyzABCXYZ" + "".join(chr(0x1D44E + i) for i in range(26) if i != 7):
        assert c in have, c


def test_the_stylesheet_names_the_font_for_math():
    css = (Path(mathfont.FONT_DIR).parent / "ffnbook.css").read_text(encoding="utf-8")
    assert f'math {{ font-family: "{mathfont.FAMILY}", math;' in css
    assert "@font-face {" not in css  # one face per page, from bookext.website.mathfont


def test_a_page_with_formulas_carries_the_font_and_any_other_names_its_file():
    import base64
    import re

    inline, file = mathfont.font_face_css(inline=True), mathfont.font_face_css(inline=False)
    data = re.search(r'url\("data:font/woff2;base64,([^"]+)"\) format\("woff2"\)', inline)
    assert data and base64.b64decode(data.group(1)) == mathfont.FONT_FILE.read_bytes()
    # The file, named from _static/, where both stylesheets (and their bundle) are.
    assert 'url("fonts/ffnbook-math.woff2") format("woff2")' in file
    assert Path(mathfont.FONT_DIR).parent / "fonts" / "ffnbook-math.woff2" == mathfont.FONT_FILE
    for css in (inline, file):
        assert f'font-family: "{mathfont.FAMILY}"' in css and "font-display: swap" in css

    from sphinx.builders.html._assets import _CascadingStyleSheet as Sheet

    def styles_of(body):
        context = {"body": body, "css_files": [Sheet("_static/basic.css"), Sheet("_static/ffnbook.css")]}
        mathfont.add_font_face(None, "page", "page.html", context, None)
        return [str(css.filename) for css in context["css_files"]]

    assert styles_of("<p><math><mi>x</mi></math></p>") == [
        "_static/basic.css",
        "_static/ffnbook.css",
        mathfont.FONT_STYLESHEET,
    ]
    assert styles_of("<p>No formula.</p>")[-1] == mathfont.FILE_STYLESHEET


def test_a_page_that_carries_the_font_starts_loading_it_from_its_head():
    from sphinx.builders.html._assets import _CascadingStyleSheet as Sheet
    from sphinx.builders.html._assets import _JavaScript as Script

    def scripts_of(body):
        context = {"body": body, "css_files": [Sheet("_static/ffnbook.css")], "script_files": [Script("a.js")]}
        mathfont.add_font_face(None, "page", "page.html", context, None)
        return [(str(js.filename), js.attributes.get("body")) for js in context["script_files"]]

    assert scripts_of("<p><math><mi>x</mi></math></p>") == [("a.js", None), ("", mathfont.EARLY_LOAD)]
    assert scripts_of("<p>No formula.</p>") == [("a.js", None)]  # the file is fetched only for a preview
    assert f"document.fonts.load('1em \"{mathfont.FAMILY}\"')" in mathfont.EARLY_LOAD


class FakeApp:
    def __init__(self, outdir, doctreedir=None):
        self.outdir = outdir
        self.doctreedir = doctreedir or outdir / ".doctrees"
        self.builder = type("B", (), {"format": "html"})()


def test_a_formula_with_a_character_the_font_lacks_fails_the_build_naming_it(tmp_path):
    (tmp_path / "fine.html").write_text("<p><math><mi>x</mi><mo>+</mo><mn>1</mn></math></p>")
    mathfont.check_font_covers_the_book(FakeApp(tmp_path), None)  # covered: no error
    (tmp_path / "page.html").write_text("<p><math><mi>\u2135</mi></math></p>")  # ALEF SYMBOL
    with pytest.raises(mathfont.MathFontMissesGlyphs) as failure:
        mathfont.check_font_covers_the_book(FakeApp(tmp_path), None)
    message = str(failure.value)
    assert "U+2135" in message and "page.html" in message and "tools/math_font.py" in message


def test_a_rebuild_reads_only_formulas_that_changed_and_still_fails_on_a_new_character(tmp_path, calls):
    site = tmp_path / "html"
    site.mkdir()
    (site / "a.html").write_text("<p><math><mi>x</mi><mo>+</mo><mn>1</mn></math></p>")
    (site / "b.html").write_text("<p>Text. <math><msqrt><mi>y</mi></msqrt></math></p>")
    app = FakeApp(site, tmp_path / "doctrees")
    mathfont.check_font_covers_the_book(app, None)
    worked_out, font_read = calls(mathfont, "formulas_needs"), calls(mathfont, "font_characters")
    mathfont.check_font_covers_the_book(app, None)  # nothing changed: nothing read, font unopened
    (site / "b.html").write_text("<p>Other text. <math><msqrt><mi>y</mi></msqrt></math></p>")
    mathfont.check_font_covers_the_book(app, None)  # the text changed, not the formulas
    assert worked_out == [] and font_read == []

    (site / "b.html").write_text("<p><math><mi>\u2135</mi></math></p>")  # ALEF SYMBOL
    for _ in range(2):  # a failed check is not remembered as covered
        with pytest.raises(mathfont.MathFontMissesGlyphs, match=r"U\+2135 .* on b\.html"):
            mathfont.check_font_covers_the_book(app, None)
    assert worked_out == [(["<math><mi>\u2135</mi></math>"],)] * 2


def test_a_square_root_needs_the_radical_sign_and_its_taller_variants():
    # <msqrt> and <mroot> draw U+221A, which no text of the formula holds.
    for formula in ("<math><msqrt><mi>x</mi></msqrt></math>", "<math><mroot><mi>x</mi><mn>3</mn></mroot></math>"):
        assert mathfont.SQUARE_ROOT in mathfont.needed_characters(formula)
        assert mathfont.needed_constructions(formula)[mathfont.SQUARE_ROOT] == mathfont.VERTICAL
    assert mathfont.SQUARE_ROOT not in mathfont.needed_characters("<math><mi>x</mi></math>")


def test_fences_large_operators_and_accents_over_a_base_grow_where_the_browser_stretches_them():
    grows = mathfont.needed_constructions(
        "<math><mrow><mo>(</mo><mfrac><mi>a</mi><mi>b</mi></mfrac><mo>)</mo></mrow>"
        '<mo stretchy="false">[</mo><munderover><mo movablelimits="true">∑</mo><mi>i</mi><mi>n</mi></munderover>'
        '<mover accent="true"><mi>x</mi><mo>¯</mo></mover><mo>→</mo><mo stretchy="true">*</mo></math>'
    )
    vertical, horizontal = mathfont.VERTICAL, mathfont.HORIZONTAL
    # "[" says stretchy="false"; an arrow in a row keeps its width; a stretchy="true" "*" grows.
    assert grows == {"(": vertical, ")": vertical, "∑": vertical, "¯": horizontal, "*": vertical}


def test_the_committed_font_grows_the_radical_fences_and_sums_from_its_math_table():
    for c in "√()[]{}|‖⌊⌋∑":
        assert mathfont.construction_fault(c, mathfont.VERTICAL) is None, c
    assert mathfont.construction_fault("↦", mathfont.HORIZONTAL) is None


def cut(tmp_path, without: str = "", drop_vertical: str = "") -> Path:
    """The committed font cut again without some characters, or with one character's
    vertical size variants removed from its MATH table."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(mathfont.FONT_FILE)
    keep = {c for c in font.getBestCmap() if chr(c) not in without}
    options = subset.Options()
    options.flavor, options.layout_features, options.name_IDs = "woff2", ["*"], ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=keep)
    subsetter.subset(font)
    if drop_vertical:
        variants = font["MATH"].table.MathVariants
        index = variants.VertGlyphCoverage.glyphs.index(font.getBestCmap()[ord(drop_vertical)])
        del variants.VertGlyphCoverage.glyphs[index], variants.VertGlyphConstruction[index]
        variants.VertGlyphCount -= 1
    path = tmp_path / f"cut-{ord(without or drop_vertical):x}.woff2"  # each its own name: fonts are cached
    font.save(path)
    return path


def test_a_font_without_the_radical_or_its_variants_is_found_out(tmp_path):
    (tmp_path / "root.html").write_text("<p><math><msqrt><mi>x</mi></msqrt><mo>(</mo><mo>)</mo></math></p>")
    assert mathfont.missing_glyphs(tmp_path) == []
    site = tmp_path / "site"
    site.mkdir()
    (site / "root.html").write_text((tmp_path / "root.html").read_text())
    no_radical = mathfont.missing_glyphs(site, cut(tmp_path, without="√"))
    assert len(no_radical) == 1 and no_radical[0].startswith("U+221A √ (SQUARE ROOT) on root.html")
    (fault,) = mathfont.missing_glyphs(site, cut(tmp_path, drop_vertical="("))
    assert fault.startswith("U+0028 (") and "no vertical size variants" in fault


def test_every_glyph_the_books_formulas_draw_is_in_its_math_font(site):
    """Derived from the built pages: what each formula draws (italic identifiers, radicals,
    fences, large operators), against the font's cmap and its MATH table's variants."""
    assert mathfont.missing_glyphs(site) == []
    needs = mathfont.site_constructions(site)
    # The derivation sees the radicals no text holds: the layer norm's and GELU's.
    assert {"transformer-block.html", "activations.html"} <= needs[mathfont.SQUARE_ROOT, mathfont.VERTICAL]
    assert "\U0001d465" in mathfont.site_characters(site)  # <mi>x</mi>, drawn as italic x
