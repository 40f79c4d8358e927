"""bookext, the book's build machinery, in parts that import one another without a cycle.

Read from the source with the AST checker of ``test_package_imports`` (tried there on
made-up packages), so an import inside a function counts as much as one at the top.
"""

from __future__ import annotations

from pathlib import Path

from test_package_imports import find_cycle, import_graph

BOOKEXT = Path(__file__).resolve().parents[1] / "docs" / "_ext" / "bookext"


def test_bookext_modules_import_each_other_without_a_cycle():
    cycle = find_cycle(import_graph(BOOKEXT))
    assert cycle is None, "import cycle in bookext: " + " -> ".join(cycle)
