"""The two-process check in CPU mode: 2 gloo ranks under torchrun, tiny model, reference backend.

One launch (module-scoped) feeds the checks on its JSON, markdown and printed table; one
single-process launch covers the group-of-one path; the JIT verdict's rules are pinned on
observations that break them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.distributed import jit_probe, launch, two_gpu_check

REQUIRED_RUN = {"ddp_local_norm_grads_identical", "functional_outputs_identical",
                "ddp_run_to_run", "fsdp2_run_to_run"}


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("dist-smoke")
    proc = launch.run_check(2, root / "out", root / "cache", launch.CPU_SMOKE_ARGS,
                            timeout_s=180)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    report = json.loads((root / "out" / two_gpu_check.JSON_NAME).read_text())
    return proc, report, root / "out"


def _by_name(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


def test_two_gloo_ranks_pass_every_required_check(cpu_run):
    _, report, _ = cpu_run
    checks = _by_name(report)
    assert report["passed"] is True
    assert report["meta"]["world_size"] == 2
    assert report["meta"]["dist_backend"] == "gloo"
    assert report["meta"]["rmsnorm_backend"] == "reference"
    assert REQUIRED_RUN <= set(checks)
    for name in REQUIRED_RUN:
        assert checks[name]["required"] and checks[name]["status"] == "pass", checks[name]
    assert checks["jit_build_once"]["status"] == "skip"
    assert "test_jit_concurrency" in checks["jit_build_once"]["summary"]


def test_cross_rank_comparisons_saw_both_ranks(cpu_run):
    _, report, _ = cpu_run
    checks = _by_name(report)
    norm = checks["ddp_local_norm_grads_identical"]["detail"]
    assert norm["differing_bytes_vs_rank0"] == [0, 0]
    assert len(norm["names"]) == 4  # 3 blocks + final norm
    assert norm["bytes"] == 4 * 64 * 2  # BF16 weight grads of hidden 64
    func = checks["functional_outputs_identical"]["detail"]
    assert func["dw"]["bytes"] == 64 * 4  # the FP32 dw


def test_training_is_reproducible_in_both_wrappers(cpu_run):
    _, report, _ = cpu_run
    for mode in ("ddp", "fsdp2"):
        detail = _by_name(report)[f"{mode}_run_to_run"]["detail"]
        assert len(detail["ranks"]) == 2
        for rank in detail["ranks"]:
            assert rank["mismatched"] == [] and rank["final_same"] and rank["losses_same"]
            assert len(rank["losses"]) == 2
        # The two ranks trained on different batches.
        assert detail["ranks"][0]["losses"] != detail["ranks"][1]["losses"]
    ddp = _by_name(report)["ddp_run_to_run"]["detail"]["mean_losses"]
    fsdp = _by_name(report)["fsdp2_run_to_run"]["detail"]["mean_losses"]
    assert ddp[0] == pytest.approx(fsdp[0], rel=1e-6)  # same model, same first batch


def test_sequence_parallel_dw_is_within_budget(cpu_run):
    _, report, _ = cpu_run
    sp = [c for c in report["checks"] if c["name"].startswith("sp_dw_within_budget")]
    assert [c["name"] for c in sp] == ["sp_dw_within_budget[T=256,H=64,residual]",
                                       "sp_dw_within_budget[T=256,H=128]"]
    for entry in sp:
        assert entry["status"] == "pass"
        ranks = entry["detail"]["ranks"]
        assert [r["rows"] for r in ranks] == [[0, 128], [128, 256]]
        for key in ("ratio_sp_vs_fp64", "ratio_single_vs_fp64", "ratio_sp_vs_single"):
            assert 0.0 <= entry["detail"][key] <= 1.0
    info = [c for c in report["checks"] if c["name"].startswith("sp_dw_bitwise_equal_single")]
    assert len(info) == 2 and all(c["status"] == "info" for c in info)


def test_outputs_markdown_and_table_last(cpu_run):
    proc, report, out = cpu_run
    markdown = (out / two_gpu_check.MD_NAME).read_text()
    assert "Verdict: **PASS**" in markdown
    for check in report["checks"]:
        assert f"`{check['name']}`" in markdown
    tail = proc.stdout.strip().splitlines()
    assert tail[-1].startswith("PASS: ")
    assert tail[-2 - len(report["checks"])].startswith("---")
    assert report["meta"]["env"]["NCCL_NVLS_ENABLE"] == "0"
    assert report["meta"]["env"]["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert report["meta"]["env"]["NVSHMEM_DISABLE_NVLS"] == "1"


def test_one_plain_process_skips_cross_rank_checks(tmp_path: Path):
    env = launch.launch_env(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-m", launch.MODULE, "--out", str(tmp_path / "out"),
         *launch.CPU_SMOKE_ARGS, "--sp-hidden", ""],
        cwd=launch.REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
        check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "out" / two_gpu_check.JSON_NAME).read_text())
    checks = _by_name(report)
    assert report["meta"]["world_size"] == 1
    assert checks["ddp_local_norm_grads_identical"]["status"] == "skip"
    assert checks["ddp_run_to_run"]["status"] == "pass"
    assert [c for c in checks if c.startswith("sp_dw_within_budget")] == [
        "sp_dw_within_budget[T=256,H=64,residual]"]


def test_bad_arguments_are_named():
    with pytest.raises(SystemExit) as excinfo:
        two_gpu_check.parse_args(["--out", "x", "--hidden", "0"])
    assert excinfo.value.code == 2
    with pytest.raises(ValueError, match="nproc"):
        launch.torchrun_command(0, Path("x"))


def _listing(entries=(), leftovers=()):
    return {"root": "/c", "entries": list(entries), "leftovers": list(leftovers)}


def _observations(built_by=(0,), mapped_by=(0, 1)):
    so = "/c/m-1/module.so"
    ranks = [{"pid": 100 + r, "outcomes": [{"module": "m", "arch": "sm_90a",
                                            "built": r in built_by, "seconds": 1.0,
                                            "so_path": so}],
              "mapped": [so] if r in mapped_by else []} for r in range(2)]
    after = _listing([{"dir": "m-1", "so_path": so, "module": "m", "arch": "sm_90a",
                       "builder_pid": 100 + (built_by[0] if built_by else 0)}])
    return ranks, after


def test_jit_verdict_accepts_one_build_loaded_everywhere():
    ranks, after = _observations()
    ok, problems, modules = jit_probe.jit_verdict([_listing(), _listing()], ranks, after)
    assert ok and problems == []
    assert modules["/c/m-1/module.so"]["built_by"] == [0]
    assert modules["/c/m-1/module.so"]["loaded_by"] == [0, 1]


@pytest.mark.parametrize(("kwargs", "before", "message"), [
    ({"built_by": (0, 1)}, (), "built by ranks [0, 1]"),
    ({"built_by": ()}, (), "built by ranks []"),
    ({"mapped_by": (0,)}, (), "not mapped into rank(s) [1]"),
    ({}, ({"dir": "old"},), "not empty at the start"),
])
def test_jit_verdict_names_what_broke(kwargs, before, message):
    ranks, after = _observations(**kwargs)
    ok, problems, _ = jit_probe.jit_verdict([_listing(before), _listing()], ranks, after)
    assert not ok
    assert any(message in p for p in problems), problems
