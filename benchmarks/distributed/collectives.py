"""Process-group setup and the cross-rank comparisons of the distributed check."""

from __future__ import annotations

import datetime
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

#: NVLink multicast stays off in every process (device notes): NCCL NVLS, symmetric memory
#: multicast and NVSHMEM NVLS.
MULTICAST_OFF_ENV: dict[str, str] = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def force_multicast_off() -> dict[str, str | None]:
    """Set :data:`MULTICAST_OFF_ENV` in this process; return the values found before."""
    before = {name: os.environ.get(name) for name in MULTICAST_OFF_ENV}
    os.environ.update(MULTICAST_OFF_ENV)
    return before


@dataclass(frozen=True)
class DistContext:
    """This process's place in the group and the device it computes on."""

    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    backend: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def init(device_kind: str, timeout_s: float) -> DistContext:
    """Join the process group (NCCL on ``cuda``, gloo on ``cpu``).

    Launched by torchrun the ``RANK``/``WORLD_SIZE``/``MASTER_*`` variables are read; launched
    as a plain process it becomes a group of one.
    """
    if device_kind not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda' or 'cpu', got {device_kind!r}")
    if "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(_free_port()))
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if device_kind == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("--device cuda: CUDA is not available (use --device cpu)")
        if torch.cuda.device_count() <= local:
            raise RuntimeError(f"LOCAL_RANK={local} but only {torch.cuda.device_count()} "
                               "GPU(s) are visible")
        torch.cuda.set_device(local)
        device, backend = torch.device("cuda", local), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    kwargs: dict[str, Any] = {"timeout": datetime.timedelta(seconds=timeout_s)}
    if backend == "nccl":
        kwargs["device_id"] = device
    dist.init_process_group(backend, **kwargs)
    return DistContext(rank, world, local, device, backend)


def gather_objects(obj: Any) -> list[Any]:
    """``obj`` of every rank, in rank order."""
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def as_bytes(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """The raw bytes of ``tensors``, concatenated into one uint8 tensor (on their device)."""
    parts = [t.detach().contiguous().reshape(-1).view(torch.uint8) for t in tensors]
    if not parts:
        return torch.zeros(0, dtype=torch.uint8)
    return torch.cat(parts)


def gather_bytes(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Every rank's :func:`as_bytes` of ``tensors`` (all ranks must pass the same sizes)."""
    local = as_bytes(tensors)
    sizes = gather_objects(int(local.numel()))
    if len(set(sizes)) != 1:
        raise ValueError(f"ranks hold different byte counts {sizes}: the compared tensors differ")
    out = [torch.empty_like(local) for _ in sizes]
    dist.all_gather(out, local)
    return out


def compare_with_rank0(gathered: Sequence[torch.Tensor]) -> dict[str, Any]:
    """Per-rank bitwise comparison of gathered bytes against rank 0's."""
    base = gathered[0]
    differing = [int((g != base).sum().item()) for g in gathered]
    return {"bytes": int(base.numel()), "differing_bytes_vs_rank0": differing,
            "identical": all(d == 0 for d in differing)}


def all_true(flag: bool) -> bool:
    """True when ``flag`` is True on every rank."""
    return all(gather_objects(bool(flag)))
