"""Benchmark records read back plain or gzip-compressed (benchmarks/rmsnorm/records.py), the
``--compress`` command, clear errors for files that are not records, and the repository keeping
its committed records compressed (the tracked tree travels to the device machine under a 64 MiB
limit)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks.rmsnorm import records
from benchmarks.rmsnorm.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
RECORD = {"schema": 1, "meta": {"mode": "smoke"}, "rows": [{"op": "fwd", "us": 1.5}],
          "skipped": []}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=1))
    return path


def test_plain_and_compressed_records_read_the_same(tmp_path):
    plain = _write(tmp_path / "results.json", RECORD)
    packed = records.write_compressed(plain, remove=False)
    assert packed.name == "results.json.gz" and plain.exists()
    assert packed.read_bytes()[:2] == records.GZIP_MAGIC
    assert records.read_results(packed) == records.read_results(plain) == RECORD
    assert packed.stat().st_size < plain.stat().st_size or len(plain.read_bytes()) < 200


def test_compression_is_byte_reproducible_and_removes_the_plain_file(tmp_path):
    first = records.write_compressed(_write(tmp_path / "results.json", RECORD), remove=False)
    before = first.read_bytes()
    again = records.write_compressed(tmp_path / "results.json")
    assert again.read_bytes() == before
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]", b'{"rows": 3}',
                                     b"\x1f\x8b\x08\x00broken"])
def test_a_file_that_is_not_a_record_is_a_clear_error(tmp_path, content):
    path = tmp_path / "results.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="results.json: not a"):
        records.read_results(path)
    with pytest.raises(ValueError, match="not a"):
        records.write_compressed(path)
    assert path.read_bytes() == content and not (tmp_path / "results.json.gz").exists()


def test_an_already_compressed_record_is_not_compressed_again(tmp_path):
    packed = records.write_compressed(_write(tmp_path / "results.json", RECORD))
    disguised = tmp_path / "other.json"
    disguised.write_bytes(packed.read_bytes())
    with pytest.raises(ValueError, match="other.json: already gzip-compressed"):
        records.write_compressed(disguised)
    assert disguised.read_bytes() == packed.read_bytes()
    assert not (tmp_path / "other.json.gz").exists()


def test_a_missing_record_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="missing.json: not a readable results record"):
        records.read_results(tmp_path / "missing.json")


def test_compress_command_replaces_records_and_from_json_reads_them(tmp_path, capsys):
    first = _write(tmp_path / "a.json", RECORD)
    second = _write(tmp_path / "b.json", dict(RECORD, rows=[]))
    assert main(["--compress", str(first), str(second)]) == 0
    assert not first.exists() and not second.exists()
    assert records.read_results(tmp_path / "a.json.gz") == RECORD
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("name, content", [("results.md", b"# not a record"),
                                           ("results.json", b"{oops")])
def test_compress_command_refuses_what_it_cannot_check(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        main(["--compress", str(path)])
    assert exc.value.code == 2
    assert path.read_bytes() == content
    assert "--compress" in capsys.readouterr().err


def test_from_json_and_compare_accept_compressed_records(tmp_path):
    out = tmp_path / "run"
    assert main(["--smoke", "--out", str(out), "--no-plots", "--no-host-overhead",
                 "--candidates", "ours", "--rows", "1", "--hidden", "256"]) == 0
    plain_md = (out / "results.md").read_text()
    packed = records.write_compressed(out / "results.json", remove=False)
    again = tmp_path / "again"
    assert main(["--from-json", str(packed), "--out", str(again), "--no-plots",
                 "--compare", str(packed)]) == 0
    text = (again / "results.md").read_text()
    assert "### Spread between two sessions" in text
    assert text.split("### Spread between two sessions")[0].strip() in plain_md


def test_a_bad_compare_record_fails_before_the_run(tmp_path, capsys):
    bad = tmp_path / "old.json"
    bad.write_bytes(gzip.compress(b"{truncated"))
    with pytest.raises(SystemExit) as exc:
        main(["--smoke", "--out", str(tmp_path / "run"), "--compare", str(bad)])
    assert exc.value.code == 2
    assert "--compare" in capsys.readouterr().err
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_bad_compare_record_fails_a_rerender_before_it_writes(tmp_path, capsys):
    """--from-json with a --compare file that is not a record: a usage error naming --compare and
    the file, and nothing written (the output directory is not even made)."""
    record = _write(tmp_path / "results.json", RECORD)
    bad = tmp_path / "old.json"
    bad.write_bytes(b"{truncated")
    out = tmp_path / "again"
    with pytest.raises(SystemExit) as exc:
        main(["--from-json", str(record), "--out", str(out), "--no-plots", "--compare", str(bad)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--compare" in err and "old.json" in err
    assert not out.exists()
    assert bad.read_bytes() == b"{truncated" and records.read_results(record) == RECORD


def test_committed_records_are_compressed():
    """Every results record over 64 KB under docs/bench is kept gzip-compressed (the tracked tree
    travels to the device machine, 64 MiB with its carries), and every compressed one reads
    back as a record."""
    bench = ROOT / "docs" / "bench"
    plain = []
    for path in bench.rglob("*.json"):
        if path.stat().st_size <= 64 * 1024:
            continue
        try:
            records.read_results(path)
        except ValueError:
            continue  # not a results record (a probe's own data)
        plain.append(path.relative_to(ROOT))
    assert plain == [], f"compress with python -m benchmarks.rmsnorm --compress: {plain[:5]}"
    packed = sorted(bench.rglob("*.json.gz"))
    assert packed, "no compressed records found under docs/bench"
    for path in packed:
        assert isinstance(records.read_results(path)["rows"], list), path

