"""Attention: scaled_dot_product_attention's backend overloads and _flash_attention_forward, one file per
served overload family, the FlashAttention-style kernels they share in ``flash.py``."""
