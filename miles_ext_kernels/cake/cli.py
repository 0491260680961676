"""``python -m miles_ext_kernels.cake`` (``miles-cake``): build ahead of time, verify, info.

* ``build --arch sm_100a [--op rmsnorm] [--package NAME] [--module NAME] [--jobs N]`` compiles
  every module of an arch into the JIT cache (no GPU needed); exits 1 if any module fails.
* ``verify [--json]`` re-hashes the installed vendored files against the installed
  VENDORED.json: exit 0 clean, 1 drift, 2 error (the vendoring tool's codes; a vendored op the
  runtime cannot load is an error too).
* ``info [--json]`` prints versions, vendored ops (with the problem of each op the runtime
  cannot load), first-party packages and buildable arches.

A vendored op the runtime cannot load does not stop ``build`` or ``info``: it is left out with
a warning, and the first-party packages are still built and listed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_ERROR = 2


# ----------------------------------------------------------------------------- helpers


def discover(vendor_dir: Path | None = None, *, include_first_party: bool = True) -> Any:
    """Every loadable Cake package (vendored and first-party) and the vendored problems."""
    from miles_ext_kernels.cake import packages

    return packages.discover(vendor_dir, include_first_party=include_first_party)


def _warn_problems(problems: Iterable[Any]) -> None:
    for problem in problems:
        click.echo(f"warning: skipping: {problem.message}", err=True)


def _fail(message: str, code: int = EXIT_ERROR) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@dataclass(frozen=True)
class BuildJob:
    """One unique (package, cache_name) to build: the first record that names it."""

    package: Any
    record: Any
    cache_name: str


def plan_builds(
    packages: Iterable[Any],
    arch: str,
    *,
    op: str | None = None,
    package: str | None = None,
    modules: Iterable[str] = (),
) -> list[BuildJob]:
    """Unique builds of ``arch``: records sharing one cache_name are built once.

    ``modules`` (record names or kernel names), when given, restricts the plan to them.
    """
    wanted = set(modules)
    jobs: list[BuildJob] = []
    seen: set[tuple[str, str]] = set()
    for pkg in packages:
        if op is not None and pkg.op != op:
            continue
        if package is not None and pkg.name != package:
            continue
        for record in pkg.modules.values():
            if arch not in record.arches:
                continue
            if wanted and record.name not in wanted and record.kernel not in wanted:
                continue
            cache_name = record.cache_names[arch]
            if (pkg.name, cache_name) in seen:
                continue
            seen.add((pkg.name, cache_name))
            jobs.append(BuildJob(pkg, record, cache_name))
    return jobs


def _describe_packages(packages: Iterable[Any]) -> str:
    rows = [f"{p.name} (op {p.op}, {p.origin}, arches {', '.join(p.arches()) or 'none'})"
            for p in packages]
    return "; ".join(rows) or "none"


# ----------------------------------------------------------------------------- commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Cake kernels runtime: build programs ahead of time, verify vendored files, show info."""


@cli.command()
@click.option("--arch", required=True, help="Target arch, e.g. sm_100a, sm_103a, sm_90a.")
@click.option("--op", default=None, help="Only packages of this op (e.g. rmsnorm).")
@click.option("--package", "package_name", default=None, help="Only this package (by name).")
@click.option("--module", "module_names", multiple=True,
              help="Only this module (record or kernel name); repeatable.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Compiler processes at once (default: min(2, CPUs)).")
