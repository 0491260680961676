// Device inputs for the probes' micro-benchmarks (sessions 22 and 23): `bytes` of BF16 values
// from a fixed linear congruential sequence, uniform in [-2, 2), or in [0.5, 1.5) for a weight.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include <cstring>
#include <vector>

inline void* dev_random(size_t bytes, uint32_t seed, bool weight) {
  std::vector<uint16_t> h(bytes / 2);
  auto bf = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return (uint16_t)(u >> 16); };
  for (auto& v : h) {
    seed = seed * 1664525u + 1013904223u;
    const float r = (seed >> 8) / 16777216.f;
    v = bf(weight ? 0.5f + r : (r - 0.5f) * 4.f);
  }
  void* p; cudaMalloc(&p, bytes);
  cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice);
  return p;
}
