"""The book's math font: Latin Modern Math, served by the site, cut to what the book uses.

Browsers draw MathML with whatever math font the reader's system has: often none
worth the name, so formulas come out small, in a text font, with fractions and
radicals pieced together. The site serves its own: a subset of Latin Modern Math
(GUST Font License, the text beside the font), renamed as the licence asks of a
derived font, in ``docs/_static/fonts/``:

* ``ffnbook-math.woff2`` -- the glyphs the book's formulas use (plus ASCII, Greek
  and the italic letters formulas are made of), with the MATH table and the
  glyph variants it points to (stretchy brackets, display-size operators).
  Written by ``tools/math_font.py`` from the full font; committed, so a build
  needs nothing beyond the project's files.
* ``ffnbook-math-LICENSE.txt`` -- the font's licence and copyright.

``ffnbook.css`` names the font for ``<math>``; its ``@font-face`` comes in a
stylesheet of its own (:func:`add_font_face`), joined to the page's others by
``bookext.website.stylesheet_bundles``. A page with a formula of its own carries the font
inside it (``_static/ffnbook-math.css``, the font as a ``data:`` URL) and asks for it from
its head (:data:`EARLY_LOAD`), so its first layout already draws the formulas in it.
Fetched as a file, the font arrived after the first paint and every formula of the page
was styled and laid out a second time (width.html under Lighthouse's phone preset: a task
of 84 ms, 1,440 layout objects, the largest after the first paint). Any other page names the
file (``_static/ffnbook-math-file.css``), fetched only if a preview shows a
formula (``font-display: swap``; readertools.js measures the formulas again when
it arrives). Never both: a page with two faces of the family fetched the file too.
The font is not preloaded: measured with Lighthouse's phone preset, a preload of it,
competing with the stylesheets, delayed the first paint (position-independence,
median performance 85 -> 94 without it).

After every HTML build, :func:`check_font_covers_the_book` reads every formula of
the built pages and fails the build, naming the characters and pages, when the
font lacks a glyph one draws: a character of its text (a new symbol; the browser
would draw it in another font), one its elements draw with no text (the radical
sign of ``<msqrt>``/``<mroot>``: without it Chromium draws no radical at all), the
italic form a one-letter ``<mi>`` is drawn in, or the size variants and assembly
parts of a glyph that grows (radicals, fences, large operators; an accent or arrow
over or under a base). ``tools/math_font.py`` then writes the font again. What each
page's formulas need is kept for the next build (``<doctrees>/ffnbook-mathfont.json``):
a rebuild works it out again only for a page whose formulas changed, and opens the
font only when some page's needs did.
"""

from __future__ import annotations

import base64
import re
import unicodedata
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

from sphinx.application import Sphinx
from sphinx.errors import SphinxError

from bookext.builds.pagestate import built_pages, code_version, digest, read_record, write_record

FONT_DIR = Path(__file__).resolve().parents[3] / "_static" / "fonts"
FONT_FILE = FONT_DIR / "ffnbook-math.woff2"
FAMILY = "FFN Book Math"


class MathFontMissesGlyphs(SphinxError):
    category = "Math font lacks characters (bookext.website.mathfont)"


# --- which characters a formula needs ---------------------------------------------------------


def _italic(c: str) -> str:
    """The character MathML Core draws for a one-letter ``<mi>`` (``text-transform:
    math-auto``): the Mathematical Italic form of a Latin or Greek letter."""
    o = ord(c)
    if c == "h":
        return "\u210e"  # PLANCK CONSTANT: italic h's place in Unicode
    if 0x41 <= o <= 0x5A:
        return chr(0x1D434 + o - 0x41)
    if 0x61 <= o <= 0x7A:
        return chr(0x1D44E + o - 0x61)
    if 0x391 <= o <= 0x3A9 and o != 0x3A2:
        return chr(0x1D6E2 + o - 0x391)
    if 0x3B1 <= o <= 0x3C9:
        return chr(0x1D6FC + o - 0x3B1)
    greek = {
        "\u03f4": 0x1D6F3,
        "\u2207": 0x1D6FB,
        "\u2202": 0x1D715,
        "\u03f5": 0x1D716,
        "\u03d1": 0x1D717,
        "\u03f0": 0x1D718,
        "\u03d5": 0x1D719,
        "\u03f1": 0x1D71A,
        "\u03d6": 0x1D71B,
        "\u0131": 0x1D6A4,
        "\u0237": 0x1D6A5,
    }
    return chr(greek[c]) if c in greek else c


MATH = re.compile(r"<math\b.*?</math>", re.S)
TOKENS = {"mi", "mo", "mn", "mtext", "ms"}
RADICALS = {"msqrt", "mroot"}
UNDER_OVER = {"munder", "mover", "munderover"}
SQUARE_ROOT = "\u221a"  # the glyph a browser draws for <msqrt> and <mroot>: never in the text


