"""How a training budget is split between parameters and tokens: ``C ≈ 6ND`` and Chinchilla.

Training a transformer costs about ``6N`` FLOPs per token (:func:`ffnbook.inference.training_flops_per_token`),
so a run over ``D`` tokens costs ``C ≈ 6ND`` (:func:`training_flops`). Which ``N``
and ``D`` give the lowest loss for a given ``C`` is the question of
compute-optimal training. Kaplan et al. (2020) put most of a larger budget
into parameters; Hoffmann et al. (2022) found parameters and tokens should grow
equally, and trained Chinchilla accordingly.

The numbers here are the papers' own, transcribed with their table numbers
from Hoffmann et al. (arXiv:2203.15556), and each is used in the book only
through the functions below.
"""

from __future__ import annotations

from typing import NamedTuple

from ._checks import describe, require_choice, require_positive_number, require_sequence

#: Exponents ``(a, b)`` of the compute-optimal model size and training tokens,
#: ``N_opt ∝ C^a`` and ``D_opt ∝ C^b``: Hoffmann et al.'s three approaches and
#: Kaplan et al.'s fit, as Hoffmann et al. tabulate them (Table 2).
OPTIMAL_EXPONENTS = {
    "Hoffmann et al., approach 1": (0.50, 0.50),
    "Hoffmann et al., approach 2": (0.49, 0.51),
    "Hoffmann et al., approach 3": (0.46, 0.54),
    "Kaplan et al.": (0.73, 0.27),
}


class OptimalRun(NamedTuple):
    """One row of Hoffmann et al.'s Table 3: compute-optimal tokens and FLOPs for a model size."""

    params: float
    flops: float
    tokens: float


#: The estimated optimal training FLOPs and tokens per model size of Hoffmann et al.'s Table 3 (approach 1).
OPTIMAL_RUNS = (
    OptimalRun(400e6, 1.92e19, 8.0e9),
    OptimalRun(1e9, 1.21e20, 20.2e9),
    OptimalRun(10e9, 1.23e22, 205.1e9),
    OptimalRun(67e9, 5.76e23, 1.5e12),
    OptimalRun(175e9, 3.85e24, 3.7e12),
    OptimalRun(280e9, 9.90e24, 5.9e12),
    OptimalRun(520e9, 3.43e25, 11.0e12),
    OptimalRun(1e12, 1.27e26, 21.2e12),
    OptimalRun(10e12, 1.30e28, 216.2e12),
)

#: Chinchilla's parameters and training tokens, 70 billion and 1.4 trillion (Hoffmann et al., Table 1).
CHINCHILLA = (70e9, 1.4e12)


def _positive(value, name: str) -> float:
    return require_positive_number(value, name)


def training_flops(n_params: float, n_tokens: float) -> float:
    """``C ≈ 6·N·D``: the FLOPs of training ``n_params`` parameters on ``n_tokens`` tokens.

    Six FLOPs per parameter and token: two in the forward pass, about four in
    the backward pass (Kaplan et al. 2020); Hoffmann et al. use the same
    estimate as the constraint of their optimisation.

    >>> training_flops(70e9, 1.4e12)
    5.88e+23
    """
    return 6.0 * _positive(n_params, "n_params") * _positive(n_tokens, "n_tokens")


def tokens_per_parameter(n_params: float, n_tokens: float) -> float:
    """Training tokens per parameter, ``D / N``.

    >>> tokens_per_parameter(*CHINCHILLA)
    20.0
    """
    return _positive(n_tokens, "n_tokens") / _positive(n_params, "n_params")


def growth_under(compute_factor: float, fit: str) -> tuple[float, float]:
    """How much a compute-optimal model and its data grow when the budget grows ``compute_factor`` times.

    ``fit`` is a key of :data:`OPTIMAL_EXPONENTS`; returns ``(model factor, data
    factor)``, ``compute_factor^a`` and ``compute_factor^b``.

    >>> [round(f, 2) for f in growth_under(10, "Kaplan et al.")]
    [5.37, 1.86]
    """
    compute_factor = _positive(compute_factor, "compute_factor")
    require_choice(fit, "fit", OPTIMAL_EXPONENTS)
    a, b = OPTIMAL_EXPONENTS[fit]
    return compute_factor**a, compute_factor**b


def optimal_run_rows() -> list[dict]:
    """Table 3 of Hoffmann et al. with tokens per parameter and ``6ND`` over the table's FLOPs added."""
    return [{"params": r.params, "tokens": r.tokens, "flops": r.flops,
             "tokens_per_param": tokens_per_parameter(r.params, r.tokens),
             "six_nd_over_flops": training_flops(r.params, r.tokens) / r.flops}
            for r in OPTIMAL_RUNS]


def tokens_per_parameter_range(rows=None) -> tuple[float, float]:
    """The smallest and largest tokens per parameter in :func:`optimal_run_rows`."""
    def ratio(row, label):
        if not isinstance(row, dict) or "tokens_per_param" not in row:
            raise TypeError(f"{label} must be a row of optimal_run_rows(), a dict with 'tokens_per_param', "
                            f"got {describe(row)}")
        return require_positive_number(row["tokens_per_param"], f"{label}['tokens_per_param']")

    ratios = [r["tokens_per_param"] for r in optimal_run_rows()] if rows is None else require_sequence(
        rows, "rows", expected="a list of optimal_run_rows() rows", item=ratio)
    return min(ratios), max(ratios)


