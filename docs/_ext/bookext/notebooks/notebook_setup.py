"""What a reader's notebook installs, and where it opens: all pinned to the commit the site was built from.

A notebook downloaded from a page must compute the page's numbers, so everything a
reader's copy installs or opens names the exact commit of this build (never a moving
branch such as ``main``):

* **The commit** (``ffnbook_package_ref``): ``FFNBOOK_PACKAGE_REF`` if set, else the
  checkout's ``git rev-parse HEAD`` (every build: local, CI, Read the Docs), else
  ``GITHUB_SHA`` or ``READTHEDOCS_GIT_COMMIT_HASH``; a build that can tell none fails,
  saying to set ``FFNBOOK_PACKAGE_REF``. It must be a full commit hash.
* **A working tree with uncommitted changes to the package** (``ffnbook/``,
  ``pyproject.toml``): the build goes on (an author builds uncommitted work all the
  time) and pins ``HEAD``, which does not hold those changes; it says so in one log line,
  and each notebook's metadata records ``"uncommitted_changes": true``. Published builds
  come from clean checkouts.
* **The setup cell** (each notebook's first code cell) installs
  ``ffnbook @ git+<repository>@<commit>`` where ffnbook is missing, and the CPU build of
  the tested torch where the page needs it. Where an ffnbook is installed already it
  installs nothing, and says when that ffnbook is not the pinned commit (pip records the
  commit of a git install in ``direct_url.json``).
* **Binder's environment** (``notebooks/binder/``) pins the same package spec.
* **Colab and Binder** open the page's notebook from the tag ``notebooks-<commit>``,
  which the Pages workflow pushes beside the ``notebooks`` branch (the latest build).
* **All the notebooks at once**: ``ffnbook-notebooks.zip`` at the site's root, with
  every reader notebook, the environment's ``requirements.txt`` and a README, linked
  once, from the landing page (the ``{notebooks-archive}`` role). Its bytes depend only
  on its contents (fixed dates and order), so two builds of one commit make the same file.
"""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

from bookext.builds.pagestate import code_version, digest, read_record, write_record

logger = logging.getLogger(__name__)

NOTEBOOKS = "notebooks"  # folder of the html output, and root of the published branch
ARCHIVE = "ffnbook-notebooks.zip"
#: What the archive was made from, in the build's state folder (beside the doctrees).
ARCHIVE_RECORD = "ffnbook-notebook-archive.json"
#: The one PyTorch the book is tested with, and where its CPU build is downloaded from.
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
RUNTIME_PACKAGES = ("numpy", "scipy", "matplotlib")  # pinned in the Binder file as tested
#: What counts as the package when asking whether a working tree differs from its commit.
PACKAGE_FILES = ("ffnbook", "pyproject.toml")
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def reader_notebook_uri(pagename: str) -> str:
    """Where the reader notebook of ``pagename`` is written, relative to the html root."""
    return f"{NOTEBOOKS}/{pagename}.ipynb"


# --- which commit ------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def built_commit(root: Path) -> str:
    """The commit this build is made from ("" when nothing tells)."""
    head = _git(root, "rev-parse", "--verify", "HEAD")
    for found in (
        os.environ.get("FFNBOOK_PACKAGE_REF"),
        head and head.strip(),
        os.environ.get("GITHUB_SHA"),
        os.environ.get("READTHEDOCS_GIT_COMMIT_HASH"),
    ):
        if found:
            return found.strip()
    return ""


def uncommitted_package_files(root: Path) -> list[str]:
    """Package files of the working tree that differ from its commit (none outside a checkout)."""
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *PACKAGE_FILES) or ""
    return sorted(line[3:] for line in status.splitlines() if line[3:] and "__pycache__" not in line)


def check_commit(app: Sphinx, config) -> None:
    commit = config.ffnbook_package_ref
    if not commit:
        raise ConfigError(
            "reader notebooks: cannot tell which commit this build is made from (no git checkout "
            f"at {app.confdir}, no GITHUB_SHA or READTHEDOCS_GIT_COMMIT_HASH); set FFNBOOK_PACKAGE_REF "
            "to the full hash of the commit the notebooks should install"
        )
    if not COMMIT.fullmatch(commit):
        raise ConfigError(
            f"reader notebooks: ffnbook_package_ref (FFNBOOK_PACKAGE_REF) must be a full commit hash, got {commit!r}"
        )
    app.ffnbook_uncommitted = uncommitted_package_files(Path(app.confdir))
    if app.ffnbook_uncommitted:
        logger.info(
            "ffnbook: the reader notebooks install ffnbook at %s, which does not hold the "
            "uncommitted changes to %s: a notebook may compute other numbers than this build",
            commit[:12],
            ", ".join(app.ffnbook_uncommitted),
        )


