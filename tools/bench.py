"""`make bench`: how fast the book builds, against myst-nb's defaults and the one-process limit.

Runs each measurement several times on the real pages and prints medians:

(a) ours       a clean `make html` (nothing cached: every page executes);
(b) defaults   a clean build with myst-nb's default settings: every page executed
               (``nb_execution_mode = "auto"``), one process, no cache;
(c) limit      every page's code run one after another in ONE Python process
               (no kernel start-ups), plus a Sphinx build with execution off;
then, on top of a finished build of (a):
    no-op      `make html` again, nothing changed;
    leaf edit  a comment line put first in one leaf module of ffnbook (``--module``); the pages
               that imported it execute again. Its cost is split into the execution of
               those pages (the build's own "executed ... in T s", kernel start included)
               and everything else (the overhead);
    page edit  a comment added to the first code cell of one page (``--page``), after the
               cell's options.

then, once per run of this script:
    training   the trained-FFN page's training (its models, trained together as one
               batched model) for a fixed number of steps in one thread, against a lower
               bound: the FLOPs of the matrix products training needs (6 x parameters x
               tokens, less what is not computed: the last block works at the query only,
               the controls have no FFN) at this machine's single-core matrix product peak,
               measured by a microbenchmark in the same process. What is trained is what
               the page trains: its code cells run, up to its first call of
               ``ffnbook.tiny_transformer.train_replicas``, whose arguments are taken
               (:func:`page_training`); only the number of steps is the bench's.

Targets (issue 14): a/b <= 0.5, a/c <= 1.5, no-op <= 3 s, leaf-edit overhead <= 3 s.
``--scratch-kernels`` also times (a) with every kernel started from scratch (no kernel
template), to show what the template saves.

Timings are wall clock on this machine; medians and ratios are what to compare, since
single runs are noisy (and the machine may be shared: see ``uptime`` before and after).
The incremental builds also show their CPU time (the build and every process it waited
for), which a shared machine disturbs less. ``--incremental-only`` runs one clean build,
then only the no-op, leaf-edit and page-edit builds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SPHINX = [PY, "-m", "sphinx", "-b", "html", "-c", str(ROOT), "-q"]
#: The page whose training is timed.
TRAINED_PAGE = ROOT / "docs" / "trained-ffn.md"
EDIT = "# bench edit\n"


class Timed(NamedTuple):
    """A command's wall time, the CPU time of it and everything it started, and its output."""

    seconds: float
    cpu: float
    output: str


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclasses.dataclass(frozen=True)
class Project:
    """Where builds run: this checkout, or a copy of it (the tests' tiny book), with its environment."""

    root: Path = ROOT
    env: dict | None = None

    def run(self, cmd, check: bool = True) -> Timed:
        start, cpu = time.perf_counter(), _children_cpu()
        result = subprocess.run(cmd, cwd=self.root, env=self.env, capture_output=True, text=True)
        timed = Timed(time.perf_counter() - start, _children_cpu() - cpu, result.stdout + result.stderr)
        if check and result.returncode != 0:
            sys.exit(f"command failed: {' '.join(map(str, cmd))}\n{timed.output[-6000:]}")
        return timed

    def make_html(self, build: Path, *options: str) -> Timed:
        extra = [f"SPHINXOPTS={' '.join(options)}"] if options else []
        return self.run(["make", "--no-print-directory", "html", f"BUILDDIR={build}", "SETUP=", f"PY={PY}", *extra])


def clean(project: Project, build: Path, *options: str) -> float:
    shutil.rmtree(build, ignore_errors=True)
    return project.make_html(build, *options).seconds


def defaults_clean(work: Path) -> float:
    out = work / "defaults"
    shutil.rmtree(out, ignore_errors=True)
    return (
        Project()
        .run(
            SPHINX
            + ["-E", "-j", "1", "-D", "nb_execution_mode=auto", "-d", str(out / "doctrees"), "docs", str(out / "html")]
        )
        .seconds
    )


def notebook_pages() -> list[Path]:
    """Pages that are notebooks: they start with a jupytext header naming the MyST format."""
    return sorted(
        p
        for p in (ROOT / "docs").glob("*.md")
        if p.read_text().startswith("---\n") and "format_name: myst" in p.read_text().split("\n---\n")[0]
    )


