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
``bookext.staticsite``. A page with a formula of its own carries the font inside
it (``_static/ffnbook-math.css``, the font as a ``data:`` URL), so its first
layout already draws the formulas in it. Fetched as a file, the font arrived
after the first paint and every formula of the page was styled and laid out a
second time (width.html under Lighthouse's phone preset: a task of 84 ms, 1,440
layout objects, the largest after the first paint). Any other page names the
file (``_static/ffnbook-math-file.css``), fetched only if a preview shows a
formula (``font-display: swap``; readertools.js measures the formulas again when
it arrives). Never both: a page with two faces of the family fetched the file too.
The font is not preloaded: measured with Lighthouse's phone preset, a preload of it,
competing with the stylesheets, delayed the first paint (position-independence,
median performance 85 -> 94 without it).

After every HTML build, :func:`check_font_covers_the_book` reads every formula of
the built pages and fails the build, naming the characters and pages, when the
font lacks a character one needs (a formula with a new symbol): the browser would
draw it in another font. ``tools/math_font.py`` then writes the font again.
"""

from __future__ import annotations

import base64
import html
import re
import unicodedata
from functools import cache
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import SphinxError

FONT_DIR = Path(__file__).resolve().parents[2] / "_static" / "fonts"
FONT_FILE = FONT_DIR / "ffnbook-math.woff2"
FAMILY = "FFN Book Math"


class MathFontMissesGlyphs(SphinxError):
    category = "Math font lacks characters (bookext.mathfont)"


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
TOKEN = re.compile(r"<(mi|mo|mn|mtext|ms)\b([^>]*)>(.*?)</\1>", re.S)


def needed_characters(mathml: str) -> set[str]:
    """The characters a browser draws for one ``<math>`` element: its tokens' text, a
    one-letter ``<mi>`` in its italic form; no spaces or invisible operators.

    >>> sorted(needed_characters('<math><mi>x</mi><mo>+</mo><mi mathvariant="normal">d</mi></math>'))
    ['+', 'd', '𝑥']
    """
    found: set[str] = set()
    for tag, attrs, content in TOKEN.findall(mathml):
        text = html.unescape(re.sub(r"<[^>]+>", "", content)).strip()
        if tag == "mi" and len(text) == 1 and "mathvariant" not in attrs:
            text = _italic(text)
        found.update(c for c in text if not c.isspace() and unicodedata.category(c) != "Cf")
    return found


def site_characters(site: Path) -> dict[str, set[str]]:
    """Every character the formulas of the built pages need, with the pages that need it."""
    where: dict[str, set[str]] = {}
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts:
            continue
        name = page.relative_to(site).as_posix()
        for block in MATH.findall(page.read_text(encoding="utf-8")):
            for c in needed_characters(block):
                where.setdefault(c, set()).add(name)
    return where


@cache
def font_characters(font: Path = FONT_FILE) -> frozenset[str]:
    """The characters the font has a glyph for."""
    from fontTools.ttLib import TTFont

    if not font.exists():
        raise MathFontMissesGlyphs(f"the math font {font} is missing: run tools/math_font.py")
    return frozenset(chr(c) for c in TTFont(font).getBestCmap())


# --- the build --------------------------------------------------------------------------------


def check_font_covers_the_book(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    have = font_characters()
    missing = {c: pages for c, pages in site_characters(Path(app.outdir)).items() if c not in have}
    if missing:
        lines = [
            f"U+{ord(c):04X} {c} ({unicodedata.name(c, '?')}) on {', '.join(sorted(p)[:3])}"
            for c, p in sorted(missing.items())
        ]
        raise MathFontMissesGlyphs(
            "formulas use characters the book's math font lacks (a browser would draw them in "
            "another font):\n  " + "\n  ".join(lines) + "\nWrite the font again from the built "
            "site: .venv/bin/python tools/math_font.py (it needs Latin Modern Math: "
            "apt-get install fonts-lmodern, or --source PATH/latinmodern-math.otf)"
        )


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
        "/* The book's math font (bookext.mathfont). */\n"
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


def add_font_face(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The page's stylesheets end with the font's face: the font itself where the page's
    body has a formula, the file's name elsewhere."""
    styles = context.get("css_files")
    if not styles:
        return
    name = FONT_STYLESHEET if "<math" in context.get("body", "") else FILE_STYLESHEET
    styles.append(type(styles[0])(name, priority=styles[-1].priority))


def setup(app: Sphinx) -> dict:
    app.connect("write-started", write_font_stylesheets)
    app.connect("html-page-context", add_font_face)
    app.connect("build-finished", check_font_covers_the_book)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
