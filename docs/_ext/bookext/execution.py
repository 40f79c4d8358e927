"""Never-stale, incremental notebook execution for the book.

myst-nb's cache (``nb_execution_mode = "cache"``) keys each page on its code
cells only. It cannot see that a page's numbers also depend on the ffnbook
package and on the installed versions, and Sphinx itself only re-reads pages
whose source changed. This extension closes both gaps, and it is the one
place where the caching rules live:

* **Dependency hash.** A SHA-256 over every file of the ``ffnbook`` package
  (code and data) and ``requirements.txt``.
  The execution cache lives in ``<build>/.jupyter_cache/<hash>``, so a change
  to any of them starts an empty cache: every page executes again. Caches of
  other hashes are deleted.
* **Re-reading.** A second hash also covers the book's build machinery beside
  the pages (``docs/_ext``, ``docs/_static``, ``docs/_templates``,
  ``docs/glossary.yml``): how pages are rendered, not what they compute. Both are stored in Sphinx's
  environment; when either differs, every page is re-read, so editing the
  reader tools re-renders every page from the cache without executing any.
  A page whose own text changed is re-read by Sphinx as usual and, if its
  code cells changed, executed again: it alone.
* **No race.** The cache's database is created here, in the main process,
  before ``-j`` workers start, so two workers never try to create its tables.
* **Warnings are never forgotten.** Sphinx does not report the warnings of a
  page it does not re-read; the Makefile deletes the saved environment when a
  build fails, so the next build reads (not executes) every page again.

* **Quiet kernels.** Each kernel start logs a warning that local TCP is not
  encrypted; it means nothing for a local build and it would hide real
  warnings, so kernels get an IPython profile (in the build folder) that logs
  errors only.

To force a full re-execution: ``make clean html``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[2]  # docs/: the pages and, beside them, this extension
ROOT = DOCS.parent
PACKAGE = ROOT / "ffnbook"
REQUIREMENTS = ROOT / "requirements.txt"
#: How pages are rendered, not what their code computes.
RENDERING = (DOCS / "_ext", DOCS / "_static", DOCS / "_templates", DOCS / "glossary.yml")


def _files(path: Path) -> list[Path]:
    """Source files under ``path`` (or ``path`` itself); compiled bytecode follows from them."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo"))


def dependency_hash(
    package: Path = PACKAGE, requirements: Path = REQUIREMENTS, *, rendering: bool = False
) -> str:
    """SHA-256 (first 16 hex digits) of the package's files and the requirements.

    With ``rendering`` the book's build machinery (:data:`RENDERING`) is covered
    too: it changes how pages look, not what their code computes.
    """
    digest = hashlib.sha256()
    roots = [package, *(RENDERING if rendering else ())]
    for root in roots:
        for path in _files(root):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
    if requirements.exists():
        digest.update(b"requirements.txt\0")
        digest.update(requirements.read_bytes())
    return digest.hexdigest()[:16]


def _cache_root(app: Sphinx) -> Path:
    return Path(app.outdir).parent / ".jupyter_cache"


def _set_cache_path(app: Sphinx, config) -> None:
    if config.nb_execution_mode != "cache":
        return
    app.ffnbook_dep_hash = dependency_hash()
    app.ffnbook_render_hash = dependency_hash(rendering=True)
    config.nb_execution_cache_path = str(_cache_root(app) / app.ffnbook_dep_hash)


def _quiet_kernels(app: Sphinx, config) -> None:
    """Point kernels at an IPython profile that logs errors only (unless the user set one)."""
    if "IPYTHONDIR" in os.environ:
        return
    profile = Path(app.outdir).parent / ".ipython" / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "ipython_kernel_config.py").write_text('c.IPKernelApp.log_level = "ERROR"\n')
    os.environ["IPYTHONDIR"] = str(profile.parent)


def _prepare_cache(app: Sphinx) -> None:
    """Create this hash's cache database now; drop caches of other hashes."""
    if app.config.nb_execution_mode != "cache":
        return
    from jupyter_cache import get_cache

    root = _cache_root(app)
    if root.is_dir():
        for stale in root.iterdir():
            if stale.is_dir() and stale.name != app.ffnbook_dep_hash:
                shutil.rmtree(stale, ignore_errors=True)
    cache = get_cache(app.config.nb_execution_cache_path)
    cache.list_cache_records()  # touching the database creates its tables
    logger.info("ffnbook: dependency hash %s", app.ffnbook_dep_hash)


def _outdated_when_dependencies_change(app: Sphinx, env, added, changed, removed):
    previous = getattr(env, "ffnbook_render_hash", None)
    current = getattr(app, "ffnbook_render_hash", None)
    env.ffnbook_render_hash = current
    if previous is None or previous == current:
        return []
    logger.info("ffnbook: package, extensions or requirements changed; re-reading every page")
    return sorted(env.found_docs - set(added) - set(changed) - set(removed))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _set_cache_path)
    app.connect("config-inited", _quiet_kernels)
    # After myst-nb's own builder-inited handler (priority 500) has read the path.
    app.connect("builder-inited", _prepare_cache, priority=900)
    app.connect("env-get-outdated", _outdated_when_dependencies_change)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
