"""A node written as ``<tag attrs>children</tag>`` in HTML and dropped in other formats.

The glossary terms' tooltips, the self-checks and the problems are made of it
(:func:`element`). Ids are numbered per page in reading order by the parts that use it,
so two builds give the same HTML.
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.application import Sphinx


class html_element(nodes.TextElement):  # noqa: N801 - docutils node naming
    """A node written as ``<tag attrs>children</tag>`` in HTML and dropped elsewhere.

    A TextElement, so that links inside it are treated as inline references.
    """


def visit_html_element(self, node: html_element) -> None:
    attrs = "".join(
        f" {name}" if value is True else f' {name}="{html.escape(str(value), quote=True)}"'
        for name, value in node["attrs"].items()
        if value is not None and value is not False
    )
    self.body.append(f"<{node['tag']}{attrs}>")


def depart_html_element(self, node: html_element) -> None:
    if node["tag"] not in ("input",):
        self.body.append(f"</{node['tag']}>")


def skip_node(self, node) -> None:
    raise nodes.SkipNode


def element(tag: str, *children: nodes.Node, **attrs) -> html_element:
    node = html_element("", "", *children)
    node["tag"] = tag
    node["attrs"] = {name.rstrip("_").replace("_", "-"): value for name, value in attrs.items()}
    return node


def setup(app: Sphinx) -> dict:
    app.add_node(
        html_element,
        html=(visit_html_element, depart_html_element),
        latex=(skip_node, None),
        text=(skip_node, None),
        man=(skip_node, None),
        texinfo=(skip_node, None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
