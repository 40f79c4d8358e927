"""One source for every fact and formula in ffnbook, checked on the source text.

Behavioural tests elsewhere check each formula's value; these check that a
formula or fact has not been written again somewhere else, which no value
test can see (a second copy agrees until someone edits the first). Each scan
is tried on a made-up snippet first, so a pass means something.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from ffnbook.models import load_models

PACKAGE = Path(__file__).resolve().parents[1] / "ffnbook"
MODULES = {p.stem: p for p in sorted(PACKAGE.glob("*.py"))}


def strings(tree: ast.AST):
    """(line, text, enclosing assignment target or None) of every string constant except docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    targets = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            name = target.id if isinstance(target, ast.Name) else None
            for inner in ast.walk(node.value) if node.value else ():
                targets[id(inner)] = name
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value, targets.get(id(node))


def parsed(name: str) -> ast.AST:
    return ast.parse(MODULES[name].read_text(encoding="utf-8"))


# --- model facts live in the sheet -------------------------------------------------------------

MODEL_NAMES = [m.name for m in load_models()]


def model_mentions(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants that name a model of the sheet, or start one's name ("PaLM", "GPT-2 "),
    outside the tuples that only choose which models a figure shows (names ending in _MODELS)."""
    found = []
    for line, text, target in strings(tree):
        stem = text.strip()
        if len(stem) >= 4 and any(name.startswith(stem) for name in MODEL_NAMES):
            if not (target or "").endswith("_MODELS"):
                found.append((line, text))
    return found


def test_the_model_scan_finds_typed_facts():
    snippet = ast.parse(
        'HEADS = {"DeepSeek-V3": (192, 128)}\n'
        'def f(m):\n    return m.name.startswith("PaLM")\n'
        'SHOWN_MODELS = ("GPT-2 small",)\n'
        'def g():\n    "For GPT-2 small, a docstring."\n'
    )
    assert model_mentions(snippet) == [(1, "DeepSeek-V3"), (3, "PaLM")]


@pytest.mark.parametrize("module", [m for m in MODULES if m != "models"])
def test_no_module_types_a_fact_about_a_named_model(module):
    assert model_mentions(parsed(module)) == [], (
        f"ffnbook/{module}.py names a model of the sheet: put the fact in ffnbook/data/models.csv"
    )


# --- one label set --------------------------------------------------------------------------------


def shown_labels(*tables: dict) -> set[str]:
    """The labels of name -> label tables, leaving out labels that are just their name ("identity")."""
    return {label for table in tables for name, label in table.items() if label != name}


def label_literals(tree: ast.AST, labels: set[str]) -> list[tuple[int, str]]:
    return [(line, text) for line, text, _ in strings(tree) if text in labels]


def test_labels_are_written_once():
    from ffnbook.activations import LABELS
    from ffnbook.gated import VARIANT_NAMES

    labels = shown_labels(LABELS, VARIANT_NAMES)
    assert label_literals(ast.parse('NAMES = {"relu": "ReLU"}\n'), labels) == [(1, "ReLU")]
    owners = {"activations": LABELS, "gated": VARIANT_NAMES}
    for module in MODULES:
        found = label_literals(parsed(module), labels)
        expected = len(shown_labels(owners[module])) if module in owners else 0
        assert len(found) == expected, f"ffnbook/{module}.py writes labels of its own: {found}"


# --- one NumPy -> torch crossing ------------------------------------------------------------------


def parameter_copies(tree: ast.AST) -> list[int]:
    """Lines where a torch layer's weight or bias is written in place (``layer.weight.copy_(...)``)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "copy_"
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr in ("weight", "bias")
    ]


def torch_dtype_maps(tree: ast.AST) -> list[int]:
    """Lines that pair NumPy float dtypes with torch ones (a dict or a conditional)."""

    def mentions_torch_float(node):
        return any(
            isinstance(n, ast.Attribute)
            and n.attr in ("float32", "float64")
            and isinstance(n.value, ast.Name)
            and n.value.id == "torch"
            for n in ast.walk(node)
        )

    return [
        node.lineno for node in ast.walk(tree) if isinstance(node, (ast.Dict, ast.IfExp)) and mentions_torch_float(node)
    ]


def test_the_torch_scans_find_copies():
    snippet = ast.parse(
        "with torch.no_grad():\n    m.up.weight.copy_(torch.from_numpy(W.T.copy()))\n"
        "D = {np.dtype(np.float32): torch.float32}\n"
        "t = torch.float64 if a else torch.float32\n"
    )
    assert parameter_copies(snippet) == [2] and torch_dtype_maps(snippet) == [3, 4]


def test_weights_cross_into_torch_in_one_place():
    for module in MODULES:
        tree = parsed(module)
        if module == "torch_ffn":
            assert len(parameter_copies(tree)) == 2 and len(torch_dtype_maps(tree)) == 1  # load_linear; TORCH_DTYPES
        else:
            assert parameter_copies(tree) == [], f"ffnbook/{module}.py copies weights itself: use load_linear"
            assert torch_dtype_maps(tree) == [], f"ffnbook/{module}.py maps dtypes itself: use torch_dtype"


# --- the two-thirds rule --------------------------------------------------------------------------


def two_thirds(tree: ast.AST) -> list[int]:
    """Lines dividing by the constant 3 something that multiplies by 2 (or 8): the rule, written out."""

    def factors(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return factors(node.left) + factors(node.right)
        return [node]

    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 3
        and any(isinstance(f, ast.Constant) and f.value in (2, 8) for f in factors(node.left))
    )


def test_the_two_thirds_rule_is_written_once():
    assert two_thirds(ast.parse("a = int(2 * (4 * d) / 3)\nb = 8 / 3\nc = x / 3\n")) == [1, 2]
    found = {module: two_thirds(parsed(module)) for module in MODULES}
    assert {m: len(lines) for m, lines in found.items() if lines} == {"parameters": 1}  # equal_parameter_width


# --- no backend switch on import -----------------------------------------------------------------


def test_importing_ffnbook_and_drawing_leaves_the_backend_alone():
    """A reader's notebook keeps its backend: ffnbook never selects one and never uses pyplot.

    The figure is drawn under matplotlib's do-nothing "template" backend, so the
    SVG cannot have come from it: a bare Figure needs no backend at all."""
    code = (
        "import matplotlib; matplotlib.use('template')\n"
        "import importlib, pkgutil, sys, ffnbook\n"
        "for m in pkgutil.iter_modules(ffnbook.__path__): importlib.import_module('ffnbook.' + m.name)\n"
        "from ffnbook import width\n"
        "svg = width.width_figure().to_svg()\n"
        "assert svg.lstrip().startswith('<?xml'), svg[:80]\n"
        "assert matplotlib.get_backend() == 'template', matplotlib.get_backend()\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
