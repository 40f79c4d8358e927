"""Cell surgery for reader notebooks: a page's code cells without the build's plumbing.

:mod:`bookext.notebooks.reader_notebooks` assembles a reader's notebook; this module decides what
becomes of each code cell, from the cells alone (no Sphinx):

* :func:`strip_glue` removes ``myst_nb`` imports and glue calls (a displayed glue
  becomes ``display(...)``; a glued figure's expression is returned, or assigned to a
  variable, for the cell that draws it where the page shows it);
* :func:`plan_code_cells` decides where each glued figure is drawn and which hidden
  (``remove-cell``) cells stay: those a later cell needs, or that do more than define names;
* :func:`names` says which names a cell binds and reads (what that decision rests on);
* :func:`cell_metadata` and :func:`clean_outputs` carry tags, folding and outputs over.
"""

from __future__ import annotations

import ast
import dataclasses
import re


@dataclasses.dataclass
class Stripped:
    """A code cell without its glue plumbing."""

    source: str
    figures: dict  # glue key -> source of the glued figure's expression


def _is_glue_call(node: ast.AST, glue_names: set[str], modules: set[str]) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    return (isinstance(func, ast.Name) and func.id in glue_names) or (
        isinstance(func, ast.Attribute)
        and func.attr == "glue"
        and isinstance(func.value, ast.Name)
        and func.value.id in modules
    )


def _glue_imports(node: ast.AST, glue_names: set[str], modules: set[str]) -> bool:
    """Record the names a ``myst_nb`` import binds; True if the statement imports only myst_nb."""
    if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "myst_nb":
        glue_names.update(a.asname or a.name for a in node.names)
        return True
    if isinstance(node, ast.Import) and all(a.name.split(".")[0] == "myst_nb" for a in node.names):
        modules.update(a.asname or a.name.split(".")[0] for a in node.names)
        return True
    return False


def strip_glue(
    source: str, figure_keys: set[str] = frozenset(), assign: set[str] = frozenset(), known: set[str] = frozenset()
) -> Stripped:
    """``source`` without ``myst_nb`` imports and glue calls.

    ``known``: names that earlier cells bound to myst-nb's ``glue`` (or to ``myst_nb``).

    A glue call of a key in ``figure_keys`` (a glued figure) is removed too and its
    expression returned in ``figures``; for a key in ``assign`` it becomes
    ``key = expression`` instead, for a later cell to draw. A glue call that
    displays its value (``display`` not False) becomes ``display(expression)``.
    A loop or block left with nothing but glue calls goes as a whole.

    >>> strip_glue('from myst_nb import glue\\nx = 2\\nglue("k", x, display=False)\\nx').source
    'x = 2\\nx'

    Long because one pass over the cell's syntax tree records its edits, and the nested
    helpers that decide each edit share that record.
    """
    if "myst_nb" not in source and not any(name in source for name in known):
        return Stripped(source, {})
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (magics): only plain Python is stripped
        if "myst_nb" in source:
            raise ValueError("a cell importing myst_nb is not plain Python") from None
        return Stripped(source, {})
    lines = source.split("\n")
    glue_names: set[str] = set(known)
    modules: set[str] = set(known)
    edits: dict[int, tuple[int, str | None]] = {}  # first line -> (last line, replacement)
    figures: dict[str, str] = {}

    def segment(node: ast.AST) -> str:
        return ast.get_source_segment(source, node) or ""

    def visit(body: list[ast.stmt]) -> bool:
        """Edit the glue out of ``body``; True when nothing is left of it."""
        removed = 0
        for node in body:
            if _glue_imports(node, glue_names, modules) or _is_glue_call(node, glue_names, modules):
                edits[node.lineno] = (node.end_lineno, _replacement(node))
                removed += edits[node.lineno][1] is None
                continue
            bodies = [
                getattr(node, name)
                for name in ("body", "orelse", "finalbody")
                if isinstance(getattr(node, name, None), list)
            ]
            bodies += [h.body for h in getattr(node, "handlers", [])]
            if not bodies or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            emptied = [visit(b) for b in bodies if b]
            if all(emptied):
                for inner in [k for k in edits if node.lineno <= k <= node.end_lineno]:
                    del edits[inner]
                edits[node.lineno] = (node.end_lineno, None)
                removed += 1
            elif any(emptied):
                raise ValueError(f"line {node.lineno}: a block left empty by removing glue calls")
        return removed == len(body)

    def _replacement(node: ast.stmt) -> str | None:
        if not isinstance(node, ast.Expr):
            return None  # an import
        call = node.value
        args = call.args
        if len(args) < 2:
            raise ValueError(f"line {node.lineno}: glue call without a key and a value")
        key = args[0].value if isinstance(args[0], ast.Constant) else None
        shown = next((k.value for k in call.keywords if k.arg == "display"), None)
        if shown is None and len(args) > 2:
            shown = args[2]
        displayed = not (isinstance(shown, ast.Constant) and shown.value is False)
        expr = segment(args[1])
        indent = lines[node.lineno - 1][: node.col_offset]
        if key in assign:
            return f"{indent}{key} = {_one_line(expr)}"
        if key in figure_keys:
            figures[key] = expr
            return None
        return f"{indent}display({_one_line(expr)})" if displayed else None

    visit(tree.body)
    if glue_names or modules:
        # Any use of the plumbing left after the edits is a bug of this converter.
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Name)
                and node.id in glue_names | modules
                and not any(first <= node.lineno <= last for first, (last, _) in edits.items())
            ):
                raise ValueError(f"line {node.lineno}: {node.id} is used outside a glue call")
    out: list[str] = []
    i = 1
    while i <= len(lines):
        if i in edits:
            last, replacement = edits[i]
            if replacement is not None:
                out.append(replacement)
            i = last + 1
            continue
        out.append(lines[i - 1])
        i += 1
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return Stripped(text, figures)


