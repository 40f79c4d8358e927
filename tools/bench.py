"""`make bench`: how fast the book builds, against myst-nb's defaults and the one-process limit.

Runs each measurement several times on the real pages and prints medians:

(a) ours       a clean `make html` (nothing cached: every page executes);
(b) defaults   a clean build with myst-nb's default settings: every page executed
               (``nb_execution_mode = "auto"``), one process, no cache;
(c) limit      every page's code run one after another in ONE Python process
               (no kernel start-ups), plus a Sphinx build with execution off;
then, on top of a finished build of (a):
    no-op      `make html` again, nothing changed;
    leaf edit  a comment appended to one leaf module of ffnbook (``--module``); the pages
               that imported it execute again. Its cost is split into the execution of
               those pages (the build's own "executed ... in T s", kernel start included)
               and everything else (the overhead);
    page edit  a comment added to the first code cell of one page (``--page``).

then, once per run of this script:
    training   the trained-FFN page's training (its ten models, trained together as one
               batched model) for a fixed number of steps in one thread, against a lower
               bound: the FLOPs of the matrix products training needs (6 x parameters x
               tokens, less what is not computed: the last block works at the query only,
               the controls have no FFN) at this machine's single-core matrix product peak,
               measured by a microbenchmark in the same process.

Targets (issue 14): a/b <= 0.5, a/c <= 1.5, no-op <= 3 s, leaf-edit overhead <= 3 s.
``--scratch-kernels`` also times (a) with every kernel started from scratch (no kernel
template), to show what the template saves.

Timings are wall clock on this machine; medians and ratios are what to compare, since
single runs are noisy (and the machine may be shared: see ``uptime`` before and after).
"""

from __future__ import annotations

import argparse
import os
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


def run(cmd, check=True) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    output = result.stdout + result.stderr
    if check and result.returncode != 0:
        sys.exit(f"command failed: {' '.join(map(str, cmd))}\n{output[-6000:]}")
    return elapsed, output


def make_html(build: Path, *options: str) -> tuple[float, str]:
    extra = [f"SPHINXOPTS={' '.join(options)}"] if options else []
    return run(["make", "--no-print-directory", "html", f"BUILDDIR={build}", "SETUP=", f"PY={PY}", *extra])


def clean(build: Path, *options: str) -> float:
    shutil.rmtree(build, ignore_errors=True)
    return make_html(build, *options)[0]


def defaults_clean(work: Path) -> float:
    out = work / "defaults"
    shutil.rmtree(out, ignore_errors=True)
    return run(
        SPHINX
        + ["-E", "-j", "1", "-D", "nb_execution_mode=auto", "-d", str(out / "doctrees"), "docs", str(out / "html")]
    )[0]


