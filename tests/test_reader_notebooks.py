"""Reader notebooks: the conversion (unit tests) and the notebooks the built site offers.

The notebooks running outside the repository, the launch addresses and the
Binder environment are tested in tests/test_reader_notebooks_run.py.
"""

from __future__ import annotations

import json
import re

import pytest
from sitecheck import DOCS, glued, soup_of

from bookext.notebooks.myst_markdown import CodeCell, Converter, Resolver, md_escape
from bookext.notebooks.notebook_cells import names, strip_glue
from ffnbook.display import format_number

# MyST left in Markdown: a role, a directive fence, a target line, a block break.
ROLE = re.compile(r"\{[A-Za-z][\w:+.-]*\}`")
DIRECTIVE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{", re.M)
TARGET = re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M)

# --- code cells ----------------------------------------------------------------------------------


def test_glue_import_and_calls_go_and_the_computation_stays():
    source = (
        "import numpy as np\n"
        "from myst_nb import glue\n"
        "\n"
        "x = np.arange(3)\n"
        'glue("k_x", int(x.sum()), display=False)\n'
        "x.sum()"
    )
    assert strip_glue(source).source == "import numpy as np\n\nx = np.arange(3)\nx.sum()"


def test_a_loop_of_glue_calls_goes_whole_and_glue_from_an_earlier_cell_is_known():
    source = 'for k, v in rows.items():\n    glue(f"k_{k}", v, display=False)\ntotal = 1'
    assert strip_glue(source, known={"glue"}).source == "total = 1"
    # A loop that also computes keeps its computation.
    source = 'for k in keys:\n    s = table[k]\n    glue(f"k_{k}", s, display=False)'
    assert strip_glue(source, known={"glue"}).source == "for k in keys:\n    s = table[k]"


def test_a_displayed_glue_becomes_display_and_a_figure_is_returned_or_assigned():
    source = 'glue("k_shown", value)\nglue("k_fig", plots.curve(x, n=3), display=False)'
    stripped = strip_glue(source, figure_keys={"k_fig"}, known={"glue"})
    assert stripped.source == "display(value)"
    assert stripped.figures == {"k_fig": "plots.curve(x, n=3)"}
    assigned = strip_glue(source, figure_keys={"k_fig"}, assign={"k_fig"}, known={"glue"})
    assert assigned.source == "display(value)\nk_fig = plots.curve(x, n=3)"


def test_plumbing_that_cannot_be_removed_cleanly_is_an_error():
    with pytest.raises(ValueError, match="block left empty"):
        strip_glue('if ok:\n    glue("k", 1, display=False)\nelse:\n    x = 2', known={"glue"})
    with pytest.raises(ValueError, match="outside a glue call"):
        strip_glue("from myst_nb import glue\nfunctions = [glue]")


def test_names_a_cell_binds_and_reads():
    found = names("import numpy as np\nfor i in range(n):\n    total = np.sum(w[i])\n")
    assert found.bound >= {"np", "i", "total"}
    assert found.free >= {"range", "n", "w"} and "np" not in found.free
    assert found.only_binds
    assert not names("print(x)").only_binds


# --- Markdown -------------------------------------------------------------------------------


class Fake(Resolver):
    """Resolves every role to a recognisable text; records warnings."""

    def __init__(self):
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)

    def glue_text(self, key, fmt, role):
        return f"<{key}|{fmt}>"

    def glue_block(self, name, key, options, caption):
        return [CodeCell(f"draw({key!r})"), f"**Fig. 1** {caption}"]

    def cite(self, keys, kind):
        return f"({'; '.join(keys)})" if kind == "p" else f"{keys[0]} (year)"

    def term(self, shown, target):
        return f"[{shown}](glossary#{target})"


def convert(text: str, resolver=None) -> list:
    return Converter(resolver or Fake()).convert(text)


