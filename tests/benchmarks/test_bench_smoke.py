"""The benchmark harness in smoke mode (CPU, tiny shapes, reference backend), run in-process.

One smoke run (module-scoped) feeds most tests: its JSON must hold a row per case and op with
our reference backend timed and within budget, its markdown the upstream-format tables, and
(when matplotlib is installed) its PNG plots. The remaining tests pin the grids, the byte
model, the accuracy verdicts, the counterbalanced timing order and the time budget.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from benchmarks.rmsnorm import accuracy, report, shapes, sysinfo, timing
from benchmarks.rmsnorm.__main__ import main
from benchmarks.rmsnorm.host_overhead import FUNCTION_FLOOR
from benchmarks.rmsnorm.inputs import make_input_set

SMOKE_OPS = ("fwd", "bwd", "step")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("bench-smoke")
    assert main(["--smoke", "--out", str(out)]) == 0
    return out, json.loads((out / "results.json").read_text())


def test_smoke_json_has_a_row_per_case_and_op(smoke_run):
    _, results = smoke_run
    expected = {(case.key, op) for case in shapes.smoke_grid() for op in SMOKE_OPS}
    got = {(row["case"]["key"], row["op"]) for row in results["rows"]}
    assert got == expected
    assert results["skipped"] == []
    assert results["meta"]["complete"] is True
    assert results["meta"]["copy_ceiling"]["tb_per_s"] > 0


def test_smoke_ours_is_timed_and_within_budget(smoke_run):
    _, results = smoke_run
    for row in results["rows"]:
        cell = row["cells"]["ours[reference]"]
        assert cell["status"] == "ok", (row["case"]["key"], row["op"], cell)
        assert cell["stats"]["median_us"] > 0
        assert cell["stats"]["mode"] == "cpu"
        assert cell["accuracy"]["dw_dtype"] == "float32"
        assert row["pass"] is True, (row["case"]["key"], row["op"], cell["accuracy"])
        assert row["ours"] == "ours[reference]"
        for peer, ratio in row["speedups"].items():
            peer_us = row["cells"][peer]["stats"]["median_us"]
            assert ratio == pytest.approx(peer_us / cell["stats"]["median_us"])


def test_smoke_records_every_candidate(smoke_run):
    _, results = smoke_run
    records = {c["key"]: c for c in results["candidates"]}
    assert set(records) == {"ours[reference]", "torch", "aten", "eager", "compile", "liger",
                            "quack"}
    for key in ("ours[reference]", "torch", "eager", "compile"):
        assert records[key]["status"] == "ok"
    # Liger (Triton) and QuACK (CuTe DSL) never run on a CPU: recorded, not fatal.
    for key in ("liger", "quack"):
        assert records[key]["status"] != "ok"
        assert records[key]["status"].startswith(("not installed", "needs CUDA"))


def test_smoke_peer_eligibility_follows_dw_dtype(smoke_run):
    _, results = smoke_run
    for row in results["rows"]:
        eager = row["cells"].get("eager", {})
        if row["op"] == "fwd" or "accuracy" not in eager:
            continue
        # The eager formula returns dw in the weight's dtype: BF16 dw can never be eligible.
        bf16_weight = row["case"]["w_dtype"] == "bf16"
        assert eager["accuracy"]["dw_fp32"] is (not bf16_weight)
        if bf16_weight:
            assert eager["ok_for_op"] is False
            assert row["fastest_peer"] != "eager"


def test_smoke_compile_budget_stops_compiling(tmp_path):
    # A budget smaller than any compile: the first shape compiles, every later one is skipped
    # (the default smoke budget depends on how warm torch.compile's caches are).
    assert main(["--smoke", "--only", "fwd", "--compile-budget", "1e-6",
                 "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    statuses = [row["cells"]["compile"]["status"] for row in results["rows"]]
    assert statuses[0] == "ok"
    assert "not run: compile budget spent" in statuses


def test_smoke_markdown_tables(smoke_run):
    out, results = smoke_run
    text = (out / "results.md").read_text()
    for title in ("### Forward", "### Backward", "### Training step", "### Geomean summary",
                  "### Host overhead per call", "### Candidates"):
        assert title in text
    header = [line for line in text.splitlines() if line.startswith("| Shape | T | Pass |")]
    assert len(header) == len(SMOKE_OPS)
    assert "fastest peer" in header[0] and "ours (reference)" in header[0]
    for case in shapes.smoke_grid():
        assert f"| {case.shape_label} | {case.tokens} | yes |" in text
    assert "ours rmsnorm_forward" in text and "PyTorch F.rms_norm fwd" in text


def test_host_overhead_prices_ours_beside_the_autograd_floor(smoke_run):
    """The host table holds ours, PyTorch's and a Python Function's autograd step (the floor any
    step through a Python autograd.Function pays), each a positive time, with no error of ours."""
    out, results = smoke_run
    per_call = results["host_overhead"]["us_per_call"]
    for name in (FUNCTION_FLOOR, "PyTorch F.rms_norm fwd+bwd (autograd)",
                 "ours rmsnorm fwd+bwd (autograd)", "ours rmsnorm_backward (auto)"):
        assert per_call[name] > 0, name
    assert not [name for name in results["host_overhead"]["errors"] if "ours" in name]
    assert f"| {FUNCTION_FLOOR} |" in (out / "results.md").read_text()


def test_smoke_plots(smoke_run):
    pytest.importorskip("matplotlib", reason="matplotlib not installed (the bench extra)")
    out, results = smoke_run
    for op in SMOKE_OPS:
        for kind in ("speedup", "bandwidth"):
            path = out / f"{kind}_{op}.png"
            data = path.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, path
    assert len(results["outputs"]["plots"]) == 2 * len(SMOKE_OPS)


def test_rerender_from_json_reproduces_markdown(smoke_run, tmp_path):
    out, _ = smoke_run
    assert main(["--from-json", str(out / "results.json"), "--out", str(tmp_path),
                 "--no-plots"]) == 0
    assert (tmp_path / "results.md").read_text() == (out / "results.md").read_text()


def test_time_budget_skips_and_still_reports(tmp_path):
    assert main(["--smoke", "--out", str(tmp_path), "--time-budget", "1", "--no-plots",
                 "--no-host-overhead", "--candidates", "ours,torch"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["rows"] == []
    assert {s["case"] for s in results["skipped"]} == {c.key for c in shapes.smoke_grid()}
    assert results["meta"]["complete"] is False
    assert "skipped plain/h256/t1/wbf16: time budget" in (tmp_path / "results.md").read_text()


@pytest.mark.parametrize("argv, flag", [
    (["--only", "fwd,backward"], "--only"),
    (["--hidden", "4096,abc"], "--hidden"),
    (["--candidates", "ours,tvm"], "--candidates"),
    (["--ours-backends", "cuda"], "--ours-backends"),
    (["--rows", "3"], "no case matches"),
    (["--graphs", "0"], "--graphs"),
])
def test_bad_arguments_name_the_flag(argv, flag, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--smoke", "--out", str(tmp_path), *argv])
    assert info.value.code == 2
    assert flag in capsys.readouterr().err


def test_grids_cover_the_issue():
    full = shapes.full_grid()
    keys = [case.key for case in full]
    assert len(keys) == len(set(keys)) == 200
    plain = {(c.hidden, c.tokens, c.w_dtype) for c in full if c.family == "plain"}
    assert len(plain) == 8 * 10 * 2
    assert {c.hidden for c in full if c.family == "residual"} == {4096, 6144}
    per_head = [c for c in full if c.per_head]
    assert {(c.family, c.heads, c.row_heads) for c in per_head} == {
        ("per_head_strided", 24, 32), ("per_head_contig", 4, 4)}
    quick = shapes.quick_grid()
    assert keys[: len(quick)] == [c.key for c in quick]  # the quick set runs first
    assert [c.tier for c in full] == sorted(c.tier for c in full)


def test_bytes_model():
    case = shapes.plain_case(16384, 4096)
    assert case.tensor_bytes("fwd") == 4 * 16384 * 4096
    assert case.tensor_bytes("bwd") == 6 * 16384 * 4096
    assert case.tensor_bytes("step") == 14 * 16384 * 4096
    head = shapes.per_head_case(8, strided=True)
    assert head.rows == 8 * 24 and head.tensor_bytes("fwd") == 4 * 8 * 24 * 256
    residual = shapes.residual_case(2, 4096)
    assert residual.tensor_bytes("fwd") == 8 * 2 * 4096


def test_strided_view_layout():
    inp = make_input_set(shapes.per_head_case(3, strided=True), "cpu", seed=0)
    assert tuple(inp.x.shape) == (3, 24, 256)
    assert inp.x.stride() == (32 * 256, 256, 1)
    assert inp.g.is_contiguous()


def test_accuracy_verdicts():
    case = shapes.plain_case(64, 256)
    inp = make_input_set(case, "cpu", seed=3)
    ref = accuracy.fp64_reference(inp)
    good = accuracy.check(ref, ref.y.bfloat16(), ref.dx.bfloat16(), ref.dw.float(),
                          torch.bfloat16)
    assert good.ok_for("fwd") and good.ok_for("bwd") and good.ok_for("step")
    # A dw off by 3e-4 relative breaks the 1e-4 budget; a BF16 dw is never eligible.
    bad = accuracy.check(ref, ref.y.bfloat16(), ref.dx.bfloat16(),
                         (ref.dw * (1 + 3e-4) + 2e-4).float(), torch.bfloat16)
    assert bad.ok_for("fwd") and not bad.dw_ok and not bad.ok_for("bwd")
    low = accuracy.check(ref, ref.y.bfloat16(), ref.dx.bfloat16(), ref.dw.bfloat16(),
                         torch.bfloat16)
    assert not low.dw_fp32 and not low.ok_for("step")
    nan_dx = ref.dx.bfloat16().clone()
    nan_dx[0, 0] = float("nan")
    assert not accuracy.check(ref, ref.y.bfloat16(), nan_dx, ref.dw.float(),
                              torch.bfloat16).dx_ok


def test_measure_alternates_candidate_order():
    calls: list[str] = []
    timer = timing.Timer(torch.device("cpu"), timing.L2Flusher(torch.device("cpu"), 64))
    bodies = {name: (lambda i, name=name: calls.append(name)) for name in ("A", "B")}
    plan = timing.SamplePlan(n_inner=1, samples=timing.ROUNDS)
    stats, errors = timing.measure(bodies, timer, n_sets=2, plan=plan)
    assert errors == {} and set(stats) == {"A", "B"}
    timed = calls[-timing.ROUNDS * 2:]  # after the warm-up calls: one call per replay
    assert timed == ["A", "B", "B", "A", "A", "B", "B", "A"]
    assert all(s.samples == timing.ROUNDS and s.median_us > 0 for s in stats.values())


def test_measure_replays_every_graph_of_a_candidate_in_each_round():
    calls: list[str] = []
    timer = timing.Timer(torch.device("cpu"), timing.L2Flusher(torch.device("cpu"), 64))
    bodies = {name: (lambda i, name=name: calls.append(name)) for name in ("A", "B")}
    plan = timing.SamplePlan(n_inner=1, samples=2 * timing.ROUNDS)
    stats, errors = timing.measure(bodies, timer, n_sets=2, plan=plan, graphs=2)
    assert errors == {} and set(stats) == {"A", "B"}
    timed = calls[-timing.ROUNDS * 4:]  # two graphs a candidate, one replay each a round
    assert timed == ["A", "A", "B", "B", "B", "B", "A", "A"] * (timing.ROUNDS // 2)
    for s in stats.values():
        assert s.graphs == 2 and s.samples == 2 * timing.ROUNDS
        assert 0.0 <= s.graph_spread_pct < float("inf")
    with pytest.raises(ValueError, match="graphs must be >= 1"):
        timing.measure(bodies, timer, n_sets=2, plan=plan, graphs=0)


def test_smoke_run_with_several_graphs_records_them(tmp_path):
    assert main(["--smoke", "--out", str(tmp_path), "--graphs", "3", "--no-plots",
                 "--no-host-overhead", "--candidates", "ours", "--only", "fwd",
                 "--rows", "1"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["meta"]["graphs"] == 3 and results["rows"]
    for row in results["rows"]:
        assert row["plan"]["graphs"] == 3
        assert row["cells"]["ours[reference]"]["stats"]["graphs"] == 3
    assert "3 CUDA graphs a candidate and cell" in (tmp_path / "results.md").read_text()


def test_plan_samples_bounds():
    tiny = timing.plan_samples(3.0, 70.0)
    huge = timing.plan_samples(3000.0, 70.0)
    assert tiny.n_inner == 16 and huge.n_inner == 1
    for plan in (tiny, huge, timing.plan_samples(300.0, 70.0, quick=True)):
        assert 8 <= plan.samples <= 40 and plan.samples % timing.ROUNDS == 0


def test_compare_sessions_reports_spread(smoke_run, tmp_path):
    out, results = smoke_run
    spread = {item["candidate"]: item for item in
              report.session_spread(results, results)}
    assert spread["ours[reference]"]["rows"] == len(results["rows"])
    assert spread["ours[reference]"]["max_pct"] == 0.0
    assert main(["--from-json", str(out / "results.json"), "--out", str(tmp_path),
                 "--no-plots", "--compare", str(out / "results.json")]) == 0
    assert "### Spread between two sessions" in (tmp_path / "results.md").read_text()


def test_plan_prints_the_quick_budget(capsys):
    assert main(["--plan", "--quick"]) == 0
    text = capsys.readouterr().out
    assert f"{len(shapes.quick_grid())} cases" in text and "time budget 280.0 s" in text


def test_smoke_records_the_kernel_sources_it_measured(smoke_run, tmp_path):
    out, results = smoke_run
    sources = results["meta"]["system"]["kernel_sources"]
    repo = Path(__file__).resolve().parents[2]
    build_json = repo / sysinfo.KERNEL_MANIFESTS["first_party"]
    assert sources["first_party"] == hashlib.sha256(build_json.read_bytes()).hexdigest()[:16]
    assert f"first_party `{sources['first_party']}`" in (out / "results.md").read_text()
    # A changed manifest changes the fingerprint; a missing one is recorded as absent.
    copy = tmp_path / sysinfo.KERNEL_MANIFESTS["first_party"]
    copy.parent.mkdir(parents=True)
    copy.write_bytes(build_json.read_bytes() + b" ")
    changed = sysinfo.kernel_sources(tmp_path)
    assert changed["first_party"] != sources["first_party"]
    assert changed["vendored"] is None


def test_smoke_records_the_flush_it_used(smoke_run):
    out, results = smoke_run
    meta = results["meta"]
    assert meta["flush_method"] == f"zero_ of {timing.CPU_FLUSH_BYTES} bytes"
    assert meta["flush_bytes"] == timing.CPU_FLUSH_BYTES
    assert f"; flush: {meta['flush_method']}" in (out / "results.md").read_text()


def test_cpu_flusher_zeroes_its_buffer_plainly():
    flusher = timing.L2Flusher(torch.device("cpu"), 1 << 20)
    flusher.buffer.fill_(7)
    flusher()
    assert flusher.method == "zero_ of 1 MiB"
    assert int(flusher.buffer.count_nonzero()) == 0


def test_pinned_fill_refuses_what_it_cannot_fill():
    from benchmarks.rmsnorm.pinned_fill import make_pinned_fill

    with pytest.raises(ValueError, match="needs a CUDA buffer"):
        make_pinned_fill(torch.empty(16, dtype=torch.uint8))
