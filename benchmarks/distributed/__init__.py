"""Multi-process checks of the RMSNorm kernels under torch.distributed.

``python -m torch.distributed.run --standalone --nproc_per_node=2 -m
benchmarks.distributed.two_gpu_check --out DIR`` runs, on two GPUs (NCCL) or on the CPU
(``--device cpu``: gloo and the reference backend): a build-once check of the JIT cache with
both ranks starting together, a small model trained under DDP and FSDP2 (cross-rank and
run-to-run gradient bit checks) and a sequence-parallel ``dw`` check. See docs/distributed.md.
"""