def test_roles_become_text_and_code_is_left_alone():
    text = (
        "(my-label)=\n# Title\n\n% a comment\n"
        "Width {glue:text}`k_w:,` and {gls}`model width <d_model>` {cite:p}`a2017,b2020`.\n\n"
        "Inline `{gls}`x`` stays.\n\n```python\nprint('{gls}`y`')\n```"
    )
    [markdown] = convert(text)
    assert markdown == (
        "# Title\n\n"
        "Width <k_w|,> and [model width](glossary#d_model) (a2017; b2020).\n\n"
        "Inline `{gls}`x`` stays.\n\n```python\nprint('{gls}`y`')\n```"
    )


def test_directives_become_quotes_and_details():
    text = (
        ":::{admonition} You will learn\n:class: tip\n- one {gls}`FFN` thing\n:::\n\n"
        "::::{dropdown} Answer\nIt is {glue:text}`k_a:.2f`.\n\n"
        ":::{note}\nNested.\n:::\n::::"
    )
    [markdown] = convert(text)
    assert markdown.startswith("> **You will learn**\n>\n> - one [FFN](glossary#FFN) thing")
    assert "<details>\n<summary>Answer</summary>\n\nIt is <k_a|.2f>." in markdown
    assert "> **Note**\n>\n> Nested.\n\n</details>" in markdown


def test_a_self_check_lists_options_and_folds_the_reasons():
    text = (
        "```{self-check}\nquestion: Which is $x$?\noptions:\n"
        "  - text: One.\n    why: Because.\n"
        "  - text: Two {gls}`FFN`.\n    correct: true\n    why: Right one.\n```"
    )
    [markdown] = convert(text)
    # In the page's order (bookext.content.quiz_order), so a letter names the same option in both.
    from bookext.content.quiz_order import option_order

    shown = ["One.", "Two [FFN](glossary#FFN)."]
    why = ["**Not quite.** Because.", "**Right.** Right one."]
    order = option_order("Which is $x$?", ["One.", "Two {gls}`FFN`."])
    options = "\n".join(f"- ({letter}) {shown[i]}" for letter, i in zip("ab", order))
    assert markdown.startswith(f"**Self-check.** Which is $x$?\n\n{options}")
    right = "ab"[order.index(1)]
    assert "<summary>Answer</summary>" in markdown and f"**({right})** is right." in markdown
    assert f"- ({'ab'[order.index(0)]}) {why[0]}" in markdown


def test_a_glued_figure_splits_the_cell_around_its_code():
    pieces = convert("Before.\n\n:::{glue:figure} k_fig\n:alt: A plot.\n:name: fig-x\n\nThe caption.\n:::\n\nAfter.")
    assert pieces[0] == "Before." and pieces[1].source == "draw('k_fig')"
    assert pieces[2] == "**Fig. 1** The caption.\n\nAfter."


def test_design_containers_images_and_text_roles_keep_their_words():
    text = (
        "Press {guilabel}`Run`.\n\n::::{tab-set}\n:::{tab-item} NumPy\nBody.\n:::\n::::\n\n"
        "```{figure} plot.png\n:alt: A line.\n\nIts caption.\n```"
    )
    fake = Fake()
    [markdown] = convert(text, fake)
    assert markdown == "Press Run.\n\n**NumPy**\n\nBody.\n\n![A line.](plot.png)\n\nIts caption."
    assert not fake.warnings


def test_directive_options_are_read_as_myst_reads_them():
    seen = {}

    class Include(Fake):
        def literalinclude(self, path, options):
            seen.update(options, path=path)
            return "x = 1", "python"

    [markdown] = convert(
        '```{literalinclude} ../a.py\n:start-at: "    for step in steps:"\n:lines: 2-3\n```', Include()
    )
    assert markdown == "```python\nx = 1\n```"
    assert seen == {"path": "../a.py", "start-at": "    for step in steps:", "lines": "2-3"}


def test_display_math_keeps_dollars_and_drops_its_label():
    [markdown] = convert("$$\ny = W x\n$$ (eq-y)\n\nText $a_{i}$.")
    assert markdown == "$$\ny = W x\n$$\n\nText $a_{i}$."


