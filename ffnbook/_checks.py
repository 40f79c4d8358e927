"""Input checks shared by every ffnbook function: the package's input contract.

Every public function validates its arguments with these checks before it
computes anything, so a mistake in a page fails at the call that made it
rather than as a wrong number three cells later. Each check raises a
``TypeError`` (wrong kind of value) or a ``ValueError`` (right kind, wrong
value) whose message names the argument, says what was expected and shows
what arrived:

* sizes and counts are ``int`` (or NumPy integers), never ``bool``, ``float``
  or NaN: :func:`require_positive_int`, :func:`require_nonnegative_int`;
* indices lie in ``[0, length)``; a negative index never wraps: :func:`require_index`;
* seeds are non-negative ints below ``2**64``, what NumPy and torch both accept:
  :func:`require_seed`;
* flags are real ``bool`` values (``"no"`` is not False): :func:`require_bool`;
* numbers are real, finite and in their range: :func:`require_number`;
* names come from a fixed set: :func:`require_choice`, :func:`lookup`;
* sequences are lists or tuples of items, never a string: :func:`require_sequence`;
* arrays are converted to float (an integer array becomes float64, so it never
  truncates a result), with NaN and infinity refused where asked:
  :func:`as_float_array`; integer id arrays stay integers: :func:`as_index_array`.

``tests/test_contract.py`` feeds generated bad values to every public function
and checks that each is refused this way (see ``tests/contract_spec.py``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable

import numpy as np

#: dtypes the NumPy code computes in; float16 is refused because its rounding
#: error (about 1e-3) would swamp the precision claims the chapter makes.
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

#: The largest seed: NumPy accepts any non-negative int, torch.manual_seed one below 2**64.
MAX_SEED = 2**64 - 1


def describe(value) -> str:
    """A short description of ``value`` for an error message: its type and, if short, its repr.

    >>> describe(True), describe("no"), describe(2.5), describe(np.zeros((2, 3), np.int64))
    ('bool True', "str 'no'", 'float 2.5', 'ndarray of shape (2, 3) and dtype int64')
    """
    if isinstance(value, np.ndarray):
        return f"ndarray of shape {value.shape} and dtype {value.dtype}"
    if hasattr(value, "detach") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"torch tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def require_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None,
                expected: str | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool or a float) within the bounds, else raise.

    >>> require_int(np.int64(3), "n")
    3
    >>> require_int(3.0, "n")
    Traceback (most recent call last):
    ...
    TypeError: n must be an integer, got float 3.0
    """
    if expected is None:
        if minimum is None and maximum is None:
            expected = "an integer"
        elif maximum is None:
            expected = f"an integer >= {minimum}"
        elif minimum is None:
            expected = f"an integer <= {maximum}"
        else:
            expected = f"an integer in [{minimum}, {maximum}]"
    if not _is_int(value):
        raise TypeError(f"{name} must be {expected}, got {describe(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {expected}, got {value}")
    return value


def require_positive_int(value, name: str, *, maximum: int | None = None) -> int:
    """``value`` as ``int`` if it is a positive integer (at most ``maximum``), else raise.

    >>> require_positive_int(0, "d_ff")
    Traceback (most recent call last):
    ...
    ValueError: d_ff must be a positive integer, got 0
    """
    expected = "a positive integer" if maximum is None else f"a positive integer of at most {maximum:,}"
    return require_int(value, name, minimum=1, maximum=maximum, expected=expected)


def require_nonnegative_int(value, name: str, *, maximum: int | None = None) -> int:
    """``value`` as ``int`` if it is an integer >= 0 (at most ``maximum``), else raise."""
    expected = "an integer >= 0" if maximum is None else f"an integer in [0, {maximum:,}]"
    return require_int(value, name, minimum=0, maximum=maximum, expected=expected)


def require_index(value, name: str, length: int, *, of: str | None = None) -> int:
    """``value`` as ``int`` if it indexes one of ``length`` items, ``0 <= value < length``.

    A negative index is refused: ``-1`` does not mean "the last" here.

    >>> require_index(-1, "block", 2, of="the model's blocks")
    Traceback (most recent call last):
    ...
    ValueError: block must be an integer in [0, 2), got -1 (it indexes the model's blocks)
    """
    expected = f"an integer in [0, {length})"
    indexes = f" (it indexes {of})" if of else ""
    if not _is_int(value):
        raise TypeError(f"{name} must be {expected}, got {describe(value)}{indexes}")
    if not 0 <= value < length:
        raise ValueError(f"{name} must be {expected}, got {int(value)}{indexes}")
    return int(value)


