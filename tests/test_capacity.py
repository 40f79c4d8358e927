"""Bits of knowledge and parameters, against arithmetic done by hand."""

from __future__ import annotations

import math

import pytest

from ffnbook import capacity


def test_a_fact_among_n_objects_carries_log2_n_bits():
    assert capacity.bits_per_fact(2) == 1.0
    assert capacity.bits_per_fact(1024) == 10.0
    assert capacity.bits_per_fact(1) == 0.0  # a certain answer tells nothing
    assert capacity.bits_per_fact(100) == pytest.approx(math.log(100) / math.log(2))


def test_bits_and_facts_are_inverse():
    # 124,439,808 parameters (GPT-2 small) at 2 bits each hold 2·124,439,808 / 5 facts of 32 objects.
    facts = capacity.facts_at_capacity(124_439_808, 32)
    assert facts == 2 * 124_439_808 / 5
    assert capacity.bits_per_parameter(round(facts), 32, 124_439_808) == pytest.approx(2.0, rel=1e-8)
    assert capacity.knowledge_bits(0, 32) == 0.0


def test_clear_errors():
    with pytest.raises(ValueError, match="n_objects"):
        capacity.bits_per_fact(0)
    with pytest.raises(ValueError, match="bits_per_param"):
        capacity.facts_at_capacity(10, 32, 0.0)
