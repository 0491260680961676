// Cold and warm per-kernel times of a launch, for the probes' micro-benchmarks (sessions 21 and
// 22): warm, a CUDA graph of 200 launches; cold, a graph of 20 (flush 256 MB of L2; launch)
// minus a graph of the 20 flushes; the median of 15 replays, in us a launch. The flush: a memset
// (time_graph) or a fill kernel, as the harness's (time_cold_fill, sessions 45-46).
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void* g_flush;
static size_t g_flush_bytes = 256u << 20;

// The harness's flush is a fill kernel (sessions 45-46): the flush buffer written by a kernel.
__global__ void fill_flush(uint4* p, size_t n, uint32_t v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    p[i] = make_uint4(v, v, v, v);
  }
}

// time_graph with `flush(stream, i)` before the i-th launch of a cold graph.
template <typename F, typename Flush>
float time_graph_with(F launch, Flush flush, cudaStream_t s, bool cold) {
  const int n = cold ? 20 : 200;
  auto build = [&](bool with_kernel) {
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < n; ++i) {
      if (cold) flush(s, i);
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

// Flushed with a memset of the buffer.
template <typename F>
float time_graph(F launch, cudaStream_t s, bool cold) {
  return time_graph_with(
      launch, [](cudaStream_t st, int i) { cudaMemsetAsync(g_flush, i & 0xff, g_flush_bytes, st); },
      s, cold);
}

// Cold, flushed with fill_flush (as the harness).
template <typename F>
float time_cold_fill(F launch, cudaStream_t s) {
  return time_graph_with(
      launch,
      [](cudaStream_t st, int i) {
        fill_flush<<<132 * 8, 512, 0, st>>>(static_cast<uint4*>(g_flush), g_flush_bytes / 16, i);
      },
      s, true);
}

// The probes' stream, with unbuffered output and the flush buffer allocated (sessions 22-23).
inline cudaStream_t probe_stream() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMalloc(&g_flush, g_flush_bytes);
  return s;
}