def require_seed(value, name: str = "seed") -> int:
    """``value`` as ``int`` if it is a usable random seed: an integer in ``[0, 2**64)``.

    >>> require_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer seed in [0, 2**64), got -1
    """
    expected = "an integer seed in [0, 2**64)"
    return require_int(value, name, minimum=0, maximum=MAX_SEED, expected=expected)


def require_bool(value, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (or a NumPy bool), else TypeError.

    A string such as ``"no"`` is truthy, and ``1`` or ``0`` may be a slip for a
    size, so neither is read as a flag:

    >>> require_bool("no", "bias")
    Traceback (most recent call last):
    ...
    TypeError: bias must be True or False, got str 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def _bound_words(low, high, low_open, high_open) -> str:
    if low is None and high is None:
        return "a finite number"
    if high is None:
        return "a positive finite number" if low == 0 and low_open else \
            f"a finite number {'>' if low_open else '>='} {low:g}"
    if low is None:
        return f"a finite number {'<' if high_open else '<='} {high:g}"
    return f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def require_number(value, name: str, *, low: float | None = None, high: float | None = None,
                   low_open: bool = False, high_open: bool = False, allow_inf: bool = False,
                   expected: str | None = None) -> float:
    """``value`` as ``float`` if it is a real number (not a bool), finite and in range, else raise.

    ``low``/``high`` bound it (inclusive unless ``low_open``/``high_open``);
    NaN is always refused, infinity unless ``allow_inf``.

    >>> require_number(0.0, "eps", low=0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: eps must be a positive finite number, got 0.0
    >>> require_number("1e-5", "eps")
    Traceback (most recent call last):
    ...
    TypeError: eps must be a finite number, got str '1e-5'
    """
    if expected is None:
        expected = _bound_words(low, high, low_open, high_open)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {expected}, got {describe(value)}")
    number = float(value)
    bad = math.isnan(number) or (math.isinf(number) and not allow_inf)
    if low is not None:
        bad = bad or number < low or (low_open and number == low)
    if high is not None:
        bad = bad or number > high or (high_open and number == high)
    if bad:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return number


def require_positive_number(value, name: str) -> float:
    """``value`` as ``float`` if it is a positive finite number, else raise."""
    return require_number(value, name, low=0, low_open=True)


def require_choice(value, name: str, choices: Iterable[str]) -> str:
    """``value`` if it is one of the strings ``choices``, else raise (listing them).

    >>> require_choice("middle", "norm", ("pre", "post"))
    Traceback (most recent call last):
    ...
    ValueError: norm must be one of 'pre', 'post', got 'middle'
    """
    choices = tuple(choices)
    listed = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {listed}, got {describe(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def require_callable(value, name: str, expected: str = "a function") -> Callable:
    """``value`` if it can be called, else TypeError."""
    if not callable(value):
        raise TypeError(f"{name} must be {expected}, got {describe(value)}")
    return value


def require_instance(value, name: str, cls, expected: str | None = None):
    """``value`` if it is an instance of ``cls`` (a class or a tuple of classes), else TypeError."""
    if not isinstance(value, cls):
        if expected is None:
            classes = cls if isinstance(cls, tuple) else (cls,)
            expected = " or ".join(f"{c.__module__}.{c.__qualname__}" for c in classes)
            expected = ("an " if expected[0] in "aeiou" else "a ") + expected
        raise TypeError(f"{name} must be {expected}, got {describe(value)}")
    return value


def require_sequence(value, name: str, *, min_len: int = 1, item: Callable | None = None,
                     expected: str = "a list or tuple") -> list:
    """``value`` as a list if it is a sequence (not a string or a dict) of at least ``min_len`` items.

    ``item(element, label)`` checks and converts each element; ``label`` reads
    ``"name[i]"``, so an error points at the element.

    >>> require_sequence("relu", "names")
    Traceback (most recent call last):
    ...
    TypeError: names must be a list or tuple, got str 'relu'
    >>> require_sequence([1, 0], "seq_lens", item=require_positive_int)
    Traceback (most recent call last):
    ...
    ValueError: seq_lens[1] must be a positive integer, got 0
    """
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable) \
            or (isinstance(value, np.ndarray) and value.ndim == 0):
        raise TypeError(f"{name} must be {expected}, got {describe(value)}")
    items = list(value)
    if len(items) < min_len:
        wanted = "one item" if min_len == 1 else f"{min_len} items"
        raise ValueError(f"{name} must hold at least {wanted}, got {len(items) or 'none'}")
    if item is not None:
        items = [item(v, f"{name}[{i}]") for i, v in enumerate(items)]
    return items


def require_names(value, name: str, choices: Iterable[str], *, min_len: int = 1) -> list[str]:
    """A list or tuple of names, each one of ``choices`` (never a bare string).

    >>> require_names(["relu", "swish"], "names", ("relu", "gelu"))
    Traceback (most recent call last):
    ...
    ValueError: names[1] must be one of 'relu', 'gelu', got 'swish'
    """
    choices = tuple(choices)
    return require_sequence(value, name, min_len=min_len, expected="a list or tuple of names",
                            item=lambda v, label: require_choice(v, label, choices))


def require_bundle(value, name: str, fields: tuple, what: str) -> tuple:
    """``value`` as a tuple of ``len(fields)`` parts: a NamedTuple such as FFNParams, or a plain tuple or list.

    >>> require_bundle(None, "params", ("W1", "b1", "W2", "b2"), "FFNParams")
    Traceback (most recent call last):
    ...
    TypeError: params must be FFNParams, a tuple (W1, b1, W2, b2), got NoneType None
    """
    if not isinstance(value, (tuple, list)) or len(value) != len(fields):
        raise TypeError(f"{name} must be {what}, a tuple ({', '.join(fields)}), got {describe(value)}")
    return tuple(value)


#: torch indexes a tensor's elements with a signed 64-bit integer; stay well inside it.
MAX_TENSOR_ELEMENTS = 2**62


def require_tensor_size(sizes: dict, *shapes: tuple) -> None:
    """Refuse sizes whose tensors (``shapes``: tuples of size names and int factors) would be too large.

    Even on torch's ``meta`` device (shapes only, no memory) the element count
    must fit torch's 64-bit index; past it torch fails with an internal error.

    >>> require_tensor_size({"d_model": 10**12}, ("d_model", "d_model"))
    Traceback (most recent call last):
    ...
    ValueError: d_model=1000000000000 gives a tensor of 1e+24 elements, more than torch can index (2**62)
    """
    for shape in shapes:  # names of sizes, or plain int factors
        numel = math.prod(sizes[n] if isinstance(n, str) else n for n in shape)
        if numel >= MAX_TENSOR_ELEMENTS:
            named = ", ".join(f"{n}={sizes[n]}" for n in dict.fromkeys(shape) if isinstance(n, str))
            raise ValueError(f"{named} gives a tensor of {numel:.3g} elements, more than torch can index (2**62)")


def require_same_length(sequences: dict) -> int:
    """The common length of the named sequences, or ValueError naming them all.

    >>> require_same_length({"load_before": [1, 2], "load_after": [3]})
    Traceback (most recent call last):
    ...
    ValueError: load_before and load_after must have the same length, got 2 and 1
    """
    lengths = {name: len(s) for name, s in sequences.items()}
    if len(set(lengths.values())) > 1:
        names = list(lengths)
        raise ValueError(f"{', '.join(names[:-1])} and {names[-1]} must have the same length, got "
                         + " and ".join(str(n) for n in lengths.values()))
    return next(iter(lengths.values()))


def _refuse_torch(value, name: str) -> None:
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        raise TypeError(
            f"{name} must be a NumPy array, got a torch tensor; "
            "convert it with tensor.detach().numpy() or use ffnbook.PositionwiseFFN"
        )


def as_float_array(value, name: str, *, dtype=None, finite: bool = False, ndim: int | None = None,
                   min_ndim: int | None = None) -> np.ndarray:
    """``value`` as a float32/float64 ndarray, or raise naming ``name``.

    Floats keep their dtype (float32 or float64); integer input (an int array,
    a list of ints) becomes ``dtype`` (float64 if not given), so an integer
    array never truncates a result; bool, complex, string and object input is
    refused, and so is float16, whose rounding error would swamp the precision
    claims of the chapter. With ``finite`` NaN and infinity are refused;
    ``ndim``/``min_ndim`` fix the number of axes.

    >>> as_float_array([1, 2], "x")
    array([1., 2.])
    >>> as_float_array(["a"], "x")
    Traceback (most recent call last):
    ...
    TypeError: x must be an array of real numbers (float32 or float64), got dtype <U1
    """
    _refuse_torch(value, name)
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value)
        except (ValueError, TypeError) as error:  # ragged nested lists
            raise ValueError(f"{name} must be a rectangular array of numbers, got {describe(value)}: {error}") \
                from None
    if value.dtype.kind in "iu":
        value = value.astype(np.float64 if dtype is None else float_dtype(dtype))
    elif value.dtype.kind != "f":
        raise TypeError(f"{name} must be an array of real numbers (float32 or float64), got dtype {value.dtype}")
    if value.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must have dtype float32 or float64, got {value.dtype}"
        )
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {value.shape}")
    if min_ndim is not None and value.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axes, got shape {value.shape}")
    if finite:
        require_finite(value, name)
    return value


