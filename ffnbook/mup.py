"""Hyperparameters across FFN width: why Adam's learning rate must shrink as the FFN widens (μP).

Adam divides each gradient entry by its own running size, so its first step
moves every weight by about the learning rate, whatever the width. The FFN's
output sums ``d_ff`` terms through ``W2``, and after a gradient step those
terms move together (they all follow the same error), so the output moves
about ``d_ff`` times as far: a learning rate tuned on a narrow FFN is too
large for a wide one. The Maximal Update Parametrization (μP) of Yang et al.
(2021) divides the learning rate of such weight matrices by the width
multiplier, as the ``mup`` package's ``MuAdam`` does, which keeps the change
of the output the same at every width. :func:`first_step_output_change`
measures it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import require_bool, require_number, require_positive_int, require_seed, require_sequence

#: Yang et al. (2021, abstract); hyperparameters tuned on a 40M-parameter proxy and transferred
#: to the 6.7B GPT-3 model outperform its published numbers, at 7% of its pretraining cost.
PROXY_PARAMS, TARGET_PARAMS, TUNING_COST_SHARE = 40e6, 6.7e9, 0.07

#: Adam's epsilon (PyTorch's default), which its first step adds to each entry's size.
ADAM_EPS = 1e-8


class StepChange(NamedTuple):
    """How far one Adam step on ``W2`` moves an FFN's output, at one width."""

    d_ff: int
    learning_rate: float  #: the rate used for W2 at this width
    output_change: float  #: root mean square of the change in the output, over tokens and features
    weight_change: float  #: root mean square of the change in W2's entries


def first_step_output_change(d_model: int, d_ff: int, learning_rate: float, *, n_tokens: int = 64,
                             seed: int = 0) -> StepChange:
    """One step of Adam on ``W2`` of a ReLU FFN, and how far it moves the output on the same tokens.

    Weights are drawn with variance ``1/fan_in``, the inputs and targets are
    standard normal, and the loss is half the mean squared error over the
    tokens. Adam's first step is ``−learning_rate · g / (|g| + ε)``: about the
    learning rate for every entry.

    >>> small = first_step_output_change(16, 64, 1e-3)
    >>> wide = first_step_output_change(16, 1024, 1e-3)
    >>> 10 < wide.output_change / small.output_change < 20  # 16 times the width, about 16 times the change
    True
    """
    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    learning_rate = require_number(learning_rate, "learning_rate", low=0, high=1, low_open=True, high_open=True)
    n_tokens = require_positive_int(n_tokens, "n_tokens")
    rng = np.random.default_rng(require_seed(seed))
    x = rng.standard_normal((n_tokens, d_model))
    target = rng.standard_normal((n_tokens, d_model))
    W1 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)
    W2 = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)
    hidden = np.maximum(x @ W1, 0.0)
    grad = hidden.T @ (hidden @ W2 - target) / n_tokens
    step = -learning_rate * grad / (np.abs(grad) + ADAM_EPS)
    change = hidden @ step
    return StepChange(d_ff, learning_rate, float(np.sqrt(np.mean(change**2))), float(np.sqrt(np.mean(step**2))))


def width_sweep(d_model: int, widths, learning_rate: float, *, mup: bool, n_tokens: int = 64,
                seed: int = 0) -> list[StepChange]:
    """:func:`first_step_output_change` at every width of ``widths``, one learning rate tuned at the first.

    With ``mup=False`` every width uses ``learning_rate`` (standard
    parametrisation); with ``mup=True`` width ``w`` uses
    ``learning_rate · widths[0] / w``, μP's rule for Adam on a matrix whose fan-in grows.

    >>> [round(r.output_change / 1e-3) for r in width_sweep(16, [64, 256], 1e-3, mup=True)]
    [20, 19]
    """
    widths = require_sequence(widths, "widths", item=lambda w, label: require_positive_int(w, label))
    learning_rate = require_number(learning_rate, "learning_rate", low=0, high=1, low_open=True, high_open=True)
    mup = require_bool(mup, "mup")
    base = widths[0]
    return [first_step_output_change(d_model, w, learning_rate * (base / w if mup else 1.0), n_tokens=n_tokens,
                                     seed=seed) for w in widths]
