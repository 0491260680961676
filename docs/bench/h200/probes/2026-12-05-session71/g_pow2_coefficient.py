"""Session 71, tree G: backward_rows' dx coefficient through DxCoefficient (step 88's power-of-two
reciprocal, a uniform branch; the same bits) instead of dx_coefficient's division. Run from the
root of a copy of the repository."""
F = "miles_ext_kernels/kernels/rmsnorm/include/miles_rmsnorm/backward.cuh"
OLD = """  const float hidden_f = static_cast<float>(p.hidden);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!s.valid[i]) continue;
    const float b = dx_coefficient(r[i], dot[i], hidden_f);"""
NEW = """  const DxCoefficient coefficient = DxCoefficient::of(p.hidden);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (!s.valid[i]) continue;
    const float b = coefficient(r[i], dot[i]);"""
s = open(F).read()
assert s.count(OLD) == 1, "backward_rows' coefficient not found"
open(F, "w").write(s.replace(OLD, NEW))
