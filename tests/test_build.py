"""Build the book the way `make html` does and check what a reader sees.

The site is built into a temporary folder with the real Makefile target, so
these tests exercise exactly the command a reader or CI runs. The numbers on
the built pages are compared with ffnbook's own recomputation in this process.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from sitecheck import DOCS, NOTEBOOK_HEADER, glued, make_html, page_text, shown_glued_values

import ffnbook

# Tests that read the built book are marked ``build`` by conftest (the ``site`` fixture);
# those that build a copy of their own are marked here. The rest are fast.


# --- the numbers a reader sees ------------------------------------------------------------


def test_parameter_counts_on_the_page(site):
    ffn_count = f"{ffnbook.ffn_param_count(512, 2048):,}"
    attn_count = f"{ffnbook.attention_param_count(512, n_heads=8):,}"
    # The numbers, from the algebra 2·512·2048 + 2048 + 512 and 4·512².
    assert (ffn_count, attn_count) == ("2,099,712", "1,048,576")
    page = "parameter-count"
    assert glued(site, page, "pc_ffn_formula") == glued(site, page, "pc_ffn_counted") == 2_099_712
    assert glued(site, page, "pc_attn_formula") == glued(site, page, "pc_attn_counted") == 1_048_576
    assert glued(site, page, "pc_ratio") == pytest.approx(2_099_712 / 1_048_576, rel=1e-12)
    assert glued(site, page, "pc_weight_ratio") == 2.0  # 8 d² over 4 d², without biases
    # The reader sees them as the page formats them: among the page's glued values.
    shown = shown_glued_values(site, page)
    assert {ffn_count, attn_count, f"{2_099_712 / 1_048_576:.4f}"} <= set(shown), shown


def test_width_table_on_the_page(site):
    text = page_text(site, "parameter-count")
    for row in ffnbook.width_ratio_rows(512, (1, 2, 8 / 3, 4, 8)):
        assert f"{row['ffn_params']:,}" in text
        assert f"{row['predicted_ratio']:.4f}" in text


def test_every_page_was_executed(site):
    for name in ("position-independence", "parameter-count"):
        html = (site / f"{name}.html").read_text()
        assert 'class="cell_output' in html, f"{name} shows no cell output"


# --- the site works offline ----------------------------------------------------------------

EXTERNAL = re.compile(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)=\"(https?:)?//", re.I)


def test_pages_load_nothing_from_other_hosts(site):
    offenders = {}
    for page in site.rglob("*.html"):
        hits = [m.group(0) for m in EXTERNAL.finditer(page.read_text())]
        # rel="canonical"/"alternate" links are addresses, not loads; none are configured here.
        if hits:
            offenders[str(page.relative_to(site))] = hits[:3]
    assert not offenders, offenders


def test_math_is_rendered_at_build_time(site):
    html = (site / "parameter-count.html").read_text()
    assert "<math" in html
    assert not re.search(r"<script[^>]*mathjax", html, re.I)


# --- no number typed into prose ------------------------------------------------------------


def prose_of(md: str) -> str:
    md = re.sub(r"^---\n.*?\n---\n", "", md, flags=re.S)  # front matter
    md = re.sub(r"(`{3,}|~{3,}|:{3,})[^\n]*\n.*?\n\1", " ", md, flags=re.S)  # code cells, directives
    md = re.sub(r"\{glue:[a-z]+\}`[^`]*`", " ", md)
    md = re.sub(r"`[^`]*`", " ", md)  # inline code
    md = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", md, flags=re.S)  # math
    return md


def test_no_measured_number_is_typed_into_prose():
    typed = []
    for page in DOCS.glob("*.md"):
        for match in re.finditer(r"\b\d{1,3}(?:,\d{3})+\b|\b\d+\.\d+(?:e-?\d+)?\b", prose_of(page.read_text())):
            typed.append(f"{page.name}: {match.group(0)}")
    assert not typed, "glue these values from code, or cite them:\n" + "\n".join(typed)


# --- the build fails loudly ---------------------------------------------------------------


def broken_book(tmp_path: Path, page_name: str, body: str) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(DOCS / "references.bib", source / "references.bib")
    (source / "index.md").write_text(f"# Index\n\n```{{toctree}}\n{page_name}\n```\n")
    (source / f"{page_name}.md").write_text(NOTEBOOK_HEADER + body)
    return source


@pytest.mark.build
def test_failing_cell_fails_the_build_and_names_page_and_cause(tmp_path):
    source = broken_book(
        tmp_path,
        "broken-cell",
        "# Broken\n\n```{code-cell} ipython3\nimport ffnbook\nffnbook.ffn_param_count(512, -1)\n```\n",
    )
    result = make_html(source, tmp_path / "out")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "broken-cell.md" in output
    assert "d_ff must be a positive integer, got -1" in output  # the cause, in the terminal


@pytest.mark.build
def test_cell_tagged_raises_exception_is_allowed(tmp_path):
    body = (
        "# Deliberate\n\n```{code-cell} ipython3\n:tags: [raises-exception]\n"
        "import ffnbook\nffnbook.ffn_param_count(512, -1)\n```\n"
    )
    source = broken_book(tmp_path, "deliberate", body)
    result = make_html(source, tmp_path / "out")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "d_ff must be a positive integer" in (tmp_path / "out/html/deliberate.html").read_text()


@pytest.mark.build
def test_a_missing_glue_key_and_a_broken_cross_reference_fail_the_build_and_name_their_pages(tmp_path):
    """Both are warnings, so one build (-W --keep-going) must report each, with its page."""
    glue_body = (
        "# Missing\n\n```{code-cell} ipython3\nfrom myst_nb import glue\n"
        "glue('present', 1.0, display=False)\n```\n\nValue: {glue:text}`absent_key:.2f`.\n"
    )
    source = broken_book(tmp_path, "missing-glue", glue_body)
    (source / "index.md").write_text("# Index\n\n```{toctree}\nmissing-glue\nbad-ref\n```\n")
    (source / "bad-ref.md").write_text("# Bad ref\n\nSee {doc}`no-such-page`.\n")
    result = make_html(source, tmp_path / "out")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(r"missing-glue\.md:\d+: WARNING: No key 'absent_key'", output), output[-3000:]
    assert re.search(r"bad-ref\.md:\d+: WARNING: unknown document: 'no-such-page'", output), output[-3000:]


@pytest.mark.full  # three `make html` runs of the book's conf; in-process in test_ext_chapter_pdf.py
@pytest.mark.build
def test_a_page_linking_the_pdf_is_read_again_when_it_appears_and_not_before(tmp_path):
    """Sphinx re-reads a page whose dependency is missing on every build; the landing page
    waits for the PDF instead, so rebuilds without one read nothing (no-op rebuild time)."""
    source, build = tmp_path / "src", tmp_path / "build"
    source.mkdir()
    shutil.copy(DOCS / "references.bib", source / "references.bib")
    (source / "index.md").write_text("# Index\n\nIntro.\n\n{chapter-pdf}`Download the PDF`\n")
    for _ in range(2):
        result = make_html(source, build)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"updating environment: 0 added, 0 changed, 0 removed", result.stdout), result.stdout
    assert "Download the PDF" not in page_text(build / "html", "index")
    (build / "pdf").mkdir()
    (build / "pdf" / "ffnbook.pdf").write_bytes(b"%PDF-1.4\n" + b"0" * 300_000)
    result = make_html(source, build)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"updating environment: 0 added, 1 changed, 0 removed", result.stdout), result.stdout
    assert "Download the PDF (PDF, 0.3 MB)" in page_text(build / "html", "index")
