"""Count how ffnbook's public API treats bad input: refused clearly, garbage out, obscure failure, hang.

    .venv/bin/python tools/contract_survey.py [--only REGEX] [--json out.json] [--list VERDICT ...]

Feeds the fixed catalogue of bad, edge and equivalent values of every
parameter kind (``tests/contract.py``) to every public function, class and
method (declared in ``tests/contract_spec.py``) and prints the counts per
verdict. ``--list accepted obscure`` prints those calls one per line. The
unit test ``tests/test_contract.py`` asserts the same contract with
Hypothesis; this tool measures it.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

BAD = ("clear", "accepted", "unnamed", "obscure", "hang")
WORDS = {
    "clear": "refused clearly (TypeError/ValueError naming the parameter)",
    "accepted": "accepted: garbage out",
    "unnamed": "failed obscurely: TypeError/ValueError not naming the parameter",
    "obscure": "failed obscurely: another exception",
    "hang": "hung (no answer within the time limit)",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="regex on qualified names")
    parser.add_argument("--json", type=Path, help="write every probe here")
    parser.add_argument("--list", nargs="*", default=[], help="print the probes with these verdicts")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    from contract import survey

    import ffnbook

    start = time.perf_counter()
    probes, status = survey(
        ffnbook, only=args.only, progress=None if args.quiet else lambda q: print(f"  {q}", file=sys.stderr)
    )
    seconds = time.perf_counter() - start
    by_role = collections.defaultdict(collections.Counter)
    functions = collections.defaultdict(set)
    for p in probes:
        by_role[p.role][p.verdict] += 1
        functions[(p.role, p.verdict)].add(p.qualname)

    print(f"ffnbook at {ffnbook.__file__}")
    print(
        f"{len(status['checked'])} callables checked, {len(status['records'])} records (NamedTuples), "
        f"{len(status['spec errors'])} without a usable spec; {seconds:.0f} s"
    )
    bad = by_role["bad"]
    total = sum(bad.values())
    print(f"\nbad values: {total} calls")
    for verdict in BAD:
        n = bad[verdict]
        print(
            f"  {n:5d}  {100 * n / max(total, 1):5.1f} %  {WORDS[verdict]}"
            + (f"  [{len(functions[('bad', verdict)])} callables]" if n else "")
        )
    edge = by_role["edge"]
    print(f"\nedge values (may be refused or accepted): {sum(edge.values())} calls")
    for verdict, n in sorted(edge.items()):
        print(f"  {n:5d}  {verdict}")
    same = by_role["same"]
    print(f"\nequivalent values (must give the reference's result): {sum(same.values())} calls")
    for verdict, n in sorted(same.items()):
        print(f"  {n:5d}  {verdict}")
    for line in status["spec errors"]:
        print("SPEC:", line)
    for p in probes:
        if p.verdict in args.list:
            print(f"{p.verdict:9s} {p.role:5s} {p.qualname}({p.param}={p.label}): {p.detail}")
    if args.json:
        args.json.write_text(json.dumps({"status": status, "probes": [p.__dict__ for p in probes]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
