"""The machinery of ffnbook's input contract, checked by generation.

Every public function, class and method of ffnbook is called with valid
arguments (:mod:`contract_spec` says how to build them), then once for each
bad value of each parameter, all other arguments kept valid. A parameter's
*kind* (a positive size, a seed, a flag, a float array, ...) says which values
are bad for it. What a call with a bad value may do:

* **refused clearly**: a ``TypeError`` or ``ValueError`` whose message names
  the parameter (or, for a bundle such as ``params``, one of its parts);
* everything else is a defect: it **returned** (garbage out), failed
  **obscurely** (another exception, or one that does not name the
  parameter), or **hung** (no answer within the time limit).

Kinds also give *edge* values (a huge size, an empty array), which may be
refused clearly or accepted but never fail obscurely or hang, and
*equivalent* values (a NumPy integer for an int, a list for an array, an int
array for a float one), whose result must equal that of a reference value.

:func:`survey` runs the fixed catalogue of every kind over the whole package
(``tools/contract_survey.py`` prints it); ``tests/test_contract.py`` draws
bad values with Hypothesis from each kind's strategy.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
import signal
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

# --- kinds of parameter ------------------------------------------------------------------------


class Kind:
    """What a parameter accepts; subclasses list bad, edge and equivalent values for it."""

    #: Short name for reports.
    label = "value"

    def bad(self, valid) -> list[tuple[str, object]]:
        """(label, value) pairs that must be refused, given a valid value of the parameter."""
        return [("None", None), ("str", "nonsense"), ("object", object())]

    def edge(self, valid) -> list[tuple[str, object]]:
        """(label, value) pairs that may be refused clearly or accepted."""
        return []

    def same(self, valid) -> list[tuple[str, object, object]]:
        """(label, value, reference) triples: the call with value must give the call with reference's result."""
        return []

    def optional(self) -> Kind:
        return Optional(self)

    def strategy(self, valid):
        """A Hypothesis strategy of bad values; by default the fixed catalogue."""
        from hypothesis import strategies as st

        return st.sampled_from([v for _, v in self.bad(valid)])

    def __repr__(self) -> str:
        return self.label


class Optional(Kind):
    """``None`` is valid too (the parameter's default means "not given")."""

    def __init__(self, inner: Kind):
        self.inner = inner
        self.label = f"{inner.label} or None"

    def bad(self, valid):
        return [(label, v) for label, v in self.inner.bad(self._example(valid)) if v is not None]

    def edge(self, valid):
        return self.inner.edge(self._example(valid))

    def same(self, valid):
        return [] if valid is None else self.inner.same(valid)

    def _example(self, valid):
        return valid if valid is not None else getattr(self.inner, "example", None)

    def strategy(self, valid):
        return self.inner.strategy(self._example(valid)).filter(lambda v: v is not None)


