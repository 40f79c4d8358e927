"""The controls of the trained-FFN experiments, checked against independent derivations and SciPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ffnbook import controls, facts


@pytest.fixture(scope="module")
def world_and_facts():
    world = facts.make_world(6, 5, 7, seed=3)
    split = facts.split_facts(world, 5, seed=3)
    return world, split.train


def _loss_and_gradient_by_hand(baseline: controls.AdditiveBaseline, world, train):
    """The penalised mean cross-entropy and its gradient, written fact by fact with plain loops."""
    answers = world.answers(train)
    n = len(train)
    g_subject = np.zeros_like(baseline.subject)
    g_relation = np.zeros_like(baseline.relation)
    g_bias = np.zeros_like(baseline.bias)
    loss = 0.0
    for (s, r), o in zip(train, answers):
        z = baseline.subject[s] + baseline.relation[r] + baseline.bias
        p = np.exp(z - z.max())
        p /= p.sum()
        loss -= math.log(p[o]) / n
        p[o] -= 1.0
        g_subject[s] += p / n
        g_relation[r] += p / n
        g_bias += p / n
    lam = baseline.penalty
    weights = np.concatenate([baseline.subject.ravel(), baseline.relation.ravel(), baseline.bias])
    loss += 0.5 * lam * float(weights @ weights)
    return loss, (
        g_subject + lam * baseline.subject,
        g_relation + lam * baseline.relation,
        g_bias + lam * baseline.bias,
    )


def test_the_baseline_fit_meets_its_optimality_conditions(world_and_facts):
    world, train = world_and_facts
    fit = controls.fit_additive_baseline(world, train)
    _, grads = _loss_and_gradient_by_hand(fit, world, train)
    assert max(float(np.abs(g).max()) for g in grads) < 1e-7


def test_the_baseline_fit_equals_newtons_method(world_and_facts):
    """An independent solver: Newton's method on the same strictly convex loss, with an explicit Hessian."""
    world, train = world_and_facts
    penalty = 1e-2  # a well-conditioned Hessian for a few plain Newton steps
    fit = controls.fit_additive_baseline(world, train, penalty=penalty)
    n_s, n_r, n_o = world.n_subjects, world.n_relations, world.n_objects
    x = np.zeros((len(train), n_s + n_r + 1))
    x[np.arange(len(train)), train[:, 0]] = 1
    x[np.arange(len(train)), n_s + train[:, 1]] = 1
    x[:, -1] = 1
    y = np.eye(n_o)[world.answers(train)]
    w = np.zeros((x.shape[1], n_o))
    for _ in range(50):
        z = x @ w
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad = x.T @ (p - y) / len(x) + penalty * w
        hess = np.zeros((w.size, w.size))
        for xi, pi in zip(x, p):
            hess += np.kron(np.outer(xi, xi), np.diag(pi) - np.outer(pi, pi)) / len(x)
        hess += penalty * np.eye(w.size)
        w -= np.linalg.solve(hess, grad.ravel()).reshape(w.shape)
    assert np.allclose(fit.subject, w[:n_s], atol=1e-5)
    assert np.allclose(fit.relation, w[n_s : n_s + n_r], atol=1e-5)
    assert np.allclose(fit.bias, w[-1], atol=1e-5)


def test_a_joint_fit_is_each_world_fitted_alone():
    worlds = [facts.make_world(5, 4, 6, seed=s) for s in (0, 1)]
    fits = controls.fit_additive_baselines(worlds, [w.all_facts() for w in worlds], penalty=1e-2)
    for world, joint in zip(worlds, fits):
        alone = controls.fit_additive_baseline(world, world.all_facts(), penalty=1e-2)
        for a, b in zip(joint[:3], alone[:3]):
            assert np.allclose(a, b, atol=1e-5)


def test_the_baseline_recalls_what_needs_no_interaction_and_misses_what_does():
    """Objects that follow the subject alone are all recalled; an exclusive-or table cannot be."""
    by_subject = facts.FactWorld(objects=np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]]), n_objects=3, n_filler=2)
    assert controls.baseline_recall(by_subject, by_subject.all_facts()) == 1.0
    xor = facts.FactWorld(objects=np.array([[0, 1], [1, 0]]), n_objects=2, n_filler=2)
    # Additive scores give object 1 the margin a0 + b0 < ... : at most three of the four facts can be right.
    assert controls.baseline_recall(xor, xor.all_facts()) <= 0.75


