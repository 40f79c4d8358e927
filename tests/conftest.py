"""Shared fixtures: small, seeded FFN weights and inputs; the built book; Sphinx test apps.

Three tiers of test live here. ``make test`` runs every test but those marked ``full``
(pyproject.toml's addopts), on every core with pytest-xdist: it builds the book once and
loads each page in one Chromium per worker. ``make test-full`` (CI, on a schedule) adds the
``full`` ones: whole-book reruns (the reader notebooks in a fresh venv, a second clean build,
the PDF), the colour-scheme, screen-size and every-page matrices of the browser tests
(sitecheck's SCHEMES, SCREENS, COVERAGE), more Hypothesis examples. ``pytest -m "not build"``
(``make check``) runs the unit tests, the doctests and the extension's in-process tests on tiny
Sphinx projects in ``tests/roots/`` (Sphinx's own ``sphinx.testing`` fixtures); it never
builds the book. Every test that needs the built book (the ``site`` fixture) or
builds a copy of it carries the ``build`` marker, the former automatically.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import ffnbook

# Hypothesis budgets for the generated tests (tests/test_contract.py, test_properties.py): `make
# check` and `make test` run the default "test" profile (a few examples per callable: the contract
# tests' 2,000 ids take ~30 CPU-s at 4 examples, ~55 at 10), `make test-full` (CI, on a schedule)
# the "full" one, 100 each. Derandomized, so a run is repeatable and CI never fails by chance; no
# example database on disk.
settings.register_profile(
    "full", max_examples=100, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile("test", parent=settings.get_profile("full"), max_examples=4)
settings.load_profile("test")

# app, make_app, rootdir...: Sphinx applications built in-process on a test root.
pytest_plugins = ("sphinx.testing.fixtures",)

# The test roots are Sphinx projects (each with a conf.py), not test modules.
collect_ignore = ["roots"]

# Tests read Sphinx's console output as plain text. Sphinx colours it whenever CI=true
# (GitHub's runners, this project's CI), which splits "updating environment: 0 added"
# with escape codes; NO_COLOR wins over CI in Sphinx and reaches every build a test starts.
os.environ["NO_COLOR"] = "1"


def pytest_collection_modifyitems(items):
    """A test that reads the built book builds it: mark it ``build``, so that
    ``-m "not build"`` never starts the slow build by accident.

    Then the modules are ordered for pytest-xdist (``--dist loadfile``, one module per work
    unit, handed out in this order): first those that build copies of the project, then the
    other tests that do not read the book, while the book builds in the background (see
    ``_site_build_starts_early``); then the other tests that read it, among them the trained
    page's recomputation (~45 s, which ended the run when it came last), and last the browser
    tests: modules of under a minute or so each, so the workers finish close together."""
    for item in items:
        if "site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.build)
    reads_site, builds, browser = set(), set(), set()
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        module = item.nodeid.split("::")[0]
        if "site" in fixtures:
            reads_site.add(module)
        elif item.get_closest_marker("build"):
            builds.add(module)
        if "browser" in fixtures:
            browser.add(module)

    def rank(item) -> int:
        module = item.nodeid.split("::")[0]
        if module in reads_site:
            return 3 if module in browser else 2
        return 0 if module in builds else 1

    items.sort(key=rank)  # stable: each module's tests stay together, in their order


#: The modules whose tests start from the six-page book's clean build (``clean_build``, one per
#: worker): pytest-xdist hands them to one worker together, so that build is made once.
SIX_PAGE_BOOK_MODULES = ("tests/test_execution_cache.py", "tests/test_interrupted_builds.py", "tests/test_bench.py")


# Optional: a run without pytest-xdist (``-p no:xdist``) has no such hook to implement.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (make test), but the six-page book's modules are one work unit."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SixPageBookOnOneWorker(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return SIX_PAGE_BOOK_MODULES[0] if module in SIX_PAGE_BOOK_MODULES else module

    return SixPageBookOnOneWorker(config, log)


@pytest.fixture(scope="session")
def rootdir() -> Path:
    """Where sphinx.testing finds ``@pytest.mark.sphinx(testroot="x")``: tests/roots/test-x."""
    return Path(__file__).resolve().parent / "roots"


@pytest.fixture(scope="module")
def tiny_book(request, rootdir, tmp_path_factory):
    """The test module's tiny book (``TESTROOT = "x"``: tests/roots/test-x), built once for
    the module in-process, with sphinx.testing's app: its outdir and warnings are read."""
    from sphinx.testing.util import SphinxTestApp

    name = request.module.TESTROOT
    srcdir = tmp_path_factory.mktemp(name) / "src"
    shutil.copytree(rootdir / f"test-{name}", srcdir)
    app = SphinxTestApp("html", srcdir=srcdir)
    try:
        app.build()
        yield app
    finally:
        app.cleanup()


@pytest.fixture(scope="module")
def tiny_page(tiny_book):
    """Read a page of the module's tiny book: ``tiny_page("index")`` is its parsed HTML."""
    from bs4 import BeautifulSoup

    def parse(name: str) -> BeautifulSoup:
        html = (tiny_book.outdir / f"{name}.html").read_text(encoding="utf-8")
        return BeautifulSoup(html, "html.parser")

    return parse


@pytest.fixture(scope="module")
def quiet_tiny_book(tiny_book):
    """The tiny book, which must have built without a single warning."""
    from sphinx.util.console import strip_colors

    assert strip_colors(tiny_book.warning.getvalue()) == ""
    return tiny_book


