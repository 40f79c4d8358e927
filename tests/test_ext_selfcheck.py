"""The self-check directive, built in-process on a tiny book (tests/roots/test-selfcheck):
the question's markup a reader and readertools.js rely on, and an error naming page,
line and fault for each way an author can get the YAML wrong (broken.md)."""

from __future__ import annotations

import re

import pytest
from sphinx.util.console import strip_colors

TESTROOT = "selfcheck"


def quizzes(tiny_page) -> list:
    return tiny_page("index").select("form.ffn-quiz")


def test_a_question_is_a_form_of_radio_options_each_with_its_reason(tiny_page):
    quiz = quizzes(tiny_page)[0]
    assert quiz["id"] == "ffn-quiz-0"
    legend = quiz.find("legend")
    text = " ".join(legend.get_text(" ").split()).replace(" ?", "?")
    assert text == "Self-check What does position-wise mean?"
    assert legend.find("em").get_text() == "position-wise"  # inline markup is parsed
    radios = quiz.select("input[type=radio]")
    assert [r["name"] for r in radios] == ["ffn-quiz-0", "ffn-quiz-0"]  # one group
    assert [r["data-correct"] for r in radios] == ["true", "false"]
    for radio in radios:
        label = quiz.find("label", attrs={"for": radio["id"]})
        why = quiz.find(id=radio["aria-describedby"])
        assert label is not None and why is not None and "ffn-why" in why["class"]
    reasons = [" ".join(w.get_text(" ").split()) for w in quiz.select(".ffn-why")]
    assert reasons == ["Right. One FFN serves all positions.",
                       "Not quite. That would multiply the parameters by the sequence length."]
    assert quiz.select_one("button[type=submit]").get_text() == "Check answer"
    assert quiz.select_one(".ffn-result")["aria-live"] == "polite"


def test_questions_are_numbered_in_reading_order(tiny_page):
    assert [q["id"] for q in quizzes(tiny_page)] == ["ffn-quiz-0", "ffn-quiz-1"]
    second = quizzes(tiny_page)[1].select("input[type=radio]")
    assert [r["data-correct"] for r in second] == ["false", "true"]


def test_each_broken_question_is_an_error_naming_page_line_and_fault(tiny_book):
    errors = re.findall(r"broken\.md:(\d+): ERROR: self-check: ([^\n]*)",
                        strip_colors(tiny_book.warning.getvalue()))
    expected = [
        (3, "invalid YAML: while parsing"),
        (7, "needs a 'question' text"),
        (16, "needs at least two 'options'"),
        (24, "option 2 needs 'text' and 'why'"),
        (33, "exactly one option must be correct, got 2"),
    ]
    assert len(errors) == len(expected), tiny_book.warning.getvalue()
    for (line, text), (want_line, want_text) in zip(errors, expected, strict=True):
        assert int(line) == want_line and text.startswith(want_text), (line, text)
