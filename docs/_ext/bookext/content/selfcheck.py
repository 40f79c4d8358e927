"""Self-checks: the ``self-check`` directive turns a small YAML block into a multiple-choice
question whose every option carries an explanation, shown after answering
(``readertools.js``, :mod:`bookext.website.reading_tools`).
"""

from __future__ import annotations

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from bookext.content.html_element import element
from bookext.content.quiz_order import correct_place, option_order


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


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.content.html_element")
    app.setup_extension("bookext.website.reading_tools")  # readertools.js checks the answers
    app.add_directive("self-check", SelfCheckDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
