// Session 69 probe (floor.py): where the one-warp forward's 0.13-0.19 us over torch.compile's
// kernel at T 1-16, H 256-512 goes (session 68's fwd_twice.py: the gap stays on a warm second
// call). One CTA of 32 threads, a row of 256 BF16 elements (8 a thread), BF16 weights; each
// variant launched from this library on the caller's stream, <<<rows, 32>>>:
//   0 empty_args     no work, six pointer-and-scalar arguments
//   1 empty_params   no work, ForwardParams (136 bytes)
//   2 tri_fast       the row in the Triton way: coherent loads, rsqrtf (MUFU, approximate)
//   3 tri_ieee       2 with 1.0f / sqrtf (IEEE, ours)
//   4 tri_params     3 reading ForwardParams
//   5 ours           forward_fixed_kernel<bf16, bf16, 1, 32, 0, WEIGHTS_FIRST, 1, false>
//   6 ours_wlast     5 with the weights after the row (WEIGHTS_FIRST = false)
//   7 tri_ieee_nc    3 with x through the read-only path (__ldg), as ours
//   8 tri_ieee_tail  3 with rstd stored before y by lane 0
//   9 tri_ieee_smem  3 with the 32 lanes' sum as the butterfly's tree read from shared memory
//                    (every lane stores its partial, reads all 32 and adds them in the
//                    butterfly's pairs, level by level: the same bits, no dependent shuffles)
//  10 tri_fast_smem  9 with rsqrtf
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "miles_rmsnorm/forward_fixed.cuh"

using miles_rmsnorm::ForwardParams;

namespace {

__global__ void empty_args(const void*, const void*, void*, float*, int64_t, float) {}
__global__ void empty_params(const ForwardParams) {}

__device__ __forceinline__ uint4 ld_coherent(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ float lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

template <int MODE>  // 0 fast rsqrt, 1 IEEE, 2 IEEE + x via __ldg, 3 IEEE + rstd first,
                     // 4 IEEE + shared-memory sum, 5 fast rsqrt + shared-memory sum
__device__ __forceinline__ void tri_row(const __nv_bfloat16* x, const __nv_bfloat16* w,
                                        __nv_bfloat16* y, float* rstd, int64_t rows,
                                        float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const int lane = threadIdx.x;
  const uint4 xv = MODE == 2 ? __ldg(reinterpret_cast<const uint4*>(x + row * 256 + lane * 8))
                             : ld_coherent(x + row * 256 + lane * 8);
  const uint4 wv = ld_coherent(w + lane * 8);
  const uint32_t xs[4] = {xv.x, xv.y, xv.z, xv.w};
  const uint32_t ws[4] = {wv.x, wv.y, wv.z, wv.w};
  float f[8];
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = lo(xs[i]);
    f[2 * i + 1] = hi(xs[i]);
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) ss = fmaf(f[i], f[i], ss);
  if constexpr (MODE >= 4) {
    __shared__ __align__(16) float lanes[32];
    lanes[lane] = ss;
    __syncwarp();
    float c[32];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float4 q = reinterpret_cast<const float4*>(lanes)[k];
      c[4 * k] = q.x;
      c[4 * k + 1] = q.y;
      c[4 * k + 2] = q.z;
      c[4 * k + 3] = q.w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        if (k < o) c[k] = c[k] + c[k + o];
      }
    }
    ss = c[0];
  } else {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  }
  const float v = ss / 256.0f + eps;
  const float r = MODE == 0 || MODE == 5 ? rsqrtf(v) : 1.0f / sqrtf(v);
  if (MODE == 3 && lane == 0) rstd[row] = r;
  uint32_t out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float a = f[2 * i] * r * lo(ws[i]);
    const float b = f[2 * i + 1] * r * hi(ws[i]);
    __nv_bfloat162 p = __floats2bfloat162_rn(a, b);
    out[i] = *reinterpret_cast<uint32_t*>(&p);
  }
  *reinterpret_cast<uint4*>(y + row * 256 + lane * 8) = make_uint4(out[0], out[1], out[2], out[3]);
  if (MODE != 3 && lane == 0) rstd[row] = r;
}

template <int MODE>
__global__ void tri(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y,
                    float* rstd, int64_t rows, float eps) {
  tri_row<MODE>(x, w, y, rstd, rows, eps);
}

__global__ void tri_params(const ForwardParams p) {
  tri_row<1>(static_cast<const __nv_bfloat16*>(p.x), static_cast<const __nv_bfloat16*>(p.w),
             static_cast<__nv_bfloat16*>(p.y), p.rstd, p.rows, p.eps);
}

}  // namespace

extern "C" int floor_launch(int variant, const void* x, const void* w, void* y, float* rstd,
                            int64_t rows, float eps, void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  ForwardParams p{};
  p.x = x;
  p.w = w;
  p.y = y;
  p.rstd = rstd;
  p.rows = rows;
  p.hidden = 256;
  p.heads = 1;
  p.x_addr = {256, 0};
  p.u_addr = {256, 0};
  p.eps = eps;
  p.flags = 0;
  p.tpr = 32;
  p.groups = 1;
  const auto* xb = static_cast<const __nv_bfloat16*>(x);
  const auto* wb = static_cast<const __nv_bfloat16*>(w);
  auto* yb = static_cast<__nv_bfloat16*>(y);
  const dim3 grid(static_cast<unsigned int>(rows)), block(32);
  switch (variant) {
    case 0: empty_args<<<grid, block, 0, stream>>>(x, w, y, rstd, rows, eps); break;
    case 1: empty_params<<<grid, block, 0, stream>>>(p); break;
    case 2: tri<0><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    case 3: tri<1><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    case 4: tri_params<<<grid, block, 0, stream>>>(p); break;
    case 5:
      miles_rmsnorm::forward_fixed_kernel<__nv_bfloat16, __nv_bfloat16, 1, 32, 0, true, 1, false>
          <<<grid, block, 0, stream>>>(p);
      break;
    case 6:
      miles_rmsnorm::forward_fixed_kernel<__nv_bfloat16, __nv_bfloat16, 1, 32, 0, false, 1, false>
          <<<grid, block, 0, stream>>>(p);
      break;
    case 7: tri<2><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    case 8: tri<3><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    case 9: tri<4><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    case 10: tri<5><<<grid, block, 0, stream>>>(xb, wb, yb, rstd, rows, eps); break;
    default: return -1;
  }
  return static_cast<int>(cudaGetLastError());
}
