"""docs/api.md documents every public ffnbook module, and nothing that does not exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api.md"


def documented() -> list[str]:
    return re.findall(r"^\.\. automodule:: (\S+)$", API_PAGE.read_text(encoding="utf-8"), flags=re.M)


def public_modules() -> set[str]:
    return {f"ffnbook.{p.stem}" for p in (ROOT / "ffnbook").glob("*.py") if not p.stem.startswith("_")}


def test_every_public_module_is_documented_once():
    names = documented()
    assert len(names) == len(set(names)), "a module is documented twice"
    assert sorted(public_modules() - set(names)) == [], "modules missing from docs/api.md"


def test_every_documented_module_exists():
    for name in documented():
        importlib.import_module(name)  # raises for a module that was renamed or removed
    assert set(documented()) <= public_modules()
