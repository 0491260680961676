"""nvcc flag construction per (record, arch) and the fast-math refusal."""

from __future__ import annotations

import pytest
from jit_support import make_record

from miles_ext_kernels.cake.jit.flags import (
    BASE_FLAGS,
    PRECISE_MATH_FLAGS,
    FlagError,
    find_forbidden_flag,
    gencode_flag,
    module_nvcc_flags,
)


@pytest.mark.parametrize(
    ("arch", "expected"),
    [
        ("sm_100a", "-gencode=arch=compute_100a,code=sm_100a"),
        ("sm_103a", "-gencode=arch=compute_103a,code=sm_103a"),
        ("sm_107a", "-gencode=arch=compute_107a,code=sm_107a"),
        ("sm_90a", "-gencode=arch=compute_90a,code=sm_90a"),
        ("sm_80", "-gencode=arch=compute_80,code=sm_80"),
        ("sm_89", "-gencode=arch=compute_89,code=sm_89"),
        ("sm_120", "-gencode=arch=compute_120,code=sm_120"),
    ],
)
def test_gencode_is_exact_for_each_arch(arch: str, expected: str) -> None:
    assert gencode_flag(arch) == expected


@pytest.mark.parametrize("arch", ["sm100a", "compute_100a", "sm_100x", "", "SM_90"])
def test_gencode_rejects_non_arch_names(arch: str) -> None:
    with pytest.raises(FlagError, match="not a CUDA architecture"):
        gencode_flag(arch)


def test_module_flags_order_and_precise_math() -> None:
    record = make_record(compile_flags=["-lineinfo", "-DCAKE_EXTRA=1"])
    flags = module_nvcc_flags(record, "sm_100a")
    assert flags == [
        "-gencode=arch=compute_100a,code=sm_100a",
        "--prec-div=true", "--prec-sqrt=true", "--ftz=false",
        "-std=c++17", "-O3", "--compiler-options=-fPIC",
        "-lineinfo", "-DCAKE_EXTRA=1",
    ]
    assert tuple(flags[1:4]) == PRECISE_MATH_FLAGS and tuple(flags[4:7]) == BASE_FLAGS
    assert not any("fmad" in f or "fast_math" in f or "-rdc" in f for f in flags)
    assert sum(f.startswith("-gencode") for f in flags) == 1


def test_module_flags_refuse_an_arch_the_record_does_not_list() -> None:
    with pytest.raises(FlagError, match=r"demo_fwd is not delivered for sm_90a.*sm_100a"):
        module_nvcc_flags(make_record(), "sm_90a")


FAST_MATH_SPELLINGS = [
    ["-use_fast_math"],
    ["--use_fast_math"],
    ["--use-fast-math"],
    ["-ftz=true"],
    ["--ftz=true"],
    ["--ftz", "true"],
    ["-ftz=1"],
    ["--prec-div=false"],
    ["-prec-div=false"],
    ["--prec-div", "false"],
    ["--prec-sqrt=false"],
    ["-prec-sqrt=0"],
    ["-Xcompiler", "-ffast-math"],
    ["--compiler-options=-O2,-ffast-math"],
]


@pytest.mark.parametrize("bad", FAST_MATH_SPELLINGS, ids=lambda f: " ".join(f))
def test_fast_math_in_any_spelling_is_refused_naming_module_and_flag(bad: list[str]) -> None:
    record = make_record(name="fast_module", compile_flags=["-lineinfo", *bad])
    with pytest.raises(FlagError) as info:
        module_nvcc_flags(record, "sm_100a")
    assert "fast_module" in str(info.value)
    assert " ".join(bad) in str(info.value)


@pytest.mark.parametrize("bad", [["-arch=sm_90"], ["-gencode=arch=compute_90,code=sm_90"],
                                 ["--gpu-architecture", "sm_80"]])
def test_arch_flags_in_records_are_refused(bad: list[str]) -> None:
    with pytest.raises(FlagError, match="arch"):
        module_nvcc_flags(make_record(compile_flags=bad), "sm_100a")


@pytest.mark.parametrize(
    "ok",
    [["--ftz=false"], ["--prec-div=true"], ["--fmad=false"], ["-lineinfo"], ["-Xcompiler", "-Wall"],
     ["-DUSE_FAST_MATH_TABLE=1"]],
)
def test_precise_or_unrelated_flags_pass(ok: list[str]) -> None:
    assert find_forbidden_flag(ok) is None
    assert module_nvcc_flags(make_record(compile_flags=ok), "sm_103a")[-len(ok):] == ok
