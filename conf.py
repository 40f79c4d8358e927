"""Sphinx configuration for the ffnbook site.

Built from the repository root with ``sphinx-build -c . docs _build/html``
(``make html`` does that, and more). Every page in docs/ is a MyST text
notebook that myst-nb executes during the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The book's own Sphinx extension lives beside the pages, not in the ffnbook package.
sys.path.insert(0, str(Path(__file__).resolve().parent / "docs" / "_ext"))

project = "The Transformer Feed-Forward Network"
author = "the ffnbook authors"
copyright = "2026, the ffnbook authors"  # noqa: A001 - Sphinx's name
language = "en"

extensions = [
    "myst_nb",  # MyST markdown + notebook execution + glue
    "sphinxcontrib.bibtex",  # citations to the primary papers
    "sphinx_design",  # dropdowns for folded answers, grids and cards
    "sphinx.ext.autodoc",  # the API page documents ffnbook from its docstrings
    "sphinx.ext.napoleon",  # NumPy-style docstring sections
    # The book's own extension (docs/_ext/bookext): MathML math, the glossary page and
    # tooltips, self-checks, the execution records, light offline pages.
    "bookext",
]

# --- Execution (myst-nb) -----------------------------------------------------
# Execute a page only when its code or a file it used (an ffnbook module, a data
# file) or the requirements changed; the rules live in docs/_ext/bookext/execution/engine.py.
nb_execution_mode = "cache"
# Pages that must execute run this many at a time (0: as many as -j).
ffnbook_execution_jobs = 0
# Each page's kernel is forked from a process that has already imported these
# (never project code); an empty list starts every kernel from scratch.
ffnbook_kernel_preload = [
    "numpy",
    "scipy.special",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_svg",
    "torch",
    "myst_nb",
]
# A page that has not finished in this many seconds is a bug, not a slow page.
nb_execution_timeout = 300
# Any cell error aborts the build (cells meant to fail are tagged raises-exception).
nb_execution_raise_on_error = True
# Print the failing cell's traceback in the terminal, not only a path to a log.
nb_execution_show_tb = True
# Errors are not allowed to be recorded as outputs unless a cell says so by tag.
nb_execution_allow_errors = False
# Run each page from its own folder so relative paths behave as in Jupyter.
nb_execution_in_temp = False
# Merge stdout/stderr chunks so printed output appears as one block per cell.
nb_merge_streams = True
# Render text/markdown outputs (tables from ffnbook) with MyST, which has tables.
nb_render_markdown_format = "myst"

# --- MyST ----------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
numfig = True  # figures are numbered, so prose can say "Figure 3"

# --- Citations ------------------------------------------------------------------
bibtex_bibfiles = ["docs/references.bib"]  # relative to the conf dir (the root)
bibtex_default_style = "plain"
bibtex_reference_style = "author_year_round"  # (Vaswani et al., 2017): docs/_ext/bookext/content/citations.py
# No title="..." tooltip on citations: the link preview already shows the entry on hover, focus
# and tap (bookext.website.previews), and formatting every entry a second time for the tooltips
# was half of the ~1 s sphinxcontrib-bibtex spends on every build, a no-op one too.
bibtex_tooltips = False

# --- API documentation ------------------------------------------------------------
autodoc_typehints = "none"  # signatures stay readable; types are described in the docstrings
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_param = False  # parameter lists as prose: their "types" are descriptions, not classes
napoleon_use_rtype = False
# Offline build: no intersphinx, so references to other projects' classes in
# signatures and docstrings cannot resolve. Ignore exactly those packages.
nitpick_ignore_regex = [("py:class", r"(numpy|np|torch|nn|matplotlib)\..*")]

# --- Output ---------------------------------------------------------------------
html_math_renderer = "mathml"
html_theme = "sphinx_book_theme"
html_title = "The Transformer Feed-Forward Network"
# The one setting the sitemap, robots.txt and the 404 page's links derive from: the
# address the site is published at (GitHub Pages; Read the Docs passes its own).
SITE_URL = (
    os.environ.get("FFNBOOK_SITE_URL")
    or os.environ.get("READTHEDOCS_CANONICAL_URL")
    or "https://ffnbook.github.io/ffnbook/"
)
ffnbook_site_url = SITE_URL
# The one setting the launch buttons (Binder, Colab), the repository, "edit this page"
# and "open an issue" links derive from (GitHub Pages builds pass their own repository).
REPOSITORY_URL = os.environ.get("FFNBOOK_REPOSITORY_URL") or "https://github.com/ffnbook/ffnbook"
html_theme_options = {
    "show_toc_level": 2,
    "max_navbar_depth": 2,  # the sidebar lists pages (two levels: the API pages), never sections
    # No top bar: the book theme has its sidebar toggles in the article header and leaves
    # pydata-sphinx-theme's bar empty (navbar_persistent is empty in its theme.conf), but
    # pydata-sphinx-theme 0.17+ puts a search field there unless conf.py names the slot.
    # The bar then also writes its own, hidden, toggles before the visible ones, and both
    # themes' scripts bind only the first toggle of each kind (pydata-sphinx-theme#2451):
    # the visible toggles did nothing (tests/test_browser_navigation.py).
    "navbar_persistent": [],
    # The reading tools (docs/_templates/reading-tools.html) before the theme's buttons.
    "article_header_end": ["reading-tools.html", "article-header-buttons.html"],
    "use_download_button": True,
    "repository_url": REPOSITORY_URL,
    "repository_branch": "main",
    "path_to_docs": "docs",
    "use_repository_button": True,
    "use_edit_page_button": True,
    "use_issues_button": True,
    "launch_buttons": {
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
        "notebook_interface": "jupyterlab",
    },
}
html_context = {"default_mode": "auto"}  # follow the reader's light/dark preference
# The book's template overrides (relative to conf.py); each file says what it changes and why.
templates_path = ["docs/_templates"]
html_static_path = ["docs/_static"]  # the book's CSS and reader-tools script (relative to conf.py)
html_favicon = "docs/_static/favicon.svg"
html_sourcelink_suffix = ""  # sources download as page.md, not page.md.txt
html_last_updated_fmt = None  # no build date in pages: two builds of one source match
exclude_patterns = [
    "_build",
    "_ext",
    "_static",
    "_templates",
    "jupyter_execute",
    ".ipynb_checkpoints",
    "**/.ipynb_checkpoints",
]
