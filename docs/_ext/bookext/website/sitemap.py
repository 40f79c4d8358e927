"""``sitemap.xml`` (every content page, in a stable order) and ``robots.txt`` pointing at it.

Why not sphinx-sitemap (tried: 2.9.0, on tests/roots/test-theme with ``html_baseurl`` set):
it lists the pages *written* by the build, collected in ``html-page-context``, so an
incremental build's sitemap lacks every page it did not write again (after one page was
edited, the tiny book's sitemap dropped ``404.html``; upstream jdillard/sphinx-sitemap#13,
open since 2018), against what :mod:`bookext.builds.incremental` guarantees: an incremental
build publishes what a clean one would. It also lists pages in the order they were written
(with ``-j``, as the writer processes report them), starts a ``multiprocessing`` manager
process in every build, and by default prefixes every address with the language (``/en/``)
and lists the search, index and 404 pages. This module reads the pages from Sphinx's saved
environment instead: about twenty lines.
"""

from __future__ import annotations

import html
from pathlib import Path

from sphinx.application import Sphinx

from bookext.website.site_url import site_url

# Pages that are not content: no sitemap entry.
NOT_IN_SITEMAP = {"404", "search", "genindex", "py-modindex"}


def write_sitemap(app: Sphinx, exception) -> None:
    """sitemap.xml (every content page, in a stable order) and robots.txt pointing at it."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    base = site_url(app)
    pages = sorted(
        d for d in app.env.found_docs if d not in NOT_IN_SITEMAP and not app.env.metadata.get(d, {}).get("orphan")
    )
    urls = "".join(f"  <url><loc>{html.escape(base + app.builder.get_target_uri(d))}</loc></url>\n" for d in pages)
    (out / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + urls + "</urlset>\n",
        encoding="utf-8",
    )
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {base}sitemap.xml\n", encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.website.site_url")
    app.connect("build-finished", write_sitemap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
