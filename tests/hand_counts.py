"""Parameter counts written out by hand from each model's published configuration.

Independent of ffnbook.model_parameters: the page tests compare what the pages glue
(computed by ffnbook from ffnbook/data/models.csv) with these.
"""

from __future__ import annotations

# Llama-family blocks (meta-llama/llama and llama3 model.py, mistral-inference): no biases,
# two RMSNorm scales per block and one at the end, a SwiGLU FFN of three d × d_ff matrices,
# grouped-query attention (K and V of n_kv_heads · 128 columns), untied input and output
# embeddings (V × d each).


def llama_style(d, layers, kv_heads, d_ff, vocab, *, experts=1, active=1, head_dim=128):
    """(total, active total, FFN, active FFN, embeddings) of a Llama-style decoder."""
    attention = 2 * d * d + 2 * d * kv_heads * head_dim
    ffn, ffn_active = experts * 3 * d * d_ff, active * 3 * d * d_ff
    router = d * experts if experts > 1 else 0
    per_block = attention + router + 2 * d
    embeddings = 2 * vocab * d
    total = layers * (per_block + ffn) + d + embeddings
    total_active = layers * (per_block + ffn_active) + d + embeddings
    return total, total_active, layers * ffn, layers * ffn_active, embeddings


#: params.json / config of each model (the source column of ffnbook/data/models.csv names them).
LLAMA_3_8B = llama_style(4096, 32, 8, 14336, 128256)
MISTRAL_7B = llama_style(4096, 32, 8, 14336, 32000)
LLAMA_2_70B = llama_style(8192, 80, 8, 28672, 32000)
LLAMA_1_7B = llama_style(4096, 32, 32, 11008, 32000)
MIXTRAL = llama_style(4096, 32, 8, 14336, 32000, experts=8, active=2)

# GPT-2 small (openai/gpt-2 src/model.py): 12 blocks of d = 768 with biases everywhere,
# two LayerNorms (scale and bias) per block and one at the end, a tied 50257-token
# embedding and 1024 learned positions.
GPT2_FFN = 12 * (768 * 3072 + 3072 + 3072 * 768 + 768)
GPT2_EMBEDDINGS = 50257 * 768 + 1024 * 768
GPT2_TOTAL = 124_439_808  # openai/gpt-2 README's corrected "124M"
# BERT-base (google-research/bert modeling.py): the same blocks over 30522 tokens,
# 512 positions and 2 segment types, an embedding LayerNorm and the 768 × 768 pooler.
BERT_FFN = GPT2_FFN
BERT_EMBEDDINGS = 30522 * 768 + 512 * 768 + 2 * 768
BERT_TOTAL = BERT_EMBEDDINGS + 2 * 768 + 12 * (4 * (768 * 768 + 768) + 4_722_432 + 4 * 768) + 768 * 768 + 768
