"""Audit the built site as a reader's phone gets it: Lighthouse (mobile) and axe-core.

    .venv/bin/python tools/audit.py [HTML_DIR]      # default: _build/html

`make audit` builds first, then runs this. It serves HTML_DIR on localhost the
way a static host does (gzip for text), runs Lighthouse's mobile preset with
Debian's Chromium (``RUNS`` times per page, the median run reported) on the
audited pages (``LIGHTHOUSE_PAGES``) and axe-core on more pages (``AXE_PAGES``),
and prints the scores, the bytes transferred on
first view, and every axe violation. Exits non-zero when a target is missed:
performance >= 95, accessibility/best practices/SEO = 100, first view
<= 300 KiB, no axe violation, no request to another host.

The same checks of offline loading, console errors, axe-core and byte-identical
rebuilds run in `make test` (tests/test_site_quality.py); the pages allowed to
differ between two builds are listed once, in tests/sitecheck.py
(PAGES_WITH_MEASURED_TIMES).

Needs `npm ci` (lighthouse and axe-core in node_modules/; no browser is ever
downloaded) and Chromium (CHROME_PATH, default /usr/bin/chromium).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from sitecheck import (  # noqa: E402
    AXE_PAGES,
    CHROMIUM,
    CHROMIUM_ARGS,
    LIGHTHOUSE_PAGES,
    axe_violations,
    serve,
)

LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
MAX_FIRST_VIEW_KIB = 300
# Lighthouse's performance score varies from run to run on the same page (on this 2-core
# machine, idle, the landing page scored 78 to 98); its authors advise the median of
# several runs. Each page is measured this many times and the median run is reported.
RUNS = 3


def lighthouse(url: str, out: Path) -> dict:
    env = dict(os.environ, CHROME_PATH=os.environ.get("CHROME_PATH", CHROMIUM))
    flags = " ".join(["--headless=new", *CHROMIUM_ARGS])
    cmd = [
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={out}",
        f"--chrome-flags={flags}",
        "--only-categories=performance,accessibility,best-practices,seo",
    ]
    subprocess.run(cmd, env=env, check=True, timeout=600)
    return json.loads(out.read_text())


def summarize(report: dict) -> dict:
    audits = report["audits"]
    items = audits["network-requests"]["details"]["items"]
    return {
        "scores": {k: round(100 * (report["categories"][k]["score"] or 0)) for k in TARGETS},
        "kib": audits["total-byte-weight"]["numericValue"] / 1024,
        "requests": len(items),
        "foreign": [i["url"] for i in items if not i["url"].startswith(("http://127.0.0.1", "data:"))],
        "metrics": {
            k: audits[k]["displayValue"]
            for k in (
                "first-contentful-paint",
                "largest-contentful-paint",
                "total-blocking-time",
                "cumulative-layout-shift",
                "speed-index",
            )
        },
        "heaviest": sorted(
            ((i["transferSize"], i["url"].rsplit("/", 1)[-1].split("?")[0]) for i in items), reverse=True
        )[:6],
        "failed": sorted(
            f"{cat}: {a}"
            for cat in ("accessibility", "best-practices", "seo")
            for a in (r["id"] for r in report["categories"][cat]["auditRefs"] if r["weight"])
            if audits[a]["score"] is not None and audits[a]["score"] < 1
        ),
    }


# MathJax 3.2.2 (npm "mathjax"), the local alternative to build-time MathML, measured once:
# es5/tex-chtml.js is 1,160,989 bytes raw, 262,133 gzipped, before its web fonts.
MATHJAX_GZIP_BYTES = 262_133


def mathml_cost(page: Path) -> tuple[int, int]:
    """(formulas, gzip bytes their MathML adds to the page) for a built page."""
    import gzip
    import re

    text = page.read_text(encoding="utf-8")
    maths = re.findall(r"<math\b.*?</math>", text, flags=re.S)
    without = re.sub(r"<math\b.*?</math>", "<math></math>", text, flags=re.S)
    size = len(gzip.compress(text.encode(), 9)) - len(gzip.compress(without.encode(), 9))
    return len(maths), size


def main() -> int:
    site = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "_build" / "html").resolve()
    problems = []
    if not LIGHTHOUSE.exists():
        print("audit needs Lighthouse: run `npm ci` in the repository (no browser is downloaded)")
        return 2
    if not Path(os.environ.get("CHROME_PATH", CHROMIUM)).exists():
        print(f"audit needs Chromium at {CHROMIUM} (apt-get install -y chromium) or CHROME_PATH")
        return 2
    with serve(site) as base, tempfile.TemporaryDirectory() as tmp:
        print(f"Serving {site} gzip-compressed at {base}\n")
        print(f"{'page':32} {'perf':>5} {'a11y':>5} {'bp':>5} {'seo':>5} {'KiB':>7} {'req':>4}")
        for page in LIGHTHOUSE_PAGES:
            runs = sorted(
                (summarize(lighthouse(base + page, Path(tmp) / "lh.json")) for _ in range(RUNS)),
                key=lambda run: run["scores"]["performance"],
            )
            s = runs[len(runs) // 2]
            sc = s["scores"]
            print(
                f"{page:32} {sc['performance']:>5} {sc['accessibility']:>5} "
                f"{sc['best-practices']:>5} {sc['seo']:>5} {s['kib']:>7.1f} {s['requests']:>4}"
            )
            print(
                f"    performance of the {RUNS} runs: "
                + ", ".join(str(run["scores"]["performance"]) for run in runs)
                + " (median shown)"
            )
            print("    " + ", ".join(f"{k.replace('-', ' ')} {v}" for k, v in s["metrics"].items()))
            print("    heaviest (KiB): " + ", ".join(f"{name} {size / 1024:.1f}" for size, name in s["heaviest"]))
            formulas, size = mathml_cost(site / page)
            print(
                f"    math: {formulas} formulas as MathML, {size / 1024:.1f} KiB gzipped "
                f"(MathJax's script alone: {MATHJAX_GZIP_BYTES / 1024:.0f} KiB)"
            )
            for audit in s["failed"]:
                print(f"    failed {audit}")
            problems += [f"{page}: {k} {sc[k]} < {t}" for k, t in TARGETS.items() if sc[k] < t]
            if s["kib"] > MAX_FIRST_VIEW_KIB:
                problems.append(f"{page}: first view {s['kib']:.0f} KiB > {MAX_FIRST_VIEW_KIB} KiB")
            if s["foreign"]:
                problems.append(f"{page}: requests to other hosts: {s['foreign'][:3]}")
        print("\naxe-core (light and dark theme):")
        for page in AXE_PAGES:
            found = axe_violations(base + page)
            print(f"  {page:40} {len(found)} violations")
            for v in found:
                print(f"      {v}")
            if found:
                problems.append(f"{page}: {len(found)} axe-core violations")
    print()
    if problems:
        print("AUDIT: targets missed:\n  " + "\n  ".join(problems))
        return 1
    print("AUDIT: every target met.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
