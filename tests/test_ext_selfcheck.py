"""The self-check directive, built in-process on a tiny book (tests/roots/test-selfcheck):
the question's markup a reader and readertools.js rely on, and an error naming page,
line and fault for each way an author can get the YAML wrong (broken.md)."""

from __future__ import annotations

import re

from sphinx.util.console import strip_colors

TESTROOT = "selfcheck"


def quizzes(tiny_page) -> list:
    return tiny_page("index").select("form.ffn-quiz")


def test_a_question_is_a_form_of_radio_options_each_with_its_reason(tiny_page):
    quiz = quizzes(tiny_page)[0]
    assert quiz["id"] == "ffn-quiz-0"
    # The legend is the short label; the question is a paragraph that names the options.
    assert quiz.find("legend").get_text() == "Self-check"
    question = quiz.select_one("p.ffn-quiz-question")
    text = " ".join(question.get_text(" ").split()).replace(" ?", "?")
    assert text == "What does position-wise mean?"
    assert question.find("em").get_text() == "position-wise"  # inline markup is parsed
    group = quiz.select_one("[role=radiogroup]")
    assert group["aria-labelledby"] == question["id"]
    radios = group.select("input[type=radio]")
    assert [r["name"] for r in radios] == ["ffn-quiz-0", "ffn-quiz-0"]  # one group
    assert sorted(r["data-correct"] for r in radios) == ["false", "true"]
    reasons = {}
    for radio in radios:
        label = quiz.find("label", attrs={"for": radio["id"]})
        why = quiz.find(id=radio["aria-describedby"])
        assert label is not None and why is not None and "ffn-why" in why["class"]
        reasons[label.get_text()] = " ".join(why.get_text(" ").split())
    assert reasons == {
        "The same weights at every position.": "Right. One FFN serves all positions.",
        "Different weights per position.": "Not quite. That would multiply the parameters by the sequence length.",
    }
    button = quiz.select_one("button[type=submit]")
    assert button.get_text() == "Check answer" and "btn" in button["class"]  # the theme's button
    assert quiz.select_one(".ffn-result")["aria-live"] == "polite"


def test_options_are_shown_in_the_order_of_a_fixed_hash_not_the_source_order(tiny_page):
    """The order is the one bookext.content.quiz_order gives, recomputed here from the source: a
    hash of question and option; the right option then moves off the place the previous
    question's right option took."""
    import hashlib

    source = {  # question: (options, the right one)
        "What does *position-wise* mean?": (
            ["The same weights at every position.", "Different weights per position."],
            "The same weights at every position.",
        ),
        "Second question?": (["Yes.", "No."], "No."),
    }
    previous = None
    for quiz, (question, (texts, right)) in zip(quizzes(tiny_page), source.items(), strict=True):
        expected = sorted(texts, key=lambda t: hashlib.sha256(f"{question}\x00{t}".encode()).hexdigest())
        if expected.index(right) == previous:  # two options: the other place
            expected.reverse()
        previous = expected.index(right)
        shown = [label.get_text() for label in quiz.select(".ffn-option > label")]
        assert shown == expected
        # Each radio's value is the option's place in the source.
        assert [texts[int(r["value"])] for r in quiz.select("input[type=radio]")] == shown


def test_option_order_is_a_permutation_that_depends_on_the_words():
    from bookext.content.quiz_order import option_order

    texts = [f"Option {i}." for i in range(6)]
    orders = {tuple(option_order(f"Question {q}?", texts)) for q in range(30)}
    assert all(sorted(o) == list(range(6)) for o in orders)
    assert len(orders) > 20  # different questions, different orders
    firsts = {o[0] for o in orders}
    assert firsts == set(range(6))  # the first option is not always first


def test_on_a_page_the_right_answers_are_spread_over_the_places():
    from bookext.content.quiz_order import correct_place, option_order

    for n_options in (2, 3, 4):
        texts = [f"Option {i}." for i in range(n_options)]
        for correct in range(n_options):  # authors who always write the right one in one place
            places: list[int] = []
            for q in range(12):
                order = option_order(f"Question {q}?", texts, correct, places)
                assert sorted(order) == list(range(n_options)) and order.index(correct) == correct_place(order, correct)
                places.append(correct_place(order, correct))
            # Never twice in a row in one place; every place used; no place taken more than its share.
            assert all(a != b for a, b in zip(places, places[1:])), places
            assert set(places) == set(range(n_options)), places
            assert max(places.count(p) for p in range(n_options)) <= -(-12 // n_options), places


def test_questions_are_numbered_in_reading_order(tiny_page):
    assert [q["id"] for q in quizzes(tiny_page)] == ["ffn-quiz-0", "ffn-quiz-1"]
    second = quizzes(tiny_page)[1].select("input[type=radio]")
    assert {r["value"]: r["data-correct"] for r in second} == {"0": "false", "1": "true"}


def test_each_broken_question_is_an_error_naming_page_line_and_fault(tiny_book):
    errors = re.findall(r"broken\.md:(\d+): ERROR: self-check: ([^\n]*)", strip_colors(tiny_book.warning.getvalue()))
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