def test_unknown_roles_and_directives_are_reported():
    fake = Fake()
    convert("A {kbd}`Ctrl` and {unknownrole}`x`.\n\n```{unknown-directive}\nbody\n```", fake)
    assert any("{unknownrole}" in w for w in fake.warnings)
    assert any("{unknown-directive}" in w for w in fake.warnings)


def test_what_is_a_role_is_decided_by_myst_parsers_tokens():
    """Role-like text in code (spans, fenced or indented blocks), math or after a backslash
    is not a role to MyST, so it stays as written; a role's content may span lines."""
    text = (
        "A {gls}`hidden\nunit` and \\{gls}`escaped`.\n\n"
        "Span ``{gls}`x` `` then {gls}`FFN`, math $\\{a\\}$.\n\n"
        "    {gls}`indented code`\n\n~~~\n{gls}`tilde code`\n~~~"
    )
    [markdown] = convert(text)
    assert markdown == (
        "A [hidden\nunit](glossary#hidden unit) and \\{gls}`escaped`.\n\n"
        "Span ``{gls}`x` `` then [FFN](glossary#FFN), math $\\{a\\}$.\n\n"
        "    {gls}`indented code`\n\n~~~\n{gls}`tilde code`\n~~~"
    )


def test_targets_comments_and_block_breaks_go_and_blank_lines_stay():
    [markdown] = convert("(top)=\n% a comment\n% on two lines\nOne.\n\n+++\n\nTwo {gls}`FFN`.\n\n\n\nThree.")
    assert markdown == "One.\n\nTwo [FFN](glossary#FFN).\n\nThree."


def test_directives_are_found_nested_and_headings_counted_outside_them():
    from bookext.notebooks.myst_markdown import directives, heading_count

    text = (
        "# One\n\n::::{tab-set}\n:::{glue:figure} k_fig\n:name: fig-k\n:::\n::::\n\n"
        "```python\n# not a heading\n```\n\n:::{note}\n# inside a directive\n:::\n\n## Two\n"
    )
    found = [(name, argument) for name, argument, _ in directives(text)]
    assert found == [("tab-set", ""), ("glue:figure", "k_fig"), ("note", "")]
    assert heading_count(text) == 2


def test_headings_get_the_sites_numbers_and_keep_their_roles():
    pieces = Converter(Fake(), headings=["1. ", "1.1. "]).convert("# The {gls}`FFN`\n\ntext\n\n## Next")
    assert pieces == ["# 1. The [FFN](glossary#FFN)\n\ntext\n\n## 1.1. Next"]


def test_escaping_never_makes_math_delimiters():
    assert md_escape("a*b_c [x] (y) <z>") == r"a\*b\_c [x] (y) &lt;z&gt;"


# --- the notebooks the site offers ----------------------------------------------------------------


def reader_notebooks(site):
    folder = site / "notebooks"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.ipynb"))}


def executed_pages(site):
    return sorted(p.stem for p in (site.parent / "jupyter_execute").glob("*.ipynb"))


def markdown_of(notebook) -> str:
    return "\n\n".join(c["source"] for c in notebook["cells"] if c["cell_type"] == "markdown")


@pytest.mark.build
def test_every_executed_page_offers_its_reader_notebook(site):
    notebooks = reader_notebooks(site)
    assert set(notebooks) == set(executed_pages(site))
    for page in notebooks:
        [link] = {
            a["href"]
            for a in soup_of(site, page).find_all("a", href=True)
            if a["href"].endswith(".ipynb") and "://" not in a["href"]
        }
        # The download menu's file is the notebook Colab and Binder open.
        assert (site / link).read_bytes() == (site / "notebooks" / f"{page}.ipynb").read_bytes(), page


