"""The few changes to the theme's finished output that no hook can make, each one checked.

Everything else the book changes about the theme goes through the theme's and
Sphinx's own hooks: template overrides in ``docs/_templates/``, ``html-page-context``
handlers (bookext.website.page_assets and its neighbours, bookext.website.reading_tools), node overrides and theme
options. What is left has no hook:

* **Icons as inline SVG.** pydata-sphinx-theme writes ``<i class="fa-solid fa-bars">``
  in its templates and has Font Awesome's ``fontawesome.js`` (1.5 MB, 0.5 MB
  gzipped) swap each for an ``<svg>`` in the browser; no template or option yields
  the SVG itself. After the build every such element becomes the same
  ``svg-inline--fa`` markup, with the path data read from the installed theme's
  fontawesome.js, which the pages then need not load
  (``docs/_templates/static/webpack-macros.html`` leaves it out).
* **The theme's icon stylesheet rules and fonts, cut down.** pydata-sphinx-theme.css
  carries about 2,000 glyph rules (``.fa-NAME{--fa:"..."}``), one per icon, and
  three Font Awesome web fonts hold every glyph; the theme has no option to
  choose icons. Rules of icons no page uses are dropped and the fonts are subset
  to the glyphs the stylesheet still names (drawn with ``content:``). The admonition
  icons, which every chapter page shows at its top, are drawn as SVG masks instead
  (path data from fontawesome.js), so a page's first paint waits for no icon font.
* **The content security policy's script hashes** (:func:`bookext.website.security_policy.with_script_hashes`):
  the policy names each inline script and handler of the finished page by hash, and only
  the finished page has them all (the theme's templates write several).
* **No inline event handlers.** The book theme's button macro writes the print and
  full-screen buttons with ``onclick="..."`` (no option or context value leaves it out);
  the edit names the action instead (``data-ffn-action``) and ``navigation.js`` runs it.
  A page then holds no inline handler, so its policy needs no ``'unsafe-hashes'``, and
  the search page, which parses other pages for its snippets under a policy of its own,
  meets no handler its policy refuses (8 errors per query, one per result page and handler).
* **Launch-menu logos loaded lazily.** The Binder and Colab logos of the (closed)
  launch menu are ``<img>`` elements written by the book theme's button macro,
  which takes no attributes; ``loading="lazy"`` fetches them when the menu opens.

Every edit checks that it did its work. A page still holding markup an edit exists
to change (because the theme's markup changed and the pattern no longer matches)
fails the build with :class:`ThemeMarkupChanged`, naming the edit, the page and the
markup; so do a theme script with no icons to read and a stylesheet with no glyph
rules to trim. The edits are plain string edits, so the output stays reproducible.

Only what changed is edited: a page whose HTML is what the last build's edits left (its
digest in ``<doctrees>/ffnbook-postprocessed.json``) was not written since and is left as
it is; the cut-down stylesheet and fonts, which Sphinx copies over from the theme on every
build, are taken from ``<doctrees>/ffnbook-postprocessed/`` when the theme's files and the
icons the pages show are those they were made from. A no-op build edits three pages (the
index, search and module-index pages Sphinx writes every time).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import SphinxError

from bookext.builds.pagestate import built_pages, code_version, digest, read_record, write_record
from bookext.execution.records import write_atomically
from bookext.website import security_policy
from bookext.website.security_policy import live_reload_script, with_script_hashes


class ThemeMarkupChanged(SphinxError):
    """The theme's output no longer has the markup a post-processing edit changes."""

    category = "Theme markup changed (bookext.website.postprocess)"


@dataclass(frozen=True)
class Edit:
    """One string edit of every built page, and how to tell that it was not done.

    ``left_undone`` finds markup the edit exists to change: after the edit, a page
    must hold none of it.
    """

    name: str
    pattern: re.Pattern
    replacement: str | Callable[[re.Match], str]
    left_undone: re.Pattern

    def apply(self, text: str, page: str) -> tuple[str, list[str]]:
        """The edited page, and one problem per kind of markup the edit did not change."""
        text = self.pattern.sub(self.replacement, text)
        left = sorted({m.group(0) for m in self.left_undone.finditer(text)})
        return text, [f"{self.name}: {page} still has {markup!r}" for markup in left]


# --- icons ---------------------------------------------------------------------------------

