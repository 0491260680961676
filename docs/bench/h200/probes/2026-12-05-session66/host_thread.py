"""Session 66 probe: where the autograd step's host time goes (docs/kernels.md, Host time).

The autograd step (`rmsnorm` forward + backward of [4, 2048] BF16, plans on) measured 491-591
us of host time against PyTorch's 149-181; the backward's body measured 88-323 us on the
autograd engine's device thread against 34-108 us called directly. This prints, per call (best
of three runs of N calls, us):

* the whole step, ours and PyTorch's, and a Python autograd.Function of one launch each way
  (`_Clone`: the engine's handoff and a Python Function's own cost, no op of ours);
* our Function's forward and backward bodies inside the step (perf_counter around each);
* the backward body called directly on the main thread, on one long-lived worker thread, and
  handed to a worker thread call by call (a queue each way: the engine's pattern without the
  engine), to separate "a thread that is not the main one" from "a handoff every call";
* cProfile of the backward body on the device thread and on the main thread (top functions).

Usage (from the repository root, tvm-ffi importable): python3 host_thread.py [calls]
(HOST_THREAD_DEVICE=cpu runs the same script on the CPU's reference backend: a check of the
script, not a measurement.)
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import queue
import sys
import threading
import time

import torch
import torch.nn.functional as F

from miles_ext_kernels.cake import autograd as ag
from miles_ext_kernels.cake import custom_ops

EPS = 1e-6
SHAPE = (4, 2048)
DEVICE = torch.device(os.environ.get("HOST_THREAD_DEVICE", "cuda"))


def sync() -> None:
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def best_us(fn, calls: int, repeats: int = 3) -> float:
    """Best-of-``repeats`` mean us per call of ``fn`` (synchronised before and after)."""
    for _ in range(50):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, 1e6 * (time.perf_counter() - t) / calls)
    return best


class _Clone(torch.autograd.Function):
    """One launch forward (clone), one launch backward (clone): a Python Function's floor."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.clone()


class Bodies:
    """Wraps _EagerRMSNorm's forward and backward to time (and optionally profile) their bodies."""

    def __init__(self) -> None:
        self.fwd_ns = 0
        self.bwd_ns = 0
        self.calls = 0
        self.profile: cProfile.Profile | None = None
        self.bwd_thread: str | None = None
        self._fwd = ag._EagerRMSNorm.forward
        self._bwd = ag._EagerRMSNorm.backward

    def install(self) -> None:
        fwd, bwd = self._fwd, self._bwd

        def forward(ctx, *args):
            t = time.perf_counter_ns()
            out = fwd(ctx, *args)
            self.fwd_ns += time.perf_counter_ns() - t
            return out

        def backward(ctx, *grads):
            self.bwd_thread = threading.current_thread().name
            prof = self.profile
            if prof is not None:
                prof.enable()
            t = time.perf_counter_ns()
            out = bwd(ctx, *grads)
            self.bwd_ns += time.perf_counter_ns() - t
            if prof is not None:
                prof.disable()
            self.calls += 1
            return out

        ag._EagerRMSNorm.forward = staticmethod(forward)
        ag._EagerRMSNorm.backward = staticmethod(backward)

    def reset(self) -> None:
        self.fwd_ns = self.bwd_ns = self.calls = 0


def top(prof: cProfile.Profile, n: int = 14) -> str:
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(n)
    lines = [ln for ln in s.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    return "\n".join(lines[start:start + n + 1])


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    dev = DEVICE
    gen = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(SHAPE, generator=gen, device=dev).bfloat16()
    g = torch.randn(SHAPE, generator=gen, device=dev).bfloat16()
    w = torch.ones(SHAPE[1], device=dev, dtype=torch.bfloat16)
    xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()
    _, rstd = custom_ops.forward_impl(x, w, EPS, False, False, None, None)

    def ours_step():
        y = ag.rmsnorm(xg, wg, EPS)
        return torch.autograd.grad(y, (xg, wg), g)

    def torch_step():
        y = F.rms_norm(xg, (SHAPE[1],), wg, EPS)
        return torch.autograd.grad(y, (xg, wg), g)

    def clone_step():
        return torch.autograd.grad(_Clone.apply(xg), (xg,), g)

    def bwd_body():
        return custom_ops.backward_impl(g, x, w, rstd, None, True, False, False, None, None)

    rows: list[tuple[str, float]] = []
    rows.append(("torch.add (one launch)", best_us(lambda: torch.add(x, g), calls)))
    rows.append(("PyTorch F.rms_norm autograd step", best_us(torch_step, calls)))
    rows.append(("_Clone autograd step (2 launches)", best_us(clone_step, calls)))
    rows.append(("ours autograd step", best_us(ours_step, calls)))
    rows.append(("ours rmsnorm forward with grad (no bwd)", best_us(
        lambda: ag.rmsnorm(xg, wg, EPS), calls)))
    rows.append(("ours forward (direct)", best_us(
        lambda: custom_ops.forward_impl(x, w, EPS, False, False, None, None), calls)))
    rows.append(("ours backward body, main thread", best_us(bwd_body, calls)))

    # The same body on a long-lived worker thread, then handed over call by call.
    result: dict[str, float] = {}

    def worker_loop():
        result["v"] = best_us(bwd_body, calls)

    th = threading.Thread(target=worker_loop)
    th.start()
    th.join()
    rows.append(("ours backward body, one worker thread", result["v"]))
    jobs: queue.SimpleQueue = queue.SimpleQueue()
    done: queue.SimpleQueue = queue.SimpleQueue()

    def server():
        while (job := jobs.get()) is not None:
            done.put(job())

    srv = threading.Thread(target=server, daemon=True)
    srv.start()

    def handed():
        jobs.put(bwd_body)
        return done.get()

    def handed_empty():
        jobs.put(lambda: None)
        return done.get()

    rows.append(("handoff only (queue each way)", best_us(handed_empty, calls)))
    rows.append(("ours backward body, handed per call", best_us(handed, calls)))
    jobs.put(None)
    srv.join()

    bodies = Bodies()
    bodies.install()
    bodies.reset()
    step = best_us(ours_step, calls, repeats=1)
    n = max(bodies.calls, 1)
    rows.append(("ours step, instrumented", step))
    rows.append(("  forward body inside the step", bodies.fwd_ns / n / 1e3))
    rows.append(("  backward body inside the step", bodies.bwd_ns / n / 1e3))
    print(f"backward ran on thread: {bodies.bwd_thread}")

    prof = cProfile.Profile()
    bodies.profile = prof
    for _ in range(min(calls, 500)):
        ours_step()
    sync()
    bodies.profile = None
    print("== cProfile, backward body on the autograd thread (500 steps)")
    print(top(prof))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(min(calls, 500)):
        bwd_body()
    prof.disable()
    sync()
    print("== cProfile, backward body on the main thread (500 calls)")
    print(top(prof))

    print(f"\n{'host us / call, ' + str(SHAPE) + ' BF16':<44} {'us':>8}")
    for name, us in rows:
        print(f"{name:<44} {us:8.1f}")


if __name__ == "__main__":
    main()
