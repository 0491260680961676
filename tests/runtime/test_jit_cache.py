"""JIT cache: content keys, validation of entries, rebuild of corrupt entries, atomic publish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from miles_ext_kernels.cake.jit.cache import (
    CACHE_ENV,
    CacheEntry,
    cache_key,
    cache_root,
    get_or_build,
    read_valid,
)

BASE_KEY_INPUTS = {
    "arch": "sm_100a",
    "source_digests": {"csrc/a_kernel.cu": "1" * 64, "csrc/a_binding.cu": "2" * 64},
    "header_digest": "3" * 64,
    "nvcc_flags": ["-gencode=arch=compute_100a,code=sm_100a", "-O3"],
    "link_flags": ["-shared", "-lcudart"],
    "nvcc_version": "13.0.88",
    "host_compiler": "/usr/bin/g++",
    "tvm_ffi_version": "0.1.15.post2",
}
CHANGED_INPUTS = {
    "arch": "sm_103a",
    "source_digests": {"csrc/a_kernel.cu": "1" * 64, "csrc/a_binding.cu": "4" * 64},
    "header_digest": "5" * 64,
    "nvcc_flags": ["-gencode=arch=compute_100a,code=sm_100a", "-O3", "-lineinfo"],
    "link_flags": ["-shared", "-lcudart", "-Wl,-rpath,/opt/cuda/lib64"],
    "nvcc_version": "13.1.0",
    "host_compiler": "/usr/bin/clang++",
    "tvm_ffi_version": "0.1.16",
}


def test_cache_key_is_stable_and_order_insensitive_for_sources() -> None:
    again = dict(BASE_KEY_INPUTS)
    again["source_digests"] = dict(reversed(list(BASE_KEY_INPUTS["source_digests"].items())))
    assert cache_key(**BASE_KEY_INPUTS) == cache_key(**again)
    assert len(cache_key(**BASE_KEY_INPUTS)) == 64


@pytest.mark.parametrize("field", sorted(CHANGED_INPUTS))
def test_cache_key_changes_with_each_input(field: str) -> None:
    changed = dict(BASE_KEY_INPUTS, **{field: CHANGED_INPUTS[field]})
    assert cache_key(**changed) != cache_key(**BASE_KEY_INPUTS)


def test_cache_key_covers_the_format_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from miles_ext_kernels.cake.jit import cache

    before = cache_key(**BASE_KEY_INPUTS)
    monkeypatch.setattr(cache, "CACHE_FORMAT_VERSION", cache.CACHE_FORMAT_VERSION + 1)
    assert cache_key(**BASE_KEY_INPUTS) != before


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_root() == Path.home() / ".cache" / "miles_ext_kernels"


class CountingBuilder:
    """Writes a fake shared object and counts how often it was asked to."""

    def __init__(self, payload: bytes = b"\x7fELF fake shared object" * 100) -> None:
        self.payload = payload
        self.calls: list[Path] = []

    def __call__(self, out: Path) -> None:
        self.calls.append(out)
        out.write_bytes(self.payload)


def _entry(tmp_path: Path) -> CacheEntry:
    return CacheEntry(root=tmp_path / "cache", name="demo_fwd_sm_100a", key="ab" * 32)


def test_build_once_then_served_from_cache(tmp_path: Path) -> None:
    entry, builder = _entry(tmp_path), CountingBuilder()
    first = get_or_build(entry, builder, metadata={"module": "demo_fwd"})
    second = get_or_build(entry, builder)
    assert first.built and not second.built
    assert len(builder.calls) == 1
    assert first.so_path == second.so_path == entry.so_path
    assert entry.so_path.read_bytes() == builder.payload
    meta = json.loads(entry.meta_path.read_text())
    assert meta["so_size"] == len(builder.payload)
    assert meta["key"] == entry.key and meta["module"] == "demo_fwd"
    assert sorted(p.name for p in entry.directory.iterdir()) == ["meta.json", "module.so"]


@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "drop_meta", "bad_meta_json",
                                    "drop_so", "wrong_key"])
def test_corrupt_entry_is_detected_and_rebuilt(tmp_path: Path, damage: str) -> None:
    entry, builder = _entry(tmp_path), CountingBuilder()
    get_or_build(entry, builder)
    so, meta = entry.so_path, entry.meta_path
    if damage == "truncate":
        so.write_bytes(so.read_bytes()[:-7])
    elif damage == "flip_byte":
        data = bytearray(so.read_bytes())
        data[10] ^= 0xFF
        so.write_bytes(bytes(data))
    elif damage == "drop_meta":
        meta.unlink()
    elif damage == "bad_meta_json":
        meta.write_text("{not json")
    elif damage == "drop_so":
        so.unlink()
    else:
        record = json.loads(meta.read_text())
        record["key"] = "cd" * 32
        meta.write_text(json.dumps(record))
    assert read_valid(entry) is None
    result = get_or_build(entry, builder)
    assert result.built
    assert len(builder.calls) == 2
    assert read_valid(entry) == entry.so_path
    assert entry.so_path.read_bytes() == builder.payload


def test_publish_is_atomic_and_a_failed_build_leaves_nothing(tmp_path: Path) -> None:
    entry = _entry(tmp_path)
    seen: dict[str, object] = {}

    def failing(out: Path) -> None:
        seen["entry_visible_during_build"] = entry.directory.exists()
        seen["builds_inside_cache_root"] = out.parent.parent == entry.root
        out.write_bytes(b"half written")
        raise RuntimeError("nvcc exploded")

    with pytest.raises(RuntimeError, match="nvcc exploded"):
        get_or_build(entry, failing)
    assert seen == {"entry_visible_during_build": False, "builds_inside_cache_root": True}
    assert not entry.directory.exists()
    leftovers = [p.name for p in entry.root.iterdir() if p.name != ".locks"]
    assert leftovers == []

    def succeeding(out: Path) -> None:
        seen["visible"] = entry.directory.exists()
        out.write_bytes(b"complete")

    assert get_or_build(entry, succeeding).built
    assert seen["visible"] is False
    assert entry.so_path.read_bytes() == b"complete"


def test_rebuild_replaces_a_corrupt_entry_without_touching_other_entries(tmp_path: Path) -> None:
    entry, builder = _entry(tmp_path), CountingBuilder()
    other = CacheEntry(root=entry.root, name="other_sm_100a", key="ef" * 32)
    get_or_build(entry, builder)
    get_or_build(other, CountingBuilder(b"other"))
    entry.so_path.write_bytes(b"")
    get_or_build(entry, builder)
    assert read_valid(other) == other.so_path and other.so_path.read_bytes() == b"other"
    names = sorted(p.name for p in entry.root.iterdir())
    assert names == sorted([".locks", entry.directory.name, other.directory.name])
