"""Numeric problems: the reader types a number; the page checks it against the build's answer.

Every chapter page ends with a few problems a reader solves with pencil or code.
A problem is a directive naming the glue key of its answer, with a YAML body as a
self-check has, and is followed by the code cell that computes the answer, tagged
``solution``::

    ```{problem} pc_pr_llama3_ffn
    tolerance: pc_pr_exact
    unit: parameters
    question: |
      Llama-3 8B has $d_\\text{model} =$ {glue:text}`pc_pr_llama3_d_model:,` ...
      How many parameters does the FFN of one block hold?
    hint: |
      A gated FFN has three weight matrices ...
    solution: |
      Three matrices of $d_\\text{model} \\times d_\\text{ff}$ weights ...
    ```

    ```{code-cell} ipython3
    :tags: [solution]
    gated_ffn_param_count(llama.d_model, llama.d_ff)
    ```

* ``tolerance`` names the glue key of the relative tolerance (one of
  :data:`ffnbook.problems.TOLERANCES`: exact, or rounded to three significant figures);
  ``unit`` is what the answer counts; ``format`` (optional) the format spec the answer
  is shown with (default: digits grouped for an integer, four significant figures
  otherwise); ``solution`` (optional) the worked solution's prose, shown above its code.
* The answer and the tolerance come from the page's glue data while the page is read:
  the reader is checked against the number the page's own code just computed.
* The page shows the question, the tolerance, an answer field with a Check button
  (``problems.js``: the verdict appears at once, in a live region), a folded hint and a
  folded worked solution: the prose, then the solution cell (its code and output),
  which :class:`MoveSolutionCells` moves into the fold. Without JavaScript the field is
  hidden; the hint and the solution still open.
* ``problems.js`` and ``problems.css`` are added only to pages with a problem.

A problem with no solution cell after it, a solution cell after no problem, an
answer key the page does not glue, or a value that is not a number is an error that
names the page and line, so the build fails.
"""

from __future__ import annotations

import ast
import math

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from bookext.content import problem_text
from bookext.content.html_element import element

logger = logging.getLogger(__name__)

SCRIPT = "problems.js"
STYLE = "problems.css"
SOLUTION_TAG = "solution"
FIELDS = {"question", "hint", "tolerance", "unit", "format", "solution"}


