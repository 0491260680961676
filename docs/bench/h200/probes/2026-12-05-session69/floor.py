"""Session 69 probe: the one-warp forward's kernel floor, variant by variant (floor.cu), against
the package's own call and torch.compile's, each run twice on the same rows after the harness's L2
flush and timed under CUPTI (the first kernel cold, the second warm; session 68's fwd_twice.py).

  python floor.py /tmp/floor_head.so[,/tmp/floor_new.so] 1,16
  FLOOR_NO_PACKAGE=1 python floor.py /tmp/floor.so 1,16

With a second library (floor.cu built against other headers), its ``ours`` and ``ours_wlast``
variants run too, labelled ``new:``.

Prints a markdown table: per row count and variant, the median duration (us) of the first and the
second kernel after each flush, and whether the variant's y and rstd match the package's bits
(the empty variants write nothing: '-').
"""
import ctypes
import os
import statistics
import sys

import torch

from benchmarks.rmsnorm import timing
from benchmarks.rmsnorm.candidates import EPS, CompiledFp32, Ours
from benchmarks.rmsnorm.inputs import make_input_sets
from benchmarks.rmsnorm.shapes import Case

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from kernel_trace import first_and_second, replay_kernels  # noqa: E402

VARIANTS = ["empty_args", "empty_params", "tri_fast", "tri_ieee", "tri_params", "ours",
            "ours_wlast", "tri_ieee_nc", "tri_ieee_tail", "tri_ieee_smem", "tri_fast_smem"]
# FLOOR_NO_PACKAGE=1: no package call (no module to build); the bits are then checked against
# tri_ieee's, which gave the package's in calls 2 and 3.
NO_PACKAGE = bool(os.environ.get("FLOOR_NO_PACKAGE"))

LIBS = [ctypes.CDLL(path) for path in sys.argv[1].split(",")]
for _lib in LIBS:
    _lib.floor_launch.restype = ctypes.c_int
    _lib.floor_launch.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_void_p]
# (label, library, variant index): every variant of the first library, ours of the second.
RUNS = [(name, 0, v) for v, name in enumerate(VARIANTS)] + [
    (f"new:{name}", 1, VARIANTS.index(name)) for name in ("ours", "ours_wlast") if len(LIBS) > 1]


def launch(lib: int, v: int, x: torch.Tensor, w: torch.Tensor, y: torch.Tensor,
           r: torch.Tensor) -> None:
    """Variant v of library lib on the current stream."""
    rc = LIBS[lib].floor_launch(v, x.data_ptr(), w.data_ptr(), y.data_ptr(), r.data_ptr(),
                                x.shape[0], EPS,
                                ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    if rc != 0:
        raise SystemExit(f"variant {VARIANTS[v]}: CUDA error {rc}")


def timed(timer: timing.Timer, body) -> list[float]:
    """Median first and second kernel durations after each flush (us)."""
    replay, err = timer.build(body, 20, 2)
    if err:
        raise SystemExit(err)
    first, second, _ = first_and_second(replay_kernels(replay))
    return [round(statistics.median(v), 3) if v else float("nan") for v in (first, second)]


def main() -> None:
    timer = timing.Timer(torch.device("cuda"))
    print("| T x 256 | variant | first kernel | second kernel | bits |")
    print("| --- | --- | --- | --- | --- |")
    for t in (int(v) for v in sys.argv[2].split(",")):
        case = Case("plain", t, 256, w_dtype="bf16")
        sets = make_input_sets(case, timer.device, 0, 2)
        torch._dynamo.reset()
        ref = {}
        cands = [("package", Ours("first_party")), ("compile", CompiledFp32())]
        for label, cand in cands[1:] if NO_PACKAGE else cands:
            with timer.stream_context():
                cand.availability(timer.device)
                cand.setup(case, sets)
                out = cand.forward(sets[0], grad=True)

                def body(i, cand=cand, sets=sets):
                    cand.forward(sets[i], grad=True)
                    cand.forward(sets[i], grad=True)

            timer.synchronize()
            if label == "package":
                ref = {"y": out.y.clone(), "rstd": out.state.clone()}
            print(f"| {t} | {label} | " + " | ".join(map(str, timed(timer, body))) + " | |",
                  flush=True)
            cand.teardown()
        x, w = sets[0].x, sets[0].w
        if NO_PACKAGE:
            y_ref = torch.empty_like(x)
            r_ref = torch.empty(t, device="cuda", dtype=torch.float32)
            launch(0, VARIANTS.index("tri_ieee"), x, w, y_ref, r_ref)
            torch.cuda.synchronize()
            ref = {"y": y_ref, "rstd": r_ref}
        xs = [s.x for s in sets]
        ys = [torch.empty_like(v) for v in xs]
        rs = [torch.empty(t, device="cuda", dtype=torch.float32) for _ in xs]
        for name, lib, v in RUNS:
            y0 = torch.full_like(x, float("nan"))
            r0 = torch.full((t,), float("nan"), device="cuda")
            launch(lib, v, x, w, y0, r0)
            torch.cuda.synchronize()
            if VARIANTS[v].startswith("empty"):
                bits = "-"
            else:
                same = torch.equal(y0.view(torch.int16), ref["y"].view(torch.int16)) and \
                    torch.equal(r0.view(torch.int32), ref["rstd"].view(torch.int32))
                bits = "same" if same else "DIFFER"

            def body(i, lib=lib, v=v, xs=xs, w=w, ys=ys, rs=rs):
                launch(lib, v, xs[i], w, ys[i], rs[i])
                launch(lib, v, xs[i], w, ys[i], rs[i])

            with timer.stream_context():
                res = timed(timer, body)
            print(f"| {t} | {name} | {res[0]} | {res[1]} | {bits} |", flush=True)


main()