@pytest.mark.parametrize(
    "k, n, chance", [(0, 10, 0.1), (10, 10, 0.1), (4, 64, 1 / 32), (3, 160, 1 / 32), (37, 50, 0.5), (1, 1, 0.3)]
)
def test_the_binomial_summary_agrees_with_scipy(k, n, chance):
    got = controls.binomial_summary(k, n, chance)
    test = stats.binomtest(k, n, chance, alternative="greater")
    interval = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert got.k == k and got.n == n and got.share == k / n
    assert got.low == pytest.approx(interval.low, abs=1e-12)
    assert got.high == pytest.approx(interval.high, abs=1e-12)
    assert got.p_value == pytest.approx(test.pvalue, rel=1e-9)


def test_the_binomial_p_value_is_the_upper_tail_summed_by_hand():
    k, n, p = 5, 40, 0.05
    tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
    assert controls.binomial_summary(k, n, p).p_value == pytest.approx(tail, rel=1e-12)


def test_spread_and_the_recall_table():
    values = [0.25, 0.5, 1.0]
    s = controls.spread(values)
    interval = stats.t.interval(0.95, 2, loc=np.mean(values), scale=stats.sem(values))  # scipy's own t-interval
    assert s == controls.Spread(
        mean=pytest.approx(0.5833333333333334),
        low=0.25,
        high=1.0,
        n=3,
        ci_low=pytest.approx(interval[0]),
        ci_high=pytest.approx(interval[1]),
        confidence=0.95,
    )
    assert s.half_width == pytest.approx((interval[1] - interval[0]) / 2)
    assert math.isnan(controls.spread([0.5]).ci_low)  # one run has no interval: a claim on it fails
    text = controls.recall_table(
        [("chance", 0.125), ("model", s), ("held out", controls.binomial_summary(2, 40, 0.125))]
    )._repr_markdown_()
    assert text.startswith("| predictor | recall | spread |")  # every header cell named (axe: empty-table-header)
    assert "| chance | 12.5% | exact |" in text
    assert f"| model | 58.3% | 95% interval {100 * interval[0]:.1f}% to {100 * interval[1]:.1f}% over 3 seeds |" in text
    p_value = stats.binomtest(2, 40, 0.125, alternative="greater").pvalue
    assert "2 of 40 (5.0%)" in text and f"p = {p_value:.2f} against chance" in text


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: controls.binomial_summary(5, 4, 0.5), ValueError, "k must be an integer in"),
        (lambda: controls.binomial_summary(1, 4, 1.5), ValueError, r"chance must be a number in \(0, 1\)"),
        (lambda: controls.binomial_summary(1, 0, 0.5), ValueError, "n"),
        (lambda: controls.spread([]), ValueError, "values must hold at least one item"),
        (
            lambda: controls.fit_additive_baseline(facts.make_world(2, 2, 3, seed=0), [[0, 0]], penalty=0.0),
            ValueError,
            "penalty",
        ),
        (
            lambda: controls.fit_additive_baselines([facts.make_world(2, 2, 3, seed=0)], []),
            ValueError,
            "train_facts must hold at least one item",
        ),
        (
            lambda: controls.fit_additive_baselines([facts.make_world(2, 2, 3, seed=0)] * 2, [[[0, 0]]]),
            ValueError,
            "one fact array per world",
        ),
    ],
)
def test_bad_input_is_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_binomial_power_is_scipys_tail_at_the_first_rejecting_count():
    for n, chance, truth in ((160, 1 / 32, 2 / 32), (40, 0.25, 0.5), (7, 0.5, 0.9)):
        k = next((k for k in range(n + 1) if stats.binom.sf(k - 1, n, chance) <= 0.05), None)
        expected = 0.0 if k is None else stats.binom.sf(k - 1, n, truth)
        assert controls.binomial_power(n, chance, truth) == pytest.approx(expected, rel=1e-9)
    assert controls.binomial_power(3, 0.5, 0.9) == 0.0  # three trials can never reach p <= 0.05 at chance 1/2
