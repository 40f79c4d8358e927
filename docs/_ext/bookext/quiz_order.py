"""The order a self-check shows its options in: shuffled with a fixed seed.

Authors tend to write the right option first; readers should not learn where to
look. Every view of a question (the page, by :mod:`bookext.readertools`, and the
reader's notebook, by :mod:`bookext.myst_markdown`) lists the options in this one
order, so "(b)" means the same option everywhere. Nothing here imports Sphinx.
"""

from __future__ import annotations

import hashlib


def option_order(question: str, texts: list[str]) -> list[int]:
    """The indices of ``texts`` in the order a reader sees them: sorted by a hash of
    the question and each option's text. The order is the same in every build and
    changes only when the question or an option is reworded.

    >>> option_order("Which?", ["A.", "B.", "C."]) == option_order("Which?", ["A.", "B.", "C."])
    True
    >>> sorted(option_order("Which?", ["A.", "B.", "C."]))
    [0, 1, 2]
    """

    def key(i: int) -> str:
        return hashlib.sha256(f"{question}\x00{texts[i]}".encode()).hexdigest()

    return sorted(range(len(texts)), key=key)
