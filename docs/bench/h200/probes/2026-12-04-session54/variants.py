"""Session 54: call 3's diagnostic builds of the half-vector one-row kernel, written into
.device/v1-v7 (the header only; call3.sh regenerates each tree's build.json on the device). Run
from the repository root with one_row_halves.patch applied to the working tree (to 0e114b1's
parent, 01b4c35). v1 the contract flags at compile time, v2 no dw store, v3 no second reduction
level, v4 row addresses not dependent on the hidden size, v5 the row sum not tied to the rstd,
v6 = v1 + v4 + v5, v7 all of them. Probes, not candidates: v2, v3, v4 and v7 compute wrong
results."""
import os

H = "miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward_one_row.cuh"
SRC = open(H).read()
K = SRC.index("__global__ void __launch_bounds__(1024, 1) backward_one_row_halves_kernel")
DW_STORE = """  float* const out = p.dw + offset;
  if ((reinterpret_cast<uintptr_t>(p.dw) & 15u) == 0) {
    *reinterpret_cast<float4*>(out) = make_float4(dw[0], dw[1], dw[2], dw[3]);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = dw[i];
  }"""
SUM = "  const float sum = __shfl_sync(0xffffffffu, partial[0], 0);\n"


def rep(s: str, a: str, b: str) -> str:
    """s with its first a replaced by b (a must be there)."""
    assert a in s, a
    return s.replace(a, b, 1)


def flags(k: str) -> str:
    """The contract at compile time (default contract)."""
    k = rep(k, "const bool cast = (p.flags & kCastBeforeWeightMul) != 0;",
            "constexpr bool cast = false;")
    return rep(k, "w.load(p, offset, (p.flags & kZeroCenteredGamma) != 0);",
               "w.load(p, offset, false);")


def no_dw(pre: str) -> str:
    """No dw store (a never-taken one keeps dw alive)."""
    return rep(pre, DW_STORE, "  if (dw[0] == 12345.0f) p.dw[offset] = dw[1];")


def no_level(k: str) -> str:
    """No second reduction level (no barrier)."""
    a = k.index("  if (lane == 1) partials[warp] = dot[0];")
    b = k.index(SUM) + len(SUM)
    return k[:a] + "  const float sum = dot[0] + partials[0];\n" + k[b:]


def addr(k: str) -> str:
    """Row addresses without the hidden size (full rows only)."""
    return rep(k, "const int offset = (live ? j : 0) * 8 + (odd ? 4 : 0);",
               "const int offset = j * 8 + (odd ? 4 : 0);")


def untied(k: str) -> str:
    """The row sum from +0, not tied to the rstd."""
    return rep(k, "vector_dot<XT, 4>(zero_tied_to(r, p.rows), graw",
               "vector_dot<XT, 4>(0.0f, graw")


pre, ker = SRC[:K], SRC[K:]
variants = {
    "v1": pre + flags(ker), "v2": no_dw(pre) + ker, "v3": pre + no_level(ker),
    "v4": pre + addr(ker), "v5": pre + untied(ker),
    "v6": pre + untied(addr(flags(ker))), "v7": no_dw(pre) + no_level(untied(addr(flags(ker)))),
}
for name, text in variants.items():
    path = os.path.join(".device", name, H)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)
    print("wrote", path)
