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


def test_a_long_inline_formula_comes_in_pieces_that_break_after_relations_and_operators():
    from docutils.utils.math import latex2mathml

    from bookext.content.mathml import SPLIT_FROM, breakable_inline

    def pieces(latex):
        return breakable_inline(latex2mathml.tex2mathml(latex, as_block=False)).split("<wbr>")

    ffn = pieces(r"\mathrm{FFN}(x) = \phi(x W_1 + b_1) W_2 + b_2")
    # After "=" and after the "+" outside the brackets; never inside them.
    assert len(ffn) == 3 and all(p.startswith("<math") and p.endswith("</math>") for p in ffn)
    assert ffn[0].endswith("<mo>=</mo></math>") and "<mi>b</mi>" in ffn[2]
    assert "<mo>+</mo>" in ffn[1].split('<mo stretchy="false">)</mo>')[0]  # x W_1 + b_1 stays whole
    # A formula that is one bracketed product breaks inside its outermost brackets.
    gelu = pieces(r"\tfrac{1}{2} x \bigl(1 + \tanh[\sqrt{2/\pi}\,(x + 0.044715\, x^3)]\bigr)")
    assert len(gelu) == 2 and "tanh" in gelu[1]
    # A short formula stays one element.
    short = latex2mathml.tex2mathml("a + b = c", as_block=False)
    assert breakable_inline(short) == short and SPLIT_FROM > 5


def test_a_glued_number_keeps_its_unit_and_the_relation_before_it_on_its_line():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from bookext.content.numbers import bind_numbers_to_their_words

    document = new_document("test", get_default_settings(Parser))
    paragraph = nodes.paragraph()
    for piece in (
        "Soft breaks of the source:",
        "\n",  # a text node equal to the one after 46.70: only the latter changes
        "(ε = ",
        ("2.22e-16",),
        " in double precision; it stores ",
        ("46.70",),
        "\n",
        "billion, ",
        ("12.88",),
        "\nbillion active, ",
        ("3",),
        ", x; scaled by ",
        nodes.math("1/(1-p) =", "1/(1-p) ="),  # the relation ends the formula
        " ",
        ("1.1111",),
        ".",
    ):
        if isinstance(piece, nodes.Node):
            paragraph += piece
            continue
        paragraph += (
            nodes.inline(piece[0], piece[0], classes=["pasted-text"]) if isinstance(piece, tuple) else nodes.Text(piece)
        )
    document += paragraph
    bind_numbers_to_their_words(None, document, "test")
    assert (
        paragraph.astext() == "Soft breaks of the source:\n(ε =\u00a02.22e-16\u00a0in double precision; "
        "it stores 46.70\u00a0billion, 12.88\u00a0billion active, 3, x; scaled by 1/(1-p) =\u00a01.1111."
    )
    # A browser breaks after a <math> even before a no-break space: one span that does not wrap.
    (together,) = [n for n in paragraph.findall(nodes.inline) if "ffn-together" in n["classes"]]
    assert [type(n) for n in together.children] == [nodes.math, nodes.Text, nodes.inline]
