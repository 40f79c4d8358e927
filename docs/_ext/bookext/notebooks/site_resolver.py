"""How a reader notebook's Markdown shows what the site resolves: the Sphinx-environment side.

:class:`SiteResolver` is the :class:`bookext.notebooks.myst_markdown.Resolver` of a real build: it
answers the converter's questions (a glued value, a citation, a glossary term, a
cross-reference, a figure number, a literalinclude, an image) from the Sphinx
environment, the glue data myst-nb wrote and the bibliography, as the built site shows
them, with links to the published site. What it cannot resolve it reports through
``warn`` (the page's build warning).
"""

from __future__ import annotations

import ast
import json
import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from bookext.notebooks.myst_markdown import CodeCell, Resolver, details, md_escape


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
            docname = (
                posixpath.normpath(posixpath.join(posixpath.dirname(self.pagename), target))
                if not target.startswith("/")
                else target[1:]
            )
            if docname not in self.env.titles:
                self.warn(f"reader notebook: no page {target!r}")
                return md_escape(shown or target)
            return f"[{md_escape(shown or self.env.titles[docname].astext())}]({self.url(docname)})"
        label = target.lower()
        if role == "numref" and label in std["labels"]:
            docname, labelid, _ = std["labels"][label]
            number = self._figure_number(docname, labelid)
            if number:
                text = (
                    shown.replace("%s", number).replace("{number}", number)
                    if shown
                    else self.app.config.numfig_format["figure"] % number
                )
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
                builder=self.app.builder,
                fromdocname=self.pagename,
                todocname=c.bibliography_key.docname,
                citation_id=c.citation_id,
                title=None,
                pre_text="",
                post_text="",
            )
            refs.append((c.entry, c.formatted_entry, info))
        style = domain.reference_style  # round brackets (bookext.content.citations)
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
        docname = posixpath.normpath(posixpath.join(posixpath.dirname(self.pagename), doc)) if doc else self.pagename
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
        from bookext.content.numbers import plain_text

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
        if name == "glue:math" or (name != "glue:md" and "text/latex" in data and not is_image(data)):
            return ["$$\n" + data.get("text/latex", "").strip().strip("$").strip() + "\n$$"]
        if name == "glue:md" or (not is_image(data) and "text/markdown" in data):
            return [data.get("text/markdown", "").strip()]
        if not is_image(data):
            return ["```\n" + data.get("text/plain", "").strip() + "\n```"]
        cell = self.figures.get(key)
        if cell is None:
            self.warn(
                f"reader notebook: figure {key!r} is glued in a way that cannot be redrawn "
                "(use glue('key', figure_expression, display=False) with a literal key)"
            )
            return []
        cell.outputs = [{"output_type": "execute_result", "execution_count": None, "data": dict(data), "metadata": {}}]
        pieces: list = [cell]
        number = self._figure_number(self.pagename, options.get("name", "")) if options.get("name") else ""
        label = self.app.config.numfig_format["figure"] % number if number else ""
        text = f"**{label}** {caption}".strip() if label else caption
        # The alt text the site gives the figure: the page's, else the figure's own (bookext.content.figurealt).
        alt = options.get("alt") or " ".join(str(data.get("text/plain", "")).split())
        if alt and not alt.startswith("<"):
            text += "\n\n" + details("Text description of the figure", md_escape(str(alt)))
        if text.strip():
            pieces.append(text)
        return pieces

    def image(self, path: str, options: dict, caption: str) -> str:
        rel, _ = self.env.relfn2path(path, self.pagename)
        found = self.env.images.get(rel) if "://" not in path else None
        url = (
            path
            if found is None
            else self.app.config.ffnbook_site_url.rstrip("/") + f"/{self.app.builder.imagedir}/{found[1]}"
        )
        return super().image(url, options, caption)

    def literalinclude(self, path: str, options: dict) -> tuple[str, str]:
        from sphinx.directives.code import LiteralIncludeReader

        _, filename = self.env.relfn2path(path, self.pagename)
        opts = {k: v for k, v in options.items() if k not in ("caption", "name", "class")}
        text, _ = LiteralIncludeReader(filename, opts, self.app.config).read()
        if filename.endswith(".py"):  # as the page shows it
            from bookext.content.listings import readable_listing

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


def is_image(data: dict) -> bool:
    return any(m.startswith("image/") for m in data)


def _markdown_backend():
    from pybtex.backends.markdown import Backend

    class MarkdownBackend(Backend):
        """pybtex's Markdown without its backslash escapes (``\\(`` is math to Jupyter)."""

        def format_str(self, text):
            return md_escape(text)

    return MarkdownBackend()