def as_index_array(value, name: str, *, low: int = 0, high: int | None = None, ndim: int | None = None,
                   what: str = "ids") -> np.ndarray:
    """``value`` as an integer ndarray with every entry in ``[low, high)``, or raise.

    For token ids, positions and other indices: floats and bools are refused,
    not rounded, and negative entries never wrap.

    >>> as_index_array([0, 3], "token_ids", high=3)
    Traceback (most recent call last):
    ...
    ValueError: token_ids must hold ids in [0, 3), got 3
    """
    _refuse_torch(value, name)
    array = np.asarray(value) if not isinstance(value, np.ndarray) else value
    span = f"[{low}, {high})" if high is not None else f">= {low}"
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer {what} {span}, got {describe(value)}")
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {array.shape}")
    if array.size:
        bad = array < low if high is None else (array < low) | (array >= high)
        if bad.any():
            raise ValueError(f"{name} must hold {what} in {span}, got {array[bad].flat[0]}")
    return array


def float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """``dtype`` as a NumPy dtype if it is float32 or float64, else raise TypeError."""
    try:
        parsed = np.dtype(dtype)
    except TypeError:
        parsed = None
    if dtype is None or parsed is None or parsed not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32 or float64, got {describe(dtype) if parsed is None or dtype is None else parsed}")
    return parsed


