// miles-ext-kernels first-party RMSNorm: thread-block cluster primitives (sm_90 and later).
//
// Values travel between the CTAs of a cluster with st.async into the receiver's shared memory,
// whose bytes complete a transaction on the receiver's mbarrier: a receiver waits for its own
// barrier only, and no cluster-wide memory fence (which would wait for the sender's global
// stores) is needed. Used by the small-batch backward (warp partials of a row), the split-row
// forward (the same, forward_split.cuh) and the deterministic program's one-cluster fold (chunk
// partials of dw). Callers compile the calls for sm_90 and later only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace miles_rmsnorm {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// This CTA's cluster in the grid (its CTA index where the launch has no cluster attribute: each
// CTA is then a cluster of one).
__device__ __forceinline__ uint32_t cluster_index() {
  uint32_t index;
  asm("mov.u32 %0, %%clusterid.x;\n" : "=r"(index));
  return index;
}

// This CTA's rank in its cluster, and the cluster's CTA count.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t size;
  asm("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(size));
  return size;
}

// The address of the same shared-memory location in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t cluster_address(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

__device__ __forceinline__ void barrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Initialised barriers are visible to the cluster (before the cluster barrier that follows).
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
}

// A cluster barrier that orders memory: every CTA's shared-memory stores before it are visible to
// every CTA of the cluster after it (release on arrival, acquire on the wait).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// A double from another CTA's shared memory (a cluster address).
__device__ __forceinline__ double load_remote_double(uint32_t addr) {
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];\n" : "=d"(v) : "r"(addr) : "memory");
  return v;
}

// This thread's arrival on `bar`, announcing `bytes` of transactions for the current phase.
__device__ __forceinline__ void barrier_arrive_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Waits until the phase of `bar` with the given parity has completed.
__device__ __forceinline__ void barrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

// Stores 16 bytes into another CTA's shared memory, completing 16 bytes of its barrier `bar`
// (both cluster addresses).
__device__ __forceinline__ void store_remote(uint32_t addr, float4 v, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, "
      "[%5];\n" ::"r"(addr),
      "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(bar)
      : "memory");
}

// Stores 8 bytes (8-byte aligned) into another CTA's shared memory, completing 8 bytes of its
// barrier `bar` (both cluster addresses).
__device__ __forceinline__ void store_remote(uint32_t addr, float2 v, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(
          addr),
      "f"(v.x), "f"(v.y), "r"(bar)
      : "memory");
}

// Stores 4 bytes into another CTA's shared memory, completing 4 bytes of its barrier `bar` (both
// cluster addresses).
__device__ __forceinline__ void store_remote(uint32_t addr, float v, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(addr),
      "r"(__float_as_uint(v)), "r"(bar)
      : "memory");
}

// Stores two doubles (16 bytes, 16-byte aligned) into another CTA's shared memory, completing
// 16 bytes of its barrier `bar` (both cluster addresses).
__device__ __forceinline__ void store_remote(uint32_t addr, double a, double b, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 [%0], {%1, %2}, [%3];\n" ::"r"(
          addr),
      "d"(a), "d"(b), "r"(bar)
      : "memory");
}

}  // namespace miles_rmsnorm