@pytest.fixture
def calls(monkeypatch):
    """``calls(owner, "name")``: the list of the arguments of each call of ``owner.name`` (a
    module's function, a class's method) from then on; the calls still happen."""

    def record(owner, name: str) -> list[tuple]:
        made, plain = [], getattr(owner, name)

        def counted(*args):
            made.append(args)
            return plain(*args)

        monkeypatch.setattr(owner, name, counted)
        return made

    return record


@pytest.fixture
def small_params() -> ffnbook.FFNParams:
    return ffnbook.init_ffn_params(16, 64, seed=3)


@pytest.fixture
def tokens() -> np.ndarray:
    return ffnbook.random_tokens((2, 7, 16), seed=4)


# --- the six-page book of the build tests (test_execution_cache and the modules using it) ------


@pytest.fixture(scope="session")
def clean_build(tmp_path_factory) -> tuple[Path, Path, str]:
    """The six-page book of tests/test_execution_cache.py, built clean once per test session
    (per pytest-xdist worker): where the project lives, a copy of it as that build left it, and
    the build's output. A clean build (Sphinx, a kernel template that imports torch, six pages
    executed) was most of each build test's cost; tests that need a built book start from it."""
    from test_execution_cache import built, make_project

    home = tmp_path_factory.mktemp("six-page-book")
    project = make_project(home)
    output = built(project)
    snapshot = home / "as-built"
    shutil.copytree(project, snapshot, symlinks=True)
    return project, snapshot, output


@pytest.fixture
def built_project(clean_build) -> Path:
    """The six-page book as its clean build left it, put back for each test. In place, not in
    the test's own folder: the execution records and Sphinx's saved environment name files by
    absolute path, so the copy lives where it was built (the tests of one worker run one at a
    time). Files keep their times (copy2), as the build left them."""
    project, snapshot, _ = clean_build
    shutil.rmtree(project)
    shutil.copytree(snapshot, project, symlinks=True)
    return project


def shared_folder(tmp_path_factory) -> Path:
    """A folder every process of this test session sees: under pytest-xdist, the parent of
    the workers' own temporary folders; otherwise the session's temporary folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


#: The background build of the book this process started (at most one per session).
_SITE_BUILD: list = []


@pytest.fixture(scope="session", autouse=True)
def _site_build_starts_early(request, tmp_path_factory):
    """Start building the book as soon as the session starts, when a selected test reads it:
    the other tests run meanwhile (a clean build is a minute or two of CPU), and the first
    test that reads the book waits only for what is left of the build."""
    if not os.environ.get("FFNBOOK_SITE") and any(
        "site" in getattr(item, "fixturenames", ()) for item in request.session.items
    ):
        start_site_build(shared_folder(tmp_path_factory))
    yield
    for build in _SITE_BUILD:  # another worker may still wait for it: let it finish
        build.wait()


def start_site_build(shared: Path) -> None:
    """Run `make html` once for the whole session (all xdist workers), in the background: into
    the checkout's ``_build`` when it has a build (brought up to date), else into ``shared``.
    ``tests/sitecheck.py`` writes the outcome to ``shared/site.json`` when it ends."""
    import subprocess
    import sys

    from filelock import FileLock
    from sitecheck import ROOT

    with FileLock(shared / "site.lock"):
        if (shared / "site.pid").exists():
            return
        build = ROOT / "_build" if (ROOT / "_build" / "html").is_dir() else shared / "site"
        script = Path(__file__).with_name("sitecheck.py")
        process = subprocess.Popen([sys.executable, str(script), str(build), str(shared / "site.json")])
        (shared / "site.pid").write_text(str(process.pid))
        _SITE_BUILD.append(process)


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The whole book as built by `make html`, once per test session (all xdist workers).

    * ``FFNBOOK_SITE`` set: that built ``html`` folder, as it is (CI builds first).
    * a checkout with a build (``_build/html``): `make html` there brings it up to date
      (an incremental build, which publishes what a clean one would: seconds when it is
      fresh), and the tests read it; a page test alone takes seconds, not a whole build.
    * otherwise (a clean clone): a clean build into a temporary folder.

    The build starts with the session (``_site_build_starts_early``); every worker waits for
    the same build, and a failed build fails every test that reads the book, with its output.
    """
    import json
    import time

    from sitecheck import process_ended

    if os.environ.get("FFNBOOK_SITE"):
        return Path(os.environ["FFNBOOK_SITE"])
    shared = shared_folder(tmp_path_factory)
    start_site_build(shared)
    outcome, builder = shared / "site.json", int((shared / "site.pid").read_text())
    while not outcome.exists():
        assert not (process_ended(builder) and not outcome.exists()), "the build of the book ended without a result"
        time.sleep(0.5)
    built = json.loads(outcome.read_text())
    assert not built["failure"], built["failure"]
    return Path(built["html"])


@pytest.fixture
def deterministic_torch_thread():
    """One deterministic torch thread, seeded; torch's settings are restored afterwards."""
    from ffnbook import tiny_transformer

    with tiny_transformer.deterministic_torch(seed=0, threads=1):
        yield


# --- the built book in a browser (the test_*browser*.py modules, test_site_quality.py) -------


@pytest.fixture(scope="session")
def server(site):
    """The built book on localhost as a static host serves it: gzip, 404.html for missing
    addresses, and the site also under the path it is published at (404.html's <base>).
    One server per test session (per worker under pytest-xdist)."""
    from sitecheck import serve

    with serve(site) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright, one per test session (per worker under
    pytest-xdist: launching it costs about a second and each module used to launch its own);
    skipped, with the reason printed, where either is missing. A test opens its own
    ``browser.new_context(...)`` (viewport, colour scheme, touch) and closes it: contexts
    share nothing, so the tests stay independent."""
    from sitecheck import CHROMIUM, CHROMIUM_ARGS, browser_api

    with browser_api().sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
