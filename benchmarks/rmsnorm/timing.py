"""Cold-L2 latency measurement: CUDA-graph replays timed with CUDA events, counterbalanced.

One measurement of a (case, op) times every candidate in the same process:

* each candidate's call ``body(i)`` (input set ``i``) is captured ``n_inner`` times into one
  CUDA graph as ``flush; body(0); flush; body(1); ...`` (sets rotated), where ``flush`` writes a
  256 MiB buffer so every call starts with a cold L2 (first with ``evict_last`` stores, so that
  lines a candidate pinned with that hint go too: L2Flusher);
* a flush-only graph with the same ``n_inner`` flushes is timed alongside and its median is
  subtracted: per call = (graph time - median flush graph time) / n_inner;
* graphs are replayed in rounds whose order alternates A B C ... C B A (ABBA), so drift in
  clocks or temperature hits every candidate alike; the median over all replays is reported,
  with the spread between the forward-order and reverse-order halves;
* with ``graphs`` > 1 each candidate (and the flush) is captured that many times and every
  round replays each capture, so the median covers the variation between captured graphs too
  (on the H200 a cold 256 x 4096 forward moved by up to 0.45 us from one graph to another, more
  than one graph's replays spread; docs/kernels.md, step 46), and the spread of the graphs'
  medians is reported (``graph_spread_pct``).

A candidate whose call cannot be captured is timed eagerly (same flushes, events around the
launches; host launch cost then shows up) and marked ``cuda_eager``. On a CPU device (the smoke
run) the same engine uses ``time.perf_counter`` so every code path except CUDA timing runs.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import torch

FLUSH_BYTES = 256 << 20
CPU_FLUSH_BYTES = 16 << 10  # below ATen's parallel grain: no thread-pool wake-ups
ROUNDS = 4
MIN_PER_CALL_US = 1e-3

Body = Callable[[int], object]


@dataclass
class Stats:
    """Per-call latency statistics of one candidate in one measurement (microseconds)."""

    median_us: float
    p10_us: float
    p90_us: float
    half_spread_pct: float
    samples: int
    n_inner: int
    mode: str
    floored: bool = False
    note: str = ""
    graphs: int = 1
    graph_spread_pct: float = 0.0  # (largest - smallest graph median) / median, in percent

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class SamplePlan:
    """How one measurement is sized: calls per graph and replays per candidate."""

    n_inner: int
    samples: int


def plan_samples(est_call_us: float, flush_us: float, *, quick: bool = False,
                 smoke: bool = False) -> SamplePlan:
    """Size a measurement from the expected call time: ~1.5 ms graphs, ~20 ms per candidate
    (15 ms with ``quick``).

    Large calls get one call per graph and the minimum of 8 replays; tiny calls get up to 16
    calls per graph so the flush subtraction's noise is averaged over many calls.
    """
    if smoke:
        return SamplePlan(n_inner=2, samples=ROUNDS)
    per_iteration = max(flush_us, 1.0) + max(est_call_us, 1.0)
    n_inner = int(min(16, max(1, round(1500.0 / per_iteration))))
    target_us = 15_000.0 if quick else 20_000.0
    samples = int(min(40, max(8, round(target_us / (n_inner * per_iteration)))))
    samples = ROUNDS * math.ceil(samples / ROUNDS)
    return SamplePlan(n_inner=n_inner, samples=samples)


class L2Flusher:
    """Evicts the L2 cache by writing a large buffer (256 MiB on CUDA; 16 KiB on CPU, where the
    smoke run only exercises the code path).

    On CUDA the buffer is first filled with stores that carry the ``evict_last`` hint
    (``pinned_fill``), which evict the lines a candidate's kernel pinned with that hint (a plain
    fill leaves them in L2: torch.compile's forward then measured 0.3-0.6 us faster than cold on
    the H200; docs/kernels.md, step 64), then zeroed plainly. Without Triton only the plain fill
    runs, and ``method`` says so."""

    def __init__(self, device: torch.device, nbytes: int | None = None) -> None:
        if nbytes is None:
            nbytes = FLUSH_BYTES if device.type == "cuda" else CPU_FLUSH_BYTES
        self.nbytes = int(nbytes)
        self.buffer = torch.empty(self.nbytes, dtype=torch.uint8, device=device)
        self._pinned_fill: Callable[[], None] | None = None
        if device.type == "cuda":
            from .pinned_fill import make_pinned_fill

            self._pinned_fill = make_pinned_fill(self.buffer)
        self.method = self._describe(device)

    def _describe(self, device: torch.device) -> str:
        size = (f"{self.nbytes >> 20} MiB" if self.nbytes % (1 << 20) == 0
                else f"{self.nbytes} bytes")
        if device.type != "cuda":
            return f"zero_ of {size}"
        if self._pinned_fill is None:
            return (f"zero_ of {size} only (Triton missing: lines pinned with evict_last survive "
                    "the flush)")
        return f"evict_last fill then zero_ of {size}"

    def __call__(self) -> None:
        if self._pinned_fill is not None:
            self._pinned_fill()
        self.buffer.zero_()


# ----------------------------------------------------------------------------- replays


class _Replay:
    """One timed unit: ``n_inner`` x (flush; body(i)) launched per sample."""

    mode = ""

    def launch(self) -> object:
        raise NotImplementedError

    def elapsed_us(self, token: object) -> float:
        raise NotImplementedError


class _CudaGraphReplay(_Replay):
    mode = "cuda_graph"

    def __init__(self, graph: torch.cuda.CUDAGraph, stream: torch.cuda.Stream) -> None:
        self.graph = graph
        self.stream = stream

    def launch(self) -> object:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        self.graph.replay()
        end.record(self.stream)
        return start, end

    def elapsed_us(self, token: object) -> float:
        start, end = token  # type: ignore[misc]
        return 1000.0 * start.elapsed_time(end)


class _CudaEagerReplay(_CudaGraphReplay):
    mode = "cuda_eager"

    def __init__(self, run: Callable[[], None], stream: torch.cuda.Stream) -> None:
        self.run = run
        self.stream = stream

    def launch(self) -> object:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        self.run()
        end.record(self.stream)
        return start, end


class _CpuReplay(_Replay):
    mode = "cpu"

    def __init__(self, run: Callable[[], None]) -> None:
        self.run = run

    def launch(self) -> object:
        start = time.perf_counter()
        self.run()
        return 1e6 * (time.perf_counter() - start)

    def elapsed_us(self, token: object) -> float:
        return float(token)  # type: ignore[arg-type]


def _loop(flusher: L2Flusher, body: Body | None, n_inner: int, n_sets: int) -> Callable[[], None]:
    def run() -> None:
        for index in range(n_inner):
            flusher()
            if body is not None:
                body(index % n_sets)
    return run


class Timer:
    """Builds replays on one device (CUDA graphs, or perf_counter loops on CPU)."""

    def __init__(self, device: torch.device, flusher: L2Flusher | None = None) -> None:
        self.device = device
        self.flusher = flusher or L2Flusher(device)
        self.stream = torch.cuda.Stream(device=device) if device.type == "cuda" else None

    @property
    def is_cuda(self) -> bool:
        """Whether this timer uses CUDA events."""
        return self.device.type == "cuda"

    def stream_context(self):
        """A context that makes the timer's side stream current (a no-op on CPU)."""
        if self.stream is None:
            import contextlib

            return contextlib.nullcontext()
        return torch.cuda.stream(self.stream)

    def synchronize(self) -> None:
        """Wait for all queued work."""
        if self.is_cuda:
            torch.cuda.synchronize(self.device)

    def build(self, body: Body | None, n_inner: int, n_sets: int, *,
              warmup: int = 2) -> tuple[_Replay, str | None]:
        """A replay of ``n_inner`` x (flush; body). Returns (replay, capture error or None)."""
        run = _loop(self.flusher, body, n_inner, n_sets)
        if not self.is_cuda:
            if body is not None:
                for _ in range(warmup):
                    for index in range(n_sets):
                        body(index)
            return _CpuReplay(run), None
        with self.stream_context():
            if body is not None:
                for _ in range(warmup):
                    for index in range(n_sets):
                        body(index)
            torch.cuda.synchronize(self.device)
            graph = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(graph, stream=self.stream):
                    run()
            except Exception as exc:  # noqa: BLE001 - any capture failure -> eager timing
                del graph
                torch.cuda.synchronize(self.device)
                return _CudaEagerReplay(run, self.stream), (
                    f"graph capture failed ({type(exc).__name__}: {str(exc)[:160]})")
            graph.replay()
            torch.cuda.synchronize(self.device)
        return _CudaGraphReplay(graph, self.stream), None