def myst_nb_names(source: str) -> set[str]:
    """Names a cell binds to ``myst_nb`` or to what it imports from it (``glue``)."""
    found: set[str] = set()
    try:
        for node in ast.walk(ast.parse(source)):
            _glue_imports(node, found, found)
    except SyntaxError:
        pass
    return found


def _one_line(expr: str) -> str:
    return expr if "\n" not in expr else "(" + expr + ")"


def glue_keys(source: str) -> dict[str, str]:
    """Literal glue keys of a cell and the source of what each glues (before stripping)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "glue"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Constant)
        ):
            found[node.args[0].value] = ast.get_source_segment(source, node.args[1]) or ""
    return found


@dataclasses.dataclass
class Names:
    bound: set
    free: set
    only_binds: bool  # nothing but assignments, imports and definitions (no visible effect)


def names(source: str) -> Names:
    """Names a cell binds, names it reads before binding them, and whether it only binds.

    Over-approximates what a cell reads (safe: a needed cell is never dropped).

    >>> n = names("import numpy as np\\ny = np.ones(3) + x")
    >>> sorted(n.bound), sorted(n.free), n.only_binds
    (['np', 'y'], ['x'], True)
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Names(set(), set(re.findall(r"[A-Za-z_]\w*", source)), False)
    bound: set[str] = set()
    free: set[str] = set()
    only_binds = True
    for stmt in tree.body:
        loads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        free |= loads - bound
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                bound.add(n.id)
            elif isinstance(n, ast.alias):
                bound.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
        only_binds &= _only_binds(stmt)
    return Names(bound, free, only_binds)


def _only_binds(stmt: ast.stmt) -> bool:
    if isinstance(
        stmt,
        (
            ast.Import,
            ast.ImportFrom,
            ast.FunctionDef,
            ast.ClassDef,
            ast.AsyncFunctionDef,
            ast.Assign,
            ast.AnnAssign,
            ast.AugAssign,
            ast.Pass,
        ),
    ):
        return True
    if isinstance(stmt, (ast.For, ast.If, ast.With)):
        return all(_only_binds(s) for s in stmt.body + getattr(stmt, "orelse", []))
    return False


# --- the page's code cells together -----------------------------------------------------------


@dataclasses.dataclass
class CodePlan:
    """What becomes of a page's code cells in its reader notebook."""

    stripped: dict[int, Stripped]  # code cell index -> the cell without plumbing
    keep: dict[int, bool]  # code cell index -> whether the notebook has it
    figures: dict[str, str]  # glued figure key -> the code that draws it where the page shows it
    problems: list[str]


