"""No number typed by hand where a reader looks: prose, captions, self-checks and alt text.

Every number a page shows must come from execution (myst-nb glue, or alt text a
figure function returned and the page glued), from math, or from a citation.
This test reads each built chapter page the way a reader sees it, takes out
what is allowed to hold numbers, and fails on any numeral or number word that
is left, naming the page and the words around it. The allow-list is short and
each entry says why.
"""

from __future__ import annotations

import re

import pytest
from sitecheck import chapter_order, editable_soup_of, glue_data

# --- what a reader sees, minus what may hold numbers --------------------------------------

#: Elements whose numbers are computed or not prose: math, code and its output,
#: citations (author-year), section and figure numbers Sphinx writes, heading anchors.
COMPUTED_OR_NOT_PROSE = (
    "math",
    "pre",
    "code",
    "script",
    "style",
    "div.cell_input",
    "div.cell_output",  # code and what it printed
    "span.section-number",
    "span.caption-number",
    "a.headerlink",
    "span.std-numref",
    "div.toctree-wrapper",  # the numbered table of contents
    'a[href^="bibliography.html#"]',  # author-year citations carry years and letters
    "span.ffn-pdf-size",  # the PDF's size, measured by the build (bookext.content.chapter_pdf)
)
#: What a glued value ({glue:text}) becomes in the scanned text: computed, so allowed, and a
#: unit word right after it ("175.0 billion") is part of the computed number.
GLUED = "⟦glued⟧"
UNIT_AFTER_GLUE = re.compile(GLUED + r"\s*(?:billion|million|thousand|trillion|percent)\b", re.I)

#: Number words that state a quantity (small counts such as "two sublayers" or "three
#: matrices" are structure, not measurements, and are not listed).
NUMBER_WORDS = (
    "twice thrice triple tripled quadruple half halves halved quarter quarters dozen "
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty "
    "thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands "
    "million millions billion billions trillion percent"
).split()

# --- the allow-list ------------------------------------------------------------------------

#: Phrases that contain digits or number words but are names, fixed terms or definitions,
#: not measured numbers. Each line says why; keep the list short and principled.
ALLOWED_PHRASES = (
    r"\b(?:[Ee]xercises?|[Ee]xperiments?|[Pp]roblems?) \d+(?: (?:to|and) \d+)?",  # section numbers
    r"\bTables? \d+\b",  # a numbered table of a cited paper ("PaLM's Table 1"): a label
    r"\b[Bb]locks? \d+(?= |['’]s\b|[.,;:)])(?: (?:and|to) \d+)?",  # a layer's index: a name
    r"kernel[ -]size[ -]1\b",
    r"\b1x1 convolution",  # the name of a layer type
    r"\b(?:b?float|fp|bf|FP)(?:8|16|32|64)\b",
    r"\b(?:4|8|16|32|64)-bit\b",  # number formats
    r"\bhalf[- ](?:width|precision)\b",  # a number format's name
    r"\bConv1d\b",
    r"\bopenai/gpt-2\b",
    r"\bgoogle-research/t5x\b",  # repositories cited as sources
    r"\bv\d+(?:\.\d+)+\b",  # a release's version name ("Mistral 7B v0.1"), not a quantity
    r"\bin millions\b",  # a unit on an axis, not a number
    r"\btop-[12] routing\b",
    r"\b2:4\b",  # the name of a sparsity pattern (two of every four weights; NVIDIA's sparse Tensor Cores)
    r"\b2/3 rule\b",
    r"\bSwish-1\b",  # names of methods (glossary aliases)
    r"\bLLM\.int8\(\)",  # the name of a method (Dettmers et al. 2022)
    r"\bLlama 4\b",  # a model family's name (its models are Llama 4 Scout and Maverick)
    # A formula constant: one multiply-add is two FLOPs by definition, so a matrix product
    # costs twice its weights ("twice its weights", "twice their projection weights").
    r"\btwice (?:its|their|the) (?:projection )?weight(?:s| count)\b",
    # A vague size in a cited author's own words (Kaplan et al.: "the loss varies only a few
    # percent"), not a value the book measured or could glue.
    r"\ba few percent\b",
)

