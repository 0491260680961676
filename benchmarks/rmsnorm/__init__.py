"""RMSNorm benchmark harness: ``python -m benchmarks.rmsnorm --device cuda --out DIR``.

Modules: ``shapes`` (grids), ``inputs`` (tensors), ``candidates`` (ours and peers),
``timing`` (cold-L2 CUDA-graph timing), ``accuracy`` (FP64 reference and budget),
``budget`` (device-time model), ``report`` (markdown, geomean, plots), ``host_overhead``,
``sysinfo``, ``runner`` (one run) and ``__main__`` (command line).
"""