class Token(NamedTuple):
    tag: str
    attrs: dict[str, str]
    text: str
    parent: str  # the element the token is a child of


class _Formula(HTMLParser):
    """One ``<math>`` element read into its tokens and whether it has a radical."""

    def __init__(self, mathml: str):
        super().__init__(convert_charrefs=True)
        self.tokens: list[Token] = []
        self.radical = False
        self._open: list[tuple[str, dict[str, str]]] = []
        self._text: list[str] = []
        self.feed(mathml)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.radical = self.radical or tag in RADICALS
        if tag in TOKENS:
            self._text = []
        self._open.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        while self._open:
            name, attrs = self._open.pop()
            if name == tag:
                break
        if tag in TOKENS:
            parent = self._open[-1][0] if self._open else ""
            self.tokens.append(Token(tag, attrs, "".join(self._text).strip(), parent))

    def handle_data(self, data):
        self._text.append(data)


def needed_characters(mathml: str) -> set[str]:
    """The characters a browser draws for one ``<math>`` element: its tokens' text, a
    one-letter ``<mi>`` in its italic form, the radical sign of ``<msqrt>`` and ``<mroot>``
    (which no text holds); no spaces or invisible operators.

    >>> sorted(needed_characters('<math><mi>x</mi><mo>+</mo><mi mathvariant="normal">d</mi></math>'))
    ['+', 'd', '𝑥']
    >>> sorted(needed_characters('<math><msqrt><mn>2</mn></msqrt></math>'))
    ['2', '√']
    """
    formula = _Formula(mathml)
    found = {SQUARE_ROOT} if formula.radical else set()
    for token in formula.tokens:
        text = token.text
        if token.tag == "mi" and len(text) == 1 and "mathvariant" not in token.attrs:
            text = _italic(text)
        elif token.tag == "ms":  # a string literal is drawn between quotes
            text = f'"{text}"'
        found.update(c for c in text if not c.isspace() and unicodedata.category(c) != "Cf")
    return found


# --- which glyphs grow: radicals, fences, large operators, stretchy arrows and accents ---------

VERTICAL, HORIZONTAL = "vertical", "horizontal"
# The operators the MathML Core operator dictionary makes stretchy or large, as far as a
# book like this one may use them (an <mo> may also say stretchy="true" or largeop="true").
FENCES = set("()[]{}|\u2016\u2308\u2309\u230a\u230b\u27e8\u27e9\u27e6\u27e7\u2223\u2225/\\")
LARGE_OPERATORS = set("\u2211\u220f\u2210\u222b\u222c\u222d\u222e\u22c0\u22c1\u22c2\u22c3\u2a00\u2a01\u2a02")
ACCENTS = set("^~\u00af\u02c6\u02dc\u02c7\u203e\u0302\u0303\u0304\u23de\u23df\u23b4\u23b5\u23dc\u23dd")
ARROWS = re.compile("[\u2190-\u21ff\u27f0-\u27ff\u2900-\u297f]")


def _axis(c: str) -> str | None:
    """The direction an operator grows in, or None where the dictionary has it not grow."""
    if c in FENCES or c in LARGE_OPERATORS:
        return VERTICAL
    if c in ACCENTS:
        return HORIZONTAL
    if ARROWS.fullmatch(c):
        name = unicodedata.name(c, "")
        return VERTICAL if ("UP" in name or "DOWN" in name) and "LEFT" not in name else HORIZONTAL
    return None


def needed_constructions(mathml: str) -> dict[str, str]:
    """The characters of one ``<math>`` element a browser may draw larger than their plain
    glyph, with the direction: ``<msqrt>``/``<mroot>``'s radical; each one-character ``<mo>``
    that is a large operator (drawn at display size) or stretches (not where
    ``stretchy="false"``): fences to the height of their row, arrows and accents to the width
    of the ``<munder>``/``<mover>`` they are a child of (elsewhere they keep their width). The
    font draws such a glyph from its MATH table's size variants and assembly parts: without
    them a radical is not drawn and a fence stays at text size.

    >>> needed_constructions('<math><msqrt><mi>x</mi></msqrt><mo stretchy="false">(</mo><mo>)</mo>'
    ...                      '<mo>↦</mo><mover><mi>x</mi><mo>→</mo></mover></math>')
    {'√': 'vertical', ')': 'vertical', '→': 'horizontal'}
    """
    formula = _Formula(mathml)
    found = {SQUARE_ROOT: VERTICAL} if formula.radical else {}
    for token in (t for t in formula.tokens if t.tag == "mo" and len(t.text) == 1):
        c, stretchy = token.text, token.attrs.get("stretchy")
        axis = _axis(c)
        if stretchy == "true" or token.attrs.get("largeop") == "true":
            axis = axis or VERTICAL
        if axis is None or (stretchy == "false" and c not in LARGE_OPERATORS):
            continue
        if axis == VERTICAL or token.parent in UNDER_OVER:
            found[c] = axis
    return found