#: Years (publication years in prose, "models from 2022 onwards").
YEAR = re.compile(r"^(?:19|20)\d\d[a-z]?$")


def model_name_tokens() -> set[str]:
    """Words with digits in the model sheet's names ("GPT-2", "7B", "v1.1"): names, not numbers."""
    from ffnbook.models import load_models

    tokens = set()
    for model in load_models():
        # Words with a letter: a bare number in a name ("Llama 4 Scout") must not excuse every "4".
        tokens |= {w for w in re.split(r"[\s()]+", model.name) if re.search(r"\d", w) and re.search(r"[A-Za-z]", w)}
    return tokens | {"GPT-3", "GPT-2", "T5", "LLaMA-1", "Llama-2", "Llama-3", "Llama 2", "Qwen3"}


def chapter_pages() -> list[str]:
    return ["index", *chapter_order(), "glossary"]


def glued_strings(site, page: str) -> set[str]:
    """The text forms of what a page glued, whitespace collapsed: a glued figure's is its alt
    text, written by the figure function (bookext.content.figurealt puts it in the page)."""
    try:
        data = glue_data(site, page)
    except AssertionError:  # a page without code glues nothing
        return set()
    import ast

    found = set()
    for value in data.values():
        text = value["data"].get("text/plain", "")
        try:
            literal = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            literal = text
        if isinstance(literal, str):
            found.add(" ".join(literal.split()))
    return found


def typed_numbers(text: str, names: set[str]) -> list[str]:
    """The typed numbers in ``text``, each as ``word (…words around it…)``."""
    for pattern in ALLOWED_PHRASES:
        text = re.sub(pattern, " ", text)
    text = UNIT_AFTER_GLUE.sub(" ", text)

    def context(match):
        around = text[max(0, match.start() - 40) : match.end() + 40].replace(GLUED, "⟦…⟧")
        return f"{match.group(0)!r} in …{around}…"

    found = []
    for match in re.finditer(r"[\w'’\-×/]*\d(?:[\w'’\-×/]|[.,](?=\w))*", text):
        word = re.sub(r"['’]s$", "", match.group(0).strip("'’-"))
        if not re.search(r"\d", word) or YEAR.match(word) or word in names:
            continue
        found.append(context(match))
    for match in re.finditer(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", text, re.I):
        found.append(context(match))
    return found


def findings(site, page: str) -> list[str]:
    soup = editable_soup_of(site, page)
    article = soup.find("article")
    assert article is not None, f"{page}.html has no article"
    glued = glued_strings(site, page)
    names = model_name_tokens()
    found = []
    for img in article.find_all("img"):
        alt = " ".join(img.get("alt", "").split())
        if alt in glued:
            continue  # alt text the figure function computed (its BookFigure's text)
        found += [f"alt text: {f}" for f in typed_numbers(alt, names)]
    for element in article.select("span.pasted-text"):
        element.replace_with(f" {GLUED} ")
    for selector in COMPUTED_OR_NOT_PROSE:
        for element in article.select(selector):
            element.replace_with(" ")
    text = " ".join(article.get_text(" ").split())
    return found + typed_numbers(text, names)


def test_the_scanner_catches_typed_numbers_and_spares_names():
    names = {"GPT-2", "7B"}
    found = typed_numbers("it holds twice as many, about 2.5 times, in 1,024 steps.", names)
    assert [f.split(" in …")[0] for f in found] == ["'2.5'", "'1,024'", "'twice'"]
    assert typed_numbers("GPT-2 and Mistral 7B, in 2019, Exercise 3, kernel size 1", names) == []
    assert typed_numbers(f"GPT-2's table holds {GLUED} billion values", names) == []
    # The formula constant is spared only as a cost in FLOPs per weight, not as a size.
    assert typed_numbers("it costs twice its weights, and the loss moved a few percent", names) == []
    assert [f.split(" in …")[0] for f in typed_numbers("it is twice the size of attention", names)] == ["'twice'"]


@pytest.mark.parametrize("page", chapter_pages())
def test_no_number_is_typed_by_hand(site, page):
    left = findings(site, page)
    assert not left, f"{page}: numbers typed by hand (glue them, put them in math, or cite them):\n  " + "\n  ".join(
        left
    )
