"""Reader tools: glossary tooltips by expertise level, a references switch, self-checks.

* ``{gls}`text``` or ``{gls}`text <glossary term>``` marks a term in prose. It
  renders as a link to the term's glossary entry followed by a hidden
  ``role="tooltip"`` element holding the definition (parsed as MyST, so math
  renders). With JavaScript off the term is just that link. With it,
  ``readertools.js`` shows the tooltip on hover and on keyboard focus (Escape
  closes it) for the terms the chosen expertise level explains, and points
  the link's ``aria-describedby`` at it; other terms read as plain text.
* The ``self-check`` directive turns a small YAML block into a multiple-choice
  question whose every option carries an explanation, shown after answering.
* Every page's article header carries the reading tools
  (``docs/_templates/reading-tools.html``): the expertise level and the
  clickable-references switch. (Downloads are the theme's download menu:
  :mod:`bookext.notebooks.downloads`.)

Ids are numbered per page in reading order, so two builds give the same HTML.
"""

from __future__ import annotations

import html
import re

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from bookext.content.glossary_data import LEVELS, load_glossary
from bookext.content.quiz_order import correct_place, option_order


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


def _glossary_index() -> dict:
    index = {}
    for term in load_glossary():
        for name in (term.term, *term.aliases):
            index[name.casefold()] = term
    return index


class GlossaryTermRole(SphinxRole):
    """``{gls}`text``` / ``{gls}`text <term>```: a glossary term with a tooltip."""

    def run(self):
        match = re.fullmatch(r"(?s)(.*?)\s*<([^<>]+)>", self.text)
        shown, target = (match.group(1), match.group(2)) if match else (self.text, self.text)
        term = _glossary_index().get(" ".join(target.split()).casefold())
        if term is None:
            msg = self.inliner.reporter.warning(
                f"{target!r} is not in the glossary (docs/glossary.yml)", line=self.lineno
            )
            return [nodes.inline(shown, shown)], [msg]
        tip_id = f"ffn-tip-{self.env.new_serialno('ffn-tip')}"
        xref = addnodes.pending_xref(
            "",
            nodes.inline(shown, shown, classes=["xref", "std", "std-term"]),
            refdomain="std",
            reftype="term",
            reftarget=term.term.lower(),
            refexplicit=True,
            refwarn=True,
            refdoc=self.env.docname,
        )
        definition, messages = self.inliner.parse(term.definition, self.lineno, None, self.inliner.parent)
        tooltip = element(
            "span",
            element("strong", nodes.Text(term.term)),
            nodes.Text(": "),
            *definition,
            class_="ffn-tip",
            role="tooltip",
            id=tip_id,
            hidden=True,
        )
        wrapper = element("span", xref, tooltip, class_=f"ffn-term ffn-level-{term.level}", data_level=term.level)
        return [wrapper], messages


class SelfCheckDirective(SphinxDirective):
    """A multiple-choice question; YAML body with ``question`` and ``options``.

    Each option has ``text``, ``why`` and optionally ``correct: true``
    (exactly one option must be correct). The page shows the options in an order
    of their own (:func:`bookext.content.quiz_order.option_order`), whatever order the source lists them in::

        ```{self-check}
        question: What does position-wise mean?
        options:
          - text: The same weights at every position.
            correct: true
            why: One FFN serves all positions.
          - text: Different weights per position.
            why: That would multiply the parameters by the sequence length.
        ```
    """

    has_content = True

    def run(self):
        # (Sphinx puts the page and line in front of each message.)
        try:
            data = yaml.safe_load("\n".join(self.content))
        except yaml.YAMLError as err:
            raise self.error(f"self-check: invalid YAML: {err}") from None
        if not isinstance(data, dict) or not isinstance(data.get("question"), str):
            raise self.error("self-check: needs a 'question' text")
        options = data.get("options")
        if not isinstance(options, list) or len(options) < 2:
            raise self.error("self-check: needs at least two 'options'")
        for i, option in enumerate(options):
            if not isinstance(option, dict) or not option.get("text") or not option.get("why"):
                raise self.error(f"self-check: option {i + 1} needs 'text' and 'why'")
        n_correct = sum(bool(o.get("correct")) for o in options)
        if n_correct != 1:
            raise self.error(f"self-check: exactly one option must be correct, got {n_correct}")

        quiz_id = f"ffn-quiz-{self.env.new_serialno('ffn-quiz')}"
        question, messages = self.parse_inline(data["question"])
        # The question is a paragraph, not the <legend>: a long legend sits on the
        # fieldset's border, which then crosses its text. The legend is the short
        # "Self-check" label; the options' group is named by the question.
        legend = element("legend", nodes.Text("Self-check"), class_="ffn-quiz-label")
        prompt = element("p", *question, class_="ffn-quiz-question", id=f"{quiz_id}-question")
        group = element("div", class_="ffn-options", role="radiogroup", aria_labelledby=f"{quiz_id}-question")
        correct = next(i for i, option in enumerate(options) if option.get("correct"))
        taken = self.env.temp_data.setdefault("ffn-quiz-places", [])  # this page's, in order
        order = option_order(data["question"], [option["text"] for option in options], correct, taken)
        taken.append(correct_place(order, correct))
        for i in order:
            option = options[i]
            option_id = f"{quiz_id}-{i}"
            text, more = self.parse_inline(option["text"])
            messages += more
            why = nodes.container(classes=["ffn-why"])
            why["ids"].append(f"{option_id}-why")
            verdict = "Right." if option.get("correct") else "Not quite."
            why += self.parse_text_to_nodes(f"**{verdict}** {option['why']}")
            group += element(
                "div",
                element(
                    "input",
                    type="radio",
                    name=quiz_id,
                    id=option_id,
                    value=str(i),
                    data_correct="true" if option.get("correct") else "false",
                    aria_describedby=f"{option_id}-why",
                ),
                element("label", *text, for_=option_id),
                why,
                class_="ffn-option",
            )
        fieldset = element("fieldset", legend, prompt, group)
        fieldset += element("button", nodes.Text("Check answer"), type="submit", class_="btn ffn-check")
        fieldset += element("p", class_="ffn-result", aria_live="polite")
        form = element("form", fieldset, class_="ffn-quiz", id=quiz_id)
        return [form, *messages]


# Pages with nothing to read get no reading tools: the "page not found" page, and the
# pages Sphinx writes from templates alone (search, index), which have no doctree.
NO_READING_TOOLS = {"404"}


def offer_reading_tools(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Tell docs/_templates/reading-tools.html (in the article header, through the theme
    option ``article_header_end``) whether this page shows the reading tools, and the
    expertise levels it offers: the glossary's levels, the ones the tooltips carry."""
    context["reading_tools"] = doctree is not None and pagename not in NO_READING_TOOLS
    context["reading_levels"] = LEVELS


def setup(app: Sphinx) -> dict:
    app.add_node(
        html_element,
        html=(visit_html_element, depart_html_element),
        latex=(skip_node, None),
        text=(skip_node, None),
        man=(skip_node, None),
        texinfo=(skip_node, None),
    )
    app.add_role("gls", GlossaryTermRole())
    app.add_directive("self-check", SelfCheckDirective)
    app.connect("html-page-context", offer_reading_tools)
    app.add_css_file("ffnbook.css")
    app.add_js_file("readertools.js", loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