class Size(Kind):
    """A positive integer (a width, a count of things that must exist)."""

    label = "positive int"
    example = 4

    def bad(self, valid):
        return [
            ("0", 0),
            ("-3", -3),
            ("2.5", 2.5),
            ("4.0", 4.0),
            ("True", True),
            ("nan", math.nan),
            ("'4'", "4"),
            ("None", None),
        ]

    def edge(self, valid):
        return [("10**12", 10**12)]

    def same(self, valid):
        return [("np.int64", np.int64(valid), valid)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        return st.one_of(
            st.integers(max_value=0),
            st.floats(allow_nan=True),
            st.booleans(),
            st.text(max_size=3),
            st.none(),
            super().strategy(valid),
        )


class Count(Size):
    """An integer >= 0."""

    label = "int >= 0"
    example = 0

    def bad(self, valid):
        return [("-1", -1), ("2.5", 2.5), ("1.0", 1.0), ("True", True), ("nan", math.nan), ("'1'", "1"), ("None", None)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        return st.one_of(
            st.integers(max_value=-1),
            st.floats(allow_nan=True),
            st.booleans(),
            st.text(max_size=3),
            st.none(),
            Kind.strategy(self, valid),
        )


class Index(Kind):
    """An index into something of known length: ``0 <= i < n``; negative indices must not wrap."""

    label = "index"

    def bad(self, valid):
        return [("-1", -1), ("10**6", 10**6), ("1.0", 1.0), ("True", True), ("'0'", "0"), ("None", None)]

    def same(self, valid):
        return [("np.int64", np.int64(valid), valid)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        return st.one_of(
            st.integers(max_value=-1),
            st.integers(min_value=10**6),
            st.floats(),
            st.booleans(),
            st.none(),
            super().strategy(valid),
        )


class Seed(Kind):
    """A random seed: an integer in [0, 2**64)."""

    label = "seed"
    example = 0

    def bad(self, valid):
        return [
            ("-1", -1),
            ("2.5", 2.5),
            ("True", True),
            ("'0'", "0"),
            ("None", None),
            ("nan", math.nan),
            ("2**64", 2**64),
        ]

    def same(self, valid):
        return [("np.int64", np.int64(valid), valid)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        return st.one_of(
            st.integers(max_value=-1),
            st.integers(min_value=2**64),
            st.floats(),
            st.booleans(),
            st.none(),
            super().strategy(valid),
        )


class Flag(Kind):
    """A real ``bool``."""

    label = "bool"
    example = True

    def bad(self, valid):
        return [("'no'", "no"), ("'yes'", "yes"), ("1", 1), ("0", 0), ("None", None), ("2.5", 2.5)]

    def same(self, valid):
        return [("np.bool_", np.bool_(valid), valid)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        return st.one_of(st.text(max_size=4), st.integers(), st.floats(), st.none(), super().strategy(valid))


class Number(Kind):
    """A real, finite number, optionally bounded: ``Number(low=0, low_open=True)`` is positive."""

    example = 0.5

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False, example=None, allow_inf=False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.allow_inf = allow_inf
        if example is not None:
            self.example = example
        lo = "" if low is None else f"{'(' if low_open else '['}{low:g}"
        hi = "" if high is None else f"{high:g}{')' if high_open else ']'}"
        self.label = f"number {lo},{hi}" if (lo or hi) else "finite number"

    def _outside(self):
        out = []
        if self.low is not None:
            out.append(
                (
                    f"{self.low:g}" if self.low_open else f"< {self.low:g}",
                    float(self.low) if self.low_open else self.low - 1.0,
                )
            )
            if self.low == 0:
                out.append(("-1", -1.0))
        if self.high is not None:
            out.append(
                (
                    f"{self.high:g}" if self.high_open else f"> {self.high:g}",
                    float(self.high) if self.high_open else self.high + 1.0,
                )
            )
        return out

    def bad(self, valid):
        infinite = [] if self.allow_inf else [("inf", math.inf), ("-inf", -math.inf)]
        return [("nan", math.nan), *infinite, *self._outside(), ("True", True), ("'1'", "1"), ("None", None)]

    def same(self, valid):
        same = [("np.float64", np.float64(valid), valid)]
        if isinstance(valid, float) and valid.is_integer() and abs(valid) < 2**53:
            same.append(("int", int(valid), valid))
        return same

    def strategy(self, valid):
        from hypothesis import strategies as st

        out = [
            st.sampled_from([math.nan] if self.allow_inf else [math.nan, math.inf, -math.inf]),
            st.booleans(),
            st.text(max_size=3),
            st.none(),
        ]
        if self.low is not None:
            out.append(st.floats(max_value=self.low, exclude_max=not self.low_open, allow_nan=False))
        if self.high is not None:
            out.append(st.floats(min_value=self.high, exclude_min=not self.high_open, allow_nan=False))
        return st.one_of(*out)


def Positive(example=None):
    """A positive finite number."""
    return Number(low=0, low_open=True, example=example)


class Choice(Kind):
    """One of a fixed set of names."""

    label = "name"

    def bad(self, valid):
        return [("'qqq'", "qqq"), ("3", 3), ("None", None), ("True", True)]

    def strategy(self, valid):
        from hypothesis import strategies as st

        # A name no table of ffnbook holds: Hypothesis also draws the string constants of the
        # code under test, so plain text can be another accepted name ("int4" for a dtype).
        unknown = st.text(max_size=8).map(lambda s: "?" + s)
        return st.one_of(unknown, st.integers(), st.none(), st.booleans())


class Names(Kind):
    """A list or tuple of names from a fixed set; never a bare string."""

    label = "names"

    def bad(self, valid):
        first = list(valid)[0] if valid else "relu"
        return [("a bare str", first), ("[]", []), ("['qqq']", ["qqq"]), ("None", None), ("3", 3), ("[3]", [3])]

    def same(self, valid):
        return [("list", list(valid), valid), ("tuple", tuple(valid), valid)]


class SeqOf(Kind):
    """A list or tuple of values of kind ``item``, never a bare string; empty if ``allow_empty``."""

    def __init__(self, item: Kind, *, allow_empty=False):
        self.item, self.allow_empty = item, allow_empty
        self.label = f"sequence of {item.label}"

    def bad(self, valid):
        valid = list(valid)
        out = [("'1'", "1"), ("None", None), ("3", 3)]
        if not self.allow_empty:
            out.append(("[]", []))
        if valid:
            for label, value in self.item.bad(valid[0])[:3]:
                out.append((f"[{label}, ...]", [value, *valid[1:]]))
        return out

    def same(self, valid):
        forms = [("tuple", tuple(valid), list(valid))]
        # An array is the same sequence only for numbers; a list of objects or of (label, value)
        # pairs has no array form (NumPy refuses it, or turns every value into a string).
        try:
            as_array = np.asarray(valid)
        except ValueError:
            return forms
        if as_array.dtype.kind in "biuf":
            forms.append(("np.array", as_array, list(valid)))
        return forms


class Array(Kind):
    """A float array. ``finite``: NaN/inf must be refused; ``fixed``: its shape is tied to other arguments."""

    label = "float array"

    def __init__(self, *, finite=True, fixed=True, torch_ok=False, float32_ok=True):
        self.finite, self.fixed = finite, fixed

    def bad(self, valid):
        valid = np.asarray(valid)
        out = [
            ("None", None),
            ("str", "x"),
            ("str array", np.full(valid.shape, "a")),
            ("complex", valid.astype(complex) + 1j),
            ("torch tensor", _torch_tensor(valid)),
        ]
        if valid.ndim >= 1:
            out.append(("bool array", np.ones(valid.shape, dtype=bool)))
        if self.fixed and valid.ndim >= 1 and valid.shape[-1] > 1:
            out.append(("last axis one short", valid[..., :-1].copy()))
        if self.fixed and valid.ndim >= 1:
            out.append(("0-d", np.float64(1.0)))
        if self.finite and valid.size:
            for label, v in (("NaN entry", np.nan), ("inf entry", np.inf)):
                broken = valid.astype(np.float64 if valid.dtype.kind != "f" else valid.dtype, copy=True)
                broken.flat[broken.size // 2] = v
                out.append((label, broken))
        return [(label, v) for label, v in out if v is not None or label == "None"]

    def edge(self, valid):
        valid = np.asarray(valid)
        out = []
        if valid.ndim >= 1:
            out.append(("empty", np.zeros((0,) + valid.shape[1:], dtype=valid.dtype)))
        if not self.finite and valid.size:
            for label, v in (("NaN entry", np.nan), ("-inf entry", -np.inf), ("inf entry", np.inf)):
                broken = valid.astype(np.float64, copy=True)
                broken.flat[0] = v
                out.append((label, broken))
        return out

    def same(self, valid):
        valid = np.asarray(valid)
        ints = np.round(valid * 3).astype(np.int64)
        return [("list", valid.tolist(), valid), ("int array", ints, ints.astype(valid.dtype))]


def _torch_tensor(array):
    try:
        import torch
    except ImportError:  # pragma: no cover
        return None
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))


class IndexArray(Kind):
    """Integer ids or positions, each in a known range; floats are not rounded, negatives never wrap.

    ``bounded=False``: any id >= 0 is valid (positions, ids without a known vocabulary).
    """

    label = "int array"

    def __init__(self, *, bounded=True):
        self.bounded = bounded

    def bad(self, valid):
        valid = np.asarray(valid)
        out = [("None", None), ("str", "x"), ("float array", valid.astype(float) + 0.5)]
        if valid.size:
            neg = valid.copy()
            neg.flat[0] = -1
            big = valid.copy()
            big.flat[0] = 10**6
            out += [("negative entry", neg)] + ([("entry 10**6", big)] if self.bounded else [])
        return out

    def same(self, valid):
        valid = np.asarray(valid)
        return [("list", valid.tolist(), valid)]


class Obj(Kind):
    """An instance of some ffnbook type (a ModelConfig, a Routing, a FactWorld, ...)."""

    def __init__(self, label="object", *, extra=()):
        self.label = label
        self.extra = tuple(extra)

    def bad(self, valid):
        return [("None", None), ("3", 3), ("str", "nonsense"), ("object()", object()), *self.extra]


class Bundle(Obj):
    """A tuple of arrays such as FFNParams: wrong length, None, NaN inside."""

    def bad(self, valid):
        parts = list(valid)
        out = [("None", None), ("3", 3), ("str", "nonsense"), ("one part short", tuple(parts[:-1]))]
        if parts and isinstance(parts[0], np.ndarray) and parts[0].size:
            broken = parts[0].copy()
            broken.flat[0] = np.nan
            out.append(
                (
                    "NaN in first part",
                    type(valid)(broken, *parts[1:]) if hasattr(valid, "_fields") else (broken, *parts[1:]),
                )
            )
        return out

    def same(self, valid):
        return [("plain tuple", tuple(valid), valid)] if hasattr(valid, "_fields") else []


class Func(Kind):
    """A callable (a layer)."""

    label = "function"

    def bad(self, valid):
        return [("None", None), ("3", 3), ("str", "relu")]


class Mapping(Kind):
    """A dict with required keys (``empty_ok``: any keys, none included)."""

    label = "dict"

    def __init__(self, *, empty_ok=False):
        self.empty_ok = empty_ok

    def bad(self, valid):
        return [("None", None), ("3", 3), ("str", "x")] + ([] if self.empty_ok else [("{}", {})])


class Rows(Kind):
    """A list of dicts (table rows) or records, non-empty unless ``allow_empty``."""

    label = "rows"

    def __init__(self, *, allow_empty=False):
        self.allow_empty = allow_empty

    def bad(self, valid):
        return [("None", None), ("3", 3), ("str", "x"), ("[{}]", [{}])] + ([] if self.allow_empty else [("[]", [])])


class Text(Kind):
    """Free text: any non-empty str."""

    label = "text"

    def bad(self, valid):
        return [("None", None), ("3", 3), ("True", True), ("''", "")]


class DType(Kind):
    """A NumPy float dtype (float32 or float64)."""

    label = "float dtype"

    def bad(self, valid):
        return [
            ("'int8'", "int8"),
            ("np.int32", np.int32),
            ("'float16'", "float16"),
            ("None", None),
            ("3", 3),
            ("'nonsense'", "nonsense"),
        ]

    def same(self, valid):
        return [("str", np.dtype(valid).name, valid)]


class Shape(Kind):
    """An array shape: a size or a tuple of sizes."""

    label = "shape"

    def bad(self, valid):
        return [
            ("-1", -1),
            ("(2, -1)", (2, -1)),
            ("(2.5,)", (2.5,)),
            ("'3'", "3"),
            ("None", None),
            ("(True,)", (True,)),
        ]


class Tensor(Kind):
    """A torch tensor; ``dtype`` says which (a float tensor of the module's width, or int64 token ids)."""

    def __init__(self, tokens=False, free=False):
        self.tokens, self.free = tokens, free
        self.label = "token tensor" if tokens else "float tensor"

    def bad(self, valid):
        import torch

        out = [("None", None), ("str", "x")]
        valid = valid.detach()
        if self.tokens:
            out += [("float tensor", valid.double()), ("negative id", valid * 0 - 1), ("id 10**6", valid * 0 + 10**6)]
        else:
            out += [("numpy array", valid.numpy()), ("int tensor", valid.to(torch.int64))]
            if not self.free:
                out.append(("last axis one short", valid[..., :-1].clone()))
        return out


# --- outcomes ----------------------------------------------------------------------------------


class Timeout(Exception):
    """The call did not return in time."""


@contextmanager
def time_limit(seconds: float):
    def on_alarm(signum, frame):
        raise Timeout(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclasses.dataclass
class Outcome:
    """What one call did: returned ``value``, or raised ``error``."""

    value: object = None
    error: BaseException | None = None

    @property
    def hung(self) -> bool:
        return isinstance(self.error, Timeout)


def warm_up() -> None:
    """Import what calls import lazily, so a time limit never interrupts an import halfway
    (that would leave a partly initialised module behind for every later call)."""
    import importlib

    for name in (
        "torch",
        "torch.nn",
        "torch.optim",
        "torch._dynamo",
        "torch.utils.flop_counter",
        "matplotlib.pyplot",
        "scipy.special",
    ):
        try:
            importlib.import_module(name)
        except ImportError:  # pragma: no cover - torch is optional for ffnbook
            pass


def run(call: Callable[[], object], seconds: float = 20.0) -> Outcome:
    import warnings

    try:
        with time_limit(seconds), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Outcome(value=call())
    except Timeout as error:
        return Outcome(error=error)
    except Exception as error:  # noqa: BLE001 - every failure is classified
        return Outcome(error=error)


def names_parameter(message: str, names) -> bool:
    """Whether ``message`` names one of ``names`` as a word (``x`` in "x must be", not in "expected")."""
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", message) for n in names)


def refusal(outcome: Outcome, names) -> str:
    """``"clear"``, ``"accepted"``, ``"unnamed"`` (TypeError/ValueError not naming it), ``"obscure"`` or ``"hang"``."""
    if outcome.error is None:
        return "accepted"
    if outcome.hung:
        return "hang"
    if isinstance(outcome.error, (TypeError, ValueError)):
        return "clear" if names_parameter(str(outcome.error), names) else "unnamed"
    return "obscure"


def same_result(a, b) -> bool:
    """Whether two results are equal, recursively (arrays exactly, figures by description)."""
    if type(a) is not type(b) and not (_is_number(a) and _is_number(b)):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if _is_number(a):
        return (a == b) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_result(a[k], b[k]) for k in a)
    if type(a).__name__ == "Figure" and hasattr(a, "get_size_inches"):  # a blank matplotlib figure
        return bool(np.array_equal(a.get_size_inches(), b.get_size_inches())) and len(a.axes) == len(b.axes)
    if hasattr(a, "description") and hasattr(a, "figure"):  # BookFigure
        return a.description == b.description
    if hasattr(a, "_repr_markdown_"):
        return a._repr_markdown_() == b._repr_markdown_()
    if type(a).__module__.startswith("torch"):
        import torch

        if isinstance(a, torch.Tensor):
            same_layout = a.shape == b.shape and a.dtype == b.dtype and a.device == b.device
            return same_layout and (a.is_meta or bool(torch.equal(a, b)))
        if isinstance(a, torch.nn.Module):
            sa, sb = a.state_dict(), b.state_dict()
            return sa.keys() == sb.keys() and all(same_result(sa[k], sb[k]) for k in sa)
    if dataclasses.is_dataclass(a):
        return all(same_result(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if callable(a):
        return True  # a layer: compared through its uses elsewhere
    return a == b


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def equivalent(a: Outcome, b: Outcome) -> bool:
    """Two outcomes agree: equal results, or the same error."""
    if a.error is not None or b.error is not None:
        return (
            a.error is not None
            and b.error is not None
            and type(a.error) is type(b.error)
            and str(a.error) == str(b.error)
        )
    return same_result(a.value, b.value)


# --- the package's public surface --------------------------------------------------------------


def public_modules(package) -> list:
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
        if not m.name.startswith("_")
    ]


def is_record(cls) -> bool:
    """A NamedTuple: a record of values, checked where it is used."""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def public_callables(package) -> dict[str, object]:
    """Every public function, class and method defined in the package, by qualified name."""
    found = {}
    for module in public_modules(package):
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            found[f"{module.__name__}.{name}"] = obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)):
                        found[f"{module.__name__}.{name}.{attr}"] = getattr(obj, attr)
    return found


def parameters(target) -> list[inspect.Parameter]:
    """The parameters a caller passes (no self, no *args/**kwargs)."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [
        p for p in signature.parameters.values() if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def annotation_kind(annotation) -> Kind | None:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    base = {"bool": Flag(), "float": Number(), "int": None}
    if text in base:
        return base[text]
    if text in ("bool | None", "typing.Optional[bool]"):
        return Flag().optional()
    return None


# --- one callable, all its parameters ------------------------------------------------------------


@dataclasses.dataclass
class Probe:
    """One call of the survey: a parameter of a callable given one value."""

    qualname: str
    param: str
    role: str  # "bad", "edge", "same"
    label: str
    verdict: str  # clear / accepted / unnamed / obscure / hang; ok; correct / wrong
    detail: str = ""


def describe_error(outcome: Outcome) -> str:
    if outcome.error is None:
        text = repr(outcome.value)
        return "returned " + (text[:80] + "..." if len(text) > 80 else text)
    return f"{type(outcome.error).__name__}: {str(outcome.error)[:160]}"


# --- the survey --------------------------------------------------------------------------------


def probe_values(kind: Kind, valid, roles=("bad", "edge", "same")):
    """(role, label, value, reference) for every catalogue value of ``kind``."""
    if "bad" in roles:
        for label, value in kind.bad(valid):
            yield "bad", label, value, None
    if "edge" in roles:
        for label, value in kind.edge(valid):
            yield "edge", label, value, None
    if "same" in roles:
        for label, value, reference in kind.same(valid):
            yield "same", label, value, reference


def out_of_memory(error) -> bool:
    """NumPy's MemoryError or torch's allocator error: the machine, not the contract, said no."""
    return (
        isinstance(error, MemoryError)
        or (isinstance(error, RuntimeError) and "allocate" in str(error) and "memory" in str(error))
        or (isinstance(error, ValueError) and str(error).startswith("array is too big"))
    )


def judge(resolved, name, names, role, value, reference=None) -> tuple[str, str]:
    """Call ``resolved`` with ``name=value`` (the rest valid) and judge the outcome: (verdict, detail)."""

    def call(v):
        args = resolved.args()
        args[name] = v
        return run(lambda: resolved.target()(**args), resolved.seconds)

    outcome = call(value)
    if role == "same":
        expected = call(reference)
        if equivalent(outcome, expected):
            return "correct", ""
        return (
            "wrong" if outcome.error is None else refusal(outcome, names) if outcome.error else "wrong"
        ), f"{describe_error(outcome)} | reference: {describe_error(expected)}"
    verdict = refusal(outcome, names)
    if role == "edge" and (verdict in ("clear", "accepted") or out_of_memory(outcome.error)):
        verdict = "ok"  # refused, accepted, or too large for this machine (the error says how large)
    return verdict, describe_error(outcome)


def check_callable(resolved, roles=("bad", "edge", "same")) -> list[Probe]:
    """Every catalogue value of every parameter of one callable, judged."""
    baseline = run(lambda: resolved.target()(**resolved.args()), resolved.seconds)
    if baseline.error is not None:
        return [Probe(resolved.qualname, "-", "baseline", "valid call", "spec", describe_error(baseline))]
    probes = []
    if not resolved.deterministic:  # timings, random initialisations: two calls never agree
        roles = tuple(r for r in roles if r != "same")
    for name, kind, names in resolved.params:
        valid = resolved.args()[name]
        for role, label, value, reference in probe_values(kind, valid, roles):
            verdict, detail = judge(resolved, name, names, role, value, reference)
            probes.append(Probe(resolved.qualname, name, role, label, verdict, detail))
    return probes


def survey(package, *, roles=("bad", "edge", "same"), only=None, progress=None) -> tuple[list[Probe], dict]:
    """Run the fixed catalogue over every public callable of ``package``; (probes, callables by status)."""
    from contract_spec import SpecError, resolve

    warm_up()
    probes, status = [], {"checked": [], "records": [], "spec errors": []}
    for qualname, obj in sorted(public_callables(package).items()):
        if only and not re.search(only, qualname):
            continue
        try:
            resolved = resolve(qualname, obj)
        except SpecError as error:
            status["spec errors"].append(f"{qualname}: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - an example that no longer builds
            status["spec errors"].append(f"{qualname}: building its example failed: {type(error).__name__}: {error}")
            continue
        if resolved is None:
            status["records"].append(qualname)
            continue
        if progress:
            progress(qualname)
        try:
            found = check_callable(resolved, roles)
        except Exception as error:  # noqa: BLE001 - a kind that cannot derive values from the example
            status["spec errors"].append(f"{qualname}: {type(error).__name__}: {error}")
            continue
        if found and found[0].role == "baseline":
            status["spec errors"].append(f"{qualname}: the valid call failed: {found[0].detail}")
            continue
        status["checked"].append(qualname)
        probes.extend(found)
    return probes, status
