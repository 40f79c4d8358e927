"""C ≈ 6ND and Chinchilla's compute-optimal allocation, against the paper's own tables."""

from __future__ import annotations

import math

import pytest

from ffnbook import scaling


def test_training_flops_is_six_n_d():
    assert scaling.training_flops(2, 3) == 36.0
    # Chinchilla: 70B parameters, 1.4T tokens (Hoffmann et al. 2022, Table 1).
    assert scaling.training_flops(*scaling.CHINCHILLA) == pytest.approx(6 * 70e9 * 1.4e12, rel=1e-15)


def test_table_3_is_consistent_with_six_n_d():
    # An independent check of the transcription: the table's FLOPs column was computed by the authors
    # as 6·N·D from its other two columns, up to the rounding of the printed tokens.
    for row in scaling.optimal_run_rows():
        assert row["six_nd_over_flops"] == pytest.approx(1.0, abs=0.05), row
        assert row["tokens_per_param"] == pytest.approx(row["tokens"] / row["params"], rel=1e-15)


def test_about_twenty_tokens_per_parameter():
    low, high = scaling.tokens_per_parameter_range()
    assert (low, round(high, 2)) == (20.0, 22.39)  # 8.0B / 400M and 1.5T / 67B in Table 3
    assert scaling.tokens_per_parameter(*scaling.CHINCHILLA) == 20.0


def test_exponents_add_up_to_one_and_kaplan_favours_parameters():
    for fit, (a, b) in scaling.OPTIMAL_EXPONENTS.items():
        assert a + b == pytest.approx(1.0), fit  # N·D ∝ C under C ≈ 6ND
    model, data = scaling.growth_under(10, "Kaplan et al.")
    assert model == pytest.approx(10**0.73) and data == pytest.approx(10**0.27)
    assert model * data == pytest.approx(10.0)
    equal = scaling.growth_under(10, "Hoffmann et al., approach 1")
    assert equal[0] == pytest.approx(equal[1]) == pytest.approx(math.sqrt(10))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: scaling.training_flops(0, 1), ValueError, "n_params must be a positive finite number"),
        (lambda: scaling.training_flops(1, float("nan")), ValueError, "n_tokens"),
        (lambda: scaling.training_flops("70B", 1), TypeError, "n_params must be a positive finite number"),
        (lambda: scaling.growth_under(10, "Chinchilla"), ValueError, "fit must be one of"),
        (lambda: scaling.tokens_per_parameter_range([]), ValueError, "rows must hold at least one item"),
    ],
)
def test_scaling_rejects_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
