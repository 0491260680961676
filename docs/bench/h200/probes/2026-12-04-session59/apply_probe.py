"""Session 59: lays the probe hooks over a copy of the package (run in the copy's root): per-CTA
stamps (MILES_TIMELINE=1: entry, SM, rows done, partial written, barrier out, fold done, to
stderr), MEK_PROBE_SKIP (1: no fold, 2: no barrier and no fold), MEK_PROBE_BLOCK (CTAs of N
threads where the rule gives the config's block) and MEK_PROBE_MAX_CHUNKS (caps the 264-chunk
rule). Probe code only; never in the product."""
P = "miles_ext_kernels/kernels/rmsnorm"


def sub(path, old, new):
    s = open(path).read()
    assert s.count(old) == 1, (path, old[:70], s.count(old))
    open(path, "w").write(s.replace(old, new))


sub(f"{P}/include/miles_rmsnorm/params.h", "  RowAddress gh_addr;\n};",
    "  RowAddress gh_addr;\n  unsigned long long* stamps;  // PROBE\n  int probe;  // PROBE\n};")
B = f"{P}/include/miles_rmsnorm/backward.cuh"
sub(B, "namespace miles_rmsnorm {\n", """namespace miles_rmsnorm {

__device__ __forceinline__ void probe_stamp(const BackwardParams& p, int k) {  // PROBE
  if (p.stamps != nullptr && threadIdx.x == 0) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    p.stamps[blockIdx.x * 8 + k] = t;
  }
}
""")
sub(B, "        chunk.stride);\n", "        chunk.stride);\n    probe_stamp(p, 2);\n")
sub(B, "  if (single_chunk) return;\n  if (uses_cluster_fold<VPT, D>(p)) {\n",
    "  probe_stamp(p, 3);\n  if (single_chunk) return;\n  if (uses_cluster_fold<VPT, D>(p)) {\n")
sub(B, "  GridBarrier barrier{", "  if (p.probe == 2) return;\n  GridBarrier barrier{")
sub(B, "  barrier.sync();\n", """  barrier.sync();
  probe_stamp(p, 4);
  if (p.probe == 1) {
    barrier.finish();
    return;
  }
""")
sub(B, "                combine, VPT == 1);\n  barrier.finish();\n}",
    "                combine, VPT == 1);\n  barrier.finish();\n  probe_stamp(p, 5);\n}")
sub(B, "  if (blockIdx.x < p.n_chunks) SharedWeights::issue_raw<WT>(p, raw);\n",
    """  if (p.stamps != nullptr && threadIdx.x == 0) {  // PROBE
    unsigned long long t;
    unsigned int sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    p.stamps[blockIdx.x * 8] = t;
    p.stamps[blockIdx.x * 8 + 1] = sm;
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
      const bool timeline = tl != nullptr && tl[0] == '1';
      if (timeline) {
        if (stamps == nullptr) cudaMalloc(&stamps, 4096 * 8 * 8);
        cudaMemsetAsync(stamps, 0, 4096 * 8 * 8, stream);
        q.stamps = stamps;
      }
      const cudaError_t st = cudaLaunchKernelEx(&launch.config, kernel, q);
      if (timeline && st == cudaSuccess) {
        cudaStreamSynchronize(stream);
        static unsigned long long host[4096 * 8];
        cudaMemcpy(host, stamps, grid * 8 * 8, cudaMemcpyDeviceToHost);
        unsigned long long t0 = ~0ull;
        for (unsigned int b = 0; b < grid; ++b) t0 = host[b * 8] < t0 ? host[b * 8] : t0;
        std::fprintf(stderr, "TIMELINE grid %u block %u rows %lld hidden %lld chunks %lld\\n",
                     grid, block, static_cast<long long>(p->rows),
                     static_cast<long long>(p->hidden), static_cast<long long>(p->n_chunks));
        auto us = [&](unsigned long long v) { return v == 0 ? -1.0 : (v - t0) / 1000.0; };
        for (unsigned int b = 0; b < grid; ++b) {
          const unsigned long long* h = host + b * 8;
          std::fprintf(stderr, "%u %llu %.3f %.3f %.3f %.3f %.3f\\n", b, h[1], us(h[0]),
                       us(h[2]), us(h[3]), us(h[4]), us(h[5]));
        }
      }
      return st;""")
BI = f"{P}/csrc/miles_rmsnorm_bwd_binding.cu"
sub(BI, '#include "miles_rmsnorm/backward_args.h"\n',
    '#include <cstdlib>\n\n#include "miles_rmsnorm/backward_args.h"\n')
sub(BI, "  const int block = backward_chunk_block(t.cfg, rows_per_chunk);",
    """  int block = backward_chunk_block(t.cfg, rows_per_chunk);
  if (const char* pb = std::getenv("MEK_PROBE_BLOCK")) {  // PROBE
    if (t.cfg.vpt == 1 && block == t.cfg.block) block = std::atoi(pb);
  }""")
sub("miles_ext_kernels/cake/routing.py",
    """    n_chunks = min(rule["max_chunks"], -(-rows // rule["min_rows_per_chunk"]))""",
    """    import os  # PROBE: MEK_PROBE_MAX_CHUNKS caps the 264-chunk rule
    cap = rule["max_chunks"]
    if cap == 264 and os.environ.get("MEK_PROBE_MAX_CHUNKS"):
        cap = int(os.environ["MEK_PROBE_MAX_CHUNKS"])
    n_chunks = min(cap, -(-rows // rule["min_rows_per_chunk"]))""")
