"""Fake Cake packages and devices for CPU tests of the dispatcher and the program backend."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import MappingProxyType

import torch

from miles_ext_kernels.cake.dispatch import DeviceInfo
from miles_ext_kernels.cake.packages.base import CakePackage
from miles_ext_kernels.cake.packages.records import CallSpec, ModuleRecord

_SHA = hashlib.sha256(b"fake").hexdigest()

FWD_PLAN = (("buffer", "x"), ("buffer", "u"), ("buffer", "w"), ("buffer", "y"),
            ("buffer", "h_new"), ("buffer", "r"), ("parameter", "T"),
            ("parameter", "x_stride"), ("parameter", "u_stride"), ("parameter", "eps"))
FWD_LOGICAL = {"x": "x", "u": "u", "w": "w", "y": "y", "h_new": "h_new", "r": "r",
               "T": "rows", "x_stride": "x_stride", "u_stride": "u_stride", "eps": "eps"}
BWD_PLAN = (("buffer", "g"), ("buffer", "x"), ("buffer", "w"), ("buffer", "r"),
            ("buffer", "dx"), ("buffer", "dw"), ("buffer", "partial"), ("buffer", "counters"),
            ("buffer", "g_h"), ("parameter", "T"), ("parameter", "g_stride"),
            ("parameter", "x_stride"), ("parameter", "gh_stride"), ("parameter", "n_chunks"),
            ("parameter", "rows_per_chunk"))
BWD_LOGICAL = {"g": "g", "x": "x", "w": "w", "r": "r", "dx": "dx", "dw": "dw",
               "partial": "partial", "counters": "counters", "g_h": "g_h", "T": "rows",
               "g_stride": "g_stride", "x_stride": "x_stride", "gh_stride": "g_h_stride",
               "n_chunks": "n_chunks", "rows_per_chunk": "rows_per_chunk"}
GRID = (("grid", "grid_x"), ("grid", "grid_y"), ("grid", "grid_z"))
FP_EXTRA_FWD = (("parameter", "hidden"), ("parameter", "heads"), ("parameter", "x_head_stride"),
                ("parameter", "u_head_stride"), ("parameter", "flags"))
FP_EXTRA_BWD = (("parameter", "hidden"), ("parameter", "heads"), ("parameter", "g_head_stride"),
                ("parameter", "x_head_stride"), ("parameter", "gh_head_stride"),
                ("parameter", "flags"))
FP_LOGICAL = {"hidden": "hidden", "heads": "heads", "x_head_stride": "x_head_stride",
              "u_head_stride": "u_head_stride", "g_head_stride": "g_head_stride",
              "gh_head_stride": "g_h_head_stride", "flags": "flags"}


def record(package: str, name: str, *, role: str, arches: tuple[str, ...], hidden: int | None,
           grid_rule: dict, select_rule: dict | None = None,
           workspace_rule: dict | None = None, first_party: bool = False) -> ModuleRecord:
    """A valid module record with the upstream (or first-party) argument plan."""
    forward = role.startswith("fwd")
    plan = FWD_PLAN if forward else BWD_PLAN
    logical = dict(FWD_LOGICAL if forward else BWD_LOGICAL)
    if first_party:
        extra = FP_EXTRA_FWD if forward else FP_EXTRA_BWD
        plan = plan + extra
        logical.update({name: FP_LOGICAL[name] for _, name in extra})
        if workspace_rule is not None and workspace_rule["kind"] == "atomic":
            plan = tuple(e for e in plan if e[1] not in
                         ("partial", "counters", "n_chunks", "rows_per_chunk"))
            for key in ("partial", "counters", "n_chunks", "rows_per_chunk"):
                logical.pop(key, None)
    raw = {
        "kernel": name, "kernel_symbol": f"kernel_{name}", "sources": [f"{name}.cu"],
        "source_sha256": {f"{name}.cu": _SHA}, "arches": list(arches),
        "cache_names": {a: f"{name}_{a}" for a in arches}, "compile_flags": [],
        "ffi_entry": "run", "hidden": hidden, "role": role,
        "arg_plan": [list(e) for e in plan + GRID], "logical": logical, "launch": {},
        "grid_rule": grid_rule, "select_rule": select_rule, "workspace_rule": workspace_rule,
    }
    return ModuleRecord.from_mapping(package, name, raw)


class FakeVendored(CakePackage):
    """Upstream-like table: Blackwell only, BF16 x and w, default contract, H in 512/2048."""

    layout = "table-0.7"
    origin = "vendored"
    op = "rmsnorm"

    def __init__(self) -> None:
        arches = ("sm_100a", "sm_103a")
        self.name = "fake_vendored"
        self.source_root = Path("/nonexistent")
        self.include_dirs = ()
        self.arch_by_capability = MappingProxyType({(10, 0): "sm_100a", (10, 3): "sm_103a"})
        modules = {}
        routes: dict[str, tuple[str, ...]] = {}
        for hidden in (512, 2048):
            small = f"v_fwd_small_h{hidden}"
            large = f"v_fwd_large_h{hidden}"
            bwd = f"v_bwd_h{hidden}"
            modules[small] = record(self.name, small, role="fwd_small", arches=arches,
                                    hidden=hidden,
                                    grid_rule={"kind": "rows_per_cta", "rows_per_cta": 1},
                                    select_rule={"kind": "rows_between", "above": 0,
                                                 "at_most": 1024})
            modules[large] = record(self.name, large, role="fwd_main", arches=arches,
                                    hidden=hidden,
                                    grid_rule={"kind": "rows_per_cta", "rows_per_cta": 2,
                                               "grid_per_sm": 4},
                                    select_rule={"kind": "rows_between", "above": 1024,
                                                 "at_most": None})
            modules[bwd] = record(self.name, bwd, role="bwd_main", arches=arches, hidden=hidden,
                                  grid_rule={"kind": "sm_scaled_bounded", "ctas_per_sm": 2},
                                  workspace_rule={"kind": "persistent_grid", "counters": 16})
            routes[f"fwd_h{hidden}"] = (small, large)
            routes[f"bwd_h{hidden}"] = (bwd,)
        self.modules = MappingProxyType(modules)
        self.routes = MappingProxyType({a: MappingProxyType(routes) for a in arches})

    def hidden_sizes(self, arch: str | None = None) -> str:
        return "512, 2048"

    def _route_names(self, arch, hidden, kind, residual):
        key = f"{kind}{'_residual' if residual else ''}_h{hidden}"
        return self.routes.get(arch, {}).get(key)

    def _support_problem(self, call: CallSpec) -> str | None:
        if call.x_dtype != "bfloat16" or call.w_dtype != "bfloat16":
            return f"x and w must be bfloat16 (got x={call.x_dtype}, w={call.w_dtype})"
        if call.contracts != ("default",):
            return f"only the default contract (got {'+'.join(call.contracts)})"
        return None


class FakeFirstParty(CakePackage):
    """First-party-like package: sm_90a and sm_100a, any H multiple of 8 in 64..8192."""

    layout = "build-json"
    origin = "first_party"
    op = "rmsnorm"

    def __init__(self) -> None:
        arches = ("sm_90a", "sm_100a")
        self.name = "fake_first_party"
        self.source_root = Path("/nonexistent")
        self.include_dirs = ()
        self.arch_by_capability = MappingProxyType({(9, 0): "sm_90a", (10, 0): "sm_100a"})
        fwd = record(self.name, "fp_fwd", role="fwd", arches=arches, hidden=None,
                     grid_rule={"kind": "rows_per_cta", "rows_per_cta": 4, "grid_per_sm": 16},
                     first_party=True)
        bwd = record(self.name, "fp_bwd", role="bwd", arches=arches, hidden=None,
                     grid_rule={"kind": "chunk_bounded", "ctas_per_sm": 2,
                                "cooperative": True},
                     workspace_rule={"kind": "fixed_chunks", "max_chunks": 256,
                                     "min_rows_per_chunk": 8, "counters": 2,
                                     "partial_dtype": "float64"},
                     first_party=True)
        nondet = record(self.name, "fp_bwd_nondet", role="bwd", arches=arches, hidden=None,
                        grid_rule={"kind": "rows_per_cta", "rows_per_cta": 1,
                                   "grid_per_sm": 2},
                        workspace_rule={"kind": "atomic"}, first_party=True)
        self.modules = MappingProxyType({"fp_fwd": fwd, "fp_bwd": bwd,
                                         "fp_bwd_nondet": nondet})
        table = {"fwd": ("fp_fwd",), "fwd_residual": ("fp_fwd",), "bwd": ("fp_bwd",),
                 "bwd_residual": ("fp_bwd",), "bwd_nondet": ("fp_bwd_nondet",),
                 "bwd_nondet_residual": ("fp_bwd_nondet",)}
        self.routes = MappingProxyType({a: MappingProxyType(table) for a in arches})

    def hidden_sizes(self, arch: str | None = None) -> str:
        return "64..8192, multiple of 8"

    def _route_names(self, arch, hidden, kind, residual):
        if not (64 <= hidden <= 8192 and hidden % 8 == 0):
            return None
        return self.routes.get(arch, {}).get(f"{kind}{'_residual' if residual else ''}")

    def _support_problem(self, call: CallSpec) -> str | None:
        if call.x_dtype not in ("bfloat16", "float16"):
            return f"x must be bfloat16 or float16, got {call.x_dtype}"
        if call.w_dtype not in ("bfloat16", "float32"):
            return f"w must be bfloat16 or float32, got {call.w_dtype}"
        return None


def fake_device(capability: tuple[int, int] | None, sm_count: int = 132):
    """A device-info provider that reports ``capability`` for every CPU tensor's device."""

    def provider(device: torch.device) -> DeviceInfo:
        if capability is None:
            return DeviceInfo(device=torch.device(device))
        return DeviceInfo(device=torch.device(device), capability=capability, sm_count=sm_count)

    return provider


def fake_packages() -> tuple[CakePackage, ...]:
    """One fake vendored and one fake first-party package."""
    return (FakeVendored(), FakeFirstParty())
