"""A reader's routes to running a page, tried here as far as this machine allows.

* **Local pip**: the ffnbook wheel holds only the package and its data; in a fresh
  virtual environment with that wheel, its runtime libraries and ipykernel (no
  myst-nb, no Sphinx, the repository not on ``sys.path``), every notebook the
  site's download links point to runs top to bottom with nbclient. Pages that do
  not ask for torch run without it installed; the others after
  ``pip install torch==2.13.0`` (the CPU wheel on this machine's disk).
* **Setup cell**: with everything installed it installs nothing; without torch it
  asks pip for the tested torch from PyTorch's CPU index, on exactly the pages that
  need it.
* **Colab and Binder**: every launch address names a notebook of the published
  folder, on the branch the Pages workflow publishes; Binder's environment file
  resolves in a fresh virtual environment.

Not testable without the public repository: pip installing ffnbook from GitHub,
PyTorch's CPU index itself, and Colab and Binder opening the addresses.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sitecheck import ROOT, soup_of

pytestmark = pytest.mark.build

TORCH = "torch==2.13.0"
# What a reader's environment must never need: the book's build and test tools.
BUILD_AND_TEST_TOOLS = {
    "myst-nb",
    "myst-parser",
    "sphinx",
    "jupyter-cache",
    "pytest",
    "playwright",
    "sphinx-book-theme",
    "jupytext",
    "sphinxcontrib-bibtex",
}


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def fresh_venv(path: Path) -> Path:
    run(sys.executable, "-m", "venv", path)
    return path / "bin" / "python"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from the package's files alone (as from a clone of the repository)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "ffnbook", src / "ffnbook", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, src)
    [built] = dist.glob("ffnbook-*.whl")
    return built


def test_the_wheel_holds_the_package_and_its_data_and_torch_is_optional(wheel):
    with zipfile.ZipFile(wheel) as archive:
        files = archive.namelist()
        metadata = archive.read(next(f for f in files if f.endswith(".dist-info/METADATA"))).decode()
    assert all(f.startswith(("ffnbook/", "ffnbook-")) for f in files), files
    assert "ffnbook/data/models.csv" in files and "ffnbook/__init__.py" in files
    requires = re.findall(r"^Requires-Dist: (.+)$", metadata, re.M)
    names = {re.split(r"[<>=; \[]", r)[0].lower() for r in requires if "extra ==" not in r}
    assert names == {"numpy", "scipy", "matplotlib"}
    assert any(r.startswith(TORCH) and 'extra == "torch"' in r for r in requires), requires


@pytest.fixture(scope="module")
def reader_python(wheel, tmp_path_factory) -> Path:
    """A fresh environment with the wheel, its runtime libraries (tested versions) and ipykernel."""
    python = fresh_venv(tmp_path_factory.mktemp("reader") / "venv")
    run(python, "-m", "pip", "install", "--quiet", "-c", ROOT / "requirements.txt", wheel, "ipykernel")
    return python


def in_reader_env(python: Path, code: str, *args) -> str:
    """Run ``code`` with the reader's Python, from a folder outside the repository."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return run(python, "-c", code, *args, cwd=python.parents[2], env=env).stdout


SETUP_PROBE = """
import json, subprocess, sys
asked = []
# Record what would run, install nothing: pip of this very interpreter, and its arguments.
subprocess.check_call = lambda args, **kwargs: asked.append([args[0] == sys.executable, *args[1:]])
exec(open(sys.argv[1]).read())
print(json.dumps(asked))
"""


def setup_output(python: Path, notebook: dict, tmp: Path) -> tuple[list, str]:
    """What the notebook's setup cell would ask pip to install in this environment, and what
    it prints for the reader."""
    setup = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    (tmp / "setup.py").write_text(setup["source"])
    *printed, asked = in_reader_env(python, SETUP_PROBE, tmp / "setup.py").splitlines()
    return json.loads(asked), "\n".join(printed)


def setup_asks(python: Path, notebook: dict, tmp: Path) -> list:
    return setup_output(python, notebook, tmp)[0]


