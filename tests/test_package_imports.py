"""ffnbook is what a page's code imports, and nothing of the book's build.

Read from the source with an AST walk, so an import inside a function counts as
much as one at the top of a module: ffnbook imports no Sphinx, docutils or MyST
machinery (that lives beside the pages, in docs/_ext/bookext), and its modules
import one another without a cycle. The checker is tried on small made-up
packages first, so a pass means something.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ffnbook"
#: The build's machinery: a reader's notebook must not need any of it.
BUILD_PACKAGES = ("sphinx", "docutils", "myst_nb", "myst_parser")


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` (a folder)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported_names(name: str, path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of everything module ``name`` imports, at any depth."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: climb from this module's package
                base = here[: len(here) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.append((node.lineno, source))
            # ``from package import module`` imports that module too.
            found += [(node.lineno, f"{source}.{alias.name}") for alias in node.names]
    return found


def build_imports(package: Path) -> list[str]:
    """Where a module of ``package`` imports a package of the book's build."""
    hits = []
    for name, path in modules(package).items():
        for line, top in sorted({(line, target.split(".")[0]) for line, target in imported_names(name, path)}):
            if top in BUILD_PACKAGES:
                hits.append(f"{path.relative_to(package.parent)}:{line}: imports {top}")
    return hits


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports. Importing the package itself (its
    ``__init__``, which only re-exports) is not an edge, as in
    /work/shared/hooks/import_cycles.py."""
    mods = modules(package)
    root = package.name
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        for _, target in imported_names(name, path):
            while target and target not in mods:  # a name inside a module: that module
                target = target.rpartition(".")[0]
            if target and target not in (root, name):
                graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that returns to its start, or None (depth-first search)."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if cycle := visit(nxt):
                return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if cycle := visit(start):
            return cycle
    return None


# --- the checker, on made-up packages -----------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    package.mkdir()
    for name, text in {"__init__.py": "", **files}.items():
        (package / name).write_text(text)
    return package


def test_checker_finds_a_cycle_hidden_inside_a_function(tmp_path):
    package = write_package(
        tmp_path,
        {
            "a.py": "from .b import f\n",
            "b.py": "def f():\n    from pkg.c import g\n    return g()\n",
            "c.py": "def g():\n    from . import a\n    return a\n",
            "d.py": "import pkg\nfrom pkg import a\n",  # the root and a leaf: no cycle through d
        },
    )
    assert find_cycle(import_graph(package)) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]

    (tmp_path / "acyclic").mkdir()
    acyclic = write_package(tmp_path / "acyclic", {"a.py": "from .b import f\n", "b.py": "f = 1\n"})
    assert find_cycle(import_graph(acyclic)) is None


def test_checker_finds_build_machinery_imported_inside_a_function(tmp_path):
    package = write_package(
        tmp_path,
        {
            "plain.py": "import numpy\n",
            "sneaky.py": "def render():\n    from docutils import nodes\n    return nodes\n",
        },
    )
    assert build_imports(package) == ["pkg/sneaky.py:2: imports docutils"]


# --- ffnbook --------------------------------------------------------------------------------


def test_ffnbook_imports_no_sphinx_docutils_or_myst():
    assert not build_imports(PACKAGE), "\n".join(build_imports(PACKAGE))


def test_ffnbook_modules_import_each_other_without_a_cycle():
    cycle = find_cycle(import_graph(PACKAGE))
    assert cycle is None, "import cycle in ffnbook: " + " -> ".join(cycle)


def test_import_ffnbook_loads_neither_scipy_nor_matplotlib():
    # The build imports ffnbook in its own process (bookext.content.numbers formats every glued number
    # with it); scipy and matplotlib would add a second of CPU to every rebuild that reads a page.
    code = "import sys, ffnbook; print(sorted({'scipy', 'matplotlib'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert loaded.strip() == "[]"


def test_importing_any_ffnbook_module_loads_no_matplotlib_until_a_figure_is_drawn():
    # An edit of a module re-reads its API page, whose autodoc imports it in the build's process:
    # matplotlib there cost ~0.7 s of every such rebuild (issue 34's leaf-edit overhead).
    code = (
        "import importlib, pkgutil, sys, ffnbook\n"
        "for m in pkgutil.iter_modules(ffnbook.__path__): importlib.import_module('ffnbook.' + m.name)\n"
        "print('matplotlib' in sys.modules)\n"
        "from ffnbook import plotting; plotting.new_figure(); print('matplotlib' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert loaded.split() == ["False", "True"]