def plan_code_cells(cells: list[dict], figure_keys: set[str], shown_at: dict[str, int]) -> CodePlan:
    """Strip every code cell of ``cells``, place each glued figure, choose the hidden cells kept.

    ``figure_keys``: the glue keys whose values are images; ``shown_at``: glue key -> index
    of the Markdown cell whose glue directive shows it.
    """
    problems: list[str] = []
    figure_at: dict[str, int] = {}
    known: set[str] = set()
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            for key in glue_keys(cell["source"]).keys() & figure_keys:
                figure_at[key] = i
            if "myst_nb" in cell["source"]:
                known |= myst_nb_names(cell["source"])

    def strip(i: int, assign: set[str]) -> Stripped:
        try:
            return strip_glue(cells[i]["source"], figure_keys, assign, known)
        except ValueError as err:
            problems.append(f"reader notebook: code cell {i}: {err}")
            return Stripped(cells[i]["source"], {})

    stripped = {i: strip(i, set()) for i, cell in enumerate(cells) if cell["cell_type"] == "code"}
    # A figure is drawn where the page shows it, by its own expression when nothing in
    # between rebinds a name the expression uses; otherwise from a variable set where it was glued.
    figures: dict[str, str] = {}
    assign: dict[int, set[str]] = {}
    for key, g in figure_at.items():
        expr = stripped[g].figures.get(key)
        m = shown_at.get(key)
        if expr is None or m is None:
            continue
        used = names(expr).free
        between = [names(stripped[j].source).bound for j in stripped if g < j < m]
        if m > g and not any(used & b for b in between):
            figures[key] = expr
        else:
            assign.setdefault(g, set()).add(key)
            figures[key] = key
    for g, keys in assign.items():
        stripped[g] = strip(g, keys)
    return CodePlan(stripped, _kept(cells, stripped, figures, shown_at), figures, problems)


def _kept(
    cells: list[dict], stripped: dict[int, Stripped], figures: dict[str, str], shown_at: dict[str, int]
) -> dict[int, bool]:
    """Which code cells stay: visible ones, and hidden ones a later cell (or figure) needs or
    that do more than define names."""
    keep: dict[int, bool] = {}
    needed: set[str] = set()
    figure_names = {shown_at[k]: names(code).free for k, code in figures.items()}
    for i in range(len(cells) - 1, -1, -1):
        needed |= figure_names.get(i, set())
        if i not in stripped:
            continue
        code = stripped[i].source
        info = names(code)
        tags = cells[i].get("metadata", {}).get("tags", [])
        has_code = bool(re.sub(r"(?m)^\s*#.*$", "", code).strip())
        keep[i] = has_code and ("remove-cell" not in tags or not info.only_binds or bool(info.bound & needed))
        if keep[i]:
            needed |= info.free
    return keep


# --- carried over -------------------------------------------------------------------------------


def clean_outputs(outputs: list) -> list:
    # Imported here: importing ffnbook loads NumPy (~0.1 s), which a build that writes no notebook does without.
    from ffnbook.figure_metadata import PHONE_METADATA

    cleaned = []
    for out in outputs:
        if "scrapbook" in out.get("metadata", {}):
            continue  # what a glue call recorded for the site, not shown on the page
        out = dict(out)
        if PHONE_METADATA in out.get("metadata", {}):  # the site's drawing for phones, not the reader's
            out["metadata"] = {k: v for k, v in out["metadata"].items() if k != PHONE_METADATA}
        if out.get("output_type") == "execute_result":
            out["execution_count"] = None
        cleaned.append(out)
    return cleaned


def cell_metadata(tags: list[str]) -> dict:
    metadata: dict = {}
    kept = [t for t in tags if t != "remove-cell"]
    if kept:
        metadata["tags"] = kept
    folded = {}
    if {"hide-input", "hide-cell", "solution"} & set(tags):
        folded["source_hidden"] = True
    if {"hide-output", "hide-cell", "solution"} & set(tags):
        folded["outputs_hidden"] = True
    if folded:
        metadata["jupyter"] = folded
    return metadata