def downloaded_notebooks(site: Path) -> dict[str, dict]:
    """Every page's notebook, found as a reader finds it: by the page's download link."""
    found = {}
    for executed in sorted((site.parent / "jupyter_execute").glob("*.ipynb")):
        page = executed.stem
        [href] = {
            a["href"]
            for a in soup_of(site, page).find_all("a", href=True)
            if a["href"].endswith(".ipynb") and "://" not in a["href"]
        }
        found[page] = json.loads((site / href).read_text(encoding="utf-8"))
    return found


def execute(notebook: dict, python: Path, workdir: Path, monkeypatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    kernels = workdir / "jupyter" / "kernels" / "reader"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "reader",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(workdir / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    nb = nbformat.reads(json.dumps(notebook), as_version=4)
    NotebookClient(nb, kernel_name="reader", timeout=900, resources={"metadata": {"path": str(workdir)}}).execute()


@pytest.mark.full  # every page's notebook run again, in a fresh venv: minutes (make test-full)
def test_every_downloaded_notebook_runs_outside_the_repository(site, reader_python, tmp_path, monkeypatch):
    # The reader's environment has the package from the wheel, and no build tools.
    where = in_reader_env(reader_python, "import ffnbook; print(ffnbook.__file__)")
    assert "site-packages" in where and str(ROOT) not in where
    for module in ("myst_nb", "sphinx", "torch"):
        assert (
            in_reader_env(reader_python, f"import importlib.util as u; print(u.find_spec('{module}'))").strip()
            == "None"
        ), module

    notebooks = downloaded_notebooks(site)
    assert len(notebooks) >= 10
    needs_torch = {page for page, nb in notebooks.items() if nb["metadata"]["ffnbook"]["needs_torch"]}
    for page, notebook in notebooks.items():  # without torch: only torch pages ask for it
        asked, printed = setup_output(reader_python, notebook, tmp_path)
        # ffnbook came from a wheel, not from the commit the page was built from: the cell says so.
        assert notebook["metadata"]["ffnbook"]["commit"][:12] in printed, f"{page}: {printed!r}"
        expected = (
            [[True, "-m", "pip", "install", "-q", TORCH, "--index-url", "https://download.pytorch.org/whl/cpu"]]
            if page in needs_torch
            else []
        )
        assert asked == expected, f"{page}: the setup cell asks pip for {asked}"
    for page in sorted(set(notebooks) - needs_torch):
        execute(notebooks[page], reader_python, tmp_path / page, monkeypatch)

    run(reader_python, "-m", "pip", "install", "--quiet", "-c", ROOT / "requirements.txt", TORCH)
    for page in sorted(needs_torch):
        assert setup_asks(reader_python, notebooks[page], tmp_path) == [], page  # nothing left to do
        execute(notebooks[page], reader_python, tmp_path / page, monkeypatch)


# --- Colab and Binder ---------------------------------------------------------------------------

COLAB = re.compile(r"^https://colab\.research\.google\.com/github/([^/]+/[^/]+)/blob/([^/]+)/(.+\.ipynb)$")
BINDER = re.compile(r"^https://mybinder\.org/v2/gh/([^/]+/[^/]+)/([^?/]+)\?urlpath=lab/tree/(.+\.ipynb)$")


def test_launch_buttons_open_notebooks_the_published_branch_holds(site):
    conf = (ROOT / "conf.py").read_text()
    # The repository the build names: conf.py's default, unless the environment sets another.
    default = re.search(r'REPOSITORY_URL = .*"(https://github\.com/[^"]+)"', conf).group(1)
    repo = (os.environ.get("FFNBOOK_REPOSITORY_URL") or default).removeprefix("https://github.com/")
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    branches = set()
    pages = sorted(p.stem for p in (site.parent / "jupyter_execute").glob("*.ipynb"))
    for page in pages:
        links = [a["href"] for a in soup_of(site, page).select(".dropdown-launch-buttons a[href]")]
        for pattern in (COLAB, BINDER):
            matches = [m for m in map(pattern.match, links) if m]
            assert len(matches) == 1, f"{page}: {links}"
            match = matches[0]
            assert match.group(1) == repo
            branches.add(match.group(2))
            assert (site / "notebooks" / match.group(3)).is_file(), f"{page}: {match.group(0)}"
            assert match.group(3) == f"{page}.ipynb"
    # The notebooks as built from this very commit: the tag the Pages workflow pushes for it.
    assert branches == {f"notebooks-{built_commit()}"}
    assert "_build/html/notebooks" in workflow and "NOTEBOOKS_BRANCH: notebooks" in workflow
    assert '"HEAD:refs/tags/$NOTEBOOKS_BRANCH-$GITHUB_SHA"' in workflow
    assert (site / "notebooks" / "binder" / "requirements.txt").is_file()


def built_commit() -> str:
    """The commit of the checkout the site was built from, asked of git here."""
    return run("git", "-C", ROOT, "rev-parse", "HEAD").stdout.strip()


def test_every_notebook_installs_the_commit_the_site_was_built_from(site):
    commit = built_commit()
    spec = re.compile(r"ffnbook @ git\+https://github\.com/[^/@\s]+/[^/@\s]+@([0-9a-f]+)")
    notebooks = downloaded_notebooks(site)
    assert notebooks
    for page, notebook in notebooks.items():
        setup = next(c for c in notebook["cells"] if c["cell_type"] == "code")["source"]
        assert spec.findall(setup) == [commit], page
        assert f'BUILT_FROM = "{commit}"' in setup, page
        assert notebook["metadata"]["ffnbook"]["commit"] == commit, page
    binder = (site / "notebooks" / "binder" / "requirements.txt").read_text()
    assert spec.findall(binder) == [commit]


def test_the_landing_page_offers_every_notebook_once_in_one_archive(site):
    links = {
        name: [a["href"] for a in soup_of(site, name).select("a.ffn-notebooks-archive")]
        for name in [p.stem for p in site.glob("*.html")]
    }
    assert {n: h for n, h in links.items() if h} == {"index": ["ffnbook-notebooks.zip"]}
    with zipfile.ZipFile(site / "ffnbook-notebooks.zip") as archive:
        names = set(archive.namelist())
        published = {p.relative_to(site / "notebooks").as_posix() for p in (site / "notebooks").rglob("*.ipynb")}
        assert names == {f"ffnbook-notebooks/{n}" for n in published} | {
            "ffnbook-notebooks/requirements.txt",
            "ffnbook-notebooks/README.md",
        }
        for name in published:
            assert archive.read(f"ffnbook-notebooks/{name}") == (site / "notebooks" / name).read_bytes()
        assert (
            archive.read("ffnbook-notebooks/requirements.txt")
            == (site / "notebooks" / "binder" / "requirements.txt").read_bytes()
        )


def test_binder_asks_for_this_python_ffnbook_from_github_and_cpu_torch(site):
    binder = site / "notebooks" / "binder"
    assert (binder / "runtime.txt").read_text().strip() == f"python-{sys.version_info[0]}.{sys.version_info[1]}"
    lines = (binder / "requirements.txt").read_text().splitlines()
    assert any(line.startswith("ffnbook @ git+https://github.com/") for line in lines)
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines


@pytest.mark.full  # a fresh venv and pip resolving against the package index: ~25 s (make test-full)
def test_binder_environment_resolves_in_a_fresh_venv(site, wheel, tmp_path):
    """Binder's own requirements resolve here, with two stand-ins for what only the internet has:
    the locally built wheel for ``ffnbook @ git+https://github.com/...`` and this machine's copy of
    the CPU torch wheel for PyTorch's index."""
    lines = (site / "notebooks" / "binder" / "requirements.txt").read_text().splitlines()
    local = [
        str(wheel) if line.startswith("ffnbook @ ") else line
        for line in lines
        if not line.startswith("--extra-index-url https://download.pytorch.org")
    ]
    (tmp_path / "requirements.txt").write_text("\n".join(local) + "\n")
    python = fresh_venv(tmp_path / "venv")
    run(
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--dry-run",
        "--ignore-installed",
        "--report",
        tmp_path / "report.json",
        "-r",
        tmp_path / "requirements.txt",
    )
    report = json.loads((tmp_path / "report.json").read_text())
    resolved = {i["metadata"]["name"].lower().replace("_", "-"): i["metadata"]["version"] for i in report["install"]}
    assert resolved["torch"] == "2.13.0+cpu" and "ffnbook" in resolved and "ipykernel" in resolved
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M))
    for name in ("numpy", "scipy", "matplotlib"):
        assert resolved[name] == pins[name], name
    assert not BUILD_AND_TEST_TOOLS & set(resolved), BUILD_AND_TEST_TOOLS & set(resolved)
