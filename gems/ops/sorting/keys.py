"""Order-preserving integer keys, shared by the bitonic network and merge (bitonic.py) and the radix sort
(radix.py); bitonic.py's docstring says how they are made and why."""

import triton
import triton.language as tl


@triton.jit
def order_keys(x, valid, DESCENDING: tl.constexpr, WIDE: tl.constexpr, NARROW: tl.constexpr):
    """Order-preserving signed integer keys of a tile (see bitonic.py's docstring), lowest for invalid
    lanes: int64 (WIDE), within int16's range (NARROW: 16-bit dtypes), else int32."""
    if WIDE:
        if x.dtype.is_floating():
            x = tl.where(x == 0, 0.0, x).to(tl.float64)
            bits = x.to(tl.int64, bitcast=True)
            bits = tl.where(x != x, 0x7FF8000000000000, bits)
            key = bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)
        else:
            key = x.to(tl.int64)
        if not DESCENDING:
            key = ~key
        return tl.where(valid, key, -9223372036854775807 - 1)
    else:
        if NARROW and x.dtype == tl.float16:
            bits = x.to(tl.int16, bitcast=True).to(tl.int32)  # sign-extended
            bits = tl.where(x == 0, 0, tl.where(x != x, 0x7E00, bits))
            key = bits ^ ((bits >> 15) & 0x7FFF)
        elif x.dtype.is_floating():
            x = x.to(tl.float32)
            x = tl.where(x == 0, 0.0, x)
            bits = x.to(tl.int32, bitcast=True)
            bits = tl.where(x != x, 0x7FC00000, bits)
            key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
            if NARROW:  # bf16: the low 16 bits of its fp32 key are all equal (0 or all ones)
                key = key >> 16
        else:
            key = x.to(tl.int32)
        if not DESCENDING:
            key = ~key
        if NARROW:
            return tl.where(valid, key, -32768)
        else:
            return tl.where(valid, key, -2147483648)