FA_PACKS = {"fa-solid": "fas", "fas": "fas", "fa-regular": "far", "far": "far", "fa-brands": "fab", "fab": "fab"}
FA_TAG = re.compile(
    r'<(i|span) class="([^"]*\b(?:fa-solid|fas|fa-regular|far|fa-brands|fab)\b[^"]*)"'
    r'((?: (?:data-[a-z-]+|title)="[^"]*")*)(?: aria-hidden="true")?\s*></\1>'
)
# Any element but an <svg> whose class names a Font Awesome icon: it would need fontawesome.js.
FA_ELEMENT_LEFT = re.compile(r'<(?!svg\b)[a-z]+\b[^>]*\bclass="(?:[^"]*\s)?fa-[a-z0-9-]+[^"]*"[^>]*>')
# The icons pydata-sphinx-theme's own script creates at run time (announcement banner).
FA_RUNTIME = {"xmark"}
SVG_ICON = re.compile(r'<svg class="svg-inline--fa [^"]*"[^>]* data-icon="([a-z0-9-]+)"')


def fontawesome_icons(theme_js: Path) -> dict[tuple[str, str], tuple[int, int, str]]:
    """(pack, name) -> (width, height, path data), read from the theme's fontawesome.js;
    each icon also under (pack, "U+f0eb"), its code point in the icon fonts."""
    if not theme_js.exists():
        raise ThemeMarkupChanged(
            f"icons: the theme no longer ships {theme_js.name} "
            f"(looked for {theme_js}) to read the icons' SVG paths from"
        )
    text = theme_js.read_text(encoding="utf-8")
    icons: dict[tuple[str, str], tuple[int, int, str]] = {}
    # Each pack is written as ``var b={name:[w,h,[aliases],"f104","M…"],…}`` and then
    # registered with ``p("fas",b)`` (or "far", "fab").
    icon = re.compile(r'"?([a-z0-9-]+)"?:\[(\d+),(\d+),\[[^\]]*\],"([0-9a-f]+)","(M[^"]+)"\]')
    start = 0
    for register in re.finditer(r'p\("(fa[srb])",b\)', text):
        begin = text.rfind("var b={", start, register.start())
        if begin >= 0:
            for m in icon.finditer(text, begin, register.start()):
                drawing = (int(m.group(2)), int(m.group(3)), m.group(5))
                icons.setdefault((register.group(1), m.group(1)), drawing)
                icons.setdefault((register.group(1), "U+" + m.group(4)), drawing)  # by code point too
        start = register.end()
    if not icons:
        raise ThemeMarkupChanged(
            f"icons: found no icon definitions in {theme_js} (its format changed: update fontawesome_icons)"
        )
    return icons


def icon_svg(classes: str, attrs: str, icons: dict) -> str | None:
    """The inline ``<svg>`` fontawesome.js would draw for ``<i class=classes attrs>``."""
    words = classes.split()
    pack = next((FA_PACKS[w] for w in words if w in FA_PACKS), "fas")
    names = [w[3:] for w in words if w.startswith("fa-") and w not in FA_PACKS and (pack, w[3:]) in icons]
    if not names:
        return None
    name = names[0]
    width, height, path = icons[(pack, name)]
    extra = " ".join(w for w in words if w not in FA_PACKS and w != f"fa-{name}")
    cls = f"svg-inline--fa fa-{name}" + (f" {extra}" if extra else "")
    return (
        f'<svg class="{cls}"{attrs} aria-hidden="true" focusable="false" data-prefix="{pack}" '
        f'data-icon="{name}" role="img" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}"><path fill="currentColor" d="{path}"></path></svg>'
    )


def page_edits(icons: dict) -> tuple[Edit, ...]:
    """The edits of every built page, in order (icons need the theme's icon data)."""

    def swap(m: re.Match) -> str:
        svg = icon_svg(m.group(2), m.group(3), icons)
        return m.group(0) if svg is None else svg  # left in place: reported as undone

    return (
        Edit("icons as inline SVG", FA_TAG, swap, FA_ELEMENT_LEFT),
        Edit(
            "no inline event handlers",
            re.compile(r'<button onclick="(?:(window\.print)|(toggleFullScreen))\(\)"'),
            lambda m: f'<button type="button" data-ffn-action="{"print" if m.group(1) else "fullscreen"}"',
            re.compile(r'<[a-zA-Z][^>]*?\son[a-z]+="[^"]*"'),
        ),
        Edit(
            "lazy launch-menu logos",
            re.compile(r'<img (alt="[^"]*" src="[^"]*_static/images/logo_[a-z_]+\.(?:png|svg)")>'),
            r'<img loading="lazy" \1>',
            re.compile(
                r'<img (?![^>]*\bloading=)[^>]*\bsrc="[^"]*_static/images/logo_[^"]*"'
                r"[^>]*>"
            ),
        ),
    )