class problem(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A problem's box; its children are the parts the directive built."""


def visit_problem_html(self, node: problem) -> None:
    self.body.append(
        f'<div class="ffn-problem" id="{node["ids"][0]}" role="group" aria-labelledby="{node["ids"][0]}-title">'
    )


def depart_problem_html(self, node: problem) -> None:
    self.body.append("</div>")


def skip_node(self, node) -> None:
    raise nodes.SkipNode


def glued_number(document: nodes.document, key: str) -> int | float:
    """The number the page glued under ``key`` (ValueError naming the key if it did not)."""
    from myst_nb.core.variables import RetrievalError
    from myst_nb.ext.glue.utils import retrieve_glue_data

    try:
        data = retrieve_glue_data(document, key)
    except RetrievalError:
        raise ValueError(f"the page glues no {key!r}") from None
    text = data.data.get("text/plain", "")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{key!r} must be glued as a finite int or float, got {text!r}")
    return value


class ProblemDirective(SphinxDirective):
    """``{problem} ANSWER_KEY``: a numeric problem whose answer the page glued under the key."""

    required_arguments = 1
    has_content = True

    def _fields(self) -> dict:
        try:
            data = yaml.safe_load("\n".join(self.content))
        except yaml.YAMLError as err:
            raise self.error(f"problem: invalid YAML: {err}") from None
        if not isinstance(data, dict):
            raise self.error("problem: the body must be YAML with 'question', 'hint' and 'tolerance'")
        unknown = set(data) - FIELDS
        if unknown:
            raise self.error(f"problem: unknown fields {sorted(unknown)}; known: {sorted(FIELDS)}")
        for name in ("question", "hint", "tolerance"):
            if not isinstance(data.get(name), str) or not data[name].strip():
                raise self.error(f"problem: needs a '{name}' text")
        for name in ("unit", "format", "solution"):
            if name in data and not isinstance(data[name], str):
                raise self.error(f"problem: '{name}' must be a text")
        return data

    def _answer(self, key: str, data: dict) -> tuple[float, float, str]:
        """The glued answer and tolerance of the problem, and the answer as the page shows it."""
        from ffnbook.problems import TOLERANCES

        try:
            answer = glued_number(self.state.document, key)
            tolerance = glued_number(self.state.document, data["tolerance"])
        except ValueError as err:
            raise self.error(f"problem: {err}") from None
        if tolerance not in TOLERANCES:
            raise self.error(
                f"problem: the tolerance {data['tolerance']!r} is {tolerance!r}; "
                f"it must be one of ffnbook.problems.TOLERANCES {TOLERANCES}"
            )
        try:
            return answer, tolerance, problem_text.answer_text(answer, data.get("format"), exact=not tolerance)
        except ValueError as err:
            raise self.error(f"problem: format {data.get('format')!r}: {err}") from None

    def run(self):
        data = self._fields()
        key = self.arguments[0]
        answer, tolerance, shown = self._answer(key, data)
        unit = data.get("unit", "").strip()

        serial = self.env.new_serialno("ffn-problem")
        pid = f"ffn-problem-{serial}"
        node = problem()
        node["ids"].append(pid)
        node["answer_key"] = key
        self.set_source_info(node)

        node += element("p", nodes.Text(f"Problem {serial + 1}"), class_="ffn-problem-title", id=f"{pid}-title")
        question = nodes.container(classes=["ffn-problem-question"])
        question += self.parse_text_to_nodes(data["question"])
        node += question
        # What counts as right (the tolerance marked as glued values are) and how to type it.
        rule = element("p", class_="ffn-problem-rule", id=f"{pid}-rule")
        for kind, text in problem_text.rule(answer, tolerance, unit):
            rule += (
                nodes.Text(text)
                if kind == "text"
                else nodes.literal(text, text)
                if kind == "code"
                else nodes.inline("", text, classes=["pasted-text"])
            )
        node += rule
        node += element(
            "form",
            element("label", nodes.Text("Your answer"), for_=f"{pid}-input"),
            element(
                "span",
                element(
                    "input",
                    type="text",
                    id=f"{pid}-input",
                    class_="ffn-problem-input",
                    autocomplete="off",
                    spellcheck="false",
                    autocapitalize="off",
                    aria_describedby=f"{pid}-rule",
                ),
                *([element("span", nodes.Text(unit), class_="ffn-problem-unit")] if unit else []),
                class_="ffn-problem-field",
            ),
            element("button", nodes.Text("Check"), type="submit", class_="btn ffn-check"),
            element("p", class_="ffn-result", id=f"{pid}-result", aria_live="polite"),
            class_="ffn-problem-form pst-js-only",
            data_answer=repr(answer),
            data_tolerance=repr(tolerance),
            data_unit=unit,
            data_answer_text=shown,
            data_answer_key=key,
            data_tolerance_key=data["tolerance"],
        )
        hint = nodes.container(classes=["ffn-problem-body"])
        hint += self.parse_text_to_nodes(data["hint"])
        node += element("details", element("summary", nodes.Text("Hint")), hint, class_="ffn-problem-hint")
        solution = nodes.container(classes=["ffn-problem-body", "ffn-solution-body"])
        if data.get("solution"):
            solution += self.parse_text_to_nodes(data["solution"])
        node += element(
            "details", element("summary", nodes.Text("Worked solution")), solution, class_="ffn-problem-solution"
        )
        return [node]


def is_solution_cell(node: nodes.Node) -> bool:
    return (
        isinstance(node, nodes.container)
        and node.get("nb_element") == "cell_code"
        and f"tag_{SOLUTION_TAG}" in node.get("classes", ())
    )


def _is_solution_body(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Element) and "ffn-solution-body" in node.get("classes", ())


class MoveSolutionCells(SphinxTransform):
    """Each problem's solution cell (the code cell right after it, tagged ``solution``)
    moves into the problem's folded worked solution, below the solution's prose."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        moved = set()
        for node in list(self.document.findall(problem)):
            following = node.next_node(descend=False, siblings=True)
            if following is None or not is_solution_cell(following):
                logger.warning(
                    "problem %r: the next cell must be its solution, a code cell tagged [%s]",
                    node["answer_key"],
                    SOLUTION_TAG,
                    location=node,
                )
                continue
            following.parent.remove(following)
            next(node.findall(_is_solution_body)).append(following)
            moved.add(id(following))
        for cell in self.document.findall(is_solution_cell):
            if id(cell) not in moved:
                logger.warning("a code cell tagged [%s] follows no problem", SOLUTION_TAG, location=cell)


def add_problem_files(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The problems' script and stylesheet, on the pages that have a problem only."""
    if doctree is not None and any(True for _ in doctree.findall(problem)):
        app.add_css_file(STYLE)
        app.add_js_file(SCRIPT, loading_method="defer")


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.content.html_element")  # the node the parts are made of
    app.add_node(
        problem,
        html=(visit_problem_html, depart_problem_html),
        latex=(skip_node, None),
        text=(skip_node, None),
        man=(skip_node, None),
        texinfo=(skip_node, None),
    )
    app.add_directive("problem", ProblemDirective)
    app.add_transform(MoveSolutionCells)
    app.connect("html-page-context", add_problem_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
