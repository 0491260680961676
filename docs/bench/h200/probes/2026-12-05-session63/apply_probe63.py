"""Session 63: per-CTA stamps over a copy of the package (run in the copy's root), finer than
session 59's apply_probe.py: MILES_TIMELINE=1 prints, per CTA, %globaltimer (us from the first
CTA's entry) at entry, weights staged, first iteration's rows landed, last iteration's start,
last iteration's rows landed, thread 0's rows done, every thread's rows done (a __syncthreads
before write_chunk_sums, which starts with one), partial written, grid barrier out, fold done;
and session 59's MEK_PROBE_SKIP (1: no fold, 2: no barrier and no fold; dw not computed).
Probe code only; never in the product. It edits the tree it runs in, so it asks for the copy's
root by name: `python3 apply_probe63.py --apply-in /tmp/P` (call1.sh), and refuses any other
invocation (session 64 ran it with `--help` in the checkout by mistake)."""
import os
import sys

if len(sys.argv) != 3 or sys.argv[1] != "--apply-in":
    sys.exit("usage: apply_probe63.py --apply-in COPY_ROOT  (edits COPY_ROOT's kernel sources)")
os.chdir(sys.argv[2])
P = "miles_ext_kernels/kernels/rmsnorm"


def sub(path, old, new):
    s = open(path).read()
    assert s.count(old) == 1, (path, old[:70], s.count(old))
    open(path, "w").write(s.replace(old, new))


sub(f"{P}/include/miles_rmsnorm/params.h", "  RowAddress gh_addr;\n};",
    "  RowAddress gh_addr;\n  unsigned long long* stamps;  // PROBE\n  int probe;  // PROBE\n};")
B = f"{P}/include/miles_rmsnorm/backward.cuh"
sub(B, "namespace miles_rmsnorm {\n", """namespace miles_rmsnorm {

constexpr int kStamps = 16;  // PROBE
__device__ __forceinline__ void probe_stamp(const BackwardParams& p, int k) {  // PROBE
  if (p.stamps != nullptr && threadIdx.x == 0) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    p.stamps[blockIdx.x * kStamps + k] = t;
  }
}
""")
sub(B, "  if (first < limit) issued();\n",
    "  if (first < limit) issued();\n  probe_stamp(p, 2);\n")
sub(B, """    if (base == first) started();
""", """    if (base == first) started();
    const bool last_iteration = ahead(base, 1) >= limit;  // PROBE
    if (last_iteration) probe_stamp(p, 4);
""")
sub(B, """    cp_async_wait_pending<D - 1>();
    BackwardRows<VPT, R> rows(""", """    cp_async_wait_pending<D - 1>();
    if (base == first) probe_stamp(p, 3);
    if (last_iteration) probe_stamp(p, 5);
    BackwardRows<VPT, R> rows(""")
sub(B, "        chunk.stride);\n", "        chunk.stride);\n    probe_stamp(p, 6);\n"
    "    __syncthreads();\n    probe_stamp(p, 7);\n")
sub(B, "  if (single_chunk) return;\n  if (uses_cluster_fold<VPT, D>(p)) {\n",
    "  probe_stamp(p, 8);\n  if (single_chunk) return;\n  if (uses_cluster_fold<VPT, D>(p)) {\n")
sub(B, "  GridBarrier barrier{", "  if (p.probe == 2) return;\n  GridBarrier barrier{")
sub(B, "  barrier.sync();\n", """  barrier.sync();
  probe_stamp(p, 9);
  if (p.probe == 1) {
    barrier.finish();
    return;
  }
""")
sub(B, "                combine, VPT == 1);\n  barrier.finish();\n}",
    "                combine, VPT == 1);\n  barrier.finish();\n  probe_stamp(p, 10);\n}")
sub(B, "  if (blockIdx.x < p.n_chunks) SharedWeights::issue_raw<WT>(p, raw);\n",
    """  if (p.stamps != nullptr && threadIdx.x == 0) {  // PROBE
    unsigned long long t;
    unsigned int sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    p.stamps[blockIdx.x * kStamps] = t;
    p.stamps[blockIdx.x * kStamps + 1] = sm;
  }
  if (blockIdx.x < p.n_chunks) SharedWeights::issue_raw<WT>(p, raw);
""")
K = f"{P}/csrc/miles_rmsnorm_bwd_kernel.cu"
sub(K, "#include <cstdlib>\n", "#include <cstdio>\n#include <cstdlib>\n")
sub(K, """      launch.cooperative();
      return cudaLaunchKernelEx(&launch.config, kernel, *p);""", """      launch.cooperative();
      miles_rmsnorm::BackwardParams q = *p;  // PROBE
      if (const char* sk = std::getenv("MEK_PROBE_SKIP")) q.probe = std::atoi(sk);
      const char* tl = std::getenv("MILES_TIMELINE");
      static unsigned long long* stamps = nullptr;
      constexpr int S = miles_rmsnorm::kStamps;
      const bool timeline = tl != nullptr && tl[0] == '1';
      if (timeline) {
        if (stamps == nullptr) cudaMalloc(&stamps, 4096 * S * 8);
        cudaMemsetAsync(stamps, 0, 4096 * S * 8, stream);
        q.stamps = stamps;
      }
      const cudaError_t st = cudaLaunchKernelEx(&launch.config, kernel, q);
      if (timeline && st == cudaSuccess) {
        cudaStreamSynchronize(stream);
        static unsigned long long host[4096 * S];
        cudaMemcpy(host, stamps, grid * S * 8, cudaMemcpyDeviceToHost);
        unsigned long long t0 = ~0ull;
        for (unsigned int b = 0; b < grid; ++b) t0 = host[b * S] < t0 ? host[b * S] : t0;
        std::fprintf(stderr, "TIMELINE grid %u block %u rows %lld hidden %lld chunks %lld\\n",
                     grid, block, static_cast<long long>(p->rows),
                     static_cast<long long>(p->hidden), static_cast<long long>(p->n_chunks));
        auto us = [&](unsigned long long v) { return v == 0 ? -1.0 : (v - t0) / 1000.0; };
        for (unsigned int b = 0; b < grid; ++b) {
          const unsigned long long* h = host + b * S;
          std::fprintf(stderr, "%u %llu", b, h[1]);
          for (int k = 0; k < 11; ++k) {
            if (k != 1) std::fprintf(stderr, " %.3f", us(h[k]));
          }
          std::fprintf(stderr, "\\n");
        }
      }
      return st;""")