def edit_page(text: str, page: str, edits: tuple[Edit, ...]) -> tuple[str, list[str]]:
    """Apply ``edits`` to one page's HTML: (new text, problems)."""
    problems = []
    for edit in edits:
        text, left = edit.apply(text, page)
        problems += left
    return text, problems


# --- the theme's stylesheet and fonts ----------------------------------------------------------

# A glyph rule, possibly for several names: ``.fa-close,.fa-xmark{--fa:"\f00d"}``.
GLYPH_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+,)*\.fa-[a-z0-9-]+)\{--fa:"[^"]*"\}')
SOURCE_MAP = "/*# sourceMappingURL=pydata-sphinx-theme.css.map*/"
TRIMMED_MARK = "bookext.website.postprocess"

# The rules fontawesome.js would inject for its inline SVGs (only those the pages use).
SVG_ICON_CSS = f"""
/* {TRIMMED_MARK}: icons are inline SVG written at build time. */
.svg-inline--fa{{box-sizing:content-box;display:var(--fa-display,inline-block);height:1em;
overflow:visible;vertical-align:-.125em;width:var(--fa-width,1.25em)}}
.svg-inline--fa.fa-lg{{vertical-align:-.2em}}
.fa-lg{{font-size:1.25em;line-height:.05em}}
.fa-fw{{text-align:center;width:1.25em}}
"""


def trim_theme_css(css: str, used: set[str]) -> str:
    """The theme's stylesheet without the glyph rules of icons no page uses, with the
    inline-SVG icon rules added, and without its source map (which no longer fits)."""
    keep = used | FA_RUNTIME

    def glyph(m: re.Match) -> str:
        names = {selector[len(".fa-") :] for selector in m.group(1).split(",")}
        return m.group(0) if names & keep else ""

    css, rules = GLYPH_RULE.subn(glyph, css)
    if not rules:
        raise ThemeMarkupChanged(
            'theme stylesheet: no Font Awesome glyph rules (.fa-NAME{--fa:"..."}) to trim: update GLYPH_RULE'
        )
    if SOURCE_MAP not in css:
        raise ThemeMarkupChanged(f"theme stylesheet: no {SOURCE_MAP!r} to remove: update SOURCE_MAP")
    return css.replace(SOURCE_MAP, "") + SVG_ICON_CSS


# pydata-sphinx-theme draws each admonition's icon as a glyph of Font Awesome's solid web
# font: ``.admonition.tip>.admonition-title:after{content:var(--pst-icon-admonition-tip)}``,
# ``--pst-icon-admonition-tip:var(--pst-icon-lightbulb)``, ``--pst-icon-lightbulb:"\uf0eb"``.
# A glyph font needed for the first paint is one more request, of the highest priority,
# that starts only after the stylesheet has loaded and the page has been laid out: it
# delays the first paint on a slow connection (Lighthouse counts it in the first
# contentful paint). The same icon as a mask of the title's colour needs no request.
ADMONITION_MASKS_MARK = f"{TRIMMED_MARK}: admonition icons as SVG masks, not glyphs of an icon font."
ADMONITION_ICON_RULE = re.compile(r"([^{}]*:after)\{[^{}]*content:var\(--pst-icon-admonition-([a-z]+)\)[^{}]*\}")
ADMONITION_ICON = re.compile(r"--pst-icon-admonition-([a-z]+):var\(--pst-icon-([a-z-]+)\)")
ICON_GLYPH = re.compile(r'--pst-icon-([a-z-]+):"(\\[0-9a-fA-F]{4}|[\ue000-\uf8ff])"')