def build(
    arch: str,
    op: str | None,
    package_name: str | None,
    module_names: tuple[str, ...],
    jobs: int | None,
) -> None:
    """Compile every module of ARCH into the JIT cache (no GPU needed)."""
    from miles_ext_kernels.cake.jit.cache import cache_root
    from miles_ext_kernels.cake.jit.loader import default_jobs, ensure_built
    from miles_ext_kernels.cake.jit.toolchain import ToolchainError, probe_toolchain

    try:
        jobs = jobs or default_jobs()
        toolchain = probe_toolchain()
        toolchain.require_arch(arch)
        found = discover()
    except (ToolchainError, ValueError, OSError) as exc:
        _fail(str(exc))
    _warn_problems(found.problems)
    packages = list(found.packages)
    planned = plan_builds(packages, arch, op=op, package=package_name, modules=module_names)
    if not planned:
        _fail(f"no module to build for arch={arch} op={op or 'any'} "
              f"package={package_name or 'any'} module={', '.join(module_names) or 'any'}; "
              f"packages: {_describe_packages(packages)}")
    click.echo(f"building {len(planned)} module(s) for {arch} with nvcc {toolchain.version}, "
               f"{jobs} job(s), cache {cache_root()}")
    slots = threading.BoundedSemaphore(jobs)
    start = time.perf_counter()

    def run(job: BuildJob) -> tuple[BuildJob, float, bool, str | None]:
        begin = time.perf_counter()
        try:
            outcome = ensure_built(job.package, job.record, arch, jobs=jobs, slots=slots)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the rest
            return job, time.perf_counter() - begin, False, f"{type(exc).__name__}: {exc}"
        return job, time.perf_counter() - begin, outcome.built, None

    results: list[tuple[BuildJob, float, bool, str | None]] = []

    def report(result: tuple[BuildJob, float, bool, str | None]) -> None:
        job, seconds, built, error = result
        if error is None:
            state = "built" if built else "cached"
            click.echo(f"  ok   {seconds:7.1f}s  {state:6s}  {job.cache_name}")
        else:
            click.echo(f"  FAIL {seconds:7.1f}s          {job.cache_name}")

    show_bar = sys.stdout.isatty()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run, job) for job in planned]
        if show_bar:
            with click.progressbar(
                as_completed(futures), length=len(planned), label=f"building {arch}",
                item_show_func=lambda f: f.result()[0].cache_name if f is not None else None,
            ) as bar:
                for future in bar:
                    results.append(future.result())
            for result in results:
                report(result)
        else:
            for future in as_completed(futures):
                results.append(future.result())
                report(results[-1])
    failures = [(job.cache_name, error) for job, _, _, error in results if error is not None]
    total = time.perf_counter() - start
    for name, error in failures:
        click.echo(f"\n--- {name} failed:\n{error}", err=True)
    click.echo(f"{len(planned) - len(failures)} ok, {len(failures)} failed in {total:.1f}s")
    sys.exit(EXIT_DRIFT if failures else EXIT_OK)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify(as_json: bool) -> None:
    """Re-hash installed vendored files against VENDORED.json (0 clean, 1 drift, 2 error)."""
    from miles_ext_kernels.cake.manifest import (
        MANIFEST_NAME,
        ManifestError,
        default_vendor_dir,
        load_manifest,
        verify_files,
    )

    vendor_dir = default_vendor_dir()
    try:
        manifest = load_manifest(vendor_dir)
        if manifest is None:
            raise ManifestError(f"no {MANIFEST_NAME} in {vendor_dir}: nothing is vendored")
        report = verify_files(vendor_dir, manifest)
    except (ManifestError, OSError, KeyError) as exc:
        if as_json:
            click.echo(json.dumps({"vendor_dir": str(vendor_dir), "error": str(exc)}, indent=2))
        else:
            click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    problems = [p.message for p in discover(vendor_dir, include_first_party=False).problems]
    if as_json:
        payload = {"vendor_dir": str(vendor_dir), **report.to_dict(), "unloadable": problems}
        click.echo(json.dumps(payload, indent=2, sort_keys=True))
    else:
        for label, paths in (("modified", report.modified), ("missing", report.missing),
                             ("extra", report.extra), ("mode changed", report.mode_changed)):
            for path in paths:
                click.echo(f"{label}: {path}")
        state = "clean" if report.clean else "DRIFT"
        click.echo(f"{state}: {report.checked} vendored file(s) checked in {vendor_dir}")
        for message in problems:
            click.echo(f"error: {message}", err=True)
    sys.exit(_verify_exit(report.clean, problems))


def _verify_exit(clean: bool, problems: list[str]) -> int:
    """Drift (1) first: it explains most load problems; else an unloadable op is an error (2)."""
    if not clean:
        return EXIT_DRIFT
    return EXIT_ERROR if problems else EXIT_OK


def _toolchain_info() -> tuple[dict[str, Any], Any]:
    from miles_ext_kernels.cake.jit.toolchain import (
        ToolchainError,
        probe_toolchain,
        tvm_ffi_include_dir,
        tvm_ffi_version,
    )

    info: dict[str, Any] = {}
    toolchain = None
    try:
        toolchain = probe_toolchain()
        info["nvcc"] = {"path": str(toolchain.nvcc), "version": toolchain.version,
                        "cudart_dir": str(toolchain.cudart_dir),
                        "targets": sorted(toolchain.gpu_codes)}
    except ToolchainError as exc:
        info["nvcc"] = {"error": str(exc)}
    try:
        info["tvm_ffi"] = {"version": tvm_ffi_version(), "include": str(tvm_ffi_include_dir())}
    except (ImportError, ToolchainError) as exc:
        info["tvm_ffi"] = {"error": str(exc)}
    return info, toolchain


