"""nvcc flags of one (module record, arch): exact gencode, precise math, never fast-math."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

PRECISE_MATH_FLAGS: tuple[str, ...] = ("--prec-div=true", "--prec-sqrt=true", "--ftz=false")
BASE_FLAGS: tuple[str, ...] = ("-std=c++17", "-O3", "--compiler-options=-fPIC")

_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")
# nvcc options (long and short spellings, normalised) whose given value breaks precise math.
_FAST_WHEN_TRUE = {"use_fast_math", "ftz"}
_FAST_WHEN_FALSE = {"prec_div", "prec_sqrt"}
_ARCH_OPTIONS = {"gencode", "arch", "code", "gpu_architecture", "gpu_code", "generate_code"}
_HOST_PASSTHROUGH = {"compiler_options", "xcompiler"}
_HOST_FAST_MATH = {"-ffast-math", "-ofast", "-funsafe-math-optimizations"}
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class FlagError(ValueError):
    """A module record's flags or arch cannot be built under the precise-math contract."""


def gencode_flag(arch: str) -> str:
    """``-gencode=arch=compute_XX,code=sm_XX`` of ``arch`` (sm_100a -> compute_100a/sm_100a)."""
    match = _ARCH_RE.match(arch)
    if match is None:
        raise FlagError(
            f"arch {arch!r} is not a CUDA architecture name (e.g. sm_100a, sm_90a, sm_80)"
        )
    number, suffix = match.groups()
    return f"-gencode=arch=compute_{number}{suffix},code=sm_{number}{suffix}"


def _option_name(token: str) -> str | None:
    if not token.startswith("-"):
        return None
    return token.lstrip("-").split("=", 1)[0].replace("-", "_").lower()


def _split_option(flags: Sequence[str], index: int) -> tuple[str | None, str | None, int]:
    """(normalised name, value, tokens consumed) of the option at ``flags[index]``."""
    token = flags[index]
    name = _option_name(token)
    if name is None:
        return None, None, 1
    if "=" in token:
        return name, token.split("=", 1)[1], 1
    following = flags[index + 1] if index + 1 < len(flags) else None
    takes_any = name in _HOST_PASSTHROUGH
    if following is not None and (takes_any or not following.startswith("-")):
        return name, following, 2
    return name, None, 1


def find_forbidden_flag(flags: Sequence[str]) -> str | None:
    """The first fast-math (or arch-overriding) flag in ``flags``, as written; None if clean."""
    flags = [str(f) for f in flags]
    index = 0
    while index < len(flags):
        name, value, used = _split_option(flags, index)
        written = " ".join(flags[index : index + used])
        lowered = (value or "").strip().lower()
        if name in _FAST_WHEN_TRUE and (value is None or lowered not in _FALSE):
            return written
        if name in _FAST_WHEN_FALSE and lowered in _FALSE:
            return written
        if name in _ARCH_OPTIONS:
            return written
        if name in _HOST_PASSTHROUGH and value is not None:
            host = {part.strip().lower() for part in value.split(",")}
            if host & _HOST_FAST_MATH:
                return written
        index += used
    return None


def module_nvcc_flags(record: Any, arch: str) -> list[str]:
    """Exact nvcc flags that compile ``record`` for ``arch``.

    Order: the single ``-gencode`` of the arch, the precise-math flags, the base flags, then the
    record's own ``compile_flags``. ``--fmad`` keeps nvcc's default. Raises ``FlagError`` when
    the record is not delivered for ``arch`` or its flags carry fast-math (or arch) options.
    """
    name = getattr(record, "name", None) or getattr(record, "kernel", "<unnamed module>")
    arches = tuple(getattr(record, "arches", ()) or ())
    if arch not in arches:
        raise FlagError(f"module {name} is not delivered for {arch}; its arches: {list(arches)}")
    own = [str(flag) for flag in (getattr(record, "compile_flags", None) or ())]
    bad = find_forbidden_flag(own)
    if bad is not None:
        raise FlagError(
            f"module {name} carries the flag {bad!r} in compile_flags; fast-math and "
            "architecture flags are refused (precise FP32 statistics, one exact -gencode per arch)"
        )
    return [gencode_flag(arch), *PRECISE_MATH_FLAGS, *BASE_FLAGS, *own]