def float_arrays(arrays: dict) -> dict:
    """Each of ``{name: array}`` as a float array (:func:`as_float_array`), or raise."""
    return {name: as_float_array(a, name) for name, a in arrays.items()}


def require_finite_and_one_dtype(arrays: dict) -> None:
    """Raise unless the named arrays share one dtype (TypeError) and hold no NaN or infinity.

    >>> require_finite_and_one_dtype({"W": np.zeros(2), "V": np.zeros(2, np.float32), "W2": np.zeros(2)})
    Traceback (most recent call last):
    ...
    TypeError: W, V and W2 must share one dtype, got W=float64, V=float32, W2=float64
    """
    if len({a.dtype for a in arrays.values()}) > 1:
        names = list(arrays)
        found = ", ".join(f"{n}={a.dtype}" for n, a in arrays.items())
        raise TypeError(f"{', '.join(names[:-1])} and {names[-1]} must share one dtype, got {found}")
    for name, a in arrays.items():
        require_finite(a, name)


def require_positions(array: np.ndarray, name: str, axis: int = -2) -> np.ndarray:
    """``array`` if it holds at least one entry and one position on ``axis`` (a result needs one)."""
    if array.ndim < abs(axis) or array.shape[axis] == 0 or array.size == 0:
        raise ValueError(f"{name} must hold at least one position, got shape {array.shape}")
    return array


def require_finite(array: np.ndarray, name: str) -> None:
    """Raise ValueError if ``array`` holds NaN or infinity."""
    finite = np.isfinite(array)
    if not finite.all():
        bad = int(array.size - np.count_nonzero(finite))
        raise ValueError(
            f"{name} must be finite, but {bad} of its {array.size} entries are NaN or infinite"
        )


def require_shape(array: np.ndarray, expected: tuple, name: str) -> None:
    """Raise ValueError unless ``array.shape == expected``."""
    if array.shape != tuple(expected):
        raise ValueError(f"{name} must have shape {tuple(expected)}, got {array.shape}")


def require_interval(lo, hi) -> tuple[float, float]:
    """Return ``(lo, hi)`` as floats if both are finite numbers and ``lo < hi``, else raise."""
    lo, hi = require_number(lo, "lo"), require_number(hi, "hi")
    if not lo < hi:
        raise ValueError(f"need lo < hi, got lo={lo!r}, hi={hi!r}")
    return lo, hi


def input_grid(lo, hi, n, *, max_points: int = 10_000_000) -> np.ndarray:
    """``n`` evenly spaced inputs from ``lo`` to ``hi`` (both included), checked.

    >>> input_grid(-1.0, 1.0, 5)
    array([-1. , -0.5,  0. ,  0.5,  1. ])
    """
    n = require_positive_int(n, "n", maximum=max_points)
    if n < 2:
        raise ValueError(f"n must be at least 2 to span an interval, got {n}")
    lo, hi = require_interval(lo, hi)
    return np.linspace(lo, hi, n)


def lookup(table: dict, name, what: str = "activation"):
    """``table[name]`` for a name-keyed registry, or an error listing the valid names.

    >>> lookup({"relu": 1}, "relu")
    1
    >>> lookup({"relu": 1, "gelu": 2}, "tanh")
    Traceback (most recent call last):
    ...
    ValueError: unknown activation 'tanh'; expected one of: gelu, relu
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a name (str), got {type(name).__name__}")
    try:
        return table[name]
    except KeyError:
        choices = ", ".join(sorted(table))
        raise ValueError(f"unknown {what} {name!r}; expected one of: {choices}") from None
