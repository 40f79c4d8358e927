"""bookext, the book's build machinery, in parts that import one another without a cycle.

Read from the source with the AST checker of ``test_package_imports`` (tried there on
made-up packages), so an import inside a function counts as much as one at the top. Each
subpackage's docstring lists its modules, and ``bookext.setup()`` reaches every module that
has a ``setup()`` of its own, so a module added to a part is neither undocumented nor left out
of the build.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_build_docs import Recorder
from test_package_imports import find_cycle, import_graph, modules

BOOKEXT = Path(__file__).resolve().parents[1] / "docs" / "_ext" / "bookext"
SUBPACKAGES = sorted(p.parent.name for p in BOOKEXT.glob("*/__init__.py"))


def test_bookext_modules_import_each_other_without_a_cycle():
    cycle = find_cycle(import_graph(BOOKEXT))
    assert cycle is None, "import cycle in bookext: " + " -> ".join(cycle)


def test_bookext_is_its_subpackages_only():
    assert sorted(p.name for p in BOOKEXT.glob("*.py")) == ["__init__.py"]
    assert SUBPACKAGES, "bookext has no subpackages"


@pytest.mark.parametrize("subpackage", SUBPACKAGES)
def test_each_subpackage_docstring_names_its_modules(subpackage):
    folder = BOOKEXT / subpackage
    docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    missing = [
        path.stem
        for path in sorted(folder.glob("*.py"))
        if path.stem != "__init__" and f".{path.stem}`" not in docstring
    ]
    assert not missing, f"bookext.{subpackage}'s docstring does not name {missing}"


def test_bookext_setup_reaches_every_module_with_a_setup():
    def has_setup(path: Path) -> bool:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return any(isinstance(node, ast.FunctionDef) and node.name == "setup" for node in tree.body)

    app = Recorder()
    app.setup_extension("bookext")
    with_setup = {name for name, path in modules(BOOKEXT).items() if has_setup(path)}
    assert with_setup - app.extensions == set()
