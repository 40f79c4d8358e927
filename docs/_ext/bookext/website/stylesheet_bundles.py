"""A page's stylesheets (after the theme's own two) as one file, in their order.

On a phone's slow connection each stylesheet is a request the first paint waits for; a
chapter page had six besides the theme's (Pygments, the book theme, myst-nb, the book's
own, problems, previews). The bundle is named after the files it joins, so pages that load
the same files share it (and the reader's cache); Sphinx appends the digest of its content
as for any stylesheet. A file the bundle cannot hold as it is (an ``@import``; a relative
``url()`` in a file outside ``_static/``, which would resolve elsewhere; an alternate or
media-specific stylesheet) fails the build. :mod:`bookext.website.page_assets` calls
:func:`bundle_stylesheets` for each page.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import SphinxError


class StylesheetNotBundled(SphinxError):
    """A stylesheet of the page cannot be joined to the others as it is."""

    category = "Stylesheet not bundled (bookext.website.stylesheet_bundles)"


SOURCE_MAP_COMMENT = re.compile(r"/\*# sourceMappingURL=[^*]*\*/")
RELATIVE_URL = re.compile(r"""url\(\s*(?!['"]?(?:data:|[a-z]+://|/))""")


BUNDLE_PART = re.compile(r"^/\* (_static/[^ ]+) \*/$", re.M)


def _bundle_text(outdir: Path, names: list[str]) -> str:
    parts = []
    for name in map(Path, names):
        if name.parts[0] != "_static":
            raise StylesheetNotBundled(f"{name}: not in _static/")
        try:
            text = (outdir / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StylesheetNotBundled(f"{name}: not in {outdir} when the pages are written") from None
        if "@import" in text or (len(name.parts) > 2 and RELATIVE_URL.search(text)):
            raise StylesheetNotBundled(f"{name}: an @import or a relative url() that would not resolve from _static/")
        parts.append(f"/* {name.as_posix()} */\n" + SOURCE_MAP_COMMENT.sub("", text).strip() + "\n")
    return "".join(parts)


def _write_bundle(target: Path, content: str) -> None:
    if not target.exists() or target.read_text(encoding="utf-8") != content:
        # Written whole, then renamed: parallel writers of pages may write the same file.
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        temporary.write_text(content, encoding="utf-8")
        os.replace(temporary, target)


def refresh_bundles(app: Sphinx, exception) -> None:
    """Make every bundle again from its files as they are when the build ends: a build
    that changed only a stylesheet rewrites no page (and so no bundle) by itself."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for bundle in sorted((outdir / "_static").glob("styles-*.css")):
        names = BUNDLE_PART.findall(bundle.read_text(encoding="utf-8"))
        if not names:
            raise StylesheetNotBundled(f"{bundle}: names none of the stylesheets it joins")
        _write_bundle(bundle, _bundle_text(outdir, names))


def bundle_stylesheets(outdir: Path, styles: list) -> list:
    """``styles`` with the page's own stylesheets (after the theme's two) joined into one."""
    plain = {"rel": "stylesheet", "type": "text/css"}
    local = [css for css in styles if "://" not in str(css.filename)]
    if len(local) < 2:
        return styles
    for css in local:
        if {k: v for k, v in css.attributes.items() if v is not None} != plain:
            raise StylesheetNotBundled(f"{css.filename}: attributes {css.attributes} (only plain stylesheets)")
    names = [str(css.filename) for css in local]
    key = hashlib.sha256(" ".join(names).encode()).hexdigest()[:10]
    bundle = Path("_static") / f"styles-{key}.css"
    _write_bundle(outdir / bundle, _bundle_text(outdir, names))
    joined = type(local[0])(bundle.as_posix(), priority=local[0].priority)
    return [joined if css is local[0] else css for css in styles if css is local[0] or css not in local]


def stylesheets_before_the_pages(app: Sphinx, builder) -> None:
    """myst-nb copies its stylesheet only when the build finishes; the bundle of a page's
    stylesheets is made while the page is written, so it must be there, as it will be, before."""
    from bookext.builds.incremental import copy_myst_nb_stylesheet_first

    copy_myst_nb_stylesheet_first(app, builder)
    if builder.format == "html" and "pydata_sphinx_theme" in app.extensions:
        # pydata-sphinx-theme rewrites pygments.css (light and dark rules) only when the
        # build finishes, too; the same function, called now, writes the same file.
        from pydata_sphinx_theme.pygments import overwrite_pygments_css

        overwrite_pygments_css(app)


def setup(app: Sphinx) -> dict:
    app.connect("write-started", stylesheets_before_the_pages)
    # After pydata-sphinx-theme's and myst-nb's handlers (priority 500) have written their files.
    app.connect("build-finished", refresh_bundles, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