def admonition_icons_as_masks(css: str, icons: dict) -> str:
    """Rules, appended to the theme's stylesheet, that draw each admonition icon the
    stylesheet names as an SVG mask (the path from fontawesome.js) instead of a glyph
    of the solid icon font, so that no page needs that font to show an admonition."""
    glyphs = {}
    for name, glyph in ICON_GLYPH.findall(css):
        code = int(glyph[1:], 16) if glyph.startswith("\\") else ord(glyph)
        glyphs[name] = f"U+{code:x}"
    kinds = dict(ADMONITION_ICON.findall(css))
    masks, rules = {}, []
    for selectors, kind in ADMONITION_ICON_RULE.findall(css):
        icon = kinds.get(kind, "")
        drawing = icons.get(("fas", glyphs.get(icon, "")))
        if drawing is None:
            raise ThemeMarkupChanged(
                f"admonition icons: no solid icon found for --pst-icon-admonition-{kind} "
                "(update ADMONITION_ICON / ICON_GLYPH)"
            )
        width, height, path = drawing
        svg = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}'><path d='{path}'/></svg>"
        masks[icon] = f'--ffn-icon-{icon}:url("data:image/svg+xml,{svg.replace("<", "%3C").replace(">", "%3E")}")'
        rules.append(f"{selectors.strip()}{{mask-image:var(--ffn-icon-{icon})}}")
    if len(rules) < 2 or "default" not in kinds:
        raise ThemeMarkupChanged(
            f"admonition icons: found {len(rules)} admonition icon rules and kinds {sorted(kinds)} "
            "in the theme's stylesheet; expected the default and several kinds (update ADMONITION_ICON_RULE)"
        )
    # Each icon once, as a custom property of the root, so that kinds sharing one share it.
    shape = (
        ":root{" + ";".join(masks.values()) + "}\n"
        ".admonition>.admonition-title:after,div.admonition>.admonition-title:after{"
        # One line of the title high, the icon 1em high in its middle, as the glyph was.
        'content:"";font:inherit;height:1lh;background-color:currentColor;'
        "mask-position:center;mask-repeat:no-repeat;mask-size:auto 1em}"
    )
    return "\n".join(["", f"/* {ADMONITION_MASKS_MARK} */", shape, *rules, ""])


def icon_codepoints(css: str) -> set[int]:
    """The private-use code points (Font Awesome glyphs) a stylesheet names, as escapes
    (``"\\f0eb"``) or as the characters themselves."""
    codepoints = {int(h, 16) for h in re.findall(r"\\([0-9a-fA-F]{4})", css)}
    codepoints |= {ord(c) for c in css}
    return {c for c in codepoints if 0xE000 <= c <= 0xF8FF}


@contextmanager
def fonttools_quiet() -> Iterator[None]:
    """fontTools' subsetter logs each step at INFO; that reaches the terminal once any package
    has configured the root logger (a11y-pygments, imported with the theme's code styles, calls
    ``logging.basicConfig(level=INFO)``): 78 lines in a clean build. Its warnings still show."""
    fonttools = logging.getLogger("fontTools")
    level = fonttools.level
    fonttools.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        fonttools.setLevel(level)