# --- what a notebook installs ---------------------------------------------------------------------


def repository_url(app: Sphinx) -> str:
    url = app.config.html_theme_options.get("repository_url", "")
    if not url.startswith("https://github.com/"):
        raise ValueError(f"launch buttons need a GitHub repository_url, got {url!r}")
    return url.rstrip("/")


def package_spec(app: Sphinx) -> str:
    """``ffnbook @ git+https://github.com/<org>/<repo>@<commit>``: what a reader's pip installs."""
    return f"ffnbook @ git+{repository_url(app)}@{app.config.ffnbook_package_ref}"


def pins(root: Path) -> dict[str, str]:
    """The exact pins of ``requirements.txt``: normalised name -> version."""
    found = {}
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line)
        if m:
            found[m.group(1).lower().replace("_", "-")] = m.group(2)
    return found


def torch_pin(root: Path) -> str:
    """The tested ``torch==X`` line of requirements.txt."""
    found = pins(root)
    if "torch" not in found:
        raise ValueError("requirements.txt pins no torch")
    return f"torch=={found['torch']}"


def setup_cell_source(spec: str, commit: str, torch: str | None) -> str:
    """The first code cell: install what is missing; say when the installed ffnbook is another."""
    lines = [
        "# Setup: installs what this notebook needs where it is missing (Colab, a fresh",
        "# Jupyter). Where everything is installed (Binder, a local install) it installs nothing.",
        "import importlib.metadata",
        "import importlib.util",
        "import json",
        "import subprocess",
        "import sys",
        "",
        f'FFNBOOK = "{spec}"',
        f'BUILT_FROM = "{commit}"  # the commit the site was built from',
        "",
        'if importlib.util.find_spec("ffnbook") is None:',
        '    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", FFNBOOK])',
        "else:  # pip records the commit of an ffnbook it installed from git",
        "    try:",
        '        origin = json.loads(importlib.metadata.distribution("ffnbook").read_text("direct_url.json") or "{}")',
        "    except importlib.metadata.PackageNotFoundError:",
        "        origin = {}",
        '    if origin.get("vcs_info", {}).get("commit_id") != BUILT_FROM:',
        "        print(f\"Note: the ffnbook installed here ({origin.get('url', 'not installed by pip')}) is not \"",
        '              f"the commit {BUILT_FROM[:12]} the site was built from; its numbers may differ from "',
        "              f\"the page's. To reproduce them: pip install '{FFNBOOK}'\")",
    ]
    if torch:
        lines += [
            'if importlib.util.find_spec("torch") is None:  # the CPU build, not multi-GB CUDA',
            f'    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "{torch}",',
            f'                           "--index-url", "{TORCH_INDEX}"])',
        ]
    return "\n".join(lines)


def setup_cell(app: Sphinx, torch: bool) -> str:
    return setup_cell_source(
        package_spec(app), app.config.ffnbook_package_ref, torch_pin(Path(app.confdir)) if torch else None
    )


def environment_requirements(app: Sphinx) -> str:
    """The notebooks' requirements.txt (Binder's, and the archive's): the package at the
    built commit, its runtime libraries as tested, CPU torch."""
    found = pins(Path(app.confdir))
    lines = [
        "# The environment of these notebooks (written by the book's build): the ffnbook",
        "# package at the commit the site was built from, the libraries it runs on at the",
        "# tested versions, and the CPU build of PyTorch. No test or documentation tools.",
        f"--extra-index-url {TORCH_INDEX}",
        package_spec(app),
        *(f"{name}=={found[name]}" for name in RUNTIME_PACKAGES if name in found),
        f"{torch_pin(Path(app.confdir))}+cpu",
        f"ipykernel=={found['ipykernel']}" if "ipykernel" in found else "ipykernel",
    ]
    return "\n".join(lines) + "\n"


def notebook_metadata(app: Sphinx) -> dict:
    """What each notebook records about the build it came from."""
    metadata = {"commit": app.config.ffnbook_package_ref}
    if getattr(app, "ffnbook_uncommitted", None):
        metadata["uncommitted_changes"] = True
    return metadata


# --- where Colab and Binder open it -------------------------------------------------------------


def notebooks_ref(app: Sphinx) -> str:
    """The tag the Pages workflow publishes this build's notebooks under."""
    return f"{app.config.ffnbook_notebooks_branch}-{app.config.ffnbook_package_ref}"