def page_code(path: Path) -> list[str]:
    """The page's code cells as plain Python: IPython magics and shell lines dropped, cells
    that are meant to raise left out."""
    import jupytext

    cells = []
    for cell in jupytext.read(path, fmt="md:myst").cells:
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        cells.append("\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    return cells


def run_pages(paths: list[str]) -> None:
    """Every page's code in this one process (the one-process limit, (c))."""
    import matplotlib

    matplotlib.use("Agg")
    import myst_nb

    myst_nb.glue = lambda *a, **k: None  # outside a kernel glue has nowhere to go
    for path in paths:
        os.chdir(os.path.dirname(path))
        namespace = {"__name__": "__main__"}
        for code in page_code(Path(path)):
            exec(compile(code, path, "exec"), namespace)


def one_process_limit(work: Path) -> float:
    """All pages' code in one interpreter, then Sphinx without execution."""
    project = Project()
    seconds = project.run([PY, __file__, "--run-pages", *map(str, notebook_pages())]).seconds
    out = work / "noexec"
    shutil.rmtree(out, ignore_errors=True)
    # Without execution, glue keys are missing: warnings are expected, so no -W here.
    seconds += project.run(
        SPHINX
        + ["-E", "-j", "auto", "-D", "nb_execution_mode=off", "-d", str(out / "doctrees"), "docs", str(out / "html")],
        check=False,
    ).seconds
    return seconds


def executed_pages(output: str) -> list[str]:
    """Pages a build executed, from its log (this book's extension, or myst-nb's own message)."""
    ours = re.findall(r"^ffnbook: executing (\S+) \(", output, flags=re.M)
    return ours or [Path(p).name for p in re.findall(r"(\S+)\.md: Executing notebook", output)]


def execution_seconds(output: str) -> float | None:
    found = re.search(r"^ffnbook: executed \d+ notebook pages in ([\d.]+) s", output, flags=re.M)
    return float(found.group(1)) if found else None


# --- the edits ------------------------------------------------------------------------------------


def comment_first(text: str) -> str:
    """A module with a comment line before its first line."""
    return EDIT + text


#: The opening fence of a MyST code cell, and the cell's options after it: ``:key: value``
#: lines, or a YAML block between two ``---`` lines.
CODE_CELL = re.compile(r"^(`{3,}|~{3,})\{code-cell\}.*\n(?:(?::[\w-]+:.*\n)+|---\n(?:.*\n)*?---\n)?", re.M)


def comment_in_first_code_cell(text: str) -> str:
    """A page with a comment line at the top of its first code cell's code, after its options:
    the cell's code changes (so the page executes again), nothing else does."""
    cell = CODE_CELL.search(text)
    if cell is None:
        raise ValueError("the page has no code cell (```{code-cell} ...)")
    return text[: cell.end()] + EDIT + text[cell.end() :]


def edited_build(project: Project, build: Path, path: Path, edit: Callable[[str], str]) -> Timed:
    """Rebuild after editing ``path``; then put it back and rebuild."""
    original = path.read_text()
    try:
        path.write_text(edit(original))
        return project.make_html(build)
    finally:
        path.write_text(original)
        project.make_html(build)  # back to the cached state of the unedited book


def incremental_builds(project: Project, build: Path, module: Path, page: Path) -> dict:
    """On a finished build: a no-op rebuild, a leaf-module edit, a page edit. Their wall and CPU
    seconds, and the pages each edit executed (the leaf edit with the build's own time for
    executing them)."""
    noop = project.make_html(build)
    leaf = edited_build(project, build, module, comment_first)
    page_edit = edited_build(project, build, page, comment_in_first_code_cell)
    return {
        "noop": noop.seconds,
        "noop_cpu": noop.cpu,
        "leaf": leaf.seconds,
        "leaf_cpu": leaf.cpu,
        "leaf_pages": executed_pages(leaf.output),
        "leaf_exec": execution_seconds(leaf.output) or 0.0,
        "page": page_edit.seconds,
        "page_cpu": page_edit.cpu,
        "page_pages": executed_pages(page_edit.output),
    }


# --- training ---------------------------------------------------------------------------------------


class _Trained(Exception):
    """Raised in place of the page's training call, carrying its arguments."""


def page_training(page: Path = TRAINED_PAGE) -> tuple[list, object, object]:
    """What the page trains: ``(replicas, model_config, train_config)`` of its first call of
    ``ffnbook.tiny_transformer.train_replicas``, found by running its code cells up to that
    call (in this process; glue does nothing). The page's own numbers, never copies."""
    import myst_nb

    from ffnbook import tiny_transformer

    def intercept(replicas, model_config, train_config=None):
        raise _Trained(list(replicas), model_config, train_config or tiny_transformer.TrainConfig())

    myst_nb.glue = lambda *a, **k: None
    plain, tiny_transformer.train_replicas = tiny_transformer.train_replicas, intercept
    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    try:
        os.chdir(page.parent)
        for code in page_code(page):
            exec(compile(code, str(page), "exec"), namespace)
    except _Trained as call:
        return call.args
    finally:
        tiny_transformer.train_replicas = plain
        os.chdir(cwd)
    raise ValueError(f"{page} never calls ffnbook.tiny_transformer.train_replicas")


def matrix_product_peak() -> float:
    """This machine's single-thread float32 matrix product rate: the best of several large products."""
    import torch

    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(4):
            a @ b
        rates.append(4 * 2 * 1024**3 / (time.perf_counter() - start))
    return max(rates)


def multiply_adds(model, d_ff: int) -> int:
    """One prompt's multiply-adds in the forward pass's matrix products, with FFNs of width
    ``d_ff`` (0: none); the last block computes the query position (→) alone."""
    d, f, T, V, L = model.d_model, d_ff, model.seq_len, model.vocab_size, model.n_blocks
    early = (L - 1) * T * (4 * d * d + 2 * T * d + 2 * d * f)  # projections, scores and mixing, FFN
    last = 3 * T * d * d + d * d + 2 * T * d + 2 * d * f  # queries, keys and values of all (one product), the rest at →
    return early + last + V * d  # and the unembedding at →


def measure_training(steps: int) -> dict:
    """The page's training for ``steps`` steps in this process, one thread, with the peak it is held to."""
    import torch

    from ffnbook import tiny_transformer

    torch.set_num_threads(1)
    peak = matrix_product_peak()
    replicas, model, train = page_training()
    train = dataclasses.replace(train, steps=steps, eval_every=steps)
    start, cpu = time.perf_counter(), time.process_time()
    tiny_transformer.train_replicas(replicas, model, train)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    widths = [model.d_ff if r.d_ff is None else r.d_ff for r in replicas]
    return {
        "peak": peak,
        "seconds": seconds,
        "cpu": cpu,
        "flops": tiny_transformer.training_flops(model, train, len(replicas)),
        "needed": 6 * steps * train.batch_size * sum(multiply_adds(model, width) for width in widths),
        "replicas": len(replicas),
        "steps": steps,
    }


def training_throughput(steps: int) -> dict:
    """The page's training for ``steps`` steps in a fresh one-thread process, with the peak it is held to."""
    output = Project().run([PY, __file__, "--training-json", str(steps)]).output
    return json.loads(output.strip().splitlines()[-1])


def print_training(result: dict) -> None:
    bound = result["needed"] / result["peak"]
    print(f"\ntraining: {result['replicas']} models x {result['steps']} steps of the trained-FFN page, one thread")
    print(f"  single-core matrix product peak        {result['peak'] / 1e9:7.1f} GFLOP/s")
    print(
        f"  6 x parameters x tokens                {result['flops'] / 1e9:7.1f} GFLOP   (every weight at every token)"
    )
    print(
        f"  6 x the products training needs        {result['needed'] / 1e9:7.1f} GFLOP   "
        f"(last block at the query only, no FFN in the controls)"
    )
    print(
        f"  lower bound at peak                    {bound:7.2f} s   (6 x parameters x tokens: "
        f"{result['flops'] / result['peak']:.2f} s)"
    )
    print(
        f"  measured (one run, evaluation included) {result['seconds']:6.2f} s   "
        f"= {result['needed'] / result['seconds'] / 1e9:.1f} GFLOP/s, {bound / result['seconds']:.0%} of peak"
    )
    print(
        f"  of which this process's CPU time         {result['cpu']:6.2f} s   (the wall time less waiting on a busy "
        f"machine)"
    )


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--module", default="ffnbook/moe.py", help="leaf module for the leaf edit")
    parser.add_argument("--page", default="position-independence", help="page for the page edit")
    parser.add_argument(
        "--scratch-kernels", action="store_true", help="also time (a) with kernels started from scratch (no template)"
    )
    parser.add_argument(
        "--training-steps",
        type=int,
        default=100,
        help="steps of the trained-FFN page's training to time against its lower bound",
    )
    parser.add_argument("--training-only", action="store_true", help="time only the training")
    parser.add_argument(
        "--incremental-only",
        action="store_true",
        help="one clean build, then only the no-op, leaf-edit and page-edit builds (no baselines, no training)",
    )
    # Internal: the parts that run in a fresh process of their own.
    parser.add_argument("--training-json", type=int, metavar="STEPS", help=argparse.SUPPRESS)
    parser.add_argument("--run-pages", nargs="+", metavar="PAGE", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_arguments()
    if args.training_json:
        print(json.dumps(measure_training(args.training_json)))
        return
    if args.run_pages:
        run_pages(args.run_pages)
        return
    if args.training_only:
        print_training(training_throughput(args.training_steps))
        return
    project = Project()
    work = Path(tempfile.mkdtemp(prefix="ffnbook-bench-"))
    ours = work / "ours"
    baselines = () if args.incremental_only else ("a", "b", "c") + (("a0",) if args.scratch_kernels else ())
    incremental = ("noop", "noop_cpu", "leaf", "leaf_cpu", "leaf_exec", "page", "page_cpu")
    results: dict[str, list[float]] = {k: [] for k in baselines + incremental}
    leaf_pages: set[str] = set()
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average, {os.cpu_count()} CPUs)", flush=True)
    if args.incremental_only:
        clean(project, ours)
    for i in range(args.repeats):
        print(f"run {i + 1}/{args.repeats} ...", flush=True)
        if not args.incremental_only:
            results["a"].append(clean(project, ours))
        edits = incremental_builds(project, ours, ROOT / args.module, ROOT / "docs" / f"{args.page}.md")
        leaf_pages.update(edits["leaf_pages"])
        for key in incremental:
            results[key].append(edits[key])
        if not args.incremental_only:
            results["b"].append(defaults_clean(work))
            results["c"].append(one_process_limit(work))
        if args.scratch_kernels and not args.incremental_only:
            results["a0"].append(clean(project, work / "scratch", "-D", "ffnbook_kernel_preload="))
    print_report(args, results, leaf_pages)
    shutil.rmtree(work, ignore_errors=True)


def print_report(args: argparse.Namespace, results: dict[str, list[float]], leaf_pages: set[str]) -> None:
    """Medians of every measured build, with the targets the issue set."""
    med = {k: statistics.median(v) for k, v in results.items()}

    def row(label, key, target=""):
        runs = ", ".join(f"{v:.1f}" for v in results[key])
        cpu = f"   cpu {med[key + '_cpu']:5.1f} s" if key + "_cpu" in med else ""
        print(f"{label:<48} {med[key]:7.1f} s   (runs: {runs}){cpu} {target}")

    print(
        f"\nmedians over {args.repeats} runs, {len(notebook_pages())} notebook pages; "
        f"load after: {os.getloadavg()[0]:.1f}\n"
    )
    if not args.incremental_only:
        row("(a) clean make html (ours)", "a")
        if args.scratch_kernels:
            row("(a0) the same, kernels started from scratch", "a0")
        row("(b) clean build, myst-nb defaults", "b")
        row("(c) one process + build without execution", "c")
    row("no-op rebuild", "noop", "target <= 3 s")
    pages = ", ".join(sorted(leaf_pages)) or "none"
    print(f"leaf edit ({args.module}) executes {len(leaf_pages)} pages: {pages}")
    row("leaf edit", "leaf")
    if all(results["leaf_exec"]):  # a build that logs how long its execution took
        row("  of which executing those pages", "leaf_exec")
        overheads = [w - e for w, e in zip(results["leaf"], results["leaf_exec"])]
        print(
            f"{'  overhead (the rest)':<48} {statistics.median(overheads):7.1f} s   "
            f"(runs: {', '.join(f'{v:.1f}' for v in overheads)}) target <= 3 s"
        )
    row(f"page edit ({args.page})", "page")
    if not args.incremental_only:
        print(f"\na/b = {med['a'] / med['b']:.2f}   (target <= 0.5)")
        print(f"a/c = {med['a'] / med['c']:.2f}   (target <= 1.5)")
        print_training(training_throughput(args.training_steps))


if __name__ == "__main__":
    main()
