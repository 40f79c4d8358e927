"""The problem directive, built in-process on a tiny book (tests/roots/test-problems): saved
notebooks whose glue outputs hold the answers. What a reader and problems.js rely on (the
answer and tolerance from the glue, the field's label and description, the folds, the
solution cell moved into its fold, the script only where a problem is), and an error
naming the page and fault for each way an author can get a problem wrong (broken.ipynb)."""

from __future__ import annotations

import re

import pytest
from sphinx.util.console import strip_colors

TESTROOT = "problems"


def problems(tiny_page) -> list:
    return tiny_page("index").select("div.ffn-problem")


def test_a_problem_carries_the_glued_answer_and_tolerance(tiny_page):
    first, second = problems(tiny_page)
    form = first.select_one("form.ffn-problem-form")
    assert form["data-answer"] == "134217728"  # tp_ffn, as glued
    assert form["data-tolerance"] == "0.005"  # tp_rounded
    assert form["data-unit"] == "parameters"
    assert form["data-answer-text"] == "134,217,728"  # an int: digits grouped
    form = second.select_one("form.ffn-problem-form")
    assert form["data-answer"] == repr(2 / 3) and form["data-tolerance"] == "0.0"
    assert form["data-answer-text"] == "0.6667"  # format: .4f


def test_the_question_and_rule_are_read_from_the_glue_and_labelled(tiny_page):
    first = problems(tiny_page)[0]
    assert first["role"] == "group"
    title = first.find(id=first["aria-labelledby"])
    assert title.get_text() == "Problem 1"
    question = " ".join(first.select_one(".ffn-problem-question").get_text(" ").split())
    assert "4,096" in question  # {glue:text}`tp_d_model:,`
    rule = first.select_one(".ffn-problem-rule")
    assert rule.select_one(".pasted-text").get_text() == "±0.5%"  # the tolerance, glued
    assert [c.get_text() for c in rule.select("code")] == ["1.2e9", "1,200,000,000", "1.2B"]
    field = first.select_one("input.ffn-problem-input")
    label = first.find("label", attrs={"for": field["id"]})
    assert label.get_text() == "Your answer"
    assert field["aria-describedby"] == rule["id"]
    assert field["type"] == "text" and field["autocomplete"] == "off"
    assert first.select_one(".ffn-problem-unit").get_text() == "parameters"
    assert first.select_one("button[type=submit]").get_text() == "Check"
    assert first.select_one(".ffn-result")["aria-live"] == "polite"
    # Exact answers say so, with no number.
    second_rule = problems(tiny_page)[1].select_one(".ffn-problem-rule").get_text()
    assert second_rule.startswith("Only the exact value") and not problems(tiny_page)[1].select(".pasted-text")
    assert [c.get_text() for c in problems(tiny_page)[1].select(".ffn-problem-rule code")] == ["0.75", "3/4", "75%"]


def test_hint_and_worked_solution_are_folded_with_the_solution_cell_inside(tiny_page):
    first, second = problems(tiny_page)
    hint, solution = first.select("details")
    assert hint.summary.get_text() == "Hint" and "ffn-problem-hint" in hint["class"]
    assert solution.summary.get_text() == "Worked solution"
    body = solution.select_one(".ffn-solution-body")
    assert body.find("p").get_text(" ").startswith("Each matrix holds")  # the prose first
    cell = body.select_one("div.cell.tag_solution")
    assert cell is not None and "2 * 4 * 4096**2" in cell.select_one(".cell_input").get_text()
    assert "134217728" in cell.select_one(".cell_output").get_text()
    # A solution with no prose holds just its cell; no solution cell is left outside a problem.
    assert second.select_one(".ffn-solution-body div.cell.tag_solution") is not None
    page = tiny_page("index")
    assert all(c.find_parent("div", class_="ffn-problem") for c in page.select("div.cell.tag_solution"))


def test_problems_are_numbered_in_reading_order(tiny_page):
    assert [p["id"] for p in problems(tiny_page)] == ["ffn-problem-0", "ffn-problem-1"]
    assert [p.select_one(".ffn-problem-title").get_text() for p in problems(tiny_page)] == ["Problem 1", "Problem 2"]


def test_the_script_and_style_load_only_on_pages_with_a_problem(tiny_page):
    def loads(name):
        page = tiny_page(name)
        return (
            [s["src"] for s in page.select("script[src]") if "problems" in s["src"]],
            [s["href"] for s in page.select("link[rel=stylesheet]") if "problems" in s["href"]],
        )

    scripts, styles = loads("index")
    assert len(scripts) == 1 and len(styles) == 1
    page = tiny_page("genindex")
    assert not [s for s in page.select("script[src]") if "problems" in s["src"]]


def test_each_broken_problem_is_an_error_naming_page_and_fault(tiny_book):
    warnings = strip_colors(tiny_book.warning.getvalue())
    errors = re.findall(r"broken\.ipynb:\d*:? ?(?:ERROR|WARNING): ([^\n]*)", warnings)
    expected = [
        "problem: the page glues no 'bp_missing'",
        "problem: 'bp_text' must be glued as a finite int or float, got \"'twelve'\"",
        "problem: the tolerance 'bp_odd' is 0.3; it must be one of ffnbook.problems.TOLERANCES",
        "problem: needs a 'hint' text",
        "problem: invalid YAML",
        "problem: unknown fields ['answer']",
        "problem 'bp_answer': the next cell must be its solution, a code cell tagged [solution]",
        "a code cell tagged [solution] follows no problem",
    ]
    for text in expected:
        assert any(e.startswith(text) for e in errors), (text, warnings)
    assert len(errors) == len(expected), warnings


@pytest.mark.parametrize(
    "answer, spec, shown",
    [
        (176160768, None, "176,160,768"),
        (0.123456, None, "0.1235"),
        (4.5e9, None, "4.5e9"),
        (2 / 3, ".1%", "66.7%"),
        (12288, "d", "12288"),
    ],
)
def test_the_answer_is_shown_as_its_format_says(answer, spec, shown):
    from bookext.content.problem_text import answer_text

    assert answer_text(answer, spec) == shown


def test_an_exact_whole_answer_is_shown_with_every_digit():
    """Rounded to 1.229e4, the implementation page's 12,288 bytes was shown as the answer of
    a problem that takes only the exact value, and refused when typed as shown."""
    from bookext.content.problem_text import answer_text

    assert answer_text(12288.0, exact=True) == "12,288"
    assert answer_text(12288.5, exact=True) == "1.229e4"  # not whole: the format's figures
    assert answer_text(12288.0, ".3g", exact=True) == "1.23e4"  # a page's own format wins
