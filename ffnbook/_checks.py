"""Input checks shared by every ffnbook function.

Each check raises with a message that names the argument, what was expected
and what arrived, so a mistake in a page fails at the call that made it
rather than as a wrong number three cells later.
"""

from __future__ import annotations

import numpy as np

#: dtypes the NumPy code computes in; float16 is refused because its rounding
#: error (about 1e-3) would swamp the precision claims the chapter makes.
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def as_float_array(value, name: str) -> np.ndarray:
    """Return ``value`` as an ndarray of float32/float64, or raise TypeError."""
    if not isinstance(value, np.ndarray):
        if hasattr(value, "detach") and hasattr(value, "numpy"):
            raise TypeError(
                f"{name} must be a NumPy array, got a torch tensor; "
                "convert it with tensor.detach().numpy() or use ffnbook.PositionwiseFFN"
            )
        value = np.asarray(value)
    if value.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must have dtype float32 or float64, got {value.dtype}"
        )
    return value


def float_dtype(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype if it is float32 or float64, else raise TypeError."""
    dtype = np.dtype(dtype)
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


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


def require_positive_int(value, name: str) -> int:
    """Return ``value`` as int if it is a positive integer, else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def require_interval(lo, hi) -> tuple[float, float]:
    """Return ``(lo, hi)`` as floats if both are finite and ``lo < hi``, else raise ValueError."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or not lo < hi:
        raise ValueError(f"need finite lo < hi, got lo={lo!r}, hi={hi!r}")
    return float(lo), float(hi)


def input_grid(lo, hi, n) -> np.ndarray:
    """``n`` evenly spaced inputs from ``lo`` to ``hi`` (both included), checked.

    >>> input_grid(-1.0, 1.0, 5)
    array([-1. , -0.5,  0. ,  0.5,  1. ])
    """
    n = require_positive_int(n, "n")
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
