"""What a recall number has to beat: chance, an interaction-free baseline, and a binomial interval.

A trained model that names the right object for most facts has learned
something; how much of it needed the model's nonlinear parts depends on what
simpler predictors already get right. This module gives the controls the
trained-FFN experiments are compared with:

* **chance**: guessing one of ``n_objects`` objects at random
  (:func:`chance_recall`);
* **the interaction-free baseline**: a score for every object that adds one
  term for the subject and one for the relation, ``A[s, o] + B[r, o] + c[o]``,
  fitted to the training facts by multinomial logistic regression
  (:func:`fit_additive_baseline`). It can recall a fact only through what its
  subject or its relation says about the objects *on their own* (say, a
  subject whose facts often have object 7), never through the pair: a model
  that beats it has learned something about subject and relation together;
* **the interaction-free part of any predictor**: the least-squares
  additive part of its scores over all pairs (:func:`additive_part`), and
  its recall (:func:`grid_recall`);
* **linear probes**: an affine map fitted to read classes from vectors
  (:func:`fit_linear_probe`);
* **counts with intervals**: recall as ``k`` of ``n`` with an exact
  (Clopper–Pearson) binomial interval, and the one-sided binomial test of
  "no better than chance" (:func:`binomial_summary`);
* **spread over seeds**: mean, smallest and largest of a measurement over
  independent training runs, and a t-interval of its mean (:func:`spread`).

Everything here is NumPy and SciPy; nothing imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import betainc, betaincinv, logsumexp
from scipy.stats import t as student_t

from ._checks import (
    as_float_array,
    as_index_array,
    describe,
    require_instance,
    require_int,
    require_number,
    require_positive_int,
    require_sequence,
)
from .facts import FactWorld, check_facts, check_world

#: The L2 penalty of :func:`fit_additive_baseline` (the loss is a mean over facts): weak enough
#: to let the fit use every weight, strong enough to keep the weights finite when some
#: facts can be fitted exactly.
BASELINE_PENALTY = 1e-4


def chance_recall(world: FactWorld) -> float:
    """The recall of guessing an object at random: ``1 / n_objects``.

    >>> from ffnbook.facts import make_world
    >>> chance_recall(make_world(2, 2, 8, seed=0))
    0.125
    """
    return 1.0 / check_world(world).n_objects


class AdditiveBaseline(NamedTuple):
    """Object scores with no interaction: ``subject[s] + relation[r] + bias``, each a row of object scores."""

    subject: np.ndarray  #: (n_subjects, n_objects)
    relation: np.ndarray  #: (n_relations, n_objects)
    bias: np.ndarray  #: (n_objects,)
    penalty: float  #: the L2 penalty per fact it was fitted with

    def scores(self, facts) -> np.ndarray:
        """The object scores of each (subject, relation) row, shape ``(n, n_objects)``."""
        facts = as_index_array(facts, "facts", ndim=2, what="(subject, relation) ids")
        if facts.shape[1] != 2 or len(facts) == 0:
            raise ValueError(f"facts must be (subject, relation) rows, shape (n >= 1, 2), got shape {facts.shape}")
        for column, table, what in ((0, self.subject, "subject"), (1, self.relation, "relation")):
            if facts[:, column].max() >= len(table):
                raise ValueError(f"facts name {what} {facts[:, column].max()}, the baseline knows {len(table)}")
        return self.subject[facts[:, 0]] + self.relation[facts[:, 1]] + self.bias

    def guesses(self, facts) -> np.ndarray:
        """The highest-scoring object id of each row (the first one on a tie)."""
        return np.argmax(self.scores(facts), axis=1)


def _design(facts: np.ndarray, n_subjects: int, n_relations: int) -> np.ndarray:
    """One row per fact: a one-hot subject, a one-hot relation and a constant 1, ``(n, S + R + 1)``."""
    x = np.zeros((len(facts), n_subjects + n_relations + 1))
    rows = np.arange(len(facts))
    x[rows, facts[:, 0]] = 1.0
    x[rows, n_subjects + facts[:, 1]] = 1.0
    x[:, -1] = 1.0
    return x


def _additive_objective(theta: np.ndarray, design: np.ndarray, answers: np.ndarray, n_objects: int,
                       penalty: float) -> tuple[float, np.ndarray]:
    """The baseline's loss and gradient at ``theta``, the flattened ``(S + R + 1, n_objects)`` weights.

    ``design`` is :func:`_design` of the facts. Loss: mean cross-entropy of
    the right object over the facts, plus ``penalty / 2`` times the sum of
    squared weights.
    """
    w = theta.reshape(-1, n_objects)
    z = design @ w
    log_p = z - logsumexp(z, axis=1, keepdims=True)
    n = len(design)
    rows = np.arange(n)
    loss = -log_p[rows, answers].mean() + 0.5 * penalty * float(theta @ theta)
    dz = np.exp(log_p)
    dz[rows, answers] -= 1.0
    grad = (design.T @ dz) / n + penalty * w
    return float(loss), grad.ravel()


def fit_additive_baselines(worlds: Sequence[FactWorld], train_facts: Sequence, *,
                           penalty: float = BASELINE_PENALTY) -> list[AdditiveBaseline]:
    """Fit the interaction-free baseline of each world to its training facts, with one L-BFGS run.

    The fits are independent: the joint loss is the sum of the worlds'
    losses, each over its own weights, so its minimum is every world's own
    minimum; one run saves the optimiser's overhead. Each loss is strictly
    convex; the run stops when no gradient entry exceeds 1e-8 (tests check
    each fit's optimality conditions independently).
    """
    penalty = require_number(penalty, "penalty", low=0, low_open=True)
    worlds = require_sequence(worlds, "worlds", item=lambda w, label: require_instance(w, label, FactWorld))
    if len(worlds) > 1024:
        raise ValueError(f"worlds must hold at most 1,024 worlds, got {len(worlds)}")
    train_facts = require_sequence(train_facts, "train_facts", expected="a list of fact arrays, one per world")
    if len(worlds) != len(train_facts):
        raise ValueError(f"train_facts must hold one fact array per world ({len(worlds)}), got {len(train_facts)}")
    problems = []
    for i, (world, facts) in enumerate(zip(worlds, train_facts)):
        facts = check_facts(world, facts, f"train_facts[{i}]")
        design = _design(facts, world.n_subjects, world.n_relations)
        problems.append((design, world.answers(facts), world.n_objects, design.shape[1] * world.n_objects))
    cuts = np.cumsum([0] + [p[3] for p in problems])

    def joint(theta):
        loss, grads = 0.0, []
        for (design, answers, n_objects, _), lo, hi in zip(problems, cuts[:-1], cuts[1:]):
            value, grad = _additive_objective(theta[lo:hi], design, answers, n_objects, penalty)
            loss += value
            grads.append(grad)
        return loss, np.concatenate(grads)

    result = minimize(joint, np.zeros(cuts[-1]), jac=True, method="L-BFGS-B",
                      options={"maxiter": 20_000, "gtol": 1e-8, "ftol": 0.0})
    fits = []
    for world, lo, hi in zip(worlds, cuts[:-1], cuts[1:]):
        w = result.x[lo:hi].reshape(-1, world.n_objects)
        n_s, n_r = world.n_subjects, world.n_relations
        fits.append(AdditiveBaseline(w[:n_s], w[n_s: n_s + n_r], w[-1], penalty))
    return fits


#: The ridge penalty of :func:`fit_linear_probe`, per example: small, to keep the fit unique when the
#: features are dependent (a layer norm's output sums to zero), not to shrink it.
PROBE_PENALTY = 1e-3


class LinearProbe(NamedTuple):
    """An affine map from feature vectors to class scores, fitted by :func:`fit_linear_probe`."""

    weights: np.ndarray  #: the weights, shape (n_features + 1, n_classes), the last row the bias
    penalty: float

    def predict(self, features) -> np.ndarray:
        """The highest-scoring class of each row of ``features`` ``(n, n_features)``."""
        x = as_float_array(features, "features", finite=True).astype(np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.weights) - 1:
            raise ValueError(f"features must have shape (n, {len(self.weights) - 1}), got {x.shape}")
        return np.argmax(x @ self.weights[:-1] + self.weights[-1], axis=1)


def fit_linear_probe(features, labels, n_classes: int, *, penalty: float = PROBE_PENALTY) -> LinearProbe:
    """A linear probe: the least-squares affine map from ``features`` ``(n, d)`` onto one-hot class ``labels``.

    ``[x, 1] W`` with ``W`` minimising the squared distance to the one-hot
    rows plus ``penalty · n`` times the squared weights (ridge regression,
    solved in closed form); a row's class is its highest score. It asks
    whether the classes can be read from the features by an affine map,
    where a fixed read-out (such as a model's unembedding) may not find them.

    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> fit_linear_probe(x, [0, 0, 1, 1], 2).predict([[0.8, 0.3], [0.2, 0.7]]).tolist()
    [0, 1]
    """
    x = as_float_array(features, "features", finite=True).astype(np.float64)
    n_classes = require_positive_int(n_classes, "n_classes")
    labels = as_index_array(labels, "labels", ndim=1, high=n_classes, what="class ids")
    penalty = require_number(penalty, "penalty", low=0, low_open=True)
    if x.ndim != 2 or len(x) != len(labels) or len(x) == 0:
        raise ValueError(f"features (n, d) and labels (n,) must agree and hold at least one row, got {x.shape} "
                         f"and {labels.shape}")
    design = np.hstack([x, np.ones((len(x), 1))])
    targets = np.eye(n_classes)[labels]
    gram = design.T @ design + penalty * len(x) * np.eye(design.shape[1])
    return LinearProbe(np.linalg.solve(gram, design.T @ targets), float(penalty))


def fit_additive_baseline(world: FactWorld, train_facts, *, penalty: float = BASELINE_PENALTY) -> AdditiveBaseline:
    """Fit the interaction-free baseline to ``train_facts`` of ``world`` (see :func:`fit_additive_baselines`)."""
    return fit_additive_baselines([check_world(world)], [check_facts(world, train_facts, "train_facts")],
                                  penalty=penalty)[0]


def baseline_recall(world: FactWorld, facts, baseline: AdditiveBaseline | None = None) -> float:
    """Share of ``facts`` whose object the additive baseline names (fitted on ``facts`` if not given).

    The baseline sees only the (subject, relation) pair, so no prompt is
    needed: its answer does not depend on the filler.
    """
    facts = check_facts(world, facts)
    if baseline is None:
        baseline = fit_additive_baseline(world, facts)
    require_instance(baseline, "baseline", AdditiveBaseline)
    if baseline.subject.shape != (world.n_subjects, world.n_objects) or \
            baseline.relation.shape != (world.n_relations, world.n_objects):
        raise ValueError(f"baseline must be fitted to a world of this shape ({world.n_subjects} subjects, "
                         f"{world.n_relations} relations, {world.n_objects} objects)")
    return float(np.mean(baseline.guesses(facts) == world.answers(facts)))


def additive_part(scores) -> np.ndarray:
    """The part of a score grid that adds a subject term and a relation term: ``A[s, o] + B[r, o] + c[o]``.

    ``scores`` is ``(n_subjects, n_relations, n_objects)``: any predictor's
    score for every object, for every pair of a subject and a relation. Its
    least-squares additive fit, object by object, is the two-way
    decomposition of a full table: row means plus column means minus the
    grand mean. What is left, ``scores - additive_part(scores)``, is the
    interaction: the part that depends on subject and relation *together*.
    A predictor whose additive part alone names a fact's object could have
    named it without combining subject and relation.

    >>> grid = np.zeros((2, 2, 1)); grid[0, 0, 0] = 4.0  # only the pair (0, 0) scores
    >>> additive_part(grid)[:, :, 0]  # row and column means carry 3/4 of it, the interaction the rest
    array([[ 3.,  1.],
           [ 1., -1.]])
    """
    scores = as_float_array(scores, "scores", finite=True).astype(np.float64)
    if scores.ndim != 3 or min(scores.shape) == 0:
        raise ValueError(f"scores must have shape (n_subjects, n_relations, n_objects), got {scores.shape}")
    return scores.mean(axis=1, keepdims=True) + scores.mean(axis=0, keepdims=True) - scores.mean(axis=(0, 1))


def grid_recall(scores, world: FactWorld, facts) -> float:
    """Share of ``facts`` whose object scores highest in a ``(n_subjects, n_relations, n_objects)`` score grid.

    >>> from ffnbook.facts import make_world
    >>> w = make_world(2, 2, 3, seed=0)
    >>> grid = np.eye(3)[w.objects]  # a perfect grid: each pair scores its own object 1
    >>> grid_recall(grid, w, w.all_facts())
    1.0
    """
    check_world(world)
    facts = check_facts(world, facts, "facts")
    scores = as_float_array(scores, "scores", finite=True)
    shape = (world.n_subjects, world.n_relations, world.n_objects)
    if scores.shape != shape:
        raise ValueError(f"scores must have the world's shape {shape}, got {scores.shape}")
    guesses = scores[facts[:, 0], facts[:, 1]].argmax(axis=-1)
    return float(np.mean(guesses == world.answers(facts)))


class BinomialSummary(NamedTuple):
    """``k`` successes of ``n`` trials, with an exact interval and a test against chance."""

    k: int
    n: int
    share: float  #: k / n
    low: float  #: lower end of the exact (Clopper–Pearson) interval
    high: float  #: upper end
    chance: float  #: the success probability of the null hypothesis
    p_value: float  #: the one-sided probability of k or more successes at chance


def binomial_summary(k: int, n: int, chance: float, *, confidence: float = 0.95) -> BinomialSummary:
    """Exact binomial interval for ``k`` of ``n`` and the test "no better than ``chance``".

    The interval is Clopper and Pearson's: its ends are quantiles of beta
    distributions. The p-value is the probability of at least ``k``
    successes in ``n`` trials that each succeed with probability ``chance``.

    >>> s = binomial_summary(4, 64, 1 / 32)
    >>> (s.k, s.n, round(s.low, 4), round(s.high, 4), round(s.p_value, 3))
    (4, 64, 0.0173, 0.1524, 0.14)
    """
    n = require_positive_int(n, "n")
    k = require_int(k, "k", minimum=0, maximum=n)
    chance = require_number(chance, "chance", low=0, high=1, low_open=True, high_open=True)
    confidence = require_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    p_value = 1.0 if k == 0 else float(betainc(k, n - k + 1, chance))  # P(X >= k) = I_chance(k, n - k + 1)
    return BinomialSummary(k, n, k / n, low, high, float(chance), p_value)


def binomial_power(n: int, chance: float, true_rate: float, *, alpha: float = 0.05) -> float:
    """How often the one-sided test of :func:`binomial_summary` would reject chance if the truth were ``true_rate``.

    The test rejects "no better than ``chance``" at level ``alpha`` when
    the count reaches the smallest ``k`` whose p-value is at most
    ``alpha``; the power is the probability of such a count when each of
    the ``n`` trials succeeds with probability ``true_rate``. It says what a
    count that does not reject can rule out: a true rate with low power
    would often have looked like chance too.

    >>> round(binomial_power(100, 0.1, 0.2), 3)  # 100 trials, chance 10%, truth 20%: rejects at 16 or more
    0.871
    """
    n = require_positive_int(n, "n")
    chance = require_number(chance, "chance", low=0, high=1, low_open=True, high_open=True)
    true_rate = require_number(true_rate, "true_rate", low=0, high=1, low_open=True, high_open=True)
    alpha = require_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    tails = betainc(np.arange(1, n + 1), n - np.arange(1, n + 1) + 1, chance)  # P(X >= k), k = 1..n
    rejecting = np.flatnonzero(tails <= alpha)
    if not len(rejecting):
        return 0.0  # no count of n trials would reject: the test has no power at all
    k = int(rejecting[0]) + 1
    return float(betainc(k, n - k + 1, true_rate))


class Spread(NamedTuple):
    """A measurement over independent runs: mean, range, and a confidence interval of the mean."""

    mean: float
    low: float  #: the smallest value
    high: float  #: the largest value
    n: int  #: how many runs
    ci_low: float  #: lower end of the interval of the mean (Student's t, ``n - 1`` degrees of freedom); NaN for one run
    ci_high: float  #: upper end
    confidence: float  #: the interval's confidence level

    @property
    def half_width(self) -> float:
        """Half the width of the interval, the margin the mean is known to, plus or minus."""
        return (self.ci_high - self.ci_low) / 2


def spread(values: Sequence[float], *, confidence: float = 0.95) -> Spread:
    """Mean, range and a ``confidence`` interval of the mean of one measurement over several seeds.

    The interval is Student's t: ``mean ± t(n - 1) · sd / sqrt(n)``, with
    the sample standard deviation ``sd``. It treats the runs as independent
    draws of the same experiment (seeds, and the rounding of the machine
    they ran on); with one run it is undefined (NaN), so a claim asserted
    on it fails.

    >>> s = spread([0.5, 0.75, 1.0])
    >>> s.mean, s.low, s.high, s.n
    (0.75, 0.5, 1.0, 3)
    >>> round(s.ci_low, 4), round(s.ci_high, 4)  # 0.75 ± 4.303 × 0.25 / √3
    (0.129, 1.371)
    """
    values = np.array(require_sequence(values, "values", expected="a list of numbers",
                                       item=lambda v, label: require_number(v, label)), dtype=np.float64)
    confidence = require_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    mean, n = float(values.mean()), len(values)
    if n > 1:
        half = float(student_t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
        ci = (mean - half, mean + half)
    else:
        ci = (float("nan"), float("nan"))
    return Spread(mean, float(values.min()), float(values.max()), n, *ci, float(confidence))


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def recall_table(entries: Sequence[tuple[str, object]]) -> MarkdownTable:  # noqa: F821 - imported in the body
    """A table of recall numbers with their spread: one row per ``(label, Spread or BinomialSummary)``.

    A :class:`Spread` shows its mean and the interval of the mean over seeds; a
    :class:`BinomialSummary` its count, its share, its interval and the
    p-value of the test against chance.
    """
    from .display import MarkdownTable

    def entry(e, label):
        if not (isinstance(e, (tuple, list)) and len(e) == 2 and isinstance(e[0], str)):
            raise TypeError(f"{label} must be a (label, value) pair, got {describe(e)}")
        if not isinstance(e[1], (Spread, BinomialSummary)):
            require_number(e[1], f"{label}[1]", low=0, high=1)
        return e

    entries = require_sequence(entries, "entries", item=entry)
    rows = []
    for label, value in entries:
        if isinstance(value, Spread):
            rows.append({"label": label, "value": _percent(value.mean),
                         "spread": f"{value.confidence:.0%} interval {_percent(value.ci_low)} to "
                                   f"{_percent(value.ci_high)} over {value.n} seeds"})
        elif isinstance(value, BinomialSummary):
            rows.append({"label": label, "value": f"{value.k} of {value.n} ({_percent(value.share)})",
                         "spread": f"95% interval {_percent(value.low)} to {_percent(value.high)}; "
                                   f"p = {value.p_value:.2f} against chance"})
        else:
            rows.append({"label": label, "value": _percent(float(value)), "spread": "exact"})
    return MarkdownTable(rows, [("predictor", "label", "s"), ("recall", "value", "s"), ("spread", "spread", "s")])
