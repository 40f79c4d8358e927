"""Math rendered to MathML at build time, built in-process on a tiny book
(tests/roots/test-mathml): no script, numbered display equations, and a warning naming
page, line and formula for LaTeX the converter cannot handle (bad.md)."""

from __future__ import annotations

from sphinx.util.console import strip_colors

TESTROOT = "mathml"


def test_inline_and_display_math_are_mathml_and_no_script_is_loaded(tiny_page):
    page = tiny_page("index")
    inline = page.select_one("span.math > math")
    assert inline is not None and inline.get("display") != "block"
    assert inline.find("msub") is not None  # d_ff: a subscript, not text
    block = page.select_one("div.math > math")
    assert block is not None and block["display"] == "block"
    assert not any("mathjax" in (s.get("src") or "").lower() for s in page.find_all("script"))


def test_a_labelled_equation_is_numbered_and_referenced(tiny_page):
    page = tiny_page("index")
    equation = page.select_one("div.math")
    assert equation["id"] == "equation-ffn"
    assert equation.select_one(".eqno").get_text(" ").split()[0] == "(1)"
    reference = page.select_one("a[href='#equation-ffn']:not(.headerlink)")
    assert reference is not None and "(1)" in reference.get_text()


def test_a_formula_the_converter_cannot_handle_is_a_warning_naming_page_line_and_formula(tiny_page, tiny_book):
    warnings = strip_colors(tiny_book.warning.getvalue())
    assert "bad.md:3: WARNING: cannot convert math to MathML" in warnings, warnings
    assert r"\notacommand{x}" in warnings
    assert warnings.count("WARNING") == 1, warnings
    # The reader sees the LaTeX as code rather than a blank.
    assert tiny_page("bad").select_one("span.math > code").get_text() == r"\notacommand{x}"
