"""The trained-FFN page shows what a fresh training run computes, value by value (looked up by glue key).

The page's models are trained again here, with the settings the page glued
(its one source: nothing about the experiment's shape is copied into this
module but the seeds its prompts are drawn with). Training is deterministic on
one machine (seeded, deterministic algorithms, one thread), and the site and
the tests run on the same machine, so every glued number that comes from the
same computation must come out the same; where a test can compute a number
another way (a separate fit, SciPy's binomial test and t-interval, an explicit
least-squares fit, counting by hand), it does. Which claims hold on other
machines is `make robustness`'s job (tests/test_robustness_tool.py), not this
module's: it checks each glued number against its recomputation, never against
a value seen in one run.

`make test` trains the page's fifteen main runs again and checks every number drawn from them;
the capacity sweep's fifteen further runs and the explorer's unit-by-unit remeasurement (about
a third of this module's time) are `make test-full`'s (marked ``full``).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats
from sitecheck import PAGES_WITH_MEASURED_TIMES, figures, glue_data, glued

from ffnbook import controls, facts, memory
from ffnbook import tiny_transformer as tt
from ffnbook import trained_ffn as tf

PAGE = "trained-ffn"
# The seeds the page draws its prompts with (probes, held-out prompts, donors, score grids).
PROBE_SEED, HELD_SEED, DONOR_SEED, GRID_SEED, FRESH_SEED = 7, 9, 8, 11, 12


#: The recomputations that are make test-full's (see the module's docstring).
SLOW_RECOMPUTATION = pytest.mark.full


def interval(values, confidence=0.95):
    """SciPy's t-interval of the mean: the independent check of controls.spread."""
    values = np.asarray(values, dtype=np.float64)
    return stats.t.interval(confidence, len(values) - 1, loc=values.mean(), scale=stats.sem(values))


def setting(site, key):
    value = glued(site, PAGE, key)
    return int(value) if float(value).is_integer() else value


@pytest.fixture(scope="module")
def rerun(site):
    """The page's worlds, its fifteen training runs and its probe prompts, recomputed in this process."""
    g = lambda key: setting(site, key)  # noqa: E731 - the page's glued settings
    seeds = range(g("tr_n_seeds"))
    with tt.deterministic_torch(seed=0, threads=1):
        worlds = [
            facts.make_world(
                g("tr_n_subjects"), g("tr_n_relations"), g("tr_n_objects"), n_filler=g("tr_n_filler"), seed=s
            )
            for s in seeds
        ]
        splits = [facts.split_facts(w, g("tr_n_held_out"), seed=s) for w, s in zip(worlds, seeds)]
        config = tt.ModelConfig(
            vocab_size=worlds[0].vocab_size,
            seq_len=g("tr_seq_len"),
            d_model=g("tr_d_model"),
            n_heads=g("tr_n_heads"),
            d_ff=g("tr_d_ff"),
            n_blocks=g("tr_n_blocks"),
        )
        training = tt.TrainConfig(
            steps=g("tr_steps"),
            batch_size=g("tr_batch"),
            learning_rate=g("tr_lr"),
            eval_every=g("tr_eval_every"),
            eval_contexts=g("tr_eval_contexts"),
        )
        replicas = [tt.Replica(w, s.train, seed, s.held_out) for w, s, seed in zip(worlds, splits, seeds)]
        controls_ = [r._replace(d_ff=0) for r in replicas]
        runs = tt.train_replicas(replicas + controls_, config, training)
        matched = tt.train_replicas(controls_, replace(config, d_model=g("tr_matched_d_model")), training)
        probes = [
            facts.fact_prompts(w, s.train, g("tr_probe_contexts"), config.seq_len, seed=PROBE_SEED)
            for w, s in zip(worlds, splits)
        ]
        yield {
            "worlds": worlds,
            "splits": splits,
            "with": runs[: len(seeds)],
            "without": runs[len(seeds) :],
            "matched": matched,
            "probes": probes,
            "config": config,
            "training": training,
            "seeds": seeds,
        }


@pytest.fixture(scope="module")
def ablations(rerun):
    with tt.deterministic_torch(seed=0, threads=1):
        yield [tf.ablation_study(r.model, w, p) for r, w, p in zip(rerun["with"], rerun["worlds"], rerun["probes"])]


def test_the_page_is_not_allowed_to_differ_between_builds():
    assert PAGE not in PAGES_WITH_MEASURED_TIMES


def test_every_glued_key_is_checked_here(site):
    """Each key the page glues is named in this module (written out, or as a pattern's f-string).

    The keys of the page's problems are checked with every page's problems, in test_pages_problems.py.
    """
    source = Path(__file__).read_text() + (Path(__file__).parent / "test_pages_problems.py").read_text()
    patterns = [re.sub(r"\{[^}]*\}", r"[a-z0-9_]+", m) for m in re.findall(r'f"(tr_[^"]*)"', source)]
    missing = [
        key
        for key in glue_data(site, PAGE)
        if f'"{key}"' not in source and not any(re.fullmatch(p, key) for p in patterns)
    ]
    assert not missing, f"glued keys no test checks: {missing}"


def test_the_page_names_the_numerical_environment_of_its_build(site):
    machine = tt.numerical_environment()  # the tests run where the site was built
    assert glued(site, PAGE, "tr_env_cpu") == machine.cpu
    assert glued(site, PAGE, "tr_env_capability") == torch.backends.cpu.get_cpu_capability()
    assert glued(site, PAGE, "tr_env_torch") == torch.__version__
    blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show()).group(1)
    assert glued(site, PAGE, "tr_env_blas").lower() == blas.lower()


def test_world_and_model_numbers(site, rerun):
    world, split, config = rerun["worlds"][0], rerun["splits"][0], rerun["config"]
    assert glued(site, PAGE, "tr_n_subjects") * glued(site, PAGE, "tr_n_relations") == glued(site, PAGE, "tr_n_facts")
    assert glued(site, PAGE, "tr_n_facts") == world.n_facts == len(world.all_facts())
    assert glued(site, PAGE, "tr_n_train") == len(split.train)
    assert glued(site, PAGE, "tr_n_train") + glued(site, PAGE, "tr_n_held_out") == world.n_facts
    assert glued(site, PAGE, "tr_chance") == 1 / world.n_objects
    assert glued(site, PAGE, "tr_n_filler") == world.n_filler
    assert glued(site, PAGE, "tr_ratio") == glued(site, PAGE, "tr_d_ff") / glued(site, PAGE, "tr_d_model")
    assert config.d_ff == 4 * config.d_model  # "the classic" ratio the prose names


