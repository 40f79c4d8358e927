"""Glued keys that no test names yet, each with its reason (tests/test_glued_keys_tested.py).

Every key here is a number or figure a reader sees that no test checks against an
independent recomputation. The list may only shrink: write the test
(``sitecheck.glued(site, page, key)``), then delete the line; a new glued key comes
with its test, not with a line here.
"""

#: A key glued before tests/test_glued_keys_tested.py existed, with no test yet (issue 24).
NO_TEST_YET = "no test yet (issue 24): write one, then delete this line"

NOT_YET_TESTED = {
    # activations
    "ac_d_ff": NO_TEST_YET,
    "ac_d_model": NO_TEST_YET,
    # compute
    "cp_6n_deepseek_ffn": NO_TEST_YET,
    "cp_decode_figure": NO_TEST_YET,
    "cp_deepseek_ratio": NO_TEST_YET,
    "cp_gpt2_d_head": NO_TEST_YET,
    "cp_gpt2_ffn_share_bytes": NO_TEST_YET,
    "cp_measured_over_model": NO_TEST_YET,
    "cp_n_heads": NO_TEST_YET,
    "cp_n_models": NO_TEST_YET,
    "cp_time_d_model": NO_TEST_YET,
    "cp_time_heads": NO_TEST_YET,
    "cp_time_max": NO_TEST_YET,
    "cp_time_min": NO_TEST_YET,
    "cp_timing_figure": NO_TEST_YET,
    # exercises
    "ex_sw_layers": NO_TEST_YET,
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
    "moe_bias_steps": NO_TEST_YET,
    "moe_cap_factor_low": NO_TEST_YET,
    "moe_cap_factor_one": NO_TEST_YET,
    "moe_cap_factor_skewed": NO_TEST_YET,
    "moe_cap_no_drop": NO_TEST_YET,
    "moe_d_ff": NO_TEST_YET,
    "moe_d_model": NO_TEST_YET,
    "moe_deepseek_ffn_active": NO_TEST_YET,
    "moe_deepseek_ffn_stored": NO_TEST_YET,
    "moe_deepseek_fraction": NO_TEST_YET,
    "moe_deepseek_per_token": NO_TEST_YET,
    "moe_deepseek_stored_b": NO_TEST_YET,
    "moe_load_figure": NO_TEST_YET,
    "moe_mixtral_ffn_active": NO_TEST_YET,
    "moe_mixtral_shared": NO_TEST_YET,
    "moe_n_experts": NO_TEST_YET,
    "moe_perm_diff": NO_TEST_YET,
    "moe_rows_diff": NO_TEST_YET,
    "moe_seq_len": NO_TEST_YET,
    "moe_top_k": NO_TEST_YET,
    "moe_toy_fraction": NO_TEST_YET,
    "moe_weights_moved": NO_TEST_YET,
    # parameter-count
    "pc_bert_all": NO_TEST_YET,
    "pc_bert_ne": NO_TEST_YET,
    "pc_bert_reported_m": NO_TEST_YET,
    "pc_block_llama3": NO_TEST_YET,
    "pc_d_ff": NO_TEST_YET,
    "pc_d_model": NO_TEST_YET,
    "pc_deepseek_active_b": NO_TEST_YET,
    "pc_deepseek_reported_active_b": NO_TEST_YET,
    "pc_deepseek_reported_b": NO_TEST_YET,
    "pc_deepseek_share": NO_TEST_YET,
    "pc_deepseek_total_b": NO_TEST_YET,
    "pc_gpt2_emb": NO_TEST_YET,
    "pc_gpt2_ne": NO_TEST_YET,
    "pc_gpt2_reported_m": NO_TEST_YET,
    "pc_gpt2_total_m": NO_TEST_YET,
    "pc_gpt2_vocab": NO_TEST_YET,
    "pc_gpt3_all": NO_TEST_YET,
    "pc_gpt3_gap": NO_TEST_YET,
    "pc_l270_ne": NO_TEST_YET,
    "pc_l3_all": NO_TEST_YET,
    "pc_l3_emb": NO_TEST_YET,
    "pc_l3_ne": NO_TEST_YET,
    "pc_l3_vocab": NO_TEST_YET,
    "pc_llama_ne": NO_TEST_YET,
    "pc_mistral_ne": NO_TEST_YET,
    "pc_mixtral_active_b": NO_TEST_YET,
    "pc_mixtral_reported_active_b": NO_TEST_YET,
    "pc_mixtral_reported_b": NO_TEST_YET,
    "pc_ratio_at_widest": NO_TEST_YET,
    "pc_share_figure": NO_TEST_YET,
    "pc_t5v11_ne": NO_TEST_YET,
    "pc_width_multiple": NO_TEST_YET,
    # position-independence
    "pi_batch": NO_TEST_YET,
    "pi_seq_len": NO_TEST_YET,
    # summary
    "su_share_gpt2_small_nonemb": NO_TEST_YET,
    # transformer-block
    "tb_block_diagram": NO_TEST_YET,
    "tb_influence_figure": NO_TEST_YET,
    # width
    "wd_ratio_figure": NO_TEST_YET,
}
