"""Print the one-page build of the book to a PDF with Debian's Chromium (`make pdf`).

    .venv/bin/python tools/print_pdf.py SINGLEHTML_DIR OUT.pdf

The one-page build (``sphinx -b singlehtml``) holds every page of the book with
the numbers and figures of the same executed notebooks as the site. This
script serves it on localhost, prepares it for paper and prints it (A4, page
numbers in the footer):

* the chapter only: the sections about the book itself (how to write a page,
  execution times) and the API reference are left out; the glossary and the
  bibliography stay;
* each section starts on a new page; the site's navigation, reading tools,
  tooltips and buttons are not printed; glossary terms print as plain words;
* folded answers (dropdowns) print open; folded code cells print closed-out
  (their outputs stay);
* self-check questions are numbered and print with their options; the answers
  and every option's explanation go to an appendix at the end;
* problems are numbered and print with their hint, without the answer field; each
  answer (with its tolerance) and worked solution go to a second appendix.

Every step checks that it found what it expects, so a change of the book's
markup fails here, loudly, instead of printing something incomplete.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from sitecheck import CHROMIUM_ARGS, serve  # noqa: E402

CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
LEFT_OUT = ("contributing", "execution-statistics", "api")  # about the book, not the chapter

PRINT_CSS = """
@page { size: A4; margin: 18mm 16mm 20mm 16mm; }
html, body { background: #fff !important; color: #000 !important; font-size: 10.5pt; }
.bd-header, .bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer,
.bd-footer-article, .prev-next-area, .ffn-tools, .ffn-tip, .ffn-check, .ffn-result,
.headerlink, #pst-skip-link, .skip-link, .search-button, dialog, .back-to-top,
.ffn-print-drop, .ffn-problem-form, .ffn-copy { display: none !important; }
body { margin: 0 !important; padding: 0 !important; display: block !important; }
main.ffn-print, main.ffn-print article { display: block; max-width: none; width: auto; margin: 0; padding: 0; }
.ffn-print-chapter { break-before: page; }
.ffn-print-chapter > :is(h1, h2, h3, h4):first-of-type { font-size: 1.8em; margin-top: 0; }
h1, h2, h3 { break-after: avoid; }
figure, .math, table, .ffn-option { break-inside: avoid; }
/* A figure taller than a page (the stacked neuron panels) would otherwise leave a blank
   page before it: scaled to fit one page with its caption. */
figure img { max-height: 200mm; width: auto; max-width: 100%; object-fit: contain; }
pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
div.math { overflow: visible !important; }
.ffn-term a, a.reference.external { color: inherit !important; text-decoration: none !important; }
details > summary { list-style: none; }
.pasted-text { white-space: nowrap; } /* a glued number never breaks at its exponent's hyphen */
.ffn-print-answers ul { list-style: none; }  /* entries and options carry their numbers and letters */
.ffn-print-answers > ul { padding-left: 0; }
.ffn-print-answers li { margin-bottom: 0.6em; }
"""

PREPARE = """(leftOut) => {
  const report = {};
  const article = document.querySelector('article');
  // The documents the one-page build joined, each marked by <span id="document-NAME">.
  const marks = [...article.querySelectorAll('span[id^="document-"]')];
  report.documents = marks.length;
  // Leave out whole documents: everything from their mark up to the next mark.
  report.leftOut = 0;
  for (const mark of marks) {
    if (!leftOut.includes(mark.id.slice('document-'.length))) continue;
    const section = mark.nextElementSibling;
    if (section && section.tagName === 'SECTION') { section.remove(); report.leftOut++; }
    mark.remove();
  }
  // Every remaining document starts a new page.
  for (const mark of article.querySelectorAll('span[id^="document-"]')) {
    const section = mark.nextElementSibling;
    if (section && section.tagName === 'SECTION') section.classList.add('ffn-print-chapter');
  }
  // Folded answers print open; folded code cells (their source only) are left out.
  report.folded = 0;
  for (const d of article.querySelectorAll('details')) {
    if (d.classList.contains('hide') && d.classList.contains('above-input')) { d.remove(); continue; }
    d.open = true; report.folded++;
  }
  // Self-checks: numbered, options lettered, the explanations moved to an appendix.
  const answers = [];
  const forms = [...article.querySelectorAll('form.ffn-quiz')];
  forms.forEach((form, i) => {
    const number = i + 1;
    const chapter = form.closest('.ffn-print-chapter');
    const title = chapter ? chapter.querySelector('h1, h2, h3, h4').textContent.replace(/[#¶]/g, '').trim() : '';
    const label = form.querySelector('.ffn-quiz-label');
    label.textContent = `Self-check ${number}`;
    const question = form.querySelector('.ffn-quiz-question');
    const item = document.createElement('li');
    item.innerHTML = `<strong>Self-check ${number}</strong> (${title}): ${question.innerHTML}`;
    const list = document.createElement('ul');
    [...form.querySelectorAll('.ffn-option')].forEach((option, k) => {
      const letter = String.fromCharCode(97 + k);
      option.querySelector('label').prepend(`(${letter}) `);  // keeps the label's math
      const why = option.querySelector('.ffn-why');
      const entry = document.createElement('li');
      const right = option.querySelector('input').dataset.correct === 'true';
      entry.innerHTML = `${right ? '<strong>' : ''}(${letter})${right ? ' is right' : ''}` +
        `${right ? '</strong>' : ''}: ${why.innerHTML}`;
      list.appendChild(entry);
      why.remove();
    });
    item.appendChild(list);
    answers.push(item);
    const note = document.createElement('p');
    note.textContent = `Answer: see "Answers to the self-checks", number ${number}.`;
    form.querySelector('fieldset').appendChild(note);
  });
  report.selfChecks = answers.length;
  // Problems: numbered through the book; the answer field is not printed, the hint prints
  // open, the answer (with its tolerance) and the worked solution go to an appendix.
  const solved = [];
  [...article.querySelectorAll('div.ffn-problem')].forEach((box, i) => {
    const number = i + 1;
    const chapter = box.closest('.ffn-print-chapter');
    const title = chapter ? chapter.querySelector('h1, h2, h3, h4').textContent.replace(/[#¶]/g, '').trim() : '';
    box.querySelector('.ffn-problem-title').textContent = `Problem ${number}`;
    const form = box.querySelector('form.ffn-problem-form');
    const rule = box.querySelector('.ffn-problem-rule');
    const tolerance = rule.querySelector('.pasted-text');
    const item = document.createElement('li');
    item.innerHTML = `<strong>Problem ${number}</strong> (${title}): <strong></strong> ` +
      `(${tolerance ? 'right within ' + tolerance.textContent : 'exact'}).`;
    item.querySelector('strong + strong').textContent =
      form.dataset.answerText + (form.dataset.unit ? ' ' + form.dataset.unit : '');
    const solution = box.querySelector('details.ffn-problem-solution');
    item.appendChild(solution.querySelector('.ffn-solution-body'));
    solution.remove();
    form.remove();
    rule.textContent = `Answer: see "Answers to the problems", number ${number}.`;
    box.appendChild(rule);
    solved.push(item);
  });
  report.problems = solved.length;
  // Only the article goes to paper: none of the site's navigation around it.
  const main = document.createElement('main');
  main.className = 'ffn-print';
  main.appendChild(article);
  document.body.replaceChildren(main);
  // Each entry names its own number ("Self-check 3", "Problem 7"), so the lists print no
  // numbers of their own.
  const appendix = (id, title, items) => {
    if (!items.length) return;
    const section = document.createElement('section');
    section.className = 'ffn-print-chapter ffn-print-answers';
    section.id = id;
    section.innerHTML = `<h2>${title}</h2>`;
    const list = document.createElement('ul');
    items.forEach(item => list.appendChild(item));
    section.appendChild(list);
    article.appendChild(section);
  };
  appendix('ffn-print-answers', 'Answers to the self-checks', answers);
  appendix('ffn-print-problem-answers', 'Answers to the problems', solved);
  return report;
}"""

FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#444">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)


def print_pdf(singlehtml: Path, out: Path) -> dict:
    """Print ``singlehtml/index.html`` to ``out``; returns what the preparation found."""
    from playwright.sync_api import sync_playwright

    out.parent.mkdir(parents=True, exist_ok=True)
    with serve(singlehtml) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROME, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(base + "index.html")
            page.wait_for_load_state("load")
            report = page.evaluate(PREPARE, list(LEFT_OUT))
            expected = {"documents": 10, "leftOut": len(LEFT_OUT), "selfChecks": 1, "problems": 1}
            short = {k: report.get(k) for k, v in expected.items() if (report.get(k) or 0) < v}
            if short:
                raise SystemExit(f"print_pdf: the one-page build is not what it expects: {short}")
            page.add_style_tag(content=PRINT_CSS)
            page.emulate_media(media="print")
            page.pdf(
                path=str(out),
                format="A4",
                print_background=True,
                outline=True,
                tagged=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                margin={"top": "18mm", "bottom": "20mm", "left": "16mm", "right": "16mm"},
            )
        finally:
            browser.close()
    return report


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    singlehtml, out = Path(sys.argv[1]), Path(sys.argv[2])
    report = print_pdf(singlehtml, out)
    print(f"print_pdf: {out} ({out.stat().st_size / 2**20:.1f} MB): {report}")


if __name__ == "__main__":
    main()