def recall_at(runs, step):
    """Each run's recall at a recorded step."""
    return [r.history["recall"][r.history["step"].index(step)] for r in runs]


def test_training_numbers(site, rerun):
    with_ffn, without, matched = rerun["with"], rerun["without"], rerun["matched"]
    model, config, steps = with_ffn[0].model, rerun["config"], rerun["training"].steps
    assert glued(site, PAGE, "tr_n_runs") == len(with_ffn) + len(without) + len(matched) == 3 * len(rerun["seeds"])
    assert glued(site, PAGE, "tr_n_params") == sum(p.numel() for p in model.parameters())
    ffn = sum(p.numel() for b in model.blocks for p in b.ffn.parameters())
    assert (
        glued(site, PAGE, "tr_n_ffn_params")
        == ffn
        == config.n_blocks * (2 * config.d_model * config.d_ff + config.d_ff + config.d_model)
    )
    assert glued(site, PAGE, "tr_same_params") == glued(site, PAGE, "tr_n_params") - ffn

    # The parameter-matched width, found by counting the parameters of real models, width by width.
    def without_ffn_params(d_model):
        wide = tt.TinyTransformer(replace(config, d_model=d_model))
        return sum(p.numel() for n, p in wide.named_parameters() if ".ffn." not in n)

    d = glued(site, PAGE, "tr_matched_d_model")
    assert d % config.n_heads == 0 and glued(site, PAGE, "tr_matched_params") == without_ffn_params(d)
    assert without_ffn_params(d) >= glued(site, PAGE, "tr_n_params") > without_ffn_params(d - config.n_heads)
    # The controls' FFNs really are silent: every FFN weight of every control is exactly zero.
    assert all(
        torch.count_nonzero(p) == 0 for r in without + matched for b in r.model.blocks for p in b.ffn.parameters()
    )
    assert glued(site, PAGE, "tr_mid_step") == steps // 2 and glued(site, PAGE, "tr_early_step") == steps // 3

    for name, runs in (("with", with_ffn), ("without", without), ("matched", matched)):
        for key, step in (
            (f"tr_mid_{name}", steps // 2),
            (f"tr_early_{name}", steps // 3),
            (f"tr_final_{name}", steps),
        ):
            assert glued(site, PAGE, key) == pytest.approx(np.mean(recall_at(runs, step)))
        finals = recall_at(runs, steps)
        if len(set(finals)) > 1:
            assert glued(site, PAGE, f"tr_final_{name}_low") == pytest.approx(interval(finals)[0])
        assert glued(site, PAGE, f"tr_final_loss_{name}") == pytest.approx(
            np.mean([r.history["loss"][-1] for r in runs])
        )
        assert glued(site, PAGE, f"tr_final_{name}_low") > glued(site, PAGE, "tr_final_floor")  # "starts above"
    for name, others in (("without", without), ("matched", matched)):  # leads in percentage points
        leads = 100 * np.subtract(recall_at(with_ffn, steps // 2), recall_at(others, steps // 2))
        assert glued(site, PAGE, f"tr_mid_lead_{name}") == pytest.approx(leads.mean())
        low, high = interval(leads)
        assert glued(site, PAGE, f"tr_mid_lead_{name}_low") == pytest.approx(low)
        assert glued(site, PAGE, f"tr_mid_lead_{name}_high") == pytest.approx(high)
    early = 100 * np.subtract(recall_at(with_ffn, steps // 3), recall_at(matched, steps // 3))
    assert glued(site, PAGE, "tr_early_lead_matched") == pytest.approx(early.mean())
    low, high = interval(early)
    assert glued(site, PAGE, "tr_early_lead_matched_low") == pytest.approx(low)
    assert glued(site, PAGE, "tr_early_lead_matched_high") == pytest.approx(high)
    for step in with_ffn[0].history["step"][1:]:  # never more than the glued margin behind before halfway
        if step <= steps // 2:
            lead = 100 * np.subtract(recall_at(with_ffn, step), recall_at(matched, step))
            assert interval(lead)[1] < glued(site, PAGE, "tr_matched_behind")
    # What the prose says: a lead over the same-shape control on average, none the seeds vouch for over
    # the matched one, which is ahead on average a third of the way in.
    assert glued(site, PAGE, "tr_mid_lead_without") > 5
    assert glued(site, PAGE, "tr_mid_lead_matched_low") < 0
    assert glued(site, PAGE, "tr_early_matched") > glued(site, PAGE, "tr_early_with")


def test_final_losses_and_the_matched_controls_own_lead(site, rerun):
    with_ffn, without, matched = rerun["with"], rerun["without"], rerun["matched"]
    half = rerun["training"].steps // 2

    # Loss ratios: the geometric mean, with the interval taken on the log scale.
    matched_logs = [np.log(b.history["loss"][-1] / a.history["loss"][-1]) for a, b in zip(with_ffn, matched)]
    assert glued(site, PAGE, "tr_matched_loss_ratio") == pytest.approx(np.exp(np.mean(matched_logs)))
    assert (glued(site, PAGE, "tr_matched_loss_ratio_low"), glued(site, PAGE, "tr_matched_loss_ratio_high")) == (
        pytest.approx(np.exp(interval(matched_logs)))
    )
    logs = [np.log(b.history["loss"][-1] / a.history["loss"][-1]) for a, b in zip(with_ffn, without)]
    assert glued(site, PAGE, "tr_loss_ratio") == pytest.approx(np.exp(np.mean(logs)))
    assert glued(site, PAGE, "tr_loss_ratio_low") == pytest.approx(np.exp(interval(logs)[0]))
    assert glued(site, PAGE, "tr_loss_ratio_low") > 1  # "above its twin's"
    # The matched control, itself ahead of the same-shape one halfway.
    over_same = 100 * np.subtract(recall_at(matched, half), recall_at(without, half))
    assert glued(site, PAGE, "tr_mid_matched_over_same") == pytest.approx(over_same.mean())
    assert (glued(site, PAGE, "tr_mid_matched_over_same_low"), glued(site, PAGE, "tr_mid_matched_over_same_high")) == (
        pytest.approx(interval(over_same))
    )
    assert glued(site, PAGE, "tr_mid_matched_over_same") > 0  # "ahead ... on average"


def test_control_numbers(site, rerun):
    worlds, splits = rerun["worlds"], rerun["splits"]
    chance = glued(site, PAGE, "tr_chance")
    # The baseline fitted world by world (not jointly, as the page does), scored by its own argmax.
    recalls, weights = [], set()
    for w, s in zip(worlds, splits):
        fit = controls.fit_additive_baseline(w, s.train)
        scores = fit.subject[s.train[:, 0]] + fit.relation[s.train[:, 1]] + fit.bias
        recalls.append(float(np.mean(scores.argmax(axis=1) == w.answers(s.train))))
        weights.add((w.n_subjects + w.n_relations + 1) * w.n_objects)
    one_fact = 1 / len(splits[0].train)
    assert glued(site, PAGE, "tr_baseline") == pytest.approx(np.mean(recalls), abs=one_fact)
    low, high = interval(recalls)
    assert glued(site, PAGE, "tr_baseline_low") == pytest.approx(low, abs=one_fact)
    assert glued(site, PAGE, "tr_baseline_high") == pytest.approx(high, abs=one_fact)
    assert weights == {glued(site, PAGE, "tr_baseline_weights")}
    assert glued(site, PAGE, "tr_baseline_penalty") == controls.BASELINE_PENALTY
    for key, runs in (("tr_recall_with", rerun["with"]), ("tr_recall_without", rerun["without"])):
        assert glued(site, PAGE, key) == pytest.approx(
            np.mean([tt.recall(r.model, w, p) for r, w, p in zip(runs, worlds, rerun["probes"])])
        )
    # Held-out facts, counted by hand: one answer per fact from the scores averaged over its prompts.
    hits, contexts = 0, glued(site, PAGE, "tr_held_contexts")
    for r, w, s in zip(rerun["with"], worlds, splits):
        p = facts.fact_prompts(w, s.held_out, contexts, rerun["config"].seq_len, seed=HELD_SEED)
        with torch.no_grad():
            logits = r.model(p.tokens)[:, -1, torch.from_numpy(w.object_tokens())]
        guesses = logits.reshape(len(s.held_out), contexts, -1).mean(dim=1).argmax(dim=1).numpy()
        hits += int(np.sum(guesses == w.answers(s.held_out)))
    n = len(rerun["seeds"]) * len(splits[0].held_out)
    assert (glued(site, PAGE, "tr_held_k"), glued(site, PAGE, "tr_held_n")) == (hits, n)
    test = stats.binomtest(hits, n, chance, alternative="greater")
    times = glued(site, PAGE, "tr_held_power_times")
    exact = stats.binomtest(hits, n).proportion_ci(confidence_level=glued(site, PAGE, "tr_confidence"), method="exact")
    assert glued(site, PAGE, "tr_confidence") == 0.95
    assert glued(site, PAGE, "tr_held_p") == pytest.approx(test.pvalue, rel=1e-9)
    assert glued(site, PAGE, "tr_held_low") == pytest.approx(exact.low, abs=1e-12)
    assert glued(site, PAGE, "tr_held_high") == pytest.approx(exact.high, abs=1e-12)
    # The test's power against twice chance: SciPy's tail at the first count that rejects chance at 5%.
    first = next(k for k in range(n + 1) if stats.binom.sf(k - 1, n, chance) <= 0.05)
    assert glued(site, PAGE, "tr_held_power") == pytest.approx(stats.binom.sf(first - 1, n, times * chance), rel=1e-9)
    assert glued(site, PAGE, "tr_held_power") < 0.8  # "only ... of the time"
    # What the prose says: the baseline sits between chance and the models; the held-out interval reaches
    # down near chance and rules out more than a few facts.
    assert chance < glued(site, PAGE, "tr_baseline") < glued(site, PAGE, "tr_recall_without")
    assert glued(site, PAGE, "tr_held_low") < 2 * chance and glued(site, PAGE, "tr_held_high") < 5 * chance


def test_ablation_numbers(site, rerun, ablations):
    def values(part, blocks, method, where="all"):
        return [tf.ablated_recall(a, part, blocks, method, where) for a in ablations]

    for b in (0, 1):
        for where in tf.ABLATION_SITES:
            assert glued(site, PAGE, f"tr_ffn{b}_{where}") == pytest.approx(np.mean(values("ffn", (b,), "mean", where)))
            assert glued(site, PAGE, f"tr_attn{b}_{where}") == pytest.approx(
                np.mean(values("attention", (b,), "mean", where))
            )
        assert glued(site, PAGE, f"tr_ffn{b}_zero_all") == pytest.approx(np.mean(values("ffn", (b,), "zero")))
    both = values("ffn", (0, 1), "mean")
    assert glued(site, PAGE, "tr_no_ffn_mean") == pytest.approx(np.mean(both))
    assert (glued(site, PAGE, "tr_no_ffn_low"), glued(site, PAGE, "tr_no_ffn_high")) == pytest.approx(interval(both))
    assert glued(site, PAGE, "tr_no_attention_mean") == pytest.approx(np.mean(values("attention", (0, 1), "mean")))
    assert glued(site, PAGE, "tr_ffn_needed") == pytest.approx(glued(site, PAGE, "tr_recall_with") - np.mean(both))
    intact = np.mean([tf.ablated_recall(a, "none") for a in ablations])
    assert glued(site, PAGE, "tr_ffn0_subject_cost") == pytest.approx(
        100 * (intact - np.mean(values("ffn", (0,), "mean", "subject")))
    )
    # One cell rebuilt by hand: block 1's FFN zeroed at → only, in the first seed's model.
    model, world, probe = rerun["with"][0].model, rerun["worlds"][0], rerun["probes"][0]
    with torch.no_grad():
        out = model.trace(probe.tokens).ffn_outputs[1].clone()
    out[:, -1] = 0.0
    assert tf.ablated_recall(ablations[0], "ffn", (1,), "zero", "query") == tt.recall(
        model, world, probe, ffn_ablation={1: out}
    )
    # What the prose says: block 1 anywhere but → changes nothing (by construction), both attentions act at →.
    for b in ("ffn", "attn"):
        assert all(
            glued(site, PAGE, f"tr_{b}1_{w}") == glued(site, PAGE, "tr_recall_with")
            for w in ("subject", "relation", "filler")
        )
    assert glued(site, PAGE, "tr_attn0_query") < glued(site, PAGE, "tr_attn0_subject")


def grid_and_additive(model, world, contexts, seq_len, ablate):
    """A model's score grid over every pair, rebuilt from its traces, and its additive part fitted with lstsq."""
    prompts = facts.fact_prompts(world, world.all_facts(), contexts, seq_len, seed=GRID_SEED)
    knocks = {"ffn_ablation": dict(enumerate(tf.mean_outputs(model, prompts)["ffn"]))} if ablate else {}
    with torch.no_grad():
        logits = model.trace(prompts.tokens, **knocks).logits[:, -1]
    scores = logits[:, torch.from_numpy(world.object_tokens())].double().numpy()
    grid = scores.reshape(world.n_facts, contexts, -1).mean(axis=1)  # rows: all facts, subject-major
    design = np.hstack(
        [
            np.repeat(np.eye(world.n_subjects), world.n_relations, axis=0),
            np.tile(np.eye(world.n_relations), (world.n_subjects, 1)),
        ]
    )
    return grid, design @ np.linalg.lstsq(design, grid, rcond=None)[0]


def test_what_survives_without_the_ffns_split_by_an_explicit_least_squares_fit(site, rerun):
    """The FFN-ablated model's score grid and its additive part; fact by fact against a baseline fitted alone."""
    contexts, seq_len = glued(site, PAGE, "tr_grid_contexts"), rerun["config"].seq_len
    full, additive, not_baseline = [], [], []
    for r, w, s in zip(rerun["with"], rerun["worlds"], rerun["splits"]):
        grid, fitted = grid_and_additive(r.model, w, contexts, seq_len, ablate=True)
        rows, answers = s.train[:, 0] * w.n_relations + s.train[:, 1], w.answers(s.train)
        hit = grid[rows].argmax(axis=1) == answers
        full.append(float(np.mean(hit)))
        additive.append(float(np.mean(fitted[rows].argmax(axis=1) == answers)))
        baseline = controls.fit_additive_baseline(w, s.train)  # this world's fit alone (the page fits them jointly)
        not_baseline.append(float(np.mean(baseline.guesses(s.train)[hit] != answers[hit])))
    assert glued(site, PAGE, "tr_grid_ablated") == pytest.approx(np.mean(full))
    assert glued(site, PAGE, "tr_grid_additive") == pytest.approx(np.mean(additive))
    assert glued(site, PAGE, "tr_grid_ablated_low") == pytest.approx(interval(full)[0])
    assert glued(site, PAGE, "tr_grid_additive_high") == pytest.approx(interval(additive)[1])
    assert glued(site, PAGE, "tr_grid_additive_high") < glued(site, PAGE, "tr_grid_ablated_low")  # "no overlap"
    assert glued(site, PAGE, "tr_grid_share") == pytest.approx(np.mean(np.divide(additive, full)))
    one_fact = 1 / min(np.sum(full) * len(rerun["splits"][0].train) / len(full), 1e9)
    assert glued(site, PAGE, "tr_grid_not_baseline") == pytest.approx(np.mean(not_baseline), abs=one_fact)
    low, high = interval(not_baseline)
    assert glued(site, PAGE, "tr_grid_not_baseline_low") == pytest.approx(low, abs=2 * one_fact)
    assert glued(site, PAGE, "tr_grid_not_baseline_high") == pytest.approx(high, abs=2 * one_fact)
    for key, runs in (("tr_grid_additive_intact", rerun["with"]), ("tr_grid_additive_same", rerun["without"])):
        part = []
        for r, w, s in zip(runs, rerun["worlds"], rerun["splits"]):
            _, fitted = grid_and_additive(r.model, w, contexts, seq_len, ablate=False)
            rows = s.train[:, 0] * w.n_relations + s.train[:, 1]
            part.append(float(np.mean(fitted[rows].argmax(axis=1) == w.answers(s.train))))
        assert glued(site, PAGE, key) == pytest.approx(np.mean(part))


def test_patching_and_readout_numbers(site, rerun):
    worlds, probes = rerun["worlds"], rerun["probes"]
    donors = [
        facts.swap_facts(w, p, facts.other_answer_facts(w, p.facts, seed=DONOR_SEED)) for w, p in zip(worlds, probes)
    ]
    moved = {}
    for r, w, p, d in zip(rerun["with"], worlds, probes, donors):
        with torch.no_grad():
            donor_trace = r.model.trace(d.tokens)
            own = r.model.trace(p.tokens)
        for part, key in (("ffn", "ffn_outputs"), ("attention", "attention_outputs")):
            for b in (0, 1):
                patched = getattr(own, key)[b].clone()
                patched[:, -1] = getattr(donor_trace, key)[b][:, -1]  # the donor's output at → only
                guess = tt.guessed_objects(tt.answer_logits(r.model, p, **{f"{part}_ablation": {b: patched}}), w)
                moved.setdefault((part, b), []).append(float(np.mean(guess == d.answers)))
    for (part, b), values in moved.items():
        assert glued(site, PAGE, f"tr_moved_{part}{b}") == pytest.approx(np.mean(values))
    assert (glued(site, PAGE, "tr_moved_ffn1_low"), glued(site, PAGE, "tr_moved_ffn1_high")) == pytest.approx(
        interval(moved[("ffn", 1)])
    )
    one_prompt = 2 / len(probes[0].tokens)
    for b in (0, 1):
        direct = []
        for r, w, p in zip(rerun["with"], worlds, probes):
            with torch.no_grad():
                out = r.model.trace(p.tokens).ffn_outputs[b][:, -1, :].double()
            scores = (out - out.mean(dim=-1, keepdim=True)) @ r.model.unembed.weight.double().T
            guess = w.object_tokens()[scores[:, torch.from_numpy(w.object_tokens())].argmax(dim=1).numpy()]
            direct.append(float(np.mean(guess == p.answers)))
        assert glued(site, PAGE, f"tr_direct{b}") == pytest.approx(np.mean(direct), abs=one_prompt)
        low, high = interval(direct)
        assert glued(site, PAGE, f"tr_direct{b}_low") == pytest.approx(low, abs=one_prompt)
        assert glued(site, PAGE, f"tr_direct{b}_high") == pytest.approx(high, abs=one_prompt)
    # What the prose says: block 0's readout below block 1's; both attentions' outputs at → move the answer too.
    assert glued(site, PAGE, "tr_direct0_high") < glued(site, PAGE, "tr_direct1_low")
    chance = 1 / worlds[0].n_objects
    assert all(np.mean(moved[("attention", b)]) > 2 * chance for b in (0, 1))


def test_the_ffn_against_the_best_affine_map_of_its_input(site, rerun):
    """Rebuilt with NumPy: the logit lens on the stream, the FFN's readout, and an lstsq affine fit."""
    for b in (0, 1):
        shares, ffn, affine, r2 = [], [], [], []
        for r, w, p in zip(rerun["with"], rerun["worlds"], rerun["probes"]):
            with torch.no_grad():
                trace = r.model.trace(p.tokens)
            x = trace.ffn_inputs[b][:, -1].double().numpy()
            y = trace.ffn_outputs[b][:, -1].double().numpy()
            stream = (trace.block_inputs[b] + trace.attention_outputs[b])[:, -1].double().numpy()
            unembed = r.model.unembed.weight.detach().double().numpy().T
            objects = w.object_tokens()

            def names(v):
                return objects[(v @ unembed)[:, objects].argmax(axis=1)]

            centred = stream - stream.mean(axis=1, keepdims=True)
            lens = names(centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-5))
            design = np.hstack([x, np.ones((len(x), 1))])
            fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
            wrong = lens != p.answers
            shares.append(wrong.mean())
            ffn.append(np.mean(names(y - y.mean(axis=1, keepdims=True))[wrong] == p.answers[wrong]))
            affine.append(np.mean(names(fitted - fitted.mean(axis=1, keepdims=True))[wrong] == p.answers[wrong]))
            r2.append(1 - ((y - fitted) ** 2).sum() / ((y - y.mean(axis=0)) ** 2).sum())
        assert glued(site, PAGE, f"tr_affine_share{b}") == pytest.approx(np.mean(shares), abs=0.01)
        assert glued(site, PAGE, f"tr_affine_ffn{b}") == pytest.approx(np.mean(ffn), abs=0.02)
        assert glued(site, PAGE, f"tr_affine_map{b}") == pytest.approx(np.mean(affine), abs=0.02)
        assert glued(site, PAGE, f"tr_affine_r2_{b}") == pytest.approx(np.mean(r2), abs=1e-6)
        low, high = interval(100 * np.subtract(ffn, affine))  # percentage points
        assert glued(site, PAGE, f"tr_affine_beyond{b}_low") == pytest.approx(low, abs=3)
        assert glued(site, PAGE, f"tr_affine_beyond{b}_high") == pytest.approx(high, abs=3)
    # What the prose says: FFN 1 names what its least-squares stand-in does not; FFN 0 much less so.
    assert glued(site, PAGE, "tr_affine_ffn1") > glued(site, PAGE, "tr_affine_map1")
    assert glued(site, PAGE, "tr_affine_beyond0_high") < glued(site, PAGE, "tr_affine_beyond1_low")


def test_the_linear_probe_and_its_control_task(site, rerun):
    """The probe rebuilt as a ridge solve in NumPy; its control task: objects permuted among the probed facts."""
    contexts, seq_len = glued(site, PAGE, "tr_probe_contexts"), rerun["config"].seq_len
    real, shuffled, real_wrong, shuffled_wrong = [], [], [], []
    for r, w, s, p in zip(rerun["with"], rerun["worlds"], rerun["splits"], rerun["probes"]):
        fresh = facts.fact_prompts(w, s.train, contexts, seq_len, seed=FRESH_SEED)

        def inputs(prompts):
            with torch.no_grad():
                trace = r.model.trace(prompts.tokens)
            stream = (trace.block_inputs[1] + trace.attention_outputs[1])[:, -1].double()
            lens = tt.guessed_objects(tt.layer_norm(stream) @ r.model.unembed.weight.double().T, w)
            x = trace.ffn_inputs[1][:, -1].double().numpy()
            return np.hstack([x, np.ones((len(x), 1))]), lens

        x, _ = inputs(p)
        x_fresh, lens = inputs(fresh)
        wrong = lens != fresh.answers
        seen = np.unique(p.facts, axis=0)

        def reading(objects):
            targets = np.eye(w.n_objects)[objects[p.facts[:, 0], p.facts[:, 1]]]
            weights = np.linalg.solve(x.T @ x + 1e-3 * len(x) * np.eye(x.shape[1]), x.T @ targets)
            right = (x_fresh @ weights).argmax(axis=1) == objects[fresh.facts[:, 0], fresh.facts[:, 1]]
            return right.mean(), right[wrong].mean()

        readings = [reading(w.objects)]
        for k in range(int(glued(site, PAGE, "tr_probe_shuffles"))):  # each probed fact takes another's object
            order = np.random.default_rng(k).permutation(len(seen))
            objects = w.objects.copy()
            objects[seen[:, 0], seen[:, 1]] = w.objects[seen[order, 0], seen[order, 1]]
            readings.append(reading(objects))
        real.append(readings[0][0])
        real_wrong.append(readings[0][1])
        shuffled.append(np.mean([r[0] for r in readings[1:]]))  # the control: the mean over the shuffles
        shuffled_wrong.append(np.mean([r[1] for r in readings[1:]]))
    assert glued(site, PAGE, "tr_probe_recall") == pytest.approx(np.mean(real))
    assert glued(site, PAGE, "tr_probe_shuffled") == pytest.approx(np.mean(shuffled))
    assert glued(site, PAGE, "tr_probe_shuffled_wrong") == pytest.approx(np.mean(shuffled_wrong))
    assert glued(site, PAGE, "tr_probe_wrong") == pytest.approx(np.mean(real_wrong))
    low, high = interval(100 * np.subtract(real, shuffled))
    assert glued(site, PAGE, "tr_probe_selectivity_low") == pytest.approx(low)
    assert glued(site, PAGE, "tr_probe_selectivity_high") == pytest.approx(high)
    # What the prose says: far better than the control task, also where the logit lens names a wrong object.
    assert glued(site, PAGE, "tr_probe_selectivity_low") > 0
    assert interval(np.subtract(real_wrong, shuffled_wrong))[0] > 0


def test_key_value_numbers(site, rerun):
    contexts = glued(site, PAGE, "tr_probe_contexts")
    first = {}  # the first seed's trained readings, for the figure's examples
    for b, where in ((1, "query"), (0, "subject")):
        for name, state in (("", "model"), ("_init", "initial_model")):
            counts, firing = [], []
            for r, w, s, p in zip(rerun["with"], rerun["worlds"], rerun["splits"], rerun["probes"]):
                model = getattr(r, state)
                acts = tf.answer_activations(model, p, contexts, where=where)[b]
                readings = tf.read_neurons(
                    acts, s.train, w.answers(s.train), tf.value_logits(model, b), w.object_tokens(), block=b
                )
                counts.append(tf.kind_counts(readings))
                firing.append(tf.firing_summary(acts))
                first.setdefault((b, name), readings)
            for kind in tf.NEURON_KINDS:
                assert glued(site, PAGE, f"tr_kind{b}_{kind}{name}") == pytest.approx(
                    np.mean([c[kind] for c in counts])
                )
            assert sum(glued(site, PAGE, f"tr_kind{b}_{k}{name}") for k in tf.NEURON_KINDS) == pytest.approx(
                rerun["config"].d_ff
            )
            where_key = f"{b}{name}"  # one placeholder: "1", "1_init", ...
            assert glued(site, PAGE, f"tr_facts_per_unit{where_key}") == pytest.approx(
                np.mean([f.facts_per_unit for f in firing])
            )
            assert glued(site, PAGE, f"tr_units_per_fact{where_key}") == pytest.approx(
                np.mean([f.units_per_fact for f in firing])
            )
            for kind in {(1, ""): ("memory",), (0, ""): ("subject", "polysemantic")}.get((b, name), ()):
                low, high = interval([c[kind] for c in counts]) if len({c[kind] for c in counts}) > 1 else (0, 0)
                assert glued(site, PAGE, f"tr_kind{b}_{kind}_pm") == pytest.approx((high - low) / 2)
    assert glued(site, PAGE, "tr_strong") == tf.STRONG_SHARE
    assert glued(site, PAGE, "tr_selective") == tf.SELECTIVE_SHARE
    # What the prose says: training multiplies block 0's subject detectors and makes block 1's units selective.
    for kind in ("subject", "polysemantic"):
        assert glued(site, PAGE, f"tr_kind0_{kind}") > glued(site, PAGE, f"tr_kind0_{kind}_init")
    assert glued(site, PAGE, "tr_facts_per_unit1") < glued(site, PAGE, "tr_facts_per_unit1_init")
    shown = tf.pick_examples(first[(0, "")], ("subject", "polysemantic")) + tf.pick_examples(
        first[(1, "")], ("memory", "distributed")
    )
    assert glued(site, PAGE, "tr_n_shown") == len(shown) == len({(r.block, r.kind) for r in shown})
    stored = memory.random_memories(64, 128, seed=0)
    hidden = memory.retrieve(memory.build_memory_ffn(*stored), stored.keys).hidden
    # One unit per stored pair, by construction: each key drives its own unit and no other.
    assert glued(site, PAGE, "tr_hand_units_per_fact") == glued(site, PAGE, "tr_hand_facts_per_unit") == 1.0
    assert np.all((hidden > 0).sum(axis=1) == 1)


def test_sparsity_numbers(site, rerun):
    """Counted by hand: the share of hidden units above zero, token by token, at each kind of position."""
    shares = {}
    for r, p in zip(rerun["with"], rerun["probes"]):
        classes = tf.position_classes(p)
        for label, model in (("init", r.initial_model), ("trained", r.model)):
            with torch.no_grad():
                hidden = model.trace(p.tokens).ffn_hidden
            for b, h in enumerate(hidden):
                on = (h > 0).double().mean(dim=-1).numpy()
                for where in ("query", "subject", "relation", "all"):
                    cells = on if where == "all" else on[classes == tf.POSITION_CLASSES.index(where)]
                    shares.setdefault((label, where, b), []).append(float(cells.mean()))
    for (label, where, b), values in shares.items():
        assert glued(site, PAGE, f"tr_active_{label}_{where}{b}") == pytest.approx(np.mean(values))
    assert glued(site, PAGE, "tr_active_skip1") == pytest.approx(1 - np.mean(shares[("trained", "query", 1)]))
    for b in (0, 1):  # the heading: fewer units fire at → after training
        assert glued(site, PAGE, f"tr_active_trained_query{b}") < glued(site, PAGE, f"tr_active_init_query{b}")
    small = glued(site, PAGE, "tr_active_small")
    for where in ("subject", "relation"):  # block 1, where nothing it writes is read: a small change
        change = 100 * np.subtract(shares[("trained", where, 1)], shares[("init", where, 1)])
        low, high = interval(change)
        assert glued(site, PAGE, f"tr_active_change_{where}1") == pytest.approx(change.mean())
        assert glued(site, PAGE, f"tr_active_change_{where}1_pm") == pytest.approx((high - low) / 2)
        assert -small < low and high < small


def test_position_numbers(site, rerun):
    model, probe, world = rerun["with"][0].model, rerun["probes"][0], rerun["worlds"][0]
    reshape = [tf.reshape_diffs(model, probe, b) for b in (0, 1)]
    assert glued(site, PAGE, "tr_reshape_ffn") == max(r["ffn"] for r in reshape) < 1e-12
    assert glued(site, PAGE, "tr_reshape_ffn_numpy") == max(r["ffn_numpy"] for r in reshape)
    assert glued(site, PAGE, "tr_reshape_attention") == min(r["attention"] for r in reshape)
    same = tt.numpy_block_max_diff(model, 0, tf.block_inputs(model, probe, 0)[0])
    assert glued(site, PAGE, "tr_same_block_no_mask") == same["no_mask"]
    assert glued(site, PAGE, "tr_same_block_causal") == same["causal"]
    looks = [tf.attention_share_on_fact(r.model, p) for r, p in zip(rerun["with"], rerun["probes"])]
    assert [glued(site, PAGE, "tr_look0"), glued(site, PAGE, "tr_look1")] == pytest.approx(np.mean(looks, axis=0))
    assert glued(site, PAGE, "tr_uniform_share") == 2 / rerun["config"].seq_len
    assert glued(site, PAGE, "tr_influence_prompt") == facts.prompt_text(world, probe.tokens[0])


def capacity_settings(site):
    """The capacity sweep's train settings, widths and model shape, all read from the page's glue."""
    g = lambda key: setting(site, key)  # noqa: E731
    config = tt.TrainConfig(
        steps=g("tr_cap_steps"),
        batch_size=g("tr_cap_batch"),
        learning_rate=g("tr_cap_lr"),
        eval_every=g("tr_cap_eval_every"),
        eval_contexts=g("tr_eval_contexts"),
    )
    shape = tt.ModelConfig(
        vocab_size=facts.make_world(
            g("tr_cap_subjects"), g("tr_cap_relations"), g("tr_cap_objects"), seed=0
        ).vocab_size,
        seq_len=g("tr_pr_cap_seq_len"),
        d_model=g("tr_d_model"),
        n_heads=g("tr_n_heads"),
        d_ff=g("tr_cap_narrow"),
        n_blocks=1,
    )
    return config, (0, g("tr_cap_narrow"), g("tr_cap_wide")), shape


def counted(config, ffn=True):
    """Parameters of a real model of this shape; without its FFN's when ``ffn`` is False."""
    return sum(p.numel() for n, p in tt.TinyTransformer(config).named_parameters() if ffn or ".ffn." not in n)


@pytest.fixture(scope="module")
def capacity_recall(site, rerun):
    """The sweep trained again from the page's glued settings: recall by (width, seed, 'half' or 'end')."""
    g = lambda key: setting(site, key)  # noqa: E731
    config, widths, shape = capacity_settings(site)
    with tt.deterministic_torch(seed=0, threads=1):
        rows = tf.capacity_sweep(
            widths,
            (g("tr_cap_subjects"),),
            n_relations=g("tr_cap_relations"),
            n_objects=g("tr_cap_objects"),
            d_model=shape.d_model,
            n_heads=shape.n_heads,
            n_blocks=1,
            seq_len=shape.seq_len,
            train_config=config,
            seeds=rerun["seeds"],
        )
    recall = {}
    for r in rows:
        recall[(r["d_ff"], r["seed"], "end")] = r["recall"]
        recall[(r["d_ff"], r["seed"], "half")] = r["history"]["recall"][r["history"]["step"].index(config.steps // 2)]
    return rows, recall


@SLOW_RECOMPUTATION
def test_capacity_numbers(site, rerun, capacity_recall):
    """Gains per unit, their intervals and the room left, recomputed from the retrained sweep."""
    g = lambda key: setting(site, key)  # noqa: E731
    config, widths, _ = capacity_settings(site)
    rows, recall = capacity_recall
    n_facts = rows[0]["n_facts"]
    assert g("tr_cap_facts") == n_facts == g("tr_cap_subjects") * g("tr_cap_relations")
    assert g("tr_cap_half") == config.steps // 2
    assert glued(site, PAGE, "tr_cap_exposures") == config.steps * config.batch_size / n_facts
    seeds = list(rerun["seeds"])
    for width, label in zip(widths, ("none", "narrow", "wide")):
        for when in ("half", "end"):
            own = [recall[(width, s, when)] for s in seeds]
            assert glued(site, PAGE, f"tr_cap_{label}_{when}") == pytest.approx(np.mean(own))
            if width:
                gains = [(recall[(width, s, when)] - recall[(0, s, when)]) * n_facts / width for s in seeds]
                assert glued(site, PAGE, f"tr_cap_gain_{label}_{when}") == pytest.approx(np.mean(gains))
                low, high = interval(gains)
                assert glued(site, PAGE, f"tr_cap_gain_{label}_{when}_low") == pytest.approx(low)
                assert glued(site, PAGE, f"tr_cap_gain_{label}_{when}_high") == pytest.approx(high)
        if width:  # the most a unit can add: the facts the model without FFN misses, shared among the units
            missed = (1 - np.mean([recall[(0, s, "end")] for s in seeds])) * n_facts
            assert glued(site, PAGE, f"tr_cap_room_{label}") == pytest.approx(missed / width)
    # What the prose says: more facts per unit with the longer budget.
    for label in ("narrow", "wide"):
        assert glued(site, PAGE, f"tr_cap_gain_{label}_end") > glued(site, PAGE, f"tr_cap_gain_{label}_half")
    assert glued(site, PAGE, "tr_cap_none_end") > glued(site, PAGE, "tr_cap_none_half")


@SLOW_RECOMPUTATION
def test_capacity_in_bits_per_parameter(site, capacity_recall):
    """Each row's bits over its parameters, counted on a model of its shape; the cited figures from ffnbook.capacity."""
    from ffnbook import capacity

    g = lambda key: setting(site, key)  # noqa: E731
    _, widths, shape = capacity_settings(site)
    rows, _ = capacity_recall
    for width, label in zip(widths, ("none", "narrow", "wide")):
        params = counted(replace(shape, d_ff=max(width, 1)), ffn=bool(width))
        mine = [r for r in rows if r["d_ff"] == width]
        assert all(r["parameters"] == params for r in mine)
        assert glued(site, PAGE, f"tr_cap_bits_{label}") == pytest.approx(np.mean([r["bits"] / params for r in mine]))
        if width == 0:
            assert glued(site, PAGE, "tr_cap_params_none") == params
    world_bits = rows[0]["n_facts"] * math.log2(g("tr_cap_objects"))
    assert glued(site, PAGE, "tr_cap_world_bits") == world_bits
    assert glued(site, PAGE, "tr_cap_bits_needed") == pytest.approx(
        world_bits / glued(site, PAGE, "tr_cap_params_none")
    )
    assert (g("tr_cap_paper_bits"), g("tr_cap_paper_exposures")) == (capacity.BITS_PER_PARAMETER, capacity.EXPOSURES)
    assert (g("tr_cap_paper_few_bits"), g("tr_cap_paper_few_exposures")) == (
        capacity.BITS_AT_FEW_EXPOSURES,
        capacity.FEW_EXPOSURES,
    )
    # "every model far below 1 bit per parameter"
    assert max(glued(site, PAGE, f"tr_cap_bits_{label}") for label in ("none", "narrow", "wide")) < 1


@SLOW_RECOMPUTATION
def test_capacity_parameter_matched_control(site, rerun, capacity_recall):
    """The narrowest wider model without FFN with as many parameters, trained again on the same worlds."""
    g = lambda key: setting(site, key)  # noqa: E731
    config, widths, narrow = capacity_settings(site)
    _, recall = capacity_recall
    seeds = list(rerun["seeds"])
    d = narrow.d_model
    while counted(replace(narrow, d_model=d), ffn=False) < counted(narrow):
        d += narrow.n_heads
    assert (glued(site, PAGE, "tr_cap_matched_d_model"), glued(site, PAGE, "tr_cap_matched_params")) == (
        d,
        counted(replace(narrow, d_model=d), ffn=False),
    )
    assert glued(site, PAGE, "tr_cap_narrow_params") == counted(narrow)
    worlds = [facts.make_world(g("tr_cap_subjects"), g("tr_cap_relations"), g("tr_cap_objects"), seed=s) for s in seeds]
    with tt.deterministic_torch(seed=0, threads=1):
        matched = tt.train_replicas(
            [tt.Replica(w, w.all_facts(), s, None, 0) for w, s in zip(worlds, seeds)],
            replace(narrow, d_model=d),
            config,
        )
    matched_recall = [r.history["recall"][-1] for r in matched]
    assert glued(site, PAGE, "tr_cap_matched_recall") == pytest.approx(np.mean(matched_recall))
    ahead = 100 * np.subtract([recall[(widths[1], s, "end")] for s in seeds], matched_recall)
    assert glued(site, PAGE, "tr_cap_over_matched") == pytest.approx(ahead.mean())
    low, high = interval(ahead)
    assert (glued(site, PAGE, "tr_cap_over_matched_low"), glued(site, PAGE, "tr_cap_over_matched_high")) == (
        pytest.approx((low, high))
    )
    assert glued(site, PAGE, "tr_cap_over_matched") > 0  # "ahead of it on average"


def test_figures_have_alt_text_computed_with_them(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 5
    alts = [img.get("alt", "") for img in imgs]
    assert all(len(alt.strip()) > 80 for alt in alts)
    assert any(f"attention 0: subject {100 * glued(site, PAGE, 'tr_attn0_subject'):.0f}%" in alt for alt in alts)
    assert any(f"d_ff 0: {100 * glued(site, PAGE, 'tr_cap_none_end'):.0f}%" in alt for alt in alts)
    for key in (
        "tr_training_figure",
        "tr_ablation_figure",
        "tr_neuron_figure",
        "tr_influence_figure",
        "tr_capacity_figure",
    ):
        assert key in glue_data(site, PAGE)


# --- the neuron explorer: its JSON file against ffnbook, unit by unit -------------------------------------


@SLOW_RECOMPUTATION
def test_units_explorer_json_equals_ffnbook_unit_by_unit(site, rerun, ablations):
    """The explorer's data, looked up by block and unit, equals the measurements of ffnbook.trained_ffn
    made again here one unit at a time (the page computes them batched, in ffnbook.neuron_explorer)."""
    n_contexts = glued(site, PAGE, "tr_probe_contexts")
    import json

    from sitecheck import soup_of

    box = json.loads(soup_of(site, PAGE).select_one(".ffn-x-units script.ffn-x-data").get_text())
    data = json.loads((site / box["src"]).read_text(encoding="utf-8"))
    assert json.loads(glued(site, PAGE, "tr_units_data")) == data
    model, world, probe = rerun["with"][0].model, rerun["worlds"][0], rerun["probes"][0]
    asked = facts.Prompts(*(np.asarray(f)[::n_contexts] for f in probe))  # one prompt per fact
    fact_rows = probe.facts[::n_contexts]
    sites = ["subject", "query"]  # where the page reads each block
    assert data["box"]["sites"] == sites and data["n_prompts"] == len(asked.tokens) == len(rerun["splits"][0].train)
    classes = tf.position_classes(probe)
    with torch.no_grad():
        trace = model.trace(probe.tokens)
        asked_trace = model.trace(asked.tokens)

    def leads(logits):
        objects = world.object_tokens()
        scores = logits[:, objects].numpy().astype(np.float64)
        right = np.searchsorted(objects, asked.answers)
        own = scores[np.arange(len(scores)), right]
        scores[np.arange(len(scores)), right] = -np.inf
        return own - scores.max(axis=1)

    intact = leads(asked_trace.logits[:, -1])
    assert glued(site, PAGE, "tr_units_lead") == data["lead"] == pytest.approx(intact.mean(), abs=1e-3)
    no_change, top_margin, most_lost = 0, (-np.inf, None), 0.0
    for b, where in enumerate(sites):
        shown = data["blocks"][b]
        acts = tf.answer_activations(model, probe, n_contexts, where=where)[b]
        scores = tf.value_logits(model, b)
        lost = {w: tf.unit_ablation_effect(model, world, asked, b, where=w) * len(asked.tokens) for w in ("all", where)}
        np.testing.assert_array_equal(shown["lost"], np.round(np.column_stack([lost["all"], lost[where]])))
        no_change += int(np.sum((np.round(lost["all"]) == 0) & (np.round(lost[where]) == 0)))
        most_lost = max(most_lost, float(np.round(lost["all"]).max()) / len(asked.tokens))
        best_unit = int(np.argmax(np.asarray(shown["margin"]).max(axis=1)))  # checked below, as the prose cites it
        for unit in (0, 63, 127, data["box"]["initial"][1], best_unit):
            hidden = trace.ffn_hidden[b][..., unit].numpy()
            means = [hidden[classes == c].mean() for c in range(len(tf.POSITION_CLASSES))]
            assert shown["act"][unit] == pytest.approx(means, abs=6e-4)
            order = np.argsort(-acts[:, unit], kind="stable")[:5]
            assert shown["facts"][unit] == order.tolist()
            assert shown["fact_act"][unit] == pytest.approx(acts[order, unit], abs=6e-4)
            assert data["facts"][order[0]][:2] == [
                world.subject_token(fact_rows[order[0]][0]),
                world.relation_token(fact_rows[order[0]][1]),
            ]
            best = np.argsort(-scores[unit], kind="stable")[:5]
            assert shown["tokens"][unit] == best.tolist()
            assert shown["logit"][unit] == pytest.approx(scores[unit, best], abs=6e-4)
            for i, w in enumerate(("all", where)):
                mask = tf._site_mask(asked, w).unsqueeze(-1)
                with torch.no_grad():
                    part = asked_trace.ffn_hidden[b][..., unit : unit + 1] * model.blocks[b].ffn.down.weight[:, unit]
                    out = asked_trace.ffn_outputs[b] - torch.where(mask, part, 0.0)
                    after = leads(model.trace(asked.tokens, ffn_ablation={b: out}).logits[:, -1])
                assert shown["margin"][unit][i] == pytest.approx(np.mean(intact - after), abs=1e-3)
        top_margin = max(top_margin, (max(shown["margin"][best_unit]), (b, best_unit)))
    assert glued(site, PAGE, "tr_units_seed") == rerun["seeds"][0]
    assert glued(site, PAGE, "tr_units_n_prompts") == len(asked.tokens)
    assert glued(site, PAGE, "tr_units_n_units") == rerun["config"].n_blocks * rerun["config"].d_ff
    assert glued(site, PAGE, "tr_units_no_change") == no_change
    assert glued(site, PAGE, "tr_units_max_margin") == top_margin[0] < data["lead"] / 4  # "little room"
    # A whole FFN knocked out loses more answers than the unit that costs most (the page's own numbers).
    whole_ffn_lost = min(
        tf.ablated_recall(ablations[0], "none") - tf.ablated_recall(ablations[0], "ffn", (b,), "mean")
        for b in range(rerun["config"].n_blocks)
    )
    assert glued(site, PAGE, "tr_units_most_lost") == pytest.approx(most_lost)
    assert glued(site, PAGE, "tr_units_whole_ffn_lost") == pytest.approx(whole_ffn_lost)
    assert most_lost < whole_ffn_lost / 2
