# ffnbook: two commands do everything on a fresh machine.
#   make html   create .venv if needed, install, execute every page, build _build/html
#   make test   same set-up, then the whole test suite (unit, doctest, build checks)

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The stamp records that .venv holds exactly requirements.txt + ffnbook; it is
# remade whenever either file changes.
STAMP  := $(VENV)/.installed

SPHINXOPTS ?=
# Tests build copies of the book elsewhere by overriding these two.
SOURCEDIR  ?= docs
BUILDDIR   ?= _build
# -E: read every page again, so every page executes and nothing shown is stale.
# -W --keep-going: any warning fails the build, after reporting all of them.
# -n: nitpicky, so a reference to something that does not exist is a warning.
# -T: a failing cell prints its traceback (cell source and error), not just the page path.
SPHINXBUILD = $(PY) -m sphinx -b html -c . -d $(BUILDDIR)/doctrees -E -W --keep-going -n -T -j auto $(SPHINXOPTS)

.PHONY: html test clean freeze help
.DEFAULT_GOAL := help

help:
	@echo "make html   build the book into _build/html (sets up .venv on first use)"
	@echo "make test   run every test (sets up .venv on first use)"
	@echo "make clean  remove _build"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

html: $(STAMP)
	$(SPHINXBUILD) $(SOURCEDIR) $(BUILDDIR)/html
	@echo "Built: $(BUILDDIR)/html/index.html"

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf _build docs/jupyter_execute

# Rewrite requirements.txt from what .venv holds (after a deliberate upgrade).
freeze: $(STAMP)
	{ grep '^#' requirements.txt; $(PY) -m pip freeze --exclude-editable \
	  | grep -v '^pip==' | sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements.txt.new
	mv requirements.txt.new requirements.txt