def formulas_needs(formulas: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """What ``formulas`` (``<math>`` elements) need of the font: their characters, and the
    (character, direction) pairs they may grow."""
    characters: set[str] = set()
    constructions: set[tuple[str, str]] = set()
    for block in formulas:
        characters |= needed_characters(block)
        constructions |= set(needed_constructions(block).items())
    return characters, constructions


def site_needs(site: Path) -> dict[str, tuple[set[str], set[tuple[str, str]]]]:
    """What the formulas of each built page need of the font (:func:`formulas_needs`), by page."""
    return {name: formulas_needs(MATH.findall(path.read_text(encoding="utf-8"))) for name, path in built_pages(site)}


def _by_need(needs: dict[str, tuple[set, set]], which: int) -> dict:
    """Each need (a character: ``which`` 0; a construction: 1), with the pages that have it."""
    where: dict = {}
    for name, page_needs in needs.items():
        for need in page_needs[which]:
            where.setdefault(need, set()).add(name)
    return where


def site_characters(site: Path) -> dict[str, set[str]]:
    """Every character the formulas of the built pages need, with the pages that need it."""
    return _by_need(site_needs(site), 0)


def site_constructions(site: Path) -> dict[tuple[str, str], set[str]]:
    """Every (character, direction) the formulas of the built pages may grow, with the pages."""
    return _by_need(site_needs(site), 1)


@cache
def _open_font(font: Path):
    from fontTools.ttLib import TTFont

    if not font.exists():
        raise MathFontMissesGlyphs(f"the math font {font} is missing: run tools/math_font.py")
    return TTFont(font)


def font_characters(font: Path = FONT_FILE) -> frozenset[str]:
    """The characters the font has a glyph for."""
    return frozenset(chr(c) for c in _open_font(font).getBestCmap())


def _has_outline(glyphs, name: str) -> bool:
    from fontTools.pens.boundsPen import BoundsPen

    if name not in glyphs:
        return False
    pen = BoundsPen(glyphs)
    glyphs[name].draw(pen)
    return pen.bounds is not None


def construction_fault(c: str, axis: str, font: Path = FONT_FILE) -> str | None:
    """Why the font cannot draw ``c`` larger in ``axis`` (None: it can): the MATH table's
    size variants and assembly parts of its glyph, each of which must be in the font and
    drawn (a cut that dropped them leaves a radical or a fence at text size)."""
    opened = _open_font(font)
    glyph = opened.getBestCmap().get(ord(c))
    if glyph is None:
        return "no glyph"
    if "MATH" not in opened or opened["MATH"].table.MathVariants is None:
        return "the font has no MATH table"
    variants = opened["MATH"].table.MathVariants
    coverage, constructions = (
        (variants.VertGlyphCoverage, variants.VertGlyphConstruction)
        if axis == VERTICAL
        else (variants.HorizGlyphCoverage, variants.HorizGlyphConstruction)
    )
    if coverage is None or glyph not in coverage.glyphs:
        return f"no {axis} size variants or assembly in the MATH table"
    construction = constructions[coverage.glyphs.index(glyph)]
    named = [record.VariantGlyph for record in construction.MathGlyphVariantRecord or ()]
    if construction.GlyphAssembly is not None:
        named += [part.glyph for part in construction.GlyphAssembly.PartRecords]
    if len(named) < 2:
        return f"no {axis} size variant beyond its plain glyph"
    glyphs = opened.getGlyphSet()
    absent = [name for name in named if not _has_outline(glyphs, name)]
    return f"its {axis} variants {', '.join(absent)} are missing or empty" if absent else None


def missing_glyphs(site: Path, font: Path = FONT_FILE) -> list[str]:
    """What the built pages' formulas need and the font lacks, one line each, naming pages:
    characters (a browser would draw them in another font) and size variants (a radical,
    fence or large operator it would draw at text size, or not at all)."""
    return _missing(site_needs(site), font)


def _missing(needs: dict[str, tuple[set, set]], font: Path = FONT_FILE) -> list[str]:
    """:func:`missing_glyphs` of what each page needs (:func:`site_needs`)."""
    have = font_characters(font)

    def where(c: str, pages) -> str:
        return f"U+{ord(c):04X} {c} ({unicodedata.name(c, '?')}) on {', '.join(sorted(pages)[:3])}"

    lines = [where(c, p) for c, p in sorted(_by_need(needs, 0).items()) if c not in have]
    for (c, axis), pages in sorted(_by_need(needs, 1).items()):
        fault = construction_fault(c, axis, font) if c in have else None
        if fault:
            lines.append(f"{where(c, pages)}: {fault}")
    return lines


# --- the build --------------------------------------------------------------------------------

#: What each page's formulas needed when the font last covered them all (beside the doctrees):
#: a page whose formulas are as they were is not read again, and when no page's are, the font
#: is not opened (pagestate). Of another font or of other code, it is ignored.
RECORD = "ffnbook-mathfont.json"


def _page_needs(html: str, known) -> dict:
    """What a page's formulas need, as recorded: ``known`` if made from the same formulas."""
    formulas = MATH.findall(html)
    made_from = digest(*(block.encode() for block in formulas))
    if isinstance(known, dict) and known.get("formulas") == made_from:
        return known
    characters, constructions = formulas_needs(formulas)
    return {"formulas": made_from, "characters": sorted(characters), "constructions": sorted(map(list, constructions))}


def check_font_covers_the_book(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    record = Path(app.doctreedir) / RECORD
    version = code_version(__file__, FONT_FILE)
    covered = read_record(record, version)
    pages = {
        name: _page_needs(path.read_text(encoding="utf-8"), covered.get(name))
        for name, path in built_pages(Path(app.outdir))
    }
    if pages == covered:
        return  # every page needs what the font covered last time
    needs = {name: (set(page["characters"]), {tuple(c) for c in page["constructions"]}) for name, page in pages.items()}
    missing = _missing(needs)
    if missing:
        raise MathFontMissesGlyphs(
            "formulas need glyphs the book's math font lacks (a browser would draw them in "
            "another font, or not grow them, or not draw them):\n  " + "\n  ".join(missing) + "\n"
            "Write the font again from the built site: .venv/bin/python tools/math_font.py (it "
            "needs Latin Modern Math: apt-get install fonts-lmodern, or --source "
            "PATH/latinmodern-math.otf)"
        )
    write_record(record, version, pages)


# --- the font's @font-face, in a stylesheet of its own ------------------------------------------

FONT_STYLESHEET = "_static/ffnbook-math.css"  # the font inside: pages with formulas
FILE_STYLESHEET = "_static/ffnbook-math-file.css"  # the file named: every other page


def font_face_css(inline: bool, font: Path = FONT_FILE) -> str:
    """The ``@font-face`` of the book's math font: with the font itself as a ``data:`` URL
    (``inline``), or naming its file (from ``_static/``)."""
    if inline:
        src = "data:font/woff2;base64," + base64.b64encode(font.read_bytes()).decode("ascii")
    else:
        src = f"{font.parent.name}/{font.name}"
    return (
        "/* The book's math font (bookext.website.mathfont). */\n"
        f'@font-face {{\n  font-family: "{FAMILY}";\n'
        f'  src: url("{src}") format("woff2");\n  font-display: swap;\n}}\n'
    )


def write_font_stylesheets(app: Sphinx, builder) -> None:
    """Write both stylesheets before the pages, which bundle them."""
    if builder.format != "html":
        return
    for name, inline in ((FONT_STYLESHEET, True), (FILE_STYLESHEET, False)):
        target = Path(app.outdir) / name
        content = font_face_css(inline)
        if not target.exists() or target.read_text(encoding="utf-8") != content:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")


#: In the head of a page that carries the font: start decoding it now. A face is loaded only
#: when text first needs it, and Chromium decodes even a ``data:`` font off the main thread,
#: so it was still loading at the first layout of width.html in 2 of 15 loads (idle, two
#: cores), and the formulas were laid out again when it arrived; started from the head,
#: it was loaded at the first frame in 40 of 40 (20 of them with both cores busy).
EARLY_LOAD = f"document.fonts.load('1em \"{FAMILY}\"');"


def add_font_face(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The page's stylesheets end with the font's face: the font itself where the page's
    body has a formula (and a head script that loads it at once), the file's name elsewhere."""
    styles = context.get("css_files")
    if not styles:
        return
    inline = "<math" in context.get("body", "")
    styles.append(type(styles[0])(FONT_STYLESHEET if inline else FILE_STYLESHEET, priority=styles[-1].priority))
    scripts = context.get("script_files")
    if inline and scripts:
        scripts.append(type(scripts[0])("", priority=scripts[-1].priority, body=EARLY_LOAD))


def setup(app: Sphinx) -> dict:
    app.connect("write-started", write_font_stylesheets)
    # Before the stylesheets of a page's own parts (explorables, problems, previews; 500):
    # the face follows the book's site-wide stylesheets, whichever part registers first.
    app.connect("html-page-context", add_font_face, priority=450)
    app.connect("build-finished", check_font_covers_the_book)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
