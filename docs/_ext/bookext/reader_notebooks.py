"""Reader notebooks: every executed page as a notebook that runs and reads well anywhere.

The notebook myst-nb executes is the page's MyST source, full of build plumbing
(``from myst_nb import glue``, glue calls, MyST roles and directives). For
each notebook page this part of the extension writes
``<html>/notebooks/<page>.ipynb``, made from three things the build already
has: the page's MyST source, its executed notebook (code and outputs) and its
glue data (``<build>/jupyter_execute/<page>.glue.json``):

* a **setup cell** first, which installs ``ffnbook`` (from the published
  repository, at the commit the site was built from) and, if the page needs it,
  the CPU build of PyTorch, each only where it is missing; where everything is
  installed it installs nothing (:mod:`bookext.notebook_setup`);
* **code cells** without the plumbing: no ``myst_nb`` import and no glue call;
  a hidden (``remove-cell``) cell is kept only if a later cell uses a name it
  defines or it does something besides defining names; a glued figure is
  drawn by a code cell where the page shows it, followed by its caption;
  folded cells stay folded (``jupyter.source_hidden``);
* **Markdown cells** through :mod:`bookext.myst_markdown`: glued values as the
  site shows them, citations author-year with the page's reference list at the
  end, glossary terms and cross-references as links to the published site,
  admonitions as block quotes, dropdowns and self-checks as ``<details>``,
  math left as ``$...$``, headings and figures numbered as on the site.

The same folder gets a Binder environment of its own (``binder/``: Python,
the package, CPU torch; no test tools). It is what the Pages workflow
publishes (the ``notebooks`` branch, and a tag per built commit), and the launch
buttons (Colab, Binder) point at these notebooks; the download menu offers the same
file (:mod:`bookext.downloads`); :mod:`bookext.notebook_setup` pins all of it.
A role or directive the converter does not know, or plumbing it cannot
remove, is a build warning that names the page (so ``make html`` fails).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import json
import posixpath
import re
import textwrap
from pathlib import Path
from types import FunctionType, ModuleType

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from bookext.myst_markdown import CodeCell, Converter, Resolver, details, md_escape
from bookext.notebook_setup import NOTEBOOKS, launch_urls, notebook_metadata, setup_cell

logger = logging.getLogger(__name__)


# --- code cells -------------------------------------------------------------------------------


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
        isinstance(func, ast.Attribute) and func.attr == "glue"
        and isinstance(func.value, ast.Name) and func.value.id in modules)


def _glue_imports(node: ast.AST, glue_names: set[str], modules: set[str]) -> bool:
    """Record the names a ``myst_nb`` import binds; True if the statement imports only myst_nb."""
    if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "myst_nb":
        glue_names.update(a.asname or a.name for a in node.names)
        return True
    if isinstance(node, ast.Import) and all(a.name.split(".")[0] == "myst_nb" for a in node.names):
        modules.update(a.asname or a.name.split(".")[0] for a in node.names)
        return True
    return False


def strip_glue(source: str, figure_keys: set[str] = frozenset(),
               assign: set[str] = frozenset(), known: set[str] = frozenset()) -> Stripped:
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
            bodies = [getattr(node, name) for name in ("body", "orelse", "finalbody")
                      if isinstance(getattr(node, name, None), list)]
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
            if isinstance(node, ast.Name) and node.id in glue_names | modules and not any(
                    first <= node.lineno <= last for first, (last, _) in edits.items()):
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
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "glue" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
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
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef,
                         ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass)):
        return True
    if isinstance(stmt, (ast.For, ast.If, ast.With)):
        return all(_only_binds(s) for s in stmt.body + getattr(stmt, "orelse", []))
    return False


# --- does the page need torch? ------------------------------------------------------------------


def _imports_torch(tree: ast.AST, top_level_only: bool = False) -> bool:
    nodes_ = tree.body if top_level_only else ast.walk(tree)
    for node in nodes_:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            return True
    return False


def _torch_use() -> "TorchUse":
    """One analysis per process, shared by the pages it writes (the package does not change
    during a build, and parsing its sources again for every page cost ~0.2 s a page)."""
    global _SHARED_TORCH_USE
    if _SHARED_TORCH_USE is None:
        _SHARED_TORCH_USE = TorchUse()
    return _SHARED_TORCH_USE


_SHARED_TORCH_USE = None


class TorchUse:
    """Whether code reaches PyTorch, through ffnbook's modules, functions and classes.

    A module needs torch if it imports torch (or a module that does) at its top
    level; a function or class if its module does, if its own code imports torch,
    or if it uses an ffnbook function, class or module that needs it.
    """

    def __init__(self, package: str = "ffnbook"):
        self.package = package
        self.memo: dict[int, bool] = {}
        self.kept: list = []  # every object in the memo, so that no id in it is ever reused

    def module(self, module: ModuleType) -> bool:
        key = id(module)
        if key not in self.memo:
            self.memo[key] = False
            self.kept.append(module)
            try:
                tree = ast.parse(inspect.getsource(module))
            except (OSError, TypeError):
                return False
            needs = _imports_torch(tree, top_level_only=True)
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.level and not needs:
                    base = module.__package__ or ""
                    name = importlib.util.resolve_name("." * node.level + (node.module or ""), base)
                    needs = self.obj(importlib.import_module(name))
            self.memo[key] = needs
        return self.memo[key]

    def obj(self, obj) -> bool:
        if isinstance(obj, ModuleType):
            return obj.__name__.split(".")[0] == "torch" or (
                obj.__name__.split(".")[0] == self.package and self.module(obj))
        obj = inspect.unwrap(obj) if callable(obj) else obj
        if not isinstance(obj, (FunctionType, type)) or not getattr(obj, "__module__", "").startswith(self.package):
            return False
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False
        self.kept.append(obj)
        home = importlib.import_module(obj.__module__)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError):
            return False
        needs = self.module(home) or _imports_torch(tree)
        if not needs:
            scope = vars(home)
            for name in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}:
                if name in scope and scope[name] is not obj and self.obj(scope[name]):
                    needs = True
                    break
        self.memo[key] = needs
        return needs

    def code(self, sources: list[str]) -> bool:
        """Whether notebook cells (in order) use torch, directly or through the package."""
        scope: dict[str, object] = {}
        for source in sources:
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            if _imports_torch(tree):
                return True
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name.split(".")[0] == self.package:
                            target = a.name if a.asname else a.name.split(".")[0]
                            scope[a.asname or target] = importlib.import_module(target)
                elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == self.package:
                    home = importlib.import_module(node.module)
                    for a in node.names:
                        value = getattr(home, a.name, None)
                        if value is None:
                            value = importlib.import_module(f"{node.module}.{a.name}")
                        scope[a.asname or a.name] = value
            for node in ast.walk(tree):
                target = _resolve(node, scope)
                if target is not None and self.obj(target):
                    return True
        return False


def _resolve(node: ast.AST, scope: dict):
    """The object an expression like ``ffnbook.gated.f`` names, if its root is known."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in scope:
        return None
    value = scope[node.id]
    for attr in reversed(parts):
        try:
            value = getattr(value, attr)
        except AttributeError:
            return None
    return value


