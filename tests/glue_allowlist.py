"""Glued keys that no test names yet, each with its reason (tests/test_glued_keys_tested.py).

Every key here is a number or figure a reader sees that no test checks against an
independent recomputation. The list may only shrink: write the test
(``sitecheck.glued(site, page, key)``), then delete the line; a new glued key comes
with its test, not with a line here.
"""

#: A key glued before tests/test_glued_keys_tested.py existed, with no test yet (issue 24).
NO_TEST_YET = "no test yet (issue 24): write one, then delete this line"

NOT_YET_TESTED = {
    # compute
    "cp_6n_deepseek_ffn": NO_TEST_YET,
    "cp_decode_figure": NO_TEST_YET,
    "cp_deepseek_ratio": NO_TEST_YET,
    "cp_gpt2_ffn_share_bytes": NO_TEST_YET,
    "cp_measured_over_model": NO_TEST_YET,
    "cp_n_heads": NO_TEST_YET,
    "cp_n_models": NO_TEST_YET,
    "cp_time_d_model": NO_TEST_YET,
    "cp_time_heads": NO_TEST_YET,
    "cp_time_max": NO_TEST_YET,
    "cp_time_min": NO_TEST_YET,
    "cp_timing_figure": NO_TEST_YET,
    # gated-ffn
    "gf_budget_figure": NO_TEST_YET,
    "gf_edited_position": NO_TEST_YET,
    "gf_gate_figure": NO_TEST_YET,
    # implementation
    "im_eval_vs_ffn": NO_TEST_YET,
    "im_init_figure": NO_TEST_YET,
    "im_precision_ratio": NO_TEST_YET,
    "im_std_ffnbook": NO_TEST_YET,
    "im_std_torch": NO_TEST_YET,
    "im_ulps32": NO_TEST_YET,
    "im_ulps64": NO_TEST_YET,
    "im_zero_fraction": NO_TEST_YET,
    # key-value-memory
    "kv_accuracy_figure": NO_TEST_YET,
    "kv_comparison_figure": NO_TEST_YET,
    "kv_edit_figure": NO_TEST_YET,
    "kv_figure": NO_TEST_YET,
    "kv_noise_high": NO_TEST_YET,
    "kv_one_error": NO_TEST_YET,
    "kv_statistics_figure": NO_TEST_YET,
    # mixture-of-experts
    "moe_balancing_figure": NO_TEST_YET,
    "moe_bias_min_after": NO_TEST_YET,
    "moe_deepseek_ffn_active": NO_TEST_YET,
    "moe_deepseek_ffn_stored": NO_TEST_YET,
    "moe_load_figure": NO_TEST_YET,
    # parameter-count
    "pc_share_figure": NO_TEST_YET,
    "pc_t5v11_ne": NO_TEST_YET,
    # transformer-block
    "tb_block_diagram": NO_TEST_YET,
    "tb_influence_figure": NO_TEST_YET,
    # width
    "wd_ratio_figure": NO_TEST_YET,
}
