// Cold and warm per-kernel times of a launch, for the probes' micro-benchmarks (sessions 21 and
// 22): warm, a CUDA graph of 200 launches; cold, a graph of 20 (flush 256 MB of L2; launch)
// minus a graph of the 20 flushes; the median of 15 replays, in us a launch.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void* g_flush;
static size_t g_flush_bytes = 256u << 20;

template <typename F>
float time_graph(F launch, cudaStream_t s, bool cold) {
  const int n = cold ? 20 : 200;
  auto build = [&](bool with_kernel) {
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < n; ++i) {
      if (cold) cudaMemsetAsync(g_flush, i & 0xff, g_flush_bytes, s);
      if (with_kernel) launch(s);
    }
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) {
      printf("capture failed\n"); exit(1);
    }
    cudaGraphDestroy(g);
    return ge;
  };
  auto run = [&](cudaGraphExec_t ge) {
    cudaGraphLaunch(ge, s); cudaStreamSynchronize(s);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> v;
    for (int rep = 0; rep < 15; ++rep) {
      cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000.f / n);
    }
    std::sort(v.begin(), v.end());
    cudaEventDestroy(a); cudaEventDestroy(b);
    return v[v.size() / 2];
  };
  cudaGraphExec_t gk = build(true);
  float t = run(gk);
  cudaGraphExecDestroy(gk);
  if (cold) { cudaGraphExec_t gf = build(false); t -= run(gf); cudaGraphExecDestroy(gf); }
  return t;
}

// The probes' stream, with unbuffered output and the flush buffer allocated (sessions 22-23).
inline cudaStream_t probe_stream() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMalloc(&g_flush, g_flush_bytes);
  return s;
}
