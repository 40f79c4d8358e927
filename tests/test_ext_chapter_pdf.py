"""The ``{chapter-pdf}`` role (docs/_ext/bookext/content/chapter_pdf.py), in-process on a one-page
book: the page waits for the PDF without being read again on every build, and links it once
it appears. (tests/test_build.py checks the same through `make html` in `make test-full`.)"""

from __future__ import annotations

import re
from pathlib import Path

from sitecheck import build_in_process


def build(srcdir: Path, builddir: Path) -> str:
    """One build's console output (sphinx.testing colours it)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", build_in_process(srcdir, builddir)._status.getvalue())


def test_a_page_linking_the_pdf_is_read_again_when_it_appears_and_not_before(tmp_path):
    srcdir, builddir = tmp_path / "src", tmp_path / "build"
    srcdir.mkdir()
    (srcdir / "conf.py").write_text('extensions = ["myst_parser", "bookext.content.chapter_pdf"]\n')
    (srcdir / "index.md").write_text("# Index\n\nIntro.\n\n{chapter-pdf}`Download the PDF`\n")
    build(srcdir, builddir)
    again = build(srcdir, builddir)
    assert re.search(r"updating environment: 0 added, 0 changed, 0 removed", again), again
    html = builddir / "html" / "index.html"
    assert "Download the PDF" not in html.read_text(encoding="utf-8")  # no PDF, no link

    (builddir / "pdf").mkdir()
    (builddir / "pdf" / "ffnbook.pdf").write_bytes(b"%PDF-1.4\n" + b"0" * 300_000)
    appeared = build(srcdir, builddir)
    assert re.search(r"updating environment: 0 added, 1 changed, 0 removed", appeared), appeared
    text = re.sub(r"<[^>]+>", "", html.read_text(encoding="utf-8"))
    assert "Download the PDF (PDF, 0.3 MB)" in re.sub(r"\s+", " ", text)
