"""Explorables: interactive figures that run in the reader's browser, without a kernel.

A page places one with a directive, right after the static figure (or table)
it generalises; the directive's body is the sentence that introduces it::

    ```{explorable} width
    Move the model width and the width ratio, or switch to a gated FFN.
    ```

The argument is one of :data:`ffnbook.explorables.KINDS`. At build time the
directive asks :func:`ffnbook.explorables.explorable_data` for what the
browser needs (model-sheet inputs, build-time coefficients, the initial
settings) and writes it into the page as JSON, inside a ``pst-js-only`` box:
without JavaScript the box is hidden (and in print, by the stylesheet), so the
static figure and its caption are what remains. The controls, the numbers and
the SVG figure are drawn from that JSON by ``_static/explorables/core.js`` and
the kind's own script (``width.js``, ...), a port of ffnbook's formulas that
the tests compare with Python.

The scripts and the stylesheet are added only to pages that have an
explorable, and a kind's script only where that kind is
(``html-page-context``), so other pages load nothing more.

One kind, ``units`` (the neuron explorer of the trained-FFN page), shows what
the page's own kernel computed on trained models, too large to sit in the page:
its directive names the glue key under which the page glued that data as a JSON
string (``:glued: KEY``); the data is written, as the page is written, to
``_explorables/<page>/<box id>.json``, and the box carries only its address and
the few numbers the controls need. ``units.js`` fetches the file the first time
the reader touches the box (focus, pointer or a control), never before.

The other kinds' data is computed while Sphinx reads the page, not by the page's kernel, so
the page notes as its dependencies the ffnbook modules that
``ffnbook.explorables`` imports (followed through the package's relative
imports) and the package's data files: editing one re-reads the pages with an
explorable, and their data is never stale.
"""

from __future__ import annotations

import ast
import html
import json
from functools import cache
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

FOLDER = "explorables"
STYLE = f"{FOLDER}/explorables.css"
#: Where the data a page glued for an explorable is written, one file per box.
DATA_FOLDER = "_explorables"
#: The kinds whose data the page's kernel glues (the key named by ``:glued:``).
GLUED_KINDS = ("units",)

#: What the box says before the reader touches it, by kind.
TITLES = {
    "width": "Explore: how wide, and what it costs",
    "parameters": "Explore: where the parameters of a model live",
    "compute": "Explore: FLOPs per token against sequence length",
    "moe": "Explore: stored and active parameters of a mixture of experts",
    "units": "Explore: one FFN unit of a trained model",
}


class explorable(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """The explorable's box; written as HTML, dropped by other builders."""


def visit_explorable_html(self, node: explorable) -> None:
    kind = node["kind"]
    if "file_data" in node:
        # Written beside the page, as the page is written: the box names it relative to the page.
        docname = self.builder.current_docname
        name = f"{DATA_FOLDER}/{docname}/{node['ids'][0]}.json"
        path = Path(self.builder.outdir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(node["file_data"], encoding="utf-8")
        node["data"]["src"] = "../" * docname.count("/") + name
    data = json.dumps(node["data"], separators=(",", ":"), sort_keys=True).replace("</", "<\\/")
    self.body.append(
        f'<div class="ffn-x ffn-x-{kind} pst-js-only" id="{node["ids"][0]}" data-kind="{kind}" '
        f'role="group" aria-labelledby="{node["ids"][0]}-title">'
        f'<p class="ffn-x-title" id="{node["ids"][0]}-title">{html.escape(TITLES[kind])}</p>'
        f'<script type="application/json" class="ffn-x-data">{data}</script>'
    )


def depart_explorable_html(self, node: explorable) -> None:
    # The script builds the controls, the figure and the numbers in here.
    self.body.append('<div class="ffn-x-app"></div></div>')


def skip_node(self, node) -> None:
    raise nodes.SkipNode


@cache
def data_dependencies() -> tuple[Path, ...]:
    """The files ``ffnbook.explorables`` reads: its module, the ffnbook modules it imports
    (directly or through others, found in the source) and the package's data files."""
    import ffnbook

    package = Path(ffnbook.__file__).parent
    found, todo = set(), ["explorables", "__init__"]
    while todo:
        path = package / f"{todo.pop()}.py"
        if path in found or not path.is_file():
            continue
        found.add(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                todo.extend([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
    data = {p for p in (package / "data").rglob("*") if p.is_file()}
    return tuple(sorted(found | data))


def glued_data(document: nodes.document, key: str) -> tuple[dict, str]:
    """The JSON object the page glued as a string under ``key``: what the box carries, and the file's text.

    The box carries the object's ``"box"`` entry (what the controls need before the
    file arrives); the file holds the whole object, compactly.
    """
    from myst_nb.core.variables import RetrievalError
    from myst_nb.ext.glue.utils import retrieve_glue_data

    try:
        text = retrieve_glue_data(document, key).data.get("text/plain", "")
    except RetrievalError:
        raise ValueError(f"the page glues no {key!r}") from None
    try:
        data = json.loads(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"{key!r} must be glued as a JSON string, got {text[:60]!r}...") from None
    if not isinstance(data, dict) or not isinstance(data.get("box"), dict):
        raise ValueError(f"{key!r} must hold a JSON object with a 'box' object (what the controls need)")
    return dict(data["box"]), json.dumps(data, separators=(",", ":"), sort_keys=True)


class ExplorableDirective(SphinxDirective):
    """``{explorable} KIND``: an interactive figure of kind KIND, introduced by the body."""

    required_arguments = 1
    has_content = True
    option_spec = {"glued": directives.unchanged_required}

    def run(self):
        from ffnbook.explorables import KINDS, explorable_data

        kind = self.arguments[0]
        if kind not in KINDS + GLUED_KINDS:
            raise self.error(f"explorable kind must be one of {', '.join(KINDS + GLUED_KINDS)}, got {kind!r}")
        node = explorable()
        node["kind"] = kind
        if kind in GLUED_KINDS:
            if "glued" not in self.options:
                raise self.error(f"explorable {kind} needs :glued: KEY, the glue key of its data")
            try:
                node["data"], node["file_data"] = glued_data(self.state.document, self.options["glued"])
            except ValueError as error:
                raise self.error(f"explorable {kind}: {error}") from None
        else:
            node["data"] = explorable_data(kind)
            for path in data_dependencies():
                self.env.note_dependency(str(path))
        node["ids"].append(f"ffn-x-{kind}-{self.env.new_serialno('ffn-x')}")
        node += self.parse_content_to_nodes()
        self.set_source_info(node)
        return [node]


def add_explorable_files(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Load the explorables' scripts and stylesheet on the pages that have one, only there."""
    kinds = sorted({node["kind"] for node in doctree.findall(explorable)}) if doctree is not None else []
    if kinds:
        app.add_css_file(STYLE)
        # Deferred scripts run in document order: the core first, then each kind registers.
        for name in ("core", *kinds):
            app.add_js_file(f"{FOLDER}/{name}.js", loading_method="defer")


def setup(app: Sphinx) -> dict:
    app.add_node(
        explorable,
        html=(visit_explorable_html, depart_explorable_html),
        latex=(skip_node, None),
        text=(skip_node, None),
        man=(skip_node, None),
        texinfo=(skip_node, None),
    )
    app.add_directive("explorable", ExplorableDirective)
    app.connect("html-page-context", add_explorable_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
