"""The API pages (docs/api.md and docs/api/*.md) document every public ffnbook module once,
and nothing that does not exist; the index lists every API page."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API_INDEX = ROOT / "docs" / "api.md"
API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))


def documented() -> list[str]:
    return [
        name
        for page in API_PAGES
        for name in re.findall(r"^\.\. automodule:: (\S+)$", page.read_text(encoding="utf-8"), flags=re.M)
    ]


def public_modules() -> set[str]:
    return {f"ffnbook.{p.stem}" for p in (ROOT / "ffnbook").glob("*.py") if not p.stem.startswith("_")}


def test_every_public_module_is_documented_once():
    names = documented()
    assert len(names) == len(set(names)), "a module is documented twice"
    assert sorted(public_modules() - set(names)) == [], "modules missing from docs/api/*.md"


def test_every_documented_module_exists():
    for name in documented():
        importlib.import_module(name)  # raises for a module that was renamed or removed
    assert set(documented()) <= public_modules()


def test_the_index_lists_every_api_page_and_no_other():
    toctree = re.search(r"```\{toctree\}\n(.*?)```", API_INDEX.read_text(encoding="utf-8"), re.S).group(1)
    listed = [line for line in toctree.splitlines() if line and not line.startswith(":")]
    assert sorted(listed) == sorted(f"api/{page.stem}" for page in API_PAGES)


def test_each_api_page_documents_modules_of_its_own():
    """One small page per section: an edit to one module re-reads one API page, not all."""
    for page in API_PAGES:
        names = re.findall(r"^\.\. automodule:: (\S+)$", page.read_text(encoding="utf-8"), flags=re.M)
        assert 1 <= len(names) <= 5, page.name


def test_an_api_page_restates_nothing_its_docstrings_say():
    """Each API page is its title, the automodule directives and at most the page that uses it:
    what a module does is said once, in its docstring (issue 24: one API page had drifted)."""
    shape = re.compile(
        r"# [^\n]+\n\n```\{eval-rst\}\n(\.\. automodule:: \S+\n   :members:\n\n?)+```\n"
        r"(\nUsed on the page \{doc\}`\.\./[a-z-]+`\.\n)?"
    )
    for page in API_PAGES:
        assert shape.fullmatch(page.read_text(encoding="utf-8")), f"{page.name} holds prose of its own"
