"""The order a self-check shows its options in: shuffled with a fixed seed.

Authors tend to write the right option first; readers should not learn where to
look. Every view of a question (the page, by :mod:`bookext.content.selfcheck`, and the
reader's notebook, by :mod:`bookext.notebooks.myst_markdown`) lists the options in this one
order, so "(b)" means the same option everywhere. Nothing here imports Sphinx.
"""

from __future__ import annotations

import hashlib


def option_order(question: str, texts: list[str], correct: int | None = None, taken: list[int] = ()) -> list[int]:
    """The indices of ``texts`` in the order a reader sees them: sorted by a hash of
    the question and each option's text. The order is the same in every build and
    changes only when the question or an option is reworded.

    With ``correct`` (the right option's index) and ``taken`` (the places of the right
    options of the page's earlier questions, in order), the right option moves to the
    nearest place after its own that none of the last ``len(texts) - 1`` questions used:
    on every page the right answers are spread over the places, never twice in a row in
    the same one. The caller appends the place it got (:func:`correct_place`).

    >>> option_order("Which?", ["A.", "B.", "C."]) == option_order("Which?", ["A.", "B.", "C."])
    True
    >>> sorted(option_order("Which?", ["A.", "B.", "C."]))
    [0, 1, 2]
    >>> places = []
    >>> for q in range(6):
    ...     order = option_order(f"Q{q}?", ["A.", "B.", "C."], correct=0, taken=places)
    ...     places.append(order.index(0))
    >>> all(a != b for a, b in zip(places, places[1:])) and set(places) == {0, 1, 2}
    True
    """

    def key(i: int) -> str:
        return hashlib.sha256(f"{question}\x00{texts[i]}".encode()).hexdigest()

    order = sorted(range(len(texts)), key=key)
    if correct is None:
        return order
    recent = set(list(taken)[max(0, len(taken) - (len(texts) - 1)) :])
    place = order.index(correct)
    free = [p for p in range(len(texts)) if p not in recent] or [place]
    place = min(free, key=lambda p: (p - place) % len(texts))
    others = [i for i in order if i != correct]
    return [*others[:place], correct, *others[place:]]


def correct_place(order: list[int], correct: int) -> int:
    """Where the right option is shown (what the page's next question is told in ``taken``)."""
    return order.index(correct)