@pytest.mark.build
def test_no_build_plumbing_or_myst_syntax_is_left(site):
    for page, notebook in reader_notebooks(site).items():
        code = "\n".join(c["source"] for c in notebook["cells"] if c["cell_type"] == "code")
        assert "myst_nb" not in code and not re.search(r"\bglue\(", code), page
        text = markdown_of(notebook)
        # Code blocks and code spans may show MyST; the prose may not.
        prose = re.sub(r"(?ms)^```.*?^```", "", text)
        prose = re.sub(r"``.*?``|`[^`\n]*`", "", prose)
        assert not ROLE.search(prose), f"{page}: {ROLE.search(prose).group(0)}"
        assert not DIRECTIVE.search(text), f"{page}: a directive fence"
        assert not TARGET.search(text), f"{page}: a target label"
        assert "{glue" not in prose and "{gls}" not in prose and "{cite" not in prose, page


def glue_roles(page: str) -> list[tuple[str, str]]:
    """(key, format) of every {glue:text} role in the page's MyST source."""
    source = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    found = []
    for content in re.findall(r"\{glue:text\}`([^`]+)`", source):
        key, _, fmt = content.rpartition(":") if ":" in content else (content, "", "")
        found.append((key or content, fmt))
    return found


@pytest.mark.build
def test_glued_numbers_in_the_text_are_the_sites(site):
    """Every value a page glues into its prose reads the same in the notebook as on the site."""
    checked = 0
    for page, notebook in reader_notebooks(site).items():
        text = markdown_of(notebook)
        on_site = {s.get_text() for s in soup_of(site, page).find_all("span", class_="pasted-text")}
        for key, fmt in glue_roles(page):
            value = glued(site, page, key)
            # In the book's number format (ffnbook.display.format_number, tested in test_display.py).
            shown = (
                format_number(value, fmt)
                if fmt
                else format_number(value, "")
                if isinstance(value, float)
                else str(value)
            )
            assert shown in on_site, f"{page}: {key} shows {shown!r} nowhere on the site"
            assert md_escape(shown) in text, f"{page}: {key} = {shown!r} is not in the notebook"
            checked += 1
    assert checked > 100


@pytest.mark.build
def test_figures_headings_and_references_read_as_on_the_site(site):
    notebook = reader_notebooks(site)["position-independence"]
    text = markdown_of(notebook)
    title = soup_of(site, "position-independence").select_one("article h1").get_text().rstrip("#").strip()
    assert f"# {title}" in text  # numbered as on the site ("4. Position independence")
    assert "(Vaswani et al., 2017)" in text and text.rstrip().split("\n## References\n")[1].count("- ") >= 1
    assert "arxiv.org/abs/1706.03762" in text
    # A glued figure is drawn by a code cell, with its number and caption after it.
    notebook = reader_notebooks(site)["activations"]
    figures = [
        i
        for i, c in enumerate(notebook["cells"])
        if c["cell_type"] == "code" and any("image/svg+xml" in o.get("data", {}) for o in c["outputs"])
    ]
    assert figures
    caption = notebook["cells"][figures[0] + 1]["source"]
    site_caption = soup_of(site, "activations").find("figcaption").get_text(" ")
    number = re.search(r"Fig\. [\d.]+", site_caption).group(0)
    assert caption.startswith(f"**{number}**")


@pytest.mark.build
def test_the_setup_cell_comes_first_and_installs_torch_only_where_needed(site):
    for page, notebook in reader_notebooks(site).items():
        setup = [c for c in notebook["cells"] if c["cell_type"] == "code"][0]["source"]
        assert 'find_spec("ffnbook") is None' in setup, page
        assert ("download.pytorch.org/whl/cpu" in setup) == notebook["metadata"]["ffnbook"]["needs_torch"]


def test_an_explorable_becomes_a_note_linking_to_the_site():
    class OnSite(Resolver):
        def page_url(self):
            return "https://example.org/width.html"

    text = "```{explorable} width\nMove the ratio $r$.\n```"
    [markdown] = convert(text, OnSite())
    assert markdown == "> **Interactive figure** ([on the site](https://example.org/width.html)). Move the ratio $r$."
    [offline] = convert(text)
    assert "{explorable}" not in offline and offline.endswith("Move the ratio $r$.")
