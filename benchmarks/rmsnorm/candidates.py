"""The contenders: our op per backend, PyTorch (F.rms_norm, the aten fused op), the eager FP32
formula, torch.compile of that formula, Liger and QuACK.

Every candidate offers the same two calls so the harness treats them alike:

* ``forward(inp, grad=...) -> FwdResult`` (``grad=True``: a training forward whose state the
  backward consumes; ``grad=False``: the no-grad first pass of activation checkpointing);
* ``backward(inp, state, retain=...) -> (dx, dw)``.

Autograd-based peers build the autograd graph in ``forward`` and run ``torch.autograd.grad`` in
``backward`` (``retain=True`` lets a captured CUDA graph replay the same backward).
Optional peers import lazily; a missing one is recorded as "not installed", never fatal.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from benchmarks.rmsnorm.inputs import TORCH_DTYPES, InputSet
from benchmarks.rmsnorm.shapes import Case

EPS = 1e-6
OURS_BACKENDS: tuple[str, ...] = ("vendored", "first_party", "reference")
PEER_KEYS: tuple[str, ...] = ("torch", "aten", "eager", "compile", "liger", "quack")
CANDIDATE_KEYS: tuple[str, ...] = ("ours",) + PEER_KEYS


@dataclass
class FwdResult:
    """A forward's outputs (``y``, ``h_new`` for residual calls) and the backward's state."""

    y: torch.Tensor
    h: torch.Tensor | None
    state: Any


class Candidate:
    """Base class: one implementation under test (see the module docstring)."""

    key: str = ""
    name: str = ""
    is_ours: bool = False
    #: The backward overwrites ``g`` (the harness then gives it private copies of the grads).
    mutates_grad: bool = False

    def availability(self, device: torch.device) -> str | None:
        """None when the candidate can run on ``device``, else why not (recorded verbatim)."""
        return None

    def supports(self, case: Case) -> str | None:
        """None when ``case`` is in scope, else why not (shown as n/a in the tables)."""
        return None

    def setup(self, case: Case, sets: Sequence[InputSet]) -> None:
        """Per-case preparation outside timing (workspaces, compilation state)."""

    def teardown(self) -> None:
        """Drop per-case state."""

    def forward(self, inp: InputSet, *, grad: bool) -> FwdResult:
        """Run the forward on ``inp``."""
        raise NotImplementedError

    def backward(self, inp: InputSet, fwd: FwdResult, *, retain: bool) -> tuple[torch.Tensor,
                                                                                torch.Tensor]:
        """Run the backward for the forward ``fwd`` of ``inp``; returns ``(dx, dw)``."""
        raise NotImplementedError

    def version(self) -> str | None:
        """The library version under test (None when not applicable)."""
        return None


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# ----------------------------------------------------------------------------- ours


def _ours_api() -> Any:
    """The facade module with rmsnorm_forward / rmsnorm_backward / rmsnorm_workspace."""
    package = importlib.import_module("miles_ext_kernels.cake")
    if all(hasattr(package, n) for n in ("rmsnorm_forward", "rmsnorm_backward")):
        return package
    return importlib.import_module("miles_ext_kernels.cake.ops.rmsnorm")


class Ours(Candidate):
    """``miles_ext_kernels.cake`` forced onto one backend (strict: no silent fallback)."""

    is_ours = True

    def __init__(self, backend: str) -> None:
        if backend not in OURS_BACKENDS:
            raise ValueError(f"ours backend must be one of {OURS_BACKENDS}, got {backend!r}")
        self.backend = backend
        self.key = f"ours[{backend}]"
        self.name = f"ours ({backend})"
        self._api: Any = None
        self._device = torch.device("cpu")
        self._workspace: torch.Tensor | None = None

    def availability(self, device: torch.device) -> str | None:
        try:
            self._api = _ours_api()
        except Exception as exc:  # noqa: BLE001 - any import failure is recorded, not fatal
            return f"not importable: {type(exc).__name__}: {exc}"
        self._device = device
        if self.backend != "reference" and device.type != "cuda":
            return "needs CUDA"
        return None

    def supports(self, case: Case) -> str | None:
        try:
            is_supported = importlib.import_module("miles_ext_kernels.cake").is_supported
        except (ImportError, AttributeError):
            return None  # the first call decides (strict mode raises)
        served = is_supported(self._device, case.hidden, dtype=TORCH_DTYPES[case.x_dtype],
                              weight_dtype=TORCH_DTYPES[case.w_dtype], residual=case.residual,
                              backend=self.backend)
        return None if served else f"the {self.backend} backend does not serve this call"

    def setup(self, case: Case, sets: Sequence[InputSet]) -> None:
        self._workspace = None
        maker = getattr(self._api, "rmsnorm_workspace", None)
        if maker is None:
            return
        w = sets[0].w
        self._workspace = maker(case.hidden, sets[0].x.device, residual=case.residual,
                                dtype=sets[0].x.dtype, weight_dtype=w.dtype,
                                backend=self.backend, strict=True)

    def teardown(self) -> None:
        self._workspace = None

    def forward(self, inp: InputSet, *, grad: bool) -> FwdResult:
        outs = self._api.rmsnorm_forward(inp.x, inp.w, EPS, residual=inp.u,
                                         backend=self.backend, strict=True)
        h = outs[2] if inp.u is not None else None
        return FwdResult(y=outs[0], h=h, state=outs[1])

    def backward(self, inp: InputSet, fwd: FwdResult, *, retain: bool) -> tuple[torch.Tensor,
                                                                                torch.Tensor]:
        x = fwd.h if fwd.h is not None else inp.x
        workspace = self._workspace if self._workspace is not None and \
            self._workspace.numel() > 0 else None
        return self._api.rmsnorm_backward(inp.g, x, inp.w, fwd.state, g_residual=inp.g_h,
                                          workspace=workspace, backend=self.backend,
                                          strict=True)

    def version(self) -> str | None:
        return _dist_version("miles-ext-kernels")


# ----------------------------------------------------------------------------- aten fused


class AtenFused(Candidate):
    """``torch.ops.aten._fused_rms_norm`` and ``_fused_rms_norm_backward`` called directly."""

    key = "aten"
    name = "aten fused"

    def availability(self, device: torch.device) -> str | None:
        for op in ("_fused_rms_norm", "_fused_rms_norm_backward"):
            if not hasattr(torch.ops.aten, op):
                return f"torch {torch.__version__} has no aten.{op}"
        return None

    def forward(self, inp: InputSet, *, grad: bool) -> FwdResult:
        h = inp.x + inp.u if inp.u is not None else inp.x
        y, rstd = torch.ops.aten._fused_rms_norm(h, [h.shape[-1]], inp.w, EPS)
        return FwdResult(y=y, h=h if inp.u is not None else None, state=(h, rstd))

    def backward(self, inp: InputSet, fwd: FwdResult, *, retain: bool) -> tuple[torch.Tensor,
                                                                                torch.Tensor]:
        h, rstd = fwd.state
        dx, dw = torch.ops.aten._fused_rms_norm_backward(inp.g, h, [h.shape[-1]], rstd, inp.w,
                                                         [True, True])
        if inp.g_h is not None:
            dx = dx + inp.g_h
        return dx, dw

    def version(self) -> str | None:
        return torch.__version__


# ----------------------------------------------------------------------------- autograd peers


class AutogradCandidate(Candidate):
    """A peer written as a differentiable function ``compute(x, w, u) -> y | (y, h)``."""

    def compute(self, x: torch.Tensor, w: torch.Tensor, u: torch.Tensor | None) -> Any:
        """The differentiable forward (residual calls return ``(y, h_new)``)."""
        raise NotImplementedError

    def forward(self, inp: InputSet, *, grad: bool) -> FwdResult:
        if not grad:
            with torch.no_grad():
                out = self.compute(inp.x, inp.w, inp.u)
            y, h = (out if inp.u is not None else (out, None))
            return FwdResult(y=y, h=h, state=None)
        x = inp.x.detach().requires_grad_()
        w = inp.w.detach().requires_grad_()
        u = inp.u.detach().requires_grad_() if inp.u is not None else None
        with torch.enable_grad():
            out = self.compute(x, w, u)
        y, h = (out if u is not None else (out, None))
        return FwdResult(y=y, h=h, state=(x, w))

    def backward(self, inp: InputSet, fwd: FwdResult, *, retain: bool) -> tuple[torch.Tensor,
                                                                                torch.Tensor]:
        if fwd.state is None:
            raise RuntimeError(f"{self.name}: backward needs a forward run with grad=True")
        x, w = fwd.state
        outputs = [fwd.y] if fwd.h is None else [fwd.y, fwd.h]
        grads = [inp.g] if fwd.h is None else [inp.g, inp.g_h]
        dx, dw = torch.autograd.grad(outputs, [x, w], grads, retain_graph=retain)
        return dx, dw


def _residual_add(x: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    return x + u if u is not None else x


def fp32_formula(x: torch.Tensor, w: torch.Tensor, u: torch.Tensor | None) -> Any:
    """The eager FP32 RMSNorm (our default contract ``y = round((x * r) * w)``).

    With ``u``: ``h = x + u`` in the activation dtype is normalised and returned too.
    """
    h = _residual_add(x, u)
    hf = h.float()
    r = torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + EPS)
    y = (hf * r * w.float()).to(x.dtype)
    return (y, h) if u is not None else y


class TorchFunctional(AutogradCandidate):
    """``torch.nn.functional.rms_norm`` (PyTorch's own dispatch, fused where it can)."""

    key = "torch"
    name = "PyTorch F.rms_norm"

    def compute(self, x, w, u):
        h = _residual_add(x, u)
        y = F.rms_norm(h, (h.shape[-1],), w, EPS)
        return (y, h) if u is not None else y

    def version(self) -> str | None:
        return torch.__version__


class EagerFp32(AutogradCandidate):
    """The FP32 formula in eager mode."""

    key = "eager"
    name = "eager FP32"

    def compute(self, x, w, u):
        return fp32_formula(x, w, u)

    def version(self) -> str | None:
        return torch.__version__


class CompiledFp32(AutogradCandidate):
    """``torch.compile`` of the FP32 formula: static shapes, compiled afresh for each case
    (``dynamic=False``, ``fullgraph=True``, default mode; donated buffers off)."""

    key = "compile"
    name = "torch.compile FP32"

    def __init__(self, backend: str = "inductor") -> None:
        self.backend = backend
        self._fn: Callable[..., Any] | None = None

    def setup(self, case: Case, sets: Sequence[InputSet]) -> None:
        import torch._dynamo
        import torch._functorch.config

        torch._dynamo.reset()
        # The bwd measurement replays one backward (retain_graph=True); donated buffers forbid
        # that. They only let the backward reuse saved-tensor memory, not change its kernels.
        torch._functorch.config.donated_buffer = False
        self._fn = torch.compile(fp32_formula, dynamic=False, fullgraph=True,
                                 backend=self.backend)

    def teardown(self) -> None:
        self._fn = None

    def compute(self, x, w, u):
        if self._fn is None:
            raise RuntimeError("torch.compile candidate used before setup()")
        return self._fn(x, w, u)

    def version(self) -> str | None:
        return f"torch {torch.__version__}, backend {self.backend}"


class Liger(AutogradCandidate):
    """Liger-Kernel's Triton RMSNorm (``casting_mode="gemma"``, offset 0: FP32 math throughout,
    the same rounding contract as ours; ``in_place=True`` backward, its default)."""

    key = "liger"
    name = "Liger"
    mutates_grad = True

    def __init__(self) -> None:
        self._plain: Any = None
        self._fused_add: Any = None

    def availability(self, device: torch.device) -> str | None:
        try:
            module = importlib.import_module("liger_kernel.ops.rms_norm")
        except ImportError as exc:
            return f"not installed ({exc})"
        self._plain = module.LigerRMSNormFunction
        try:
            fused = importlib.import_module("liger_kernel.ops.fused_add_rms_norm")
            self._fused_add = fused.LigerFusedAddRMSNormFunction
        except (ImportError, AttributeError):
            self._fused_add = None
        if device.type != "cuda":
            return "needs CUDA (Triton)"
        return None

    def supports(self, case: Case) -> str | None:
        if case.residual and self._fused_add is None:
            return "this Liger has no fused add RMSNorm"
        return None

    def compute(self, x, w, u):
        if u is not None:
            return self._fused_add.apply(x, u, w, EPS, 0.0, "gemma", False)
        return self._plain.apply(x, w, EPS, 0.0, "gemma", True)

    def version(self) -> str | None:
        return _dist_version("liger-kernel")


class Quack(AutogradCandidate):
    """QuACK's CuTe-DSL RMSNorm (``quack.rmsnorm.rmsnorm``; residual via ``prenorm=True``)."""

    key = "quack"
    name = "QuACK"

    def __init__(self) -> None:
        self._fn: Any = None

    def availability(self, device: torch.device) -> str | None:
        try:
            module = importlib.import_module("quack.rmsnorm")
        except Exception as exc:  # noqa: BLE001 - CuTe DSL import errors are not ImportError only
            return f"not installed ({type(exc).__name__}: {exc})"
        self._fn = module.rmsnorm
        if device.type != "cuda":
            return "needs CUDA"
        return None

    def compute(self, x, w, u):
        if u is not None:
            return self._fn(x, w, residual=u, eps=EPS, prenorm=True)
        return self._fn(x, w, eps=EPS)

    def version(self) -> str | None:
        return _dist_version("quack-kernels")


# ----------------------------------------------------------------------------- selection


def build_candidates(
    keys: Sequence[str],
    ours_backends: Sequence[str],
    *,
    compile_backend: str = "inductor",
) -> list[Candidate]:
    """Candidates in table order: ours (one per backend), then the peers named in ``keys``."""
    unknown = [k for k in keys if k not in CANDIDATE_KEYS]
    if unknown:
        raise ValueError(f"--candidates: unknown {unknown}; choose from {list(CANDIDATE_KEYS)}")
    bad = [b for b in ours_backends if b not in OURS_BACKENDS]
    if bad:
        raise ValueError(f"--ours-backends: unknown {bad}; choose from {list(OURS_BACKENDS)}")
    chosen: list[Candidate] = []
    if "ours" in keys:
        chosen += [Ours(b) for b in ours_backends]
    factories: dict[str, Callable[[], Candidate]] = {
        "torch": TorchFunctional,
        "aten": AtenFused,
        "eager": EagerFp32,
        "compile": lambda: CompiledFp32(compile_backend),
        "liger": Liger,
        "quack": Quack,
    }
    chosen += [factories[k]() for k in PEER_KEYS if k in keys]
    return chosen