# ----------------------------------------------------------------------------- engine


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measure(
    bodies: Mapping[str, Body],
    timer: Timer,
    *,
    n_sets: int,
    plan: SamplePlan,
    graphs: int = 1,
) -> tuple[dict[str, Stats], dict[str, str]]:
    """Time every body under ``plan`` (ABBA rounds). Returns (stats by name, errors by name).

    ``graphs``: captures of each body (and of the flush) whose replays share the samples (see
    the module docstring). A body that raises during warm-up is left out with its error; a body
    that could only be timed eagerly carries ``mode == "cuda_eager"`` and the capture error in
    ``note``.
    """
    if graphs < 1:
        raise ValueError(f"graphs must be >= 1, got {graphs}")
    errors: dict[str, str] = {}
    notes: dict[str, str] = {}
    replays: dict[str, list[_Replay]] = {}
    flush_replays = [timer.build(None, plan.n_inner, n_sets)[0] for _ in range(graphs)]
    for name, body in bodies.items():
        try:
            built = [timer.build(body, plan.n_inner, n_sets) for _ in range(graphs)]
        except Exception as exc:  # noqa: BLE001 - record and go on with the others
            errors[name] = f"error: {type(exc).__name__}: {str(exc)[:200]}"
            timer.synchronize()
            continue
        replays[name] = [replay for replay, _ in built]
        note = next((note for _, note in built if note), None)
        if note:
            notes[name] = note
    flush_key = "\0flush"
    order = [flush_key] + list(replays)
    everything: dict[str, list[_Replay]] = {flush_key: flush_replays, **replays}
    per_graph = max(1, plan.samples // (ROUNDS * graphs))
    # tokens[name][round][graph]: the launches of one capture in one round
    tokens: dict[str, list[list[list[object]]]] = {
        name: [[[] for _ in range(graphs)] for _ in range(ROUNDS)] for name in order}
    with timer.stream_context():
        for round_index in range(ROUNDS):
            sequence = order if round_index % 2 == 0 else order[::-1]
            for name in sequence:
                for graph_index, replay in enumerate(everything[name]):
                    for _ in range(per_graph):
                        tokens[name][round_index][graph_index].append(replay.launch())
    timer.synchronize()
    times = {name: [[[everything[name][g].elapsed_us(t) for t in graph_tokens]
                     for g, graph_tokens in enumerate(round_tokens)]
                    for round_tokens in tokens[name]] for name in order}
    flush_median = statistics.median(v for rnd in times[flush_key] for graph in rnd for v in graph)
    stats: dict[str, Stats] = {}
    for name in replays:
        per_call = [[[(v - flush_median) / plan.n_inner for v in graph] for graph in rnd]
                    for rnd in times[name]]
        rounds = [[v for graph in rnd for v in graph] for rnd in per_call]
        graph_medians = [statistics.median(v for rnd in per_call for v in rnd[g])
                         for g in range(graphs)]
        flat = [v for rnd in rounds for v in rnd]
        floored = any(v < MIN_PER_CALL_US for v in flat)
        flat = [max(v, MIN_PER_CALL_US) for v in flat]
        median = statistics.median(flat)
        forward = statistics.median(max(v, MIN_PER_CALL_US)
                                    for i, rnd in enumerate(rounds) if i % 2 == 0 for v in rnd)
        reverse = statistics.median(max(v, MIN_PER_CALL_US)
                                    for i, rnd in enumerate(rounds) if i % 2 == 1 for v in rnd)
        stats[name] = Stats(
            median_us=median,
            p10_us=_percentile(flat, 0.1),
            p90_us=_percentile(flat, 0.9),
            half_spread_pct=100.0 * abs(forward - reverse) / median,
            samples=len(flat),
            n_inner=plan.n_inner,
            mode=next((r.mode for r in replays[name] if r.mode == "cuda_eager"),
                      replays[name][0].mode),
            floored=floored,
            note=notes.get(name, ""),
            graphs=graphs,
            graph_spread_pct=100.0 * (max(graph_medians) - min(graph_medians)) / median,
        )
    return stats, errors


def measure_flush_us(timer: Timer, repeats: int = 20) -> float:
    """Median time of one L2 flush (microseconds), from graphs of 8 flushes."""
    replay, _ = timer.build(None, 8, 1)
    with timer.stream_context():
        tokens = [replay.launch() for _ in range(repeats)]
    timer.synchronize()
    return statistics.median(replay.elapsed_us(t) for t in tokens) / 8.0


def measure_copy_ceiling(device: torch.device, nbytes: int | None = None,
                         repeats: int = 10) -> dict[str, float]:
    """Device-to-device copy bandwidth (bytes read + written per second), the table's ceiling.

    CUDA: 4 eager copies of a 1 GiB buffer between events, median of ``repeats``.
    CPU: ``copy_`` of a 4 MiB buffer timed with perf_counter.
    """
    if nbytes is None:
        nbytes = (1 << 30) if device.type == "cuda" else (4 << 20)
    # Float32 elements: PyTorch's copy of a uint8 tensor is not vectorised and reads low.
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    nbytes = src.numel() * 4
    copies = 4
    if device.type == "cuda":
        # Eager copies between events on the current stream, after a warm-up that lets the
        # clocks ramp (a graph of copies read low on the H200: 2.7 against 4.3 TB/s).
        for _ in range(3):
            dst.copy_(src)
        torch.cuda.synchronize(device)
        samples = []
        for _ in range(repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(copies):
                dst.copy_(src)
            end.record()
            end.synchronize()
            samples.append(1000.0 * start.elapsed_time(end) / copies)
        per_copy_us = statistics.median(samples)
    else:
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(copies):
                dst.copy_(src)
            samples.append(1e6 * (time.perf_counter() - start) / copies)
        per_copy_us = statistics.median(samples)
    bytes_per_s = 2.0 * nbytes / (per_copy_us * 1e-6)
    return {"bytes": float(nbytes), "per_copy_us": per_copy_us, "tb_per_s": bytes_per_s / 1e12}