def launch_urls(app: Sphinx, pagename: str) -> dict[str, str]:
    """Colab and Binder addresses that open this page's notebook, as built from this commit."""
    repo = repository_url(app).removeprefix("https://github.com/")
    options = app.config.html_theme_options.get("launch_buttons", {})
    ref = notebooks_ref(app)
    path = f"{pagename}.ipynb"
    ui = {"classic": "tree", "jupyterlab": "lab/tree"}[options.get("notebook_interface", "classic")]
    urls = {}
    if options.get("binderhub_url"):
        urls["Binder"] = f"{options['binderhub_url'].rstrip('/')}/v2/gh/{repo}/{ref}?urlpath={ui}/{path}"
    if options.get("colab_url"):
        urls["Colab"] = f"{options['colab_url'].rstrip('/')}/github/{repo}/blob/{ref}/{path}"
    return urls


# --- the published folder and the archive --------------------------------------------------------


def readme(app: Sphinx) -> str:
    commit = app.config.ffnbook_package_ref
    return (
        f"# Notebooks of {app.config.html_title}\n\n"
        f"One runnable notebook per page of {app.config.ffnbook_site_url}, written by the book's\n"
        f"build from {repository_url(app)} at commit {commit}\n"
        "(do not edit them: every build replaces them). Open one on Binder or Colab from the\n"
        "page's launch button, or run it anywhere: its first cell installs what is missing,\n"
        "ffnbook at that commit included. `requirements.txt` (`binder/requirements.txt` on the\n"
        "notebooks branch) is their whole environment: `pip install -r requirements.txt`.\n"
    )


def write_environment(app: Sphinx, exception) -> None:
    """The published notebooks' own environment (binder/), a README, and the archive of all."""
    if exception is not None or app.builder.format != "html":
        return
    folder = Path(app.outdir) / NOTEBOOKS
    (folder / "binder").mkdir(parents=True, exist_ok=True)
    requirements = environment_requirements(app)
    (folder / "binder" / "requirements.txt").write_text(requirements, encoding="utf-8")
    python = app.config.ffnbook_binder_python
    (folder / "binder" / "runtime.txt").write_text(f"python-{python}\n", encoding="utf-8")
    (folder / "README.md").write_text(readme(app), encoding="utf-8")
    notebooks = sorted(folder.glob("**/*.ipynb"))
    files = {
        **{f"ffnbook-notebooks/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in notebooks},
        "ffnbook-notebooks/requirements.txt": requirements.encode(),
        "ffnbook-notebooks/README.md": readme(app).encode(),
    }
    # Compressing is most of this step (34 ms for 1.7 MB of notebooks): done only when a file
    # changed. The archive's bytes depend only on its files, so an unchanged one is kept.
    archive, record = Path(app.outdir) / ARCHIVE, Path(app.doctreedir) / ARCHIVE_RECORD
    version, made_from = code_version(__file__), archive_digest(files)
    if not archive.is_file() or read_record(record, version).get(ARCHIVE) != made_from:
        write_archive(archive, files)
        write_record(record, version, {ARCHIVE: made_from})


def archive_digest(files: dict[str, bytes]) -> str:
    """What the archive of ``files`` is made from: each name and its bytes, in name order."""
    return digest(*(part for name in sorted(files) for part in (name.encode(), files[name])))


def write_archive(path: Path, files: dict[str, bytes]) -> None:
    """A zip whose bytes depend only on ``files``: sorted names, fixed dates and modes."""
    temporary = path.with_name(f".{path.name}.writing")
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    os.replace(temporary, path)


def notebooks_archive_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{notebooks-archive}`Download all notebooks```: a link to the archive, on the site only."""
    env = inliner.document.settings.env
    if not env.ffnbook_site_build:  # the one-page build the PDF is printed from has no archive
        return [], []
    depth = env.docname.count("/")
    return [nodes.reference(rawtext, text, refuri="../" * depth + ARCHIVE, classes=["ffn-notebooks-archive"])], []


def note_the_build(app: Sphinx) -> None:
    """Whether this build makes the site, kept on the environment, which a role can see."""
    app.env.ffnbook_site_build = app.builder.name == "html"


def setup(app: Sphinx) -> dict:
    app.add_config_value("ffnbook_notebooks_branch", "notebooks", "html", types=[str])
    # The commit readers install ffnbook from, and whose notebooks the launch buttons open.
    app.add_config_value("ffnbook_package_ref", built_commit(Path(app.confdir or ".")), "html", types=[str])
    app.add_config_value("ffnbook_binder_python", "3.11", "html", types=[str])
    app.add_role("notebooks-archive", notebooks_archive_role)
    app.connect("builder-inited", note_the_build)
    app.connect("config-inited", check_commit)
    app.connect("build-finished", write_environment)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
