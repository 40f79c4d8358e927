"""The synthetic world of facts: seeded, well-formed prompts, a clean train/held-out split."""

from __future__ import annotations

import numpy as np
import pytest

from ffnbook import facts


@pytest.fixture
def world() -> facts.FactWorld:
    return facts.make_world(7, 5, 9, n_filler=6, seed=3)


def test_the_same_seed_gives_the_same_world_and_prompts(world):
    again = facts.make_world(7, 5, 9, n_filler=6, seed=3)
    assert np.array_equal(world.objects, again.objects)
    a = facts.fact_prompts(world, world.all_facts(), 3, 9, seed=11)
    b = facts.fact_prompts(again, again.all_facts(), 3, 9, seed=11)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def test_another_seed_gives_another_world(world):
    assert not np.array_equal(world.objects, facts.make_world(7, 5, 9, n_filler=6, seed=4).objects)


def test_objects_are_valid_and_vocabulary_is_laid_out_by_kind(world):
    assert world.objects.shape == (7, 5) and world.n_facts == 35
    assert world.objects.min() >= 0 and world.objects.max() < 9
    names = world.token_names()
    assert len(names) == world.vocab_size == 1 + 6 + 7 + 5 + 9
    assert names[0] == facts.QUERY_TOKEN
    assert names[int(world.filler_token(2))] == "w2"
    assert names[int(world.subject_token(6))] == "s6"
    assert names[int(world.relation_token(0))] == "r0"
    assert [names[t] for t in world.object_tokens()] == [f"o{i}" for i in range(9)]
    assert len(set(names)) == len(names)


def test_split_is_disjoint_and_complete(world):
    split = facts.split_facts(world, 10, seed=1)
    train = {tuple(f) for f in split.train}
    held = {tuple(f) for f in split.held_out}
    assert len(held) == 10 and len(train) == world.n_facts - 10
    assert not train & held
    assert train | held == {tuple(f) for f in world.all_facts()}
    again = facts.split_facts(world, 10, seed=1)
    assert np.array_equal(split.held_out, again.held_out)


def test_prompts_hide_the_object_and_place_subject_before_relation(world):
    rows = world.all_facts()
    p = facts.make_prompts(world, rows, 8, np.random.default_rng(0))
    n = len(rows)
    assert p.tokens.shape == (n, 8) and p.tokens.dtype == np.int64
    assert np.all(p.tokens[:, -1] == 0)  # every prompt ends with →
    assert np.all(p.subject_position < p.relation_position)
    assert np.all(p.relation_position < 7)
    idx = np.arange(n)
    assert np.array_equal(p.tokens[idx, p.subject_position], world.subject_token(rows[:, 0]))
    assert np.array_equal(p.tokens[idx, p.relation_position], world.relation_token(rows[:, 1]))
    # Every other slot is a filler token; no object token appears anywhere in a prompt.
    filler = np.ones_like(p.tokens, dtype=bool)
    filler[idx, p.subject_position] = filler[idx, p.relation_position] = False
    filler[:, -1] = False
    low, high = int(world.filler_token(0)), int(world.filler_token(world.n_filler - 1))
    assert np.all((p.tokens[filler] >= low) & (p.tokens[filler] <= high))
    assert not np.isin(p.tokens, world.object_tokens()).any()
    assert np.array_equal(p.answers, world.object_token(world.objects[rows[:, 0], rows[:, 1]]))


def test_positions_vary_between_prompts(world):
    p = facts.fact_prompts(world, world.all_facts(), 4, 8, seed=2)
    assert len(np.unique(p.subject_position)) > 3 and len(np.unique(p.relation_position)) > 3


def test_fact_prompts_are_grouped_fact_by_fact(world):
    rows = world.all_facts()[:4]
    p = facts.fact_prompts(world, rows, 3, 6, seed=0)
    assert np.array_equal(p.facts, np.repeat(rows, 3, axis=0))


def test_prompt_text_and_table(world):
    tokens = [int(world.filler_token(1)), int(world.subject_token(2)), int(world.relation_token(3)), 0]
    assert facts.prompt_text(world, tokens, int(world.object_token(4))) == "w1 s2 r3 → o4"
    table = facts.prompt_table(world, facts.fact_prompts(world, [[2, 3]], 1, 4, seed=0))._repr_markdown_()
    assert "s2, r3" in table and f"o{world.objects[2, 3]}" in table


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda w: facts.make_world(3, 2, 1), ValueError, "n_objects must be at least 2"),
        (lambda w: facts.make_world(0, 2, 4), ValueError, "n_subjects must be a positive integer"),
        (lambda w: facts.check_facts(w, [[7, 0]]), ValueError, r"facts must hold subject ids in \[0, 7\), got 7"),
        (lambda w: facts.check_facts(w, [[0.0, 1.0]]), TypeError, "integer"),
        (lambda w: facts.check_facts(w, [1, 2]), ValueError, r"shape \(n_facts, 2\)"),
        (lambda w: facts.make_prompts(w, [[0, 0]], 2, np.random.default_rng(0)), ValueError, "at least 3"),
        (lambda w: facts.make_prompts(w, [[0, 0]], 5, 0), TypeError, "numpy.random.Generator"),
        (lambda w: facts.split_facts(w, 35), ValueError, r"n_held_out must be an integer in \[0, 35\)"),
        (lambda w: facts.prompt_text(w, [99]), ValueError, "tokens must hold token ids in"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(world, call, error, message):
    with pytest.raises(error, match=message):
        call(world)