# --- Markdown: what the site resolves -----------------------------------------------------------


class SiteResolver(Resolver):
    """Resolves roles and glue the way the built site shows them, with links to the site."""

    def __init__(self, app: Sphinx, pagename: str, figures: dict[str, CodeCell]):
        self.app, self.env, self.pagename = app, app.env, pagename
        self.figures = figures
        self.cited: list[str] = []
        self.labels: dict[str, str] = {}  # citation key -> "(Author et al., 2017)"
        self.problems: list[str] = []
        self._glue: dict[str, dict] = {}

    def warn(self, message: str) -> None:
        self.problems.append(message)

    # links
    def url(self, docname: str, anchor: str = "") -> str:
        base = self.app.config.ffnbook_site_url.rstrip("/") + "/"
        return base + self.app.builder.get_target_uri(docname) + (f"#{anchor}" if anchor else "")

    def page_url(self) -> str:
        return self.url(self.pagename)

    def term(self, shown: str, target: str) -> str:
        std = self.env.domaindata["std"]
        found = std.get("terms", {}).get(target.lower()) or std["objects"].get(("term", target.lower()))
        if found is None:
            self.warn(f"reader notebook: no glossary term {target!r}")
            return md_escape(shown)
        return f"[{md_escape(shown)}]({self.url(*found)})"

    def xref(self, role: str, shown: str | None, target: str) -> str:
        std = self.env.domaindata["std"]
        if role == "doc":
            docname = posixpath.normpath(posixpath.join(posixpath.dirname(self.pagename), target)) \
                if not target.startswith("/") else target[1:]
            if docname not in self.env.titles:
                self.warn(f"reader notebook: no page {target!r}")
                return md_escape(shown or target)
            return f"[{md_escape(shown or self.env.titles[docname].astext())}]({self.url(docname)})"
        label = target.lower()
        if role == "numref" and label in std["labels"]:
            docname, labelid, _ = std["labels"][label]
            number = self._figure_number(docname, labelid)
            if number:
                text = shown.replace("%s", number).replace("{number}", number) if shown else \
                    self.app.config.numfig_format["figure"] % number
                if docname == self.pagename:  # the figure is in this notebook, with that number
                    return md_escape(text)
                return f"[{md_escape(text)}]({self.url(docname, labelid)})"
        if role == "eq":
            found = self.env.domaindata.get("math", {}).get("objects", {}).get(target)
            if found:
                docname, number = found
                text = f"({number})" if number else target
                return text if docname == self.pagename else f"[{text}]({self.url(docname, f'equation-{target}')})"
        if role in ("ref", "numref", "any") and label in std["labels"]:
            docname, labelid, title = std["labels"][label]
            return f"[{md_escape(shown or title)}]({self.url(docname, labelid)})"
        self.warn(f"reader notebook: cannot resolve {{{role}}}`{target}`")
        return md_escape(shown or target)

    def _figure_number(self, docname: str, labelid: str) -> str:
        number = self.env.toc_fignumbers.get(docname, {}).get("figure", {}).get(labelid)
        return ".".join(map(str, number)) if number else ""

    def python(self, role: str, shown: str, target: str) -> str:
        objects = self.env.domaindata["py"]["objects"]
        for name in (target, f"ffnbook.{target}"):
            if name in objects:
                return f"[`{shown}`]({self.url(objects[name].docname, objects[name].node_id)})"
        return f"`{shown}`"

    # citations
    def cite(self, keys: list[str], kind: str) -> str:
        from sphinxcontrib.bibtex.domain import SphinxReferenceInfo
        from sphinxcontrib.bibtex.style.referencing import format_references

        domain = self.env.domains["cite"]
        by_key = {c.key: c for c in domain.citations}
        missing = [k for k in keys if k not in by_key]
        if missing:
            self.warn(f"reader notebook: no bibliography entry {missing}")
            return ", ".join(keys)
        refs = []
        for key in keys:
            c = by_key[key]
            if key not in self.cited:
                self.cited.append(key)
            info = SphinxReferenceInfo(
                builder=self.app.builder, fromdocname=self.pagename,
                todocname=c.bibliography_key.docname, citation_id=c.citation_id,
                title=None, pre_text="", post_text="")
            refs.append((c.entry, c.formatted_entry, info))
        style = domain.reference_style  # round brackets (bookext.citations)
        for key, ref in zip(keys, refs):
            self.labels.setdefault(key, _render(format_references(style, "p", [ref])))
        return md_escape(_render(format_references(style, kind, refs)))

    def references(self) -> str:
        """The page's reference list: every entry it cites, as the bibliography shows it."""
        by_key = {c.key: c for c in self.env.domains["cite"].citations}
        backend = _markdown_backend()
        entries = sorted(self.cited, key=lambda k: self.labels[k].strip("()").casefold())
        items = [" ".join(by_key[k].formatted_entry.text.render(backend).split()) for k in entries]
        return "## References\n\n" + "\n".join(f"- {item}" for item in items)

    # glue
    def glue_data(self, key: str) -> dict | None:
        doc, _, name = key.rpartition("::")
        docname = posixpath.normpath(posixpath.join(posixpath.dirname(self.pagename), doc)) \
            if doc else self.pagename
        if docname not in self._glue:
            path = Path(self.app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json"
            self._glue[docname] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        output = self._glue[docname].get(name)
        if output is None:
            self.warn(f"reader notebook: no glued value {key!r}")
        return output

    def glue_value(self, key: str):
        output = self.glue_data(key)
        try:
            return ast.literal_eval(output["data"].get("text/plain", "")) if output else None
        except (ValueError, SyntaxError):
            return None

    def glue_text(self, key: str, fmt: str, role: str) -> str:
        from bookext.numbers import plain_text

        output = self.glue_data(key)
        if output is None:
            return key
        data = output["data"]
        if role == "glue:md" and "text/markdown" in data:
            return data["text/markdown"].strip()
        return md_escape(plain_text(data.get("text/plain", ""), fmt if role == "glue:text" and fmt else "s"))

    def glue_block(self, name: str, key: str, options: dict, caption: str) -> list:
        output = self.glue_data(key)
        if output is None:
            return []
        data = output["data"]
        if name == "glue:math" or (name != "glue:md" and "text/latex" in data and not _is_image(data)):
            return ["$$\n" + data.get("text/latex", "").strip().strip("$").strip() + "\n$$"]
        if name == "glue:md" or (not _is_image(data) and "text/markdown" in data):
            return [data.get("text/markdown", "").strip()]
        if not _is_image(data):
            return ["```\n" + data.get("text/plain", "").strip() + "\n```"]
        cell = self.figures.get(key)
        if cell is None:
            self.warn(f"reader notebook: figure {key!r} is glued in a way that cannot be redrawn "
                      "(use glue('key', figure_expression, display=False) with a literal key)")
            return []
        cell.outputs = [{"output_type": "execute_result", "execution_count": None,
                         "data": dict(data), "metadata": {}}]
        pieces: list = [cell]
        number = self._figure_number(self.pagename, options.get("name", "")) if options.get("name") else ""
        label = self.app.config.numfig_format["figure"] % number if number else ""
        text = f"**{label}** {caption}".strip() if label else caption
        # The alt text the site gives the figure: the page's, else the figure's own (bookext.figurealt).
        alt = options.get("alt") or " ".join(str(data.get("text/plain", "")).split())
        if alt and not alt.startswith("<"):
            text += "\n\n" + details("Text description of the figure", md_escape(str(alt)))
        if text.strip():
            pieces.append(text)
        return pieces

    def image(self, path: str, options: dict, caption: str) -> str:
        rel, _ = self.env.relfn2path(path, self.pagename)
        found = self.env.images.get(rel) if "://" not in path else None
        url = path if found is None else \
            self.app.config.ffnbook_site_url.rstrip("/") + f"/{self.app.builder.imagedir}/{found[1]}"
        return super().image(url, options, caption)

    def literalinclude(self, path: str, options: dict) -> tuple[str, str]:
        from sphinx.directives.code import LiteralIncludeReader

        _, filename = self.env.relfn2path(path, self.pagename)
        opts = {k: v for k, v in options.items() if k not in ("caption", "name", "class")}
        text, _ = LiteralIncludeReader(filename, opts, self.app.config).read()
        if filename.endswith(".py"):  # as the page shows it
            from bookext.listings import readable_listing

            with open(filename, encoding="utf-8") as f:
                text = readable_listing(text, f.read(), opts)
        language = options.get("language") or ("python" if filename.endswith(".py") else "")
        return text, language


def _render(text) -> str:
    """A citation's pybtex rich text as plain text (rendered as the site renders it)."""
    import pybtex_docutils

    node = nodes.inline()
    node += text.render(pybtex_docutils.Backend())
    return node.astext()


def _is_image(data: dict) -> bool:
    return any(m.startswith("image/") for m in data)


def _markdown_backend():
    from pybtex.backends.markdown import Backend

    class MarkdownBackend(Backend):
        """pybtex's Markdown without its backslash escapes (``\\(`` is math to Jupyter)."""

        def format_str(self, text):
            return md_escape(text)

    return MarkdownBackend()


# --- the notebook ---------------------------------------------------------------------------------


def _heading_numbers(app: Sphinx, pagename: str, doctree: nodes.document) -> list[str]:
    numbers = app.env.toc_secnumbers.get(pagename, {})
    suffix = app.config.html_secnumber_suffix
    found = []
    for i, section in enumerate(doctree.findall(nodes.section)):
        anchor = "" if i == 0 else "#" + section["ids"][0]
        number = numbers.get(anchor)
        found.append(".".join(map(str, number)) + suffix if number else "")
    return found


def _count_headings(markdown: list[str]) -> int:
    count, fence = 0, None
    for text in markdown:
        for line in text.split("\n"):
            m = re.match(r"^\s*(`{3,}|~{3,}|:{3,})", line)
            if m and fence is None:
                fence = m.group(1)
            elif m and fence and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip()[len(m.group(1)):].strip():
                fence = None
            elif fence is None and re.match(r"^#{1,6}\s", line):
                count += 1
    return count


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _code_cell(source: str, outputs: list, metadata: dict) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": metadata,
            "outputs": outputs, "source": source}


