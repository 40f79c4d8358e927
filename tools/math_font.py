"""Write the book's math font: Latin Modern Math cut to the characters the book uses.

    make html                                   # the built site says what is used
    .venv/bin/python tools/math_font.py [--source latinmodern-math.otf] [--site _build/html]

Reads every formula of the built site (bookext.website.mathfont.site_characters), adds a
small base (printable ASCII and the italic Latin letters formulas are written in,
so a new variable name seldom needs a new font) and writes
docs/_static/fonts/ffnbook-math.woff2 with fontTools: those glyphs, the MATH table
and every glyph variant it names (stretchy brackets and radicals, display-size sums),
the OpenType features a browser applies to it, hinting dropped. The font is renamed, as the
GUST Font License asks of a derived font, and its licence is written beside it.
Two runs on the same site give the same bytes.

The full font comes from Debian's fonts-lmodern (apt-get install fonts-lmodern), TeX
Live (kpsewhich latinmodern-math.otf) or GUST's release; --source names the file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from bookext.website.mathfont import FAMILY, FONT_DIR, FONT_FILE, site_characters  # noqa: E402

SOURCES = (
    Path("/usr/share/texmf/fonts/opentype/public/lm-math/latinmodern-math.otf"),
    Path("/usr/share/fonts/opentype/lmodern/latinmodern-math.otf"),
    Path("/usr/local/texlive/texmf-dist/fonts/opentype/public/lm-math/latinmodern-math.otf"),
)
LICENCE_SOURCES = (Path("/usr/share/texmf/doc/fonts/lm-math"),)
LICENCE_FILE = FONT_DIR / "ffnbook-math-LICENSE.txt"
POSTSCRIPT_NAME = "FFNBookMath-Regular"

# Besides what the book uses: printable ASCII (words in formulas, \\text and
# \\operatorname) and the italic Latin letters a one-letter <mi> is drawn in, so a new
# variable name seldom needs a new font. Greek letters only as used.
BASE = set(range(0x20, 0x7F)) | set(range(0x1D434, 0x1D468)) | {0x210E}
# OpenType features a browser applies to MathML: kerning, ligatures, combining marks,
# flattened accents. Not 'ssty' (script-size letters): Chromium does not ask for it (a
# superscript draws the same with and without it), and its glyphs doubled the file.
FEATURES = ["kern", "liga", "ccmp", "locl", "mark", "mkmk", "flac", "dtls"]

LICENCE_HEAD = f"""{FAMILY} ({FONT_FILE.name}) is a subset of Latin Modern Math, cut by
tools/math_font.py to the characters this book's formulas use and renamed, as the
GUST Font License asks of a derived font. Latin Modern Math is by Bogusław Jackowski,
Piotr Strzelczyk and Piotr Pianowski; copyright 2012--2014 for the Latin Modern math
extensions by B. Jackowski, P. Strzelczyk and P. Pianowski (on behalf of TeX Users
Groups). It is distributed under the GUST Font License (GFL), an instance of the
LaTeX Project Public License (LPPL), version 1.3c or later; its text follows.

"""


def find(paths, what: str) -> Path:
    for path in paths:
        if path.exists():
            return path
    raise SystemExit(
        f"math_font: {what} not found in {', '.join(map(str, paths))}: "
        "apt-get install fonts-lmodern, or name it with --source"
    )


def rename(font) -> None:
    """New family, full and PostScript names; the copyright and licence entries stay."""
    names = font["name"]
    for record in list(names.names):
        if record.nameID in (1, 3, 4, 6, 16, 17, 21, 22):
            names.removeNames(nameID=record.nameID)
    for name_id, value in (
        (1, FAMILY),
        (2, "Regular"),
        (3, f"{POSTSCRIPT_NAME};ffnbook"),
        (4, FAMILY),
        (6, POSTSCRIPT_NAME),
    ):
        names.setName(value, name_id, 3, 1, 0x409)
        names.setName(value, name_id, 1, 0, 0)
    if "CFF " in font:  # the CFF table carries names of its own
        cff = font["CFF "].cff
        cff.fontNames = [POSTSCRIPT_NAME]
        top = cff.topDictIndex[0]
        top.FullName, top.FamilyName = FAMILY, FAMILY


def write_font(source: Path, codepoints: set[int], out: Path) -> int:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(source, recalcTimestamp=False)
    have = set(font.getBestCmap())
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = FEATURES
    options.notdef_outline = True
    options.hinting = False
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=codepoints & have)
    subsetter.subset(font)
    rename(font)
    font.flavor = "woff2"
    out.parent.mkdir(parents=True, exist_ok=True)
    font.save(out, reorderTables=True)
    return len(font.getGlyphOrder())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="latinmodern-math.otf")
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html", help="the built site")
    args = parser.parse_args(argv)
    source = args.source or find(SOURCES, "latinmodern-math.otf")
    if not (args.site / "index.html").exists():
        raise SystemExit(f"math_font: no built site at {args.site}: run make html first")
    used = {ord(c) for c in site_characters(args.site)}
    glyphs = write_font(source, used | BASE, FONT_FILE)
    licence_dir = (
        source.parent
        if (source.parent / "GUST-FONT-LICENSE.txt").exists()
        else find(LICENCE_SOURCES, "the font's GUST-FONT-LICENSE.txt")
    )
    licence = (licence_dir / "GUST-FONT-LICENSE.txt").read_text(encoding="utf-8")
    LICENCE_FILE.write_text(LICENCE_HEAD + licence, encoding="utf-8")
    print(
        f"{FONT_FILE.relative_to(ROOT)}: {len(used)} characters used by the book, "
        f"{glyphs} glyphs, {FONT_FILE.stat().st_size:,} bytes"
    )


if __name__ == "__main__":
    main()
