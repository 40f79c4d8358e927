"""Helpers for tests that build the book and read the built pages."""

from __future__ import annotations

import copy
import functools
import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]

#: The jupytext header of a MyST text notebook, for pages that tests write.
NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
DOCS = ROOT / "docs"


def make(target: str, source: Path, build: Path) -> subprocess.CompletedProcess:
    """Run the real `make TARGET` on ``source`` into ``build``, capturing its output."""
    return subprocess.run(
        [
            "make",
            "--no-print-directory",
            target,
            f"SOURCEDIR={source}",
            f"BUILDDIR={build}",
            f"PY={sys.executable}",
            "SETUP=",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def build_in_process(srcdir: Path, builddir: Path):
    """One HTML build of a tiny book in its own Sphinx application (as one `make html` would
    run), which must finish without a warning; the application, its console output in
    ``app._status``."""
    import io

    from sphinx.testing.util import SphinxTestApp

    app = SphinxTestApp("html", srcdir=srcdir, builddir=builddir, status=io.StringIO(), warning=io.StringIO())
    try:
        app.build()
    finally:
        app.cleanup()
    assert app.statuscode == 0 and app._warning.getvalue() == "", app._warning.getvalue()
    return app


def make_html(source: Path, build: Path) -> subprocess.CompletedProcess:
    """Run the real `make html` on ``source`` into ``build``, capturing its output."""
    return make("html", source, build)


def build_site(build: Path, outcome: Path) -> None:
    """`make html` of the book into ``build``; then ``outcome`` (JSON) says where its html is
    and, if it failed, why. Run in the background by tests/conftest.py (``site``)."""
    import json
    import os

    failure = "the build of the book stopped before it ended"
    try:
        result = make_html(DOCS, build)
        failure = f"make html failed:\n{result.stdout[-8000:]}\n{result.stderr[-8000:]}" if result.returncode else None
    finally:
        partial = outcome.with_suffix(".partial")
        partial.write_text(json.dumps({"html": str(build / "html"), "failure": failure}))
        os.replace(partial, outcome)  # whole or absent: another process polls for it


def process_ended(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie its parent has not reaped; Linux)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def soup_of(site: Path, name: str) -> BeautifulSoup:
    """The built page, without the hidden glossary tooltips (text a reader sees).

    Parsed once per test process while the file is unchanged (html.parser takes ~0.3 s for a
    chapter page, and dozens of tests read each page): the soup is shared, so read it, never
    edit it; a test that edits the page takes :func:`editable_soup_of`."""
    page = site / f"{name}.html"
    stat = page.stat()
    return _parsed_page(str(page.resolve()), stat.st_mtime_ns, stat.st_size)


def editable_soup_of(site: Path, name: str) -> BeautifulSoup:
    """A copy of :func:`soup_of`'s page that the caller may change (replace, decompose): the
    shared soup stays as parsed for every other test of the process."""
    return copy.copy(soup_of(site, name))


@functools.lru_cache(maxsize=128)
def _parsed_page(path: str, mtime_ns: int, size: int) -> BeautifulSoup:
    soup = BeautifulSoup(Path(path).read_text(), "html.parser")
    for tip in soup.select(".ffn-tip"):
        tip.decompose()
    return soup


def page_text(site: Path, name: str) -> str:
    """The article's visible text, whitespace collapsed."""
    return " ".join(soup_of(site, name).find("article").get_text(" ").split())


def glue_data(site: Path, name: str) -> dict:
    """Every value page ``name`` glued, by key, as myst-nb recorded it when the page executed.

    myst-nb writes each executed page's glue outputs to
    ``<build>/jupyter_execute/<name>.glue.json`` (``site`` is ``<build>/html``).
    """
    import json

    path = site.parent / "jupyter_execute" / f"{name}.glue.json"
    assert path.exists(), f"{name} glued nothing (no {path})"
    return json.loads(path.read_text(encoding="utf-8"))


def glued(site: Path, name: str, key: str):
    """The value glued under ``key`` on page ``name``: a Python int, float, str, tuple...

    Looked up by key, so the page's wording can change freely. Values are read
    back from their ``text/plain`` form (ffnbook glues builtins, whose repr
    round-trips exactly); anything else comes back as that text.
    """
    import ast

    data = glue_data(site, name)
    assert key in data, f"{name} glued no {key!r}; it glued: {sorted(data)}"
    text = data[key]["data"].get("text/plain", "")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def glued_after(site: Path, name: str, phrase: str) -> str:
    """The first glued value that follows ``phrase`` within one paragraph of the page."""
    soup = editable_soup_of(site, name)
    for span in soup.find_all("span", class_="pasted-text"):
        span.replace_with(f"\u27e6{span.get_text()}\u27e7")  # mark glued values: ⟦value⟧
    for block in soup.find_all(["p", "li", "td"]):
        text = " ".join(block.get_text(" ").split())
        match = re.search(re.escape(phrase) + r"[^\u27e6]*\u27e6([^\u27e7]*)\u27e7", text)
        if match:
            return match.group(1)
    raise AssertionError(f"no glued value after {phrase!r} on {name}.html")


def number(text: str) -> float:
    """Parse a glued number as shown ("2,099,712", "1.05e-15", "66.7%")."""
    text = text.strip().replace(",", "").replace("\u2212", "-")
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def figures(site: Path, name: str) -> list:
    """The <img> elements inside figures of a page."""
    return [img for fig in soup_of(site, name).find_all("figure") for img in fig.find_all("img")]


# --- serving and auditing the site in a browser (tests/test_site_quality.py, tools/audit.py) ---

CHROMIUM = "/usr/bin/chromium"
#: The colour schemes of a browser test whose subject is not the scheme itself: `make test`
#: runs it in the light one, `make test-full` in the dark one too (the scheme matrix).
SCHEMES = ("light", pytest.param("dark", marks=pytest.mark.full))
#: The screen sizes of a browser test whose behaviour is the same on both: `make test` runs it on
#: the phone (390x844, touch: where layouts break), `make test-full` on the desktop too.
SCREENS = ("phone", pytest.param("desktop", marks=pytest.mark.full))
#: The pages a check of every page measures in `make test` (`make test-full`: every page, the
#: every-page matrix): between them display and inline formulas, figures, an explorable and
#: problems (compute), the wide layer-norm equations (transformer-block), long glossary terms,
#: an API page's signatures and the index.
SAMPLE_PAGES = (
    "index.html",
    "transformer-block.html",
    "activations.html",
    "compute.html",
    "glossary.html",
    "api/feedforward.html",
)
#: Parametrize an every-page check by this: "sample" (SAMPLE_PAGES) in `make test`, "every" in
#: `make test-full`.
COVERAGE = ("sample", pytest.param("every", marks=pytest.mark.full))


def covered(names, coverage: str) -> list:
    """The pages among ``names`` a check with this ``coverage`` measures (see COVERAGE); never
    none, so a renamed sampled page fails the check rather than leaving it empty."""
    chosen = [name for name in names if coverage == "every" or name in SAMPLE_PAGES]
    assert chosen, f"none of {SAMPLE_PAGES} among {names}"
    return chosen


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def browser_api(what: str = "browser tests"):
    """``playwright.sync_api`` for a module of browser tests, called at its top.

    Where Chromium or Playwright is missing, ``what`` is skipped with the reason
    printed (the whole module when called at import, one test when called in a
    fixture); .ci/run installs both, so CI runs them.
    """
    import shutil

    import pytest

    if not shutil.which(CHROMIUM):
        pytest.skip(f"{what}: no Chromium at {CHROMIUM} (apt-get install -y chromium)", allow_module_level=True)
    return pytest.importorskip("playwright.sync_api", reason=f"{what}: playwright is not installed")


# axe-core for the tests comes from tests/node (make test installs it); make audit's
# full npm install at the root has it too.
AXE_JS = next(
    (
        p
        for p in (
            ROOT / "tests" / "node" / "node_modules" / "axe-core" / "axe.min.js",
            ROOT / "node_modules" / "axe-core" / "axe.min.js",
        )
        if p.exists()
    ),
    ROOT / "tests" / "node" / "node_modules" / "axe-core" / "axe.min.js",
)
# Lighthouse (make audit only: slow) and axe-core (make audit and make test) run on these.
LIGHTHOUSE_PAGES = ("index.html", "position-independence.html", "width.html")  # width: an explorable
AXE_PAGES = (
    "index.html",
    "position-independence.html",
    "glossary.html",
    "parameter-count.html",
    "exercises.html",
    "compute.html",
    "api/feedforward.html",
    "bibliography.html",
    "search.html",
    "404.html",
)
GZIP_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")


@functools.lru_cache(maxsize=512)
def compressed(path: str, mtime_ns: int, size: int) -> bytes:
    """A file gzip-compressed as a static host sends it, once per version of the file: a page
    load asks for a dozen files, and level 9 of all of them cost the tests' own process (and
    its lock on Python) ~40 ms per load, over a hundred loads a run."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0)


def serve(site: Path):
    """Serve ``site`` on 127.0.0.1 as a static host does: text gzip-compressed, and
    ``404.html`` (with status 404) for a missing address.

    The site is also reachable under the path it is published at (the ``<base>``
    of 404.html, e.g. /ffnbook/), as on GitHub Pages. A context manager yielding
    the base URL (ending in "/").
    """
    import contextlib
    import http.server
    import io
    import threading

    not_found = site / "404.html"
    published = None
    if not_found.exists():
        match = re.search(r'<base href="(/[^"]*)"', not_found.read_text())
        published = match.group(1) if match and match.group(1) != "/" else None

    class GzipHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_head(self):
            if published and self.path.startswith(published):
                self.path = "/" + self.path[len(published) :]
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            status = 200
            if not path.exists() and not_found.exists():
                path, status = not_found, 404
            ctype = self.guess_type(str(path))
            if status == 200 and (
                not path.is_file()
                or "gzip" not in self.headers.get("Accept-Encoding", "")
                or not ctype.startswith(GZIP_TYPES)
            ):
                return super().send_head()
            gzipped = "gzip" in self.headers.get("Accept-Encoding", "")
            stat = path.stat()
            body = compressed(str(path), stat.st_mtime_ns, stat.st_size) if gzipped else path.read_bytes()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            if gzipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=600")
            self.end_headers()
            return io.BytesIO(body)

    @contextlib.contextmanager
    def running():
        handler = functools.partial(GzipHandler, directory=str(site))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_port}/"
        finally:
            httpd.shutdown()
            httpd.server_close()

    return running()


def axe_in_page(page, within: str | None = None) -> list[str]:
    """Run axe-core (WCAG 2.x A/AA and best practices) in a loaded Playwright page
    (only in the element ``within`` selects, if given)."""
    # Measure colours at rest, not halfway through the theme's colour transitions.
    page.add_style_tag(content="*,*::before,*::after{transition:none!important;animation:none!important}")
    # Evaluated, not added as a <script>: the pages' content security policy refuses inline
    # scripts, and a script tag Playwright adds is one.
    page.evaluate(AXE_JS.read_text())
    result = page.evaluate(
        """async (within) => {
        const r = await axe.run(within ? document.querySelector(within) : document, {resultTypes: ['violations']});
        return r.violations.map(v => `${v.id} (${v.impact}): ${v.help} -- ` +
            v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ') +
            (v.nodes.length > 3 ? ` (+${v.nodes.length - 3} more)` : ''));
    }""",
        within,
    )
    return list(result)


def axe_violations(url: str, browser=None) -> list[str]:
    """axe-core violations of ``url`` in the light and in the dark theme."""
    from playwright.sync_api import sync_playwright

    def run(b):
        found = []
        for scheme in ("light", "dark"):
            context = b.new_context(color_scheme=scheme, viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.goto(url)
            page.wait_for_load_state("load")
            found += [f"[{scheme}] {v}" for v in axe_in_page(page)]
            context.close()
        return found

    if browser is not None:
        return run(browser)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return run(b)
        finally:
            b.close()


# The one list of pages allowed to differ between two clean builds of the same source:
# they show times measured while the build ran. With them may differ what is made
# from them: their figures, their downloadable notebooks and the search index (which
# indexes their text). Every other built file must match byte for byte
# (tests/test_site_quality.py::test_two_clean_builds_give_identical_html).
PAGES_WITH_MEASURED_TIMES = (
    "execution-statistics",  # how long each page took to execute
    "compute",  # measured forward-pass times, in the prose, a table and a figure
)
# The archive of every reader notebook (bookext.notebooks.notebook_setup.ARCHIVE), so it holds theirs too.
NOTEBOOKS_ARCHIVE = "ffnbook-notebooks.zip"


def allowed_to_differ(*sites: Path) -> set[str]:
    """Built files (paths relative to the html folder) that may differ between builds."""
    # .buildinfo.bak: Sphinx keeps the previous build's stamp when the configuration changed
    # between two builds of one folder; a clean build has none.
    allowed = {"searchindex.js", ".buildinfo.bak"}
    # The PDF is printed by `make pdf` (a test may have run it before a second build): once it
    # exists the landing page links it with its measured size.
    if any(any((site / "_downloads").glob("*/ffnbook.pdf")) for site in sites):
        allowed |= {"index.html"} | {
            p.relative_to(site).as_posix() for site in sites for p in (site / "_downloads").glob("*/ffnbook.pdf")
        }
    for name in PAGES_WITH_MEASURED_TIMES:
        allowed |= {f"{name}.html", f"_sources/{name}.ipynb", f"notebooks/{name}.ipynb"}
        if any((site / "notebooks" / f"{name}.ipynb").exists() for site in sites):
            allowed.add(NOTEBOOKS_ARCHIVE)  # it holds that page's notebook
        for site in sites:
            if (site / f"{name}.html").exists():
                allowed |= {
                    img["src"] for img in soup_of(site, name).find_all("img") if img["src"].startswith("_images/")
                }
    return allowed


def shown_glued_values(site: Path, name: str) -> list[str]:
    """Every glued value page ``name`` shows in its text, as shown, in reading order."""
    return [span.get_text() for span in soup_of(site, name).find_all("span", class_="pasted-text")]


def cited_keys(site: Path, name: str, section_id: str) -> set[str]:
    """The bibliography keys (docs/references.bib) of the works a section of a page cites.

    A citation links to its entry on the bibliography page; the entry is matched to its key
    by the title references.bib gives, so the test names works by key, not by wording.
    """
    from pybtex.database import parse_file

    def letters(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    section = soup_of(site, name).find("section", id=section_id)
    assert section is not None, f"no section {section_id!r} on {name}.html"
    bibliography = soup_of(site, "bibliography")
    entries = {}
    for link in section.select('a[href^="bibliography.html#"]'):
        entry = bibliography.find(id=link["href"].split("#", 1)[1])
        assert entry is not None, f"{name}.html links {link['href']}, which is not on the bibliography page"
        entries[link["href"]] = letters(entry.get_text(" "))
    titles = {key: letters(entry.fields["title"]) for key, entry in parse_file(DOCS / "references.bib").entries.items()}
    return {key for text in entries.values() for key, title in titles.items() if title in text}


def glued_in(site: Path, name: str, section_id: str) -> list[str]:
    """The glued values of one section of a page, in reading order."""
    section = soup_of(site, name).find("section", id=section_id)
    assert section is not None, f"no section {section_id!r} on {name}.html"
    return [span.get_text() for span in section.find_all("span", class_="pasted-text")]


def chapter_order() -> list[str]:
    """The chapter's pages in reading order: the numbered toctree of docs/index.md."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    block = re.search(r"```\{toctree\}\n(?:[^\n]*\n)*?:caption: The chapter\n(.*?)```", index, re.S)
    assert block is not None, "docs/index.md has no toctree captioned 'The chapter'"
    return [ln.strip() for ln in block.group(1).splitlines() if ln.strip() and not ln.strip().startswith(":")]


if __name__ == "__main__":  # python tests/sitecheck.py BUILD OUTCOME (tests/conftest.py: site)
    build_site(Path(sys.argv[1]), Path(sys.argv[2]))