def _clean_outputs(outputs: list) -> list:
    cleaned = []
    for out in outputs:
        if "scrapbook" in out.get("metadata", {}):
            continue  # what a glue call recorded for the site, not shown on the page
        out = dict(out)
        if out.get("output_type") == "execute_result":
            out["execution_count"] = None
        cleaned.append(out)
    return cleaned


def _cell_metadata(tags: list[str]) -> dict:
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


def reader_notebook(app: Sphinx, pagename: str, doctree: nodes.document, executed: dict
                    ) -> tuple[dict, list[str]]:
    """The reader's notebook of ``pagename`` and the problems found converting it.

    Long because its three steps (code cells without plumbing and where each glued figure
    is drawn; which hidden cells stay; Markdown) share the page's cells, glue data and
    figure positions; splitting the converter by job is issue 24's parser rewrite.
    """
    cells = [dict(c, source=_text(c.get("source", ""))) for c in executed["cells"]]
    glue_path = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.glue.json"
    glued = json.loads(glue_path.read_text(encoding="utf-8")) if glue_path.exists() else {}
    figure_keys = {k for k, v in glued.items() if _is_image(v.get("data", {}))}
    problems: list[str] = []

    # 1. Code without plumbing; where each glued figure comes from.
    stripped: dict[int, Stripped] = {}
    figure_at: dict[str, int] = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        for key in glue_keys(cell["source"]).keys() & figure_keys:
            figure_at[key] = i
    shown_at = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for m in re.finditer(r"^\s*(?:`{3,}|:{3,})\{glue(?::figure|:any)?\}\s+(\S+)", cell["source"], re.M):
                shown_at.setdefault(m.group(1), i)

    known: set[str] = set()
    for cell in cells:
        if cell["cell_type"] == "code" and "myst_nb" in cell["source"]:
            known |= myst_nb_names(cell["source"])

    def strip(i: int, assign: set[str]) -> Stripped:
        try:
            return strip_glue(cells[i]["source"], figure_keys, assign, known)
        except ValueError as err:
            problems.append(f"reader notebook: code cell {i}: {err}")
            return Stripped(cells[i]["source"], {})

    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            stripped[i] = strip(i, set())
    # A figure is drawn where the page shows it, by its own expression when nothing in
    # between rebinds a name the expression uses; otherwise from a variable set where it was glued.
    figures: dict[str, CodeCell] = {}
    assign: dict[int, set[str]] = {}
    for key, g in figure_at.items():
        expr = stripped[g].figures.get(key)
        m = shown_at.get(key)
        if expr is None or m is None:
            continue
        used = names(expr).free
        between = [names(stripped[j].source).bound for j in stripped if g < j < m]
        if m > g and not any(used & b for b in between):
            figures[key] = CodeCell(expr)
        else:
            assign.setdefault(g, set()).add(key)
            figures[key] = CodeCell(key)
    for g, keys in assign.items():
        stripped[g] = strip(g, keys)

    # 2. Which hidden cells stay: those a later cell needs, or that do more than define names.
    keep: dict[int, bool] = {}
    needed: set[str] = set()
    figure_names = {shown_at[k]: names(c.source).free for k, c in figures.items()}
    for i in range(len(cells) - 1, -1, -1):
        needed |= figure_names.get(i, set())
        if i not in stripped:
            continue
        code = stripped[i].source
        info = names(code)
        tags = cells[i].get("metadata", {}).get("tags", [])
        has_code = bool(re.sub(r"(?m)^\s*#.*$", "", code).strip())
        keep[i] = has_code and ("remove-cell" not in tags or not info.only_binds
                                or bool(info.bound & needed))
        if keep[i]:
            needed |= info.free

    # 3. Markdown.
    resolver = SiteResolver(app, pagename, figures)
    markdown_sources = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    headings = _heading_numbers(app, pagename, doctree)
    converter = Converter(resolver, headings if _count_headings(markdown_sources) == len(headings) else None)
    torch = _torch_use().code([stripped[i].source for i in stripped if keep[i]])
    out = [
        {"cell_type": "markdown", "metadata": {}, "source": (
            f"*This notebook is the runnable version of [{md_escape(app.env.titles[pagename].astext())}]"
            f"({resolver.url(pagename)}) in {md_escape(app.config.html_title)}. "
            "Run the setup cell first: it installs what is missing.*")},
        _code_cell(setup_cell(app, torch), [], {}),
    ]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for piece in converter.convert(cell["source"]):
                if isinstance(piece, CodeCell):
                    out.append(_code_cell(piece.source, piece.outputs, {}))
                elif piece.strip():
                    out.append({"cell_type": "markdown", "metadata": {}, "source": piece})
        elif cell["cell_type"] == "code" and keep.get(i):
            tags = cell.get("metadata", {}).get("tags", [])
            out.append(_code_cell(stripped[i].source, _clean_outputs(cell.get("outputs", [])),
                                  _cell_metadata(tags)))
    if resolver.cited:
        out.append({"cell_type": "markdown", "metadata": {}, "source": resolver.references()})
    for n, cell in enumerate(out):
        cell["id"] = f"cell-{n}"
    notebook = {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "ffnbook": {"page": pagename, "needs_torch": torch, **notebook_metadata(app)},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return notebook, problems + resolver.problems


# --- Sphinx hooks -------------------------------------------------------------------------------


def _is_notebook(app: Sphinx, pagename: str) -> bool:
    return "kernelspec" in app.env.metadata.get(pagename, {})


def _executed(app: Sphinx, pagename: str) -> Path:
    return Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"


def reader_notebook_uri(pagename: str) -> str:
    """Where the reader notebook of ``pagename`` is written, relative to the html root."""
    return f"{NOTEBOOKS}/{pagename}.ipynb"


def notebook_uri(app: Sphinx, pagename: str) -> str | None:
    """The reader notebook of ``pagename``, if it is a notebook page with an executed notebook."""
    if _is_notebook(app, pagename) and _executed(app, pagename).exists():
        return reader_notebook_uri(pagename)
    return None


def write_reader_notebook(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Write the page's reader notebook; point the launch buttons at it.

    The download menu offers the same notebook as ``_sources/<page>.ipynb`` (bookext.downloads).
    """
    uri = notebook_uri(app, pagename)
    if doctree is None or uri is None:
        return
    # The page as myst-nb wrote it, outputs included: bookext.execution's client put the
    # record's outputs into it, whether the page executed in this build or not.
    executed = json.loads(_executed(app, pagename).read_text(encoding="utf-8"))
    notebook, problems = reader_notebook(app, pagename, doctree, executed)
    for problem in problems:
        logger.warning(problem, location=pagename)
    target = Path(app.outdir) / uri
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _point_launch_buttons(app, pagename, context)


def _point_launch_buttons(app: Sphinx, pagename: str, context: dict) -> None:
    urls = launch_urls(app, pagename)
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") not in urls:
                logger.warning("reader notebook: launch button %r has no reader-notebook address",
                               button.get("text"), location=pagename)
                continue
            button["url"] = urls[button["text"]]


def setup(app: Sphinx) -> dict:
    # What the notebooks install and where they open (the commit, the setup cell, Binder).
    app.setup_extension("bookext.notebook_setup")
    # After the theme's launch and download buttons (priority 501) exist.
    app.connect("html-page-context", write_reader_notebook, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