def _vendored_info() -> dict[str, Any]:
    from miles_ext_kernels.cake.manifest import ManifestError, default_vendor_dir, load_manifest

    vendor_dir = default_vendor_dir()
    out: dict[str, Any] = {"vendor_dir": str(vendor_dir), "ops": {}}
    try:
        manifest = load_manifest(vendor_dir)
    except (ManifestError, OSError) as exc:
        out["error"] = str(exc)
        return out
    if manifest is None:
        return out
    out["upstream"] = {"name": manifest.upstream.name, "url": manifest.upstream.url}
    for name, entry in sorted(manifest.ops.items()):
        out["ops"][name] = {
            "commit": entry.commit, "ref": entry.ref, "layout": entry.layout,
            "files": len(entry.files()),
            "license": entry.license.spdx if entry.license is not None else None,
        }
    return out


def _add_problems(vendored: dict[str, Any], problems: Iterable[Any]) -> None:
    """Each unloadable op's problem under its op (a whole-manifest one is ``error``)."""
    for problem in problems:
        op = vendored["ops"].get(problem.op) if problem.op is not None else None
        if op is not None:
            op["error"] = problem.message
        else:
            vendored.setdefault("error", problem.message)


def collect_info() -> dict[str, Any]:
    """Everything ``info`` reports, as a JSON-ready dict (errors reported, never raised)."""
    import miles_ext_kernels

    info: dict[str, Any] = {"version": miles_ext_kernels.__version__}
    info["vendored"] = _vendored_info()
    tools, toolchain = _toolchain_info()
    info.update(tools)
    packages: list[Any] = []
    try:
        found = discover()
    except Exception as exc:  # noqa: BLE001 - info reports every problem instead of stopping
        info["packages_error"] = f"{type(exc).__name__}: {exc}"
    else:
        packages = list(found.packages)
        _add_problems(info["vendored"], found.problems)
    info["packages"] = [
        {"name": p.name, "op": p.op, "layout": p.layout, "origin": p.origin,
         "arches": list(p.arches()), "modules": len(p.modules)}
        for p in packages
    ]
    info["first_party"] = [p["name"] for p in info["packages"] if p["origin"] == "first_party"]
    arches = sorted({a for p in packages for a in p.arches()})
    if toolchain is None:
        info["arches"] = {a: "no nvcc" for a in arches}
    else:
        info["arches"] = {
            a: "buildable" if toolchain.can_target(a)
            else f"not buildable with nvcc {toolchain.version}" for a in arches
        }
    return info


def _print_info(info: dict[str, Any]) -> None:
    click.echo(f"miles-ext-kernels {info['version']}")
    vendored = info["vendored"]
    click.echo(f"vendor dir: {vendored['vendor_dir']}")
    if "error" in vendored:
        click.echo(f"  VENDORED.json error: {vendored['error']}")
    if not vendored["ops"]:
        click.echo("  no vendored ops")
    for name, op in vendored["ops"].items():
        click.echo(f"  {name}: commit {op['commit']} ({op['files']} files, layout {op['layout']},"
                   f" license {op['license']})")
        if "error" in op:
            click.echo(f"    NOT LOADED: {op['error']}")
    click.echo("packages:")
    if "packages_error" in info:
        click.echo(f"  error: {info['packages_error']}")
    for pkg in info["packages"]:
        click.echo(f"  {pkg['name']} [{pkg['origin']}, op {pkg['op']}, {pkg['layout']}]: "
                   f"{pkg['modules']} modules, arches {', '.join(pkg['arches']) or 'none'}")
    nvcc = info["nvcc"]
    click.echo(f"nvcc: {nvcc.get('version', '-')} {nvcc.get('path', nvcc.get('error', ''))}")
    if "targets" in nvcc:
        click.echo(f"  targets: {', '.join(nvcc['targets'])}")
    ffi = info["tvm_ffi"]
    click.echo(f"tvm-ffi: {ffi.get('version', ffi.get('error'))}")
    click.echo("arches:")
    for arch, state in info["arches"].items():
        click.echo(f"  {arch}: {state}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def info(as_json: bool) -> None:
    """Show the version, vendored ops, packages, nvcc / tvm-ffi versions and buildable arches."""
    data = collect_info()
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        _print_info(data)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry (``miles-cake``)."""
    cli.main(args=argv, prog_name="miles-cake")


if __name__ == "__main__":
    main()
