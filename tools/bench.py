"""`make bench`: how fast the book builds, against myst-nb's defaults and the limit.

Runs, each a few times on the real pages, and prints medians:

(a) ours      a clean `make html` (cache mode, parallel, cold cache);
(b) defaults  a clean build with myst-nb's defaults: every page executed
              (``nb_execution_mode = "auto"``), one process, no cache;
(c) limit     every page's code run one after another in ONE Python process
              (no kernel start-ups), plus a Sphinx build with execution off;
then the no-op rebuild and a one-page edit (a code cell of one page changes).

Targets (issue 5): a/b <= 0.5, a/c <= 1.5, no-op <= 3 s, one-page edit <= that
page's execution time + 3 s. Timings are wall-clock on this machine; medians
and ratios are what to compare, since single runs are noisy.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SPHINX = [PY, "-m", "sphinx", "-b", "html", "-c", str(ROOT), "-q"]


def timed(cmd, cwd=ROOT, check=True) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if check and result.returncode != 0:
        sys.exit(f"command failed: {' '.join(map(str, cmd))}\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return elapsed


def make_html(build: Path) -> float:
    return timed(["make", "--no-print-directory", "html", f"BUILDDIR={build}", "SETUP=", f"PY={PY}"])


def ours_clean(work: Path) -> float:
    build = work / "ours"
    shutil.rmtree(build, ignore_errors=True)
    return make_html(build)


def defaults_clean(work: Path) -> float:
    out = work / "defaults"
    shutil.rmtree(out, ignore_errors=True)
    return timed(SPHINX + ["-E", "-j", "1", "-D", "nb_execution_mode=auto",
                           "-d", str(out / "doctrees"), "docs", str(out / "html")])


def notebook_pages() -> list[Path]:
    """Pages that are notebooks: they start with a jupytext header naming the MyST format."""
    return sorted(
        p for p in (ROOT / "docs").glob("*.md")
        if p.read_text().startswith("---\n") and "format_name: myst" in p.read_text().split("\n---\n")[0]
    )


def one_process_limit(work: Path) -> float:
    """All pages' code in one interpreter, then Sphinx without execution."""
    runner = work / "run_all.py"
    runner.write_text(
        "import os, sys, jupytext, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import myst_nb\n"
        "myst_nb.glue = lambda *a, **k: None  # outside a kernel glue has nowhere to go\n"
        "for path in sys.argv[1:]:\n"
        "    nb = jupytext.read(path, fmt='md:myst')\n"
        "    os.chdir(os.path.dirname(path))\n"
        "    namespace = {'__name__': '__main__'}\n"
        "    for cell in nb.cells:\n"
        "        if cell.cell_type != 'code' or 'raises-exception' in cell.metadata.get('tags', []):\n"
        "            continue\n"
        "        code = '\\n'.join(l for l in cell.source.splitlines() if not l.lstrip().startswith(('%', '!')))\n"
        "        exec(compile(code, path, 'exec'), namespace)\n"
    )
    run = timed([PY, str(runner), *map(str, notebook_pages())])
    out = work / "noexec"
    shutil.rmtree(out, ignore_errors=True)
    # Without execution, glue keys are missing: warnings are expected, so no -W here.
    build = timed(SPHINX + ["-E", "-j", "auto", "-D", "nb_execution_mode=off",
                            "-d", str(out / "doctrees"), "docs", str(out / "html")], check=False)
    return run + build


def page_execution_seconds(build: Path, page: str) -> float:
    """The page's own execution time, as recorded by myst-nb in the cache build."""
    html = (build / "html" / "execution-statistics.html").read_text()
    row = re.search(rf"{re.escape(page)}</span></a></p></td>.*?<td><p>([\d.]+)</p></td>", html, re.S)
    if row is None:
        raise SystemExit(f"no execution time for {page} on the execution-statistics page")
    return float(row.group(1))


def one_page_edit(work: Path, page: str) -> float:
    """Rebuild after a comment is added to the first code cell of ``page``."""
    source = ROOT / "docs" / f"{page}.md"
    original = source.read_text()
    try:
        source.write_text(original.replace("```{code-cell} ipython3\n", "```{code-cell} ipython3\n# bench edit\n", 1))
        return make_html(work / "ours")
    finally:
        source.write_text(original)
        make_html(work / "ours")  # restore the cached state for the next repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--page", default="position-independence", help="page for the one-page edit")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ffnbook-bench-"))
    results: dict[str, list[float]] = {k: [] for k in ("a", "b", "c", "noop", "edit")}
    for i in range(args.repeats):
        print(f"run {i + 1}/{args.repeats} ...", flush=True)
        results["a"].append(ours_clean(work))
        results["noop"].append(make_html(work / "ours"))
        results["edit"].append(one_page_edit(work, args.page))
        results["b"].append(defaults_clean(work))
        results["c"].append(one_process_limit(work))
    page_exec = page_execution_seconds(work / "ours", args.page)
    med = {k: statistics.median(v) for k, v in results.items()}

    def row(label, key, target=""):
        runs = ", ".join(f"{v:.1f}" for v in results[key])
        print(f"{label:<44} {med[key]:7.1f} s   (runs: {runs}) {target}")

    print(f"\nmedians over {args.repeats} runs, {len(notebook_pages())} executed pages\n")
    row("(a) clean make html (ours)", "a")
    row("(b) clean build, myst-nb defaults", "b")
    row("(c) one process + build without execution", "c")
    row("no-op rebuild", "noop", "target <= 3 s")
    row(f"one-page edit ({args.page})", "edit", f"target <= {page_exec:.1f} + 3 s")
    print(f"\na/b = {med['a'] / med['b']:.2f}   (target <= 0.5)")
    print(f"a/c = {med['a'] / med['c']:.2f}   (target <= 1.5)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
