"""The two-GPU check (benchmarks/distributed/two_gpu_check.py) under torchrun on 2 GPUs, NCCL.

Needs at least two CUDA devices (the nvidia-h200-x2 kind); NVLink multicast stays off in the
launched processes (``benchmarks.distributed.launch.launch_env``).
"""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks.distributed import launch, two_gpu_check

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(torch.cuda.device_count() < 2,
                       reason=f"needs 2 CUDA devices, found {torch.cuda.device_count()}: "
                              "the two-GPU check runs on the nvidia-h200-x2 kind"),
]


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("two-gpu")
    proc = launch.run_check(2, root / "out", root / "empty-cache", timeout_s=600)
    report_path = root / "out" / two_gpu_check.JSON_NAME
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return proc, json.loads(report_path.read_text())


def test_every_required_check_passes_on_two_gpus(gpu_run):
    _, report = gpu_run
    assert report["passed"] is True
    meta = report["meta"]
    assert meta["world_size"] == 2 and meta["dist_backend"] == "nccl"
    assert sorted(d["index"] for d in meta["devices"]) == [0, 1]
    required = [c for c in report["checks"] if c["required"]]
    assert {c["name"] for c in required} >= {
        "jit_build_once", "ddp_local_norm_grads_identical", "functional_outputs_identical",
        "ddp_run_to_run", "fsdp2_run_to_run"}
    assert any(c["name"].startswith("sp_dw_within_budget") for c in required)
    for check in required:
        assert check["status"] == "pass", check


def test_jit_modules_were_built_once_and_loaded_by_both(gpu_run):
    _, report = gpu_run
    jit = next(c for c in report["checks"] if c["name"] == "jit_build_once")["detail"]
    assert jit["modules"], "no JIT module was observed"
    for slot in jit["modules"].values():
        assert len(slot["built_by"]) == 1
        assert slot["loaded_by"] == [0, 1]
    assert jit["cache_after"]["leftovers"] == []


def test_multicast_stayed_off(gpu_run):
    _, report = gpu_run
    env = report["meta"]["env"]
    assert env["NCCL_NVLS_ENABLE"] == "0"
    assert env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert env["NVSHMEM_DISABLE_NVLS"] == "1"
