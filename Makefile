# ffnbook: two commands do everything on a fresh machine.
#   make html   create .venv if needed, install, execute every page, build _build/html
#   make check  same set-up, then the fast tests (unit, doctest, extension); builds no book, about two minutes
#   make test   same set-up, then the test suite (unit, doctest, build checks), in about five minutes
#   make test-full  every test, the slow whole-book and every-page checks too (CI: on a schedule)

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The stamp records that .venv holds exactly requirements.txt + ffnbook; it is
# remade whenever either file changes.
STAMP  := $(VENV)/.installed
# What html/test/bench need first; tests that build copies of the book set it empty.
SETUP  ?= $(STAMP)

SPHINXOPTS ?=
# Tests build copies of the book elsewhere by overriding these two.
SOURCEDIR  ?= docs
BUILDDIR   ?= _build
# -W --keep-going: any warning fails the build, after reporting all of them.
# -n: nitpicky, so a reference to something that does not exist is a warning.
# -T: a failing cell prints its traceback (cell source and error), not just the page path.
SPHINXFLAGS = -c . -W --keep-going -n -T -j auto $(SPHINXOPTS)
# CI sets CI=true, under which Sphinx colours its output even into a log file: plain text
# there keeps a failing page's name and error readable and searchable.
ifdef CI
export NO_COLOR = 1
endif
SPHINXBUILD = $(PY) -m sphinx -b html -d $(BUILDDIR)/doctrees $(SPHINXFLAGS)

# npm tools (Lighthouse, axe-core) for `make audit` and the browser tests. No npm
# package may download a browser: Debian's Chromium is used through CHROME_PATH.
NPM         ?= npm
NODE_STAMP  := node_modules/.installed
AXE_STAMP   := tests/node/node_modules/.installed
CHROME_PATH ?= /usr/bin/chromium
export PUPPETEER_SKIP_DOWNLOAD=1
export PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

.PHONY: html check test test-full bench clean freeze help audit live pdf robustness
.DEFAULT_GOAL := help

help:
	@echo "make html   build the book into _build/html (sets up .venv on first use)"
	@echo "make check  the fast tests: unit, doctests, the extension on tiny projects (about two minutes)"
	@echo "make test   run the tests, all but those marked full (sets up .venv on first use)"
	@echo "make test-full  every test: also the whole-book, every-page, colour-scheme and screen-size checks (slow)"
	@echo "make audit  build, serve _build/html gzip-compressed, run Lighthouse (mobile) and axe-core"
	@echo "make live   preview on http://127.0.0.1:$(LIVE_PORT)/, rebuilt on every save"
	@echo "make pdf    the whole chapter as one PDF: $(PDF)"
	@echo "make bench  time clean, no-op and edit builds against myst-nb defaults"
	@echo "make robustness  run the pages that train under six floating-point environments and eight other seed sets"
	@echo "make clean  remove _build and the execution cache (next html re-executes every page)"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# A failed build forgets its saved environment: Sphinx would otherwise not
# re-report the warnings of pages the next build does not re-read.
html: $(SETUP)
	$(SPHINXBUILD) $(SOURCEDIR) $(BUILDDIR)/html \
	  || { rm -f $(BUILDDIR)/doctrees/environment.pickle; exit 1; }
	@echo "Built: $(BUILDDIR)/html/index.html"