def notebook_pages() -> list[Path]:
    """Pages that are notebooks: they start with a jupytext header naming the MyST format."""
    return sorted(
        p
        for p in (ROOT / "docs").glob("*.md")
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
    seconds = run([PY, str(runner), *map(str, notebook_pages())])[0]
    out = work / "noexec"
    shutil.rmtree(out, ignore_errors=True)
    # Without execution, glue keys are missing: warnings are expected, so no -W here.
    seconds += run(
        SPHINX
        + ["-E", "-j", "auto", "-D", "nb_execution_mode=off", "-d", str(out / "doctrees"), "docs", str(out / "html")],
        check=False,
    )[0]
    return seconds


def executed_pages(output: str) -> list[str]:
    """Pages a build executed, from its log (this book's extension, or myst-nb's own message)."""
    ours = re.findall(r"^ffnbook: executing (\S+) \(", output, flags=re.M)
    return ours or [Path(p).name for p in re.findall(r"(\S+)\.md: Executing notebook", output)]


def execution_seconds(output: str) -> float | None:
    found = re.search(r"^ffnbook: executed \d+ notebook pages in ([\d.]+) s", output, flags=re.M)
    return float(found.group(1)) if found else None


def edited_build(build: Path, path: Path, old: str, new: str) -> tuple[float, str]:
    """Rebuild after replacing ``old`` with ``new`` once in ``path``; then put it back and rebuild."""
    original = path.read_text()
    if old not in original:
        sys.exit(f"{path}: {old!r} not found")
    try:
        path.write_text(original.replace(old, new, 1))
        return make_html(build)
    finally:
        path.write_text(original)
        make_html(build)  # back to the cached state of the unedited book


TRAINING_BENCH = r"""
import json, statistics, sys, time
import torch
from ffnbook import facts
from ffnbook import tiny_transformer as tt

steps = int(sys.argv[1])
torch.set_num_threads(1)
# Peak: the best of several large single-thread float32 matrix products.
a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
a @ b
rates = []
for _ in range(5):
    start = time.perf_counter()
    for _ in range(4):
        a @ b
    rates.append(4 * 2 * 1024 ** 3 / (time.perf_counter() - start))
peak = max(rates)
# The page's training: five seeds with FFNs and five controls without, one batched model.
worlds = [facts.make_world(16, 16, 32, n_filler=16, seed=s) for s in range(5)]
splits = [facts.split_facts(w, 32, seed=s) for s, w in enumerate(worlds)]
replicas = [tt.Replica(w, sp.train, s, sp.held_out) for s, (w, sp) in enumerate(zip(worlds, splits))]
replicas += [r._replace(d_ff=0) for r in replicas]
model = tt.ModelConfig(vocab_size=worlds[0].vocab_size, seq_len=6, d_model=32, n_heads=4, d_ff=128, n_blocks=2)
train = tt.TrainConfig(steps=steps, batch_size=64, learning_rate=7e-3, eval_every=steps)
start, cpu = time.perf_counter(), time.process_time()
tt.train_replicas(replicas, model, train)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
flops = tt.training_flops(model, train, len(replicas))


def multiply_adds(ffn):  # one prompt's matrix products in the forward pass; the last block computes → alone
    d, f, T, V, L = model.d_model, model.d_ff if ffn else 0, model.seq_len, model.vocab_size, model.n_blocks
    early = (L - 1) * T * (4 * d * d + 2 * T * d + 2 * d * f)  # projections, scores and mixing, FFN
    last = 3 * T * d * d + d * d + 2 * T * d + 2 * d * f  # queries, keys and values of all (one product), the rest at →
    return early + last + V * d  # and the unembedding at →


with_ffn = sum(r.d_ff is None for r in replicas)
per_step = with_ffn * multiply_adds(True) + (len(replicas) - with_ffn) * multiply_adds(False)
needed = 6 * steps * train.batch_size * per_step
print(json.dumps({"peak": peak, "seconds": seconds, "cpu": cpu, "flops": flops, "needed": needed,
                  "replicas": len(replicas), "steps": steps}))
"""


def training_throughput(steps: int) -> dict:
    """The page's training for ``steps`` steps in a fresh one-thread process, with the peak it is held to."""
    import json

    seconds, output = run([PY, "-c", TRAINING_BENCH, str(steps)])
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


def main() -> None:
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
    args = parser.parse_args()
    if args.training_only:
        print_training(training_throughput(args.training_steps))
        return
    work = Path(tempfile.mkdtemp(prefix="ffnbook-bench-"))
    ours = work / "ours"
    keys = ("a", "b", "c", "noop", "leaf", "leaf_exec", "page") + (("a0",) if args.scratch_kernels else ())
    results: dict[str, list[float]] = {k: [] for k in keys}
    leaf_pages: set[str] = set()
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average, {os.cpu_count()} CPUs)", flush=True)
    for i in range(args.repeats):
        print(f"run {i + 1}/{args.repeats} ...", flush=True)
        results["a"].append(clean(ours))
        results["noop"].append(make_html(ours)[0])
        seconds, output = edited_build(ours, ROOT / args.module, "", "# bench edit\n")  # prepended
        leaf_pages.update(executed_pages(output))
        results["leaf"].append(seconds)
        results["leaf_exec"].append(execution_seconds(output) or 0.0)
        cell = "```{code-cell} ipython3\n"
        results["page"].append(edited_build(ours, ROOT / "docs" / f"{args.page}.md", cell, cell + "# bench edit\n")[0])
        results["b"].append(defaults_clean(work))
        results["c"].append(one_process_limit(work))
        if args.scratch_kernels:
            results["a0"].append(clean(work / "scratch", "-D", "ffnbook_kernel_preload="))
    med = {k: statistics.median(v) for k, v in results.items()}

    def row(label, key, target=""):
        runs = ", ".join(f"{v:.1f}" for v in results[key])
        print(f"{label:<48} {med[key]:7.1f} s   (runs: {runs}) {target}")

    print(
        f"\nmedians over {args.repeats} runs, {len(notebook_pages())} notebook pages; "
        f"load after: {os.getloadavg()[0]:.1f}\n"
    )
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
    print(f"\na/b = {med['a'] / med['b']:.2f}   (target <= 0.5)")
    print(f"a/c = {med['a'] / med['c']:.2f}   (target <= 1.5)")
    print_training(training_throughput(args.training_steps))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
