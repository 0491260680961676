"""JIT build and load benchmark (CPU machine, no GPU): reproduces docs/benchmarks.md's
"JIT build and load" section.

    python benchmarks/build_bench.py [--wheel W] [--vendor-dir D] [--jobs 2] [--skip-all]

Measures, each in a fresh cache: one forward and one backward module cold build; every sm_100a
module with ``python -m miles_ext_kernels.cake build --arch sm_100a --jobs N``, plus the
table's kernels not listed for sm_100a compiled for sm_100a too (all 21); the warm load of a
built module in a fresh process; the host cost of routing + argument binding per call.
Without ``--vendor-dir`` the upstream files are laid out from the flashinfer-python wheel.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tools", ROOT / "tests" / "runtime"):
    sys.path.insert(0, str(extra))

FWD = "cake_rmsnorm_train_1af0069a0ec96fb8b742"
BWD = "cake_rmsnorm_train_01036297dc6e647b9e56"
ARCH = "sm_100a"

WARM_LOAD_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import tvm_ffi
t1 = time.perf_counter()
sys.path[:0] = {paths!r}
from jit_support import vendored_package
from miles_ext_kernels.cake.jit import loader
package = vendored_package(__import__("pathlib").Path({vendor!r}))
record = package.modules[{module!r}]
t2 = time.perf_counter()
module = loader.load_module(package, record, {arch!r})
entry = loader.resolve_entry(module, record)
t3 = time.perf_counter()
loader.load_module(package, record, {arch!r})
t4 = time.perf_counter()
print(json.dumps({{"import_tvm_ffi_s": t1 - t0, "first_load_s": t3 - t2,
                   "memoised_load_s": t4 - t3}}))
"""


def _vendor_dir(wheel: Path | None, given: Path | None, tmp: Path) -> Path:
    if given is not None:
        return given
    from jit_support import write_vendor_dir

    import fi_checkout_from_wheel as fi

    wheel = wheel or fi.download_wheel(Path.home() / ".cache" / "miles_ext_kernels" / "dl")
    return write_vendor_dir(tmp / "vendor", fi.extract_cake_files(wheel))


def _fresh_cache(tmp: Path, name: str) -> Path:
    path = tmp / name
    os.environ["MILES_EXT_KERNELS_CACHE"] = str(path)
    return path


def bench_cold_single(package, tmp: Path, jobs: int) -> dict[str, float]:
    from miles_ext_kernels.cake.jit import loader

    out = {}
    for label, name in (("fwd", FWD), ("bwd", BWD)):
        _fresh_cache(tmp, f"cold-{label}")
        start = time.perf_counter()
        outcome = loader.ensure_built(package, package.modules[name], ARCH, jobs=jobs)
        assert outcome.built
        out[f"cold_build_{label}_s"] = time.perf_counter() - start
    return out


def bench_all(package, vendor: Path, tmp: Path, jobs: int) -> dict[str, float]:

    cache = _fresh_cache(tmp, "all")
    env = dict(os.environ, MILES_EXT_KERNELS_VENDOR_DIR=str(vendor),
               MILES_EXT_KERNELS_CACHE=str(cache))
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "miles_ext_kernels.cake", "build", "--arch", ARCH,
           "--package", package.name, "--jobs", str(jobs)]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    cli_seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{run.stdout}\n{run.stderr}")
    listed = len({r.cache_names[ARCH] for r in package.modules.values() if ARCH in r.arches})
    return {"cli_build_sm_100a_s": cli_seconds, "cli_modules": listed}


def bench_extra_kernels(package, jobs: int) -> dict[str, float]:
    """The table's kernels not listed for sm_100a, compiled for sm_100a too (same cache)."""
    from jit_support import build_with_extra_arch

    others = {}
    for record in package.modules.values():
        if ARCH not in record.arches:
            others.setdefault(record.kernel, record)
    slots = threading.BoundedSemaphore(jobs)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda r: build_with_extra_arch(package, r, ARCH, jobs=jobs, slots=slots),
                      others.values()))
    return {"extra_kernels_forced_to_sm_100a": len(others),
            "extra_kernels_s": time.perf_counter() - start}


def bench_warm_load(vendor: Path, tmp: Path, repeats: int = 5) -> dict[str, float]:
    from jit_support import vendored_package

    from miles_ext_kernels.cake.jit import loader

    cache = _fresh_cache(tmp, "warm")
    package = vendored_package(vendor)
    loader.ensure_built(package, package.modules[FWD], ARCH)
    code = WARM_LOAD_CHILD.format(paths=[str(ROOT), str(ROOT / "tests" / "runtime")],
                                  vendor=str(vendor), module=FWD, arch=ARCH)
    env = dict(os.environ, MILES_EXT_KERNELS_CACHE=str(cache))
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def bench_binding(package, number: int = 200_000) -> dict[str, float]:
    from miles_ext_kernels.cake import routing
    from miles_ext_kernels.cake.jit.launch import bind_arguments

    values = {n: object() for n in ("x", "w", "y", "r", "u", "h_new", "g", "g_h", "dx", "dw",
                                    "partial", "counters")}
    values.update(rows=4096, eps=1e-6, x_stride=512, u_stride=0, g_stride=512, g_h_stride=512,
                  n_chunks=296, rows_per_chunk=14)
    out = {}
    for label, name in (("fwd", FWD), ("bwd", BWD)):
        record = package.modules[name]
        grid = routing.launch_grid(record, 4096, sm_count=148)
        bind_arguments(record, values, grid)
        best = min(timeit.repeat(lambda r=record, g=grid: bind_arguments(r, values, g),
                                 number=number, repeat=5))
        out[f"bind_{label}_us"] = best / number * 1e6

        def routed(r=record):
            bind_arguments(r, values, routing.launch_grid(r, 4096, sm_count=148))

        best = min(timeit.repeat(routed, number=number // 4, repeat=5))
        out[f"grid_plus_bind_{label}_us"] = best / (number // 4) * 1e6
    return out


@click.command()
@click.option("--wheel", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--vendor-dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--jobs", type=int, default=2, show_default=True)
@click.option("--skip-all", is_flag=True, help="Skip the whole-arch build (the long part).")
def main(wheel: Path | None, vendor_dir: Path | None, jobs: int, skip_all: bool) -> None:
    """Run the JIT build / load benchmarks and print one JSON object of results."""
    from jit_support import vendored_package

    from miles_ext_kernels.cake.jit.toolchain import probe_toolchain

    with tempfile.TemporaryDirectory(prefix="cake-build-bench-") as tmp_name:
        tmp = Path(tmp_name)
        vendor = _vendor_dir(wheel, vendor_dir, tmp)
        package = vendored_package(vendor)
        toolchain = probe_toolchain()
        results: dict[str, object] = {
            "nvcc": toolchain.version, "cpus": os.cpu_count(), "jobs": jobs,
            "loadavg_start": os.getloadavg()[0],
        }
        stages = [lambda: bench_binding(package), lambda: bench_warm_load(vendor, tmp),
                  lambda: bench_cold_single(package, tmp, jobs)]
        if not skip_all:
            stages.append(lambda: bench_all(package, vendor, tmp, jobs))
            stages.append(lambda: bench_extra_kernels(package, jobs))
        for stage in stages:
            results.update(stage())
            click.echo(json.dumps(results, sort_keys=True), err=True)
        results["loadavg_end"] = os.getloadavg()[0]
    click.echo(json.dumps(results, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
