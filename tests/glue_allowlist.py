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
    # trained-ffn
    "tr_ablation_figure": NO_TEST_YET,
    "tr_active_init_all0": NO_TEST_YET,
    "tr_active_init_all1": NO_TEST_YET,
    "tr_active_trained_all0": NO_TEST_YET,
    "tr_active_trained_all1": NO_TEST_YET,
    "tr_batch": NO_TEST_YET,
    "tr_cap_narrow": NO_TEST_YET,
    "tr_cap_steps": NO_TEST_YET,
    "tr_cap_wide": NO_TEST_YET,
    "tr_cap_wide_largest": NO_TEST_YET,
    "tr_capacity_figure": NO_TEST_YET,
    "tr_d_ff": NO_TEST_YET,
    "tr_d_model": NO_TEST_YET,
    "tr_eval_contexts": NO_TEST_YET,
    "tr_eval_every": NO_TEST_YET,
    "tr_first_loss": NO_TEST_YET,
    "tr_first_loss_step": NO_TEST_YET,
    "tr_hand_facts_per_unit": NO_TEST_YET,
    "tr_influence_figure": NO_TEST_YET,
    "tr_influence_prompt": NO_TEST_YET,
    "tr_lr": NO_TEST_YET,
    "tr_n_blocks": NO_TEST_YET,
    "tr_n_heads": NO_TEST_YET,
    "tr_n_objects": NO_TEST_YET,
    "tr_n_relations": NO_TEST_YET,
    "tr_n_subjects": NO_TEST_YET,
    "tr_neuron_figure": NO_TEST_YET,
    "tr_no_ffn_zero": NO_TEST_YET,
    "tr_probe_contexts": NO_TEST_YET,
    "tr_ratio": NO_TEST_YET,
    "tr_reshape_ffn": NO_TEST_YET,
    "tr_same_block_causal": NO_TEST_YET,
    "tr_same_block_no_mask": NO_TEST_YET,
    "tr_seq_len": NO_TEST_YET,
    "tr_steps": NO_TEST_YET,
    "tr_strong": NO_TEST_YET,
    "tr_training_figure": NO_TEST_YET,
    # transformer-block
    "tb_block_diagram": NO_TEST_YET,
    "tb_influence_figure": NO_TEST_YET,
    # width
    "wd_ratio_figure": NO_TEST_YET,
}