def subset_icon_font(path: Path, codepoints: set[int]) -> bytes:
    """The web font at ``path`` cut down to ``codepoints``, as WOFF2."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    with fonttools_quiet():
        # recalcTimestamp=False: no build time in the font, so two builds give the same bytes.
        font = TTFont(path, recalcTimestamp=False)
        options = subset.Options()
        options.flavor = "woff2"
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        font.flavor = "woff2"
        data = io.BytesIO()
        font.save(data, reorderTables=True)
    return data.getvalue()


def subset_icon_fonts(webfonts: Path, css: str, made: Callable | None = None) -> None:
    """Cut Font Awesome's web fonts (all ~1,400 solid icons: 112 KiB) down to the glyphs
    the theme's stylesheet still names. ``made(path, make)`` may give a font's cut-down
    bytes without ``make()`` (made by an earlier build from the same font and stylesheet)."""
    fonts = sorted(webfonts.glob("fa-*.woff2"))
    codepoints = icon_codepoints(css)
    if not fonts or not codepoints:
        raise ThemeMarkupChanged(
            f"icon fonts: found {len(fonts)} fonts in {webfonts} and "
            f"{len(codepoints)} glyphs named by the stylesheet; "
            "expected some of both"
        )
    for path in fonts:

        def make(path=path) -> bytes:
            return subset_icon_font(path, codepoints)

        path.write_bytes(made(path, make) if made is not None else make())


# --- the build step ----------------------------------------------------------------------------


#: What the last build's edits left, in the build's state folder (beside the doctrees): per
#: page, the digest of its edited HTML and the icons it shows. A page Sphinx did not write
#: again since is not edited again.
MANIFEST = "ffnbook-postprocessed.json"
#: Beside it, what the costly edits made (the cut-down stylesheet, the subset fonts), by the
#: digest of what they were made from: Sphinx copies the theme's originals over them on every
#: build, and making them again cost 0.8 s of CPU each time (measured on a no-op build).
MADE = "ffnbook-postprocessed"


def _edits_version(live_reload, policy: bool) -> str:
    """What an edited page depends on besides its own HTML: this module's and the policy's code,
    and the live-reload script the policy names."""
    return code_version(__file__, security_policy.__file__, extra=repr((live_reload, policy)))


def finish(app: Sphinx, exception) -> None:
    """Edit every built page that Sphinx wrote since the last edits, then the theme's
    stylesheet and fonts; fail on an edit left undone."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    icons = fontawesome_icons(out / "_static" / "scripts" / "fontawesome.js")
    edits = page_edits(icons)
    policy = "bookext.website.security_policy" in app.extensions  # which writes the pages' policy
    live_reload = live_reload_script(app) if policy else ()
    manifest_path = Path(app.doctreedir) / MANIFEST
    version = _edits_version(live_reload, policy)
    known = read_record(manifest_path, version)
    pages: dict[str, dict] = {}
    used: set[str] = set()
    problems: list[str] = []
    for name, page in built_pages(out):
        original = page.read_text(encoding="utf-8")
        earlier = known.get(name)
        if isinstance(earlier, dict) and earlier.get("digest") == digest(original.encode()):
            pages[name] = earlier  # edited by an earlier build, and not written since
            used.update(earlier.get("icons", ()))
            continue
        text, left = edit_page(original, name, edits)
        problems += left
        if policy:
            text, left = with_script_hashes(text, name, live_reload)
            problems += left
        page_icons = set(SVG_ICON.findall(text))
        used.update(page_icons)
        if text != original:
            page.write_text(text, encoding="utf-8")
        pages[name] = {"digest": digest(text.encode()), "icons": sorted(page_icons)}
    if problems:
        shown = "\n  ".join(problems[:12]) + (f"\n  ... and {len(problems) - 12} more" if len(problems) > 12 else "")
        raise ThemeMarkupChanged(
            f"{len(problems)} edits of the theme's HTML found markup they do not handle "
            f"(see docs/_ext/bookext/website/postprocess.py):\n  {shown}"
        )
    made = _Made(Path(app.doctreedir) / MADE, version)
    _cut_down_theme_css_and_fonts(out, used, icons, made)
    write_record(manifest_path, version, pages)
    made.forget_the_rest()


class _Made:
    """What the costly edits made, kept by the digest of what they were made from (and of the
    edits' ``version``), in ``folder``; only what this build used is kept."""

    def __init__(self, folder: Path, version: str) -> None:
        self.folder, self.version, self.used = folder, version, set()

    def __call__(self, inputs: tuple[bytes, ...], make: Callable[[], bytes]) -> bytes:
        """``make()``, or what it made from the same ``inputs`` in an earlier build."""
        key = digest(self.version.encode(), *inputs)
        self.used.add(key)
        try:
            return (self.folder / key).read_bytes()
        except OSError:
            data = make()
            write_atomically(self.folder / key, data)
            return data

    def forget_the_rest(self) -> None:
        for old in self.folder.glob("*"):
            if old.name not in self.used:
                old.unlink(missing_ok=True)


def _cut_down_theme_css_and_fonts(out: Path, used: set[str], icons: dict, made: _Made) -> None:
    """The theme's stylesheet without the glyph rules of icons no page shows, admonition icons
    as masks, and its icon fonts subset to the glyphs it still names."""
    css_file = out / "_static" / "styles" / "pydata-sphinx-theme.css"
    original = css_file.read_text(encoding="utf-8")

    def cut_down() -> bytes:
        edited = original  # (an incremental build may keep last build's edited copy)
        if TRIMMED_MARK not in edited:
            edited = trim_theme_css(edited, used)
        if ADMONITION_MASKS_MARK not in edited:
            edited += admonition_icons_as_masks(edited, icons)
        return edited.encode()

    theme_js = (out / "_static" / "scripts" / "fontawesome.js").read_bytes()  # where the icons come from
    css = made((original.encode(), " ".join(sorted(used)).encode(), theme_js), cut_down).decode()
    if css != original:
        css_file.write_text(css, encoding="utf-8")
    subset_icon_fonts(
        out / "_static" / "vendor" / "fontawesome" / "webfonts",
        css,
        lambda path, make: made((css.encode(), path.read_bytes()), make),
    )


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