# The inner loop: everything but the tests marked `build` (those that build the book or
# read the built book), i.e. unit tests, doctests and the extension's sphinx.testing tests.
check: $(SETUP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -m "not build and not full"

# The test suite on every core (pytest-xdist; at most 4 workers, each with its own Chromium),
# one test module at a time per worker, in the order tests/conftest.py gives them.
# `make test` leaves out the tests marked `full` (pyproject.toml's addopts say -m "not full");
# `make test-full` runs every test, with more generated examples (tests/conftest.py).
PYTEST_WORKERS ?= -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder
# axe-core (tests/node, one package) is needed by the accessibility tests; without npm they skip.
test: $(SETUP) node-test-tools
	$(PY) -m pytest $(PYTEST_WORKERS)

test-full: $(SETUP) node-test-tools
	$(PY) -m pytest $(PYTEST_WORKERS) -m "" --hypothesis-profile=full

.PHONY: node-test-tools
node-test-tools:
	@if command -v $(NPM) >/dev/null 2>&1; then $(MAKE) -s --no-print-directory $(AXE_STAMP) \
	  || echo "npm ci failed: the axe-core tests will skip"; \
	  else echo "npm not found: the axe-core tests will skip"; fi

$(AXE_STAMP): tests/node/package.json tests/node/package-lock.json
	cd tests/node && $(NPM) ci --ignore-scripts --no-audit --no-fund
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	$(NPM) ci --ignore-scripts --no-audit --no-fund
	@touch $@

# Lighthouse (mobile) and axe-core on the built site, served gzip-compressed on
# localhost; prints scores and transfer sizes, fails when a target is missed.
audit: html $(NODE_STAMP)
	CHROME_PATH=$(CHROME_PATH) $(PY) tools/audit.py $(BUILDDIR)/html

# Live preview for authors: the same build as `make html` (same folder, settings and
# execution cache, so only what the cache rules require executes), redone on every
# save in docs/ or ffnbook/, served on localhost; the open page reloads itself (its
# content security policy allows sphinx-autobuild's reload script, by hash).
LIVE_PORT ?= 8000
live: $(SETUP)
	$(PY) -m sphinx_autobuild --host 127.0.0.1 --port $(LIVE_PORT) --watch ffnbook \
	  --ignore '*/jupyter_execute/*' --ignore '*/.ipynb_checkpoints/*' --ignore '*~' \
	  --ignore '*.swp' --ignore '*/__pycache__/*' \
	  -D ffnbook_live_reload_host=127.0.0.1:$(LIVE_PORT) \
	  -d $(BUILDDIR)/doctrees $(SPHINXFLAGS) $(SOURCEDIR) $(BUILDDIR)/html

# The whole chapter as one PDF, from the same executed pages: a one-page build
# (singlehtml, its own doctrees, the same execution cache) printed by Debian's
# Chromium (tools/print_pdf.py). `make pdf html` also links it from the landing page.
PDF ?= $(BUILDDIR)/pdf/ffnbook.pdf
pdf: $(SETUP)
	$(PY) -m sphinx -b singlehtml -d $(BUILDDIR)/doctrees-pdf $(SPHINXFLAGS) \
	  $(SOURCEDIR) $(BUILDDIR)/singlehtml \
	  || { rm -f $(BUILDDIR)/doctrees-pdf/environment.pickle; exit 1; }
	CHROME_PATH=$(CHROME_PATH) $(PY) tools/print_pdf.py $(BUILDDIR)/singlehtml $(PDF)

# Build-speed benchmark (issue 14): medians of clean, default-settings, one-process,
# no-op, leaf-module-edit and page-edit builds. Takes several minutes.
# BENCHOPTS: e.g. --repeats 5, --scratch-kernels (see tools/bench.py).
BENCHOPTS ?=
bench: $(SETUP)
	$(PY) tools/bench.py $(BENCHOPTS)

# The pages that train with torch (front matter `ffnbook: {robustness: true}`) run once per
# floating-point environment (torch's CPU kernels, MKL's and oneDNN's code paths) and once per
# other set of seeds; every assert must hold in each. Prints each asserted comparison's margin per environment and each glued
# number's range. ROBUSTNESSOPTS: e.g. --envs default sse41-path, --json out.json.
ROBUSTNESSOPTS ?=
robustness: $(SETUP)
	$(PY) tools/robustness.py $(ROBUSTNESSOPTS)

clean:
	rm -rf _build docs/jupyter_execute

# Rewrite requirements.txt from what .venv holds (after a deliberate upgrade).
freeze: $(STAMP)
	{ grep '^#' requirements.txt; $(PY) -m pip freeze --exclude-editable \
	  | grep -v '^pip==' | sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements.txt.new
	mv requirements.txt.new requirements.txt
