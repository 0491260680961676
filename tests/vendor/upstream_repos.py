"""Build fixture upstream repositories object by object with GitPython (any name, any mode)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from io import BytesIO
from pathlib import Path

import git
from gitdb import IStream

FIXED_IDENT = b"Fixture Upstream <fixture@invalid> 1767225600 +0000"
Spec = dict  # path -> bytes | (mode, bytes) | ("gitlink", commit id)


def _tree_sort_key(entry: tuple[bytes, bytes, bytes]) -> bytes:
    mode, name, _ = entry
    return name + b"/" if mode == b"40000" else name


class FixtureRepo:
    """A git repository whose commits are written straight into the object database."""

    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.repo = git.Repo.init(path)
        with self.repo.config_writer() as cfg:
            cfg.set_value("user", "name", "fixture")
            cfg.set_value("user", "email", "fixture@invalid")

    def store(self, kind: str, data: bytes) -> str:
        """Write one object; return its hex id."""
        return self.repo.odb.store(IStream(kind, len(data), BytesIO(data))).hexsha.decode()

    def tree(self, files: Spec) -> str:
        """Write nested trees for ``files`` (paths split on '/'); return the root tree id."""
        nested: dict = {}
        for path, value in files.items():
            node = nested
            parts = path.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return self._write_tree(nested)

    def _write_tree(self, node: dict) -> str:
        entries = []
        for name, value in node.items():
            raw_name = name.encode("utf-8", "surrogateescape")
            if isinstance(value, dict):
                entries.append((b"40000", raw_name, bytes.fromhex(self._write_tree(value))))
            elif isinstance(value, tuple) and value[0] == "gitlink":
                entries.append((b"160000", raw_name, bytes.fromhex(value[1])))
            else:
                mode, data = value if isinstance(value, tuple) else ("100644", value)
                entries.append((mode.encode(), raw_name, bytes.fromhex(self.store("blob", data))))
        body = b"".join(m + b" " + n + b"\0" + s for m, n, s in sorted(entries, key=_tree_sort_key))
        return self.store("tree", body)

    def commit_body(self, tree: str, message: str, parent: str | None = None) -> bytes:
        """The raw bytes of a commit object."""
        lines = [b"tree " + tree.encode()]
        if parent:
            lines.append(b"parent " + parent.encode())
        lines += [b"author " + FIXED_IDENT, b"committer " + FIXED_IDENT, b"", message.encode()]
        return b"\n".join(lines) + b"\n"

    def commit(self, files: Spec, message: str = "fixture", parent: str | None = None,
               branch: str = "main") -> str:
        """Commit ``files`` as the whole tree; move ``branch`` and HEAD there; return the id."""
        sha = self.store("commit", self.commit_body(self.tree(files), message, parent))
        self.repo.git.update_ref(f"refs/heads/{branch}", sha)
        self.repo.git.symbolic_ref("HEAD", f"refs/heads/{branch}")
        return sha

    def ambiguous_commits(self, files: Spec, prefix_len: int = 4) -> tuple[str, str]:
        """Two commits whose ids share their first ``prefix_len`` hex digits (found by search)."""
        tree = self.tree(files)
        seen: dict[str, bytes] = {}
        for n in range(1_000_000):
            body = self.commit_body(tree, f"candidate {n}")
            sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
            key = sha[:prefix_len]
            if key in seen:
                first = self.store("commit", seen[key])
                second = self.store("commit", body)
                return first, second
            seen[key] = body
        raise AssertionError("no ambiguous prefix found")

    def ls_tree(self, commit: str) -> dict[str, tuple[str, str]]:
        """``git ls-tree -r`` at ``commit``: path -> (mode, blob id)."""
        out = self.repo.git.ls_tree("-r", "-z", commit)
        result = {}
        for record in out.split("\0"):
            if record:
                meta, path = record.split("\t", 1)
                mode, _, sha = meta.split()
                result[path] = (mode, sha)
        return result


def init_downstream(path: Path, *config: str) -> Path:
    """A downstream git repository holding ``miles_ext_kernels/cake`` (``config`` items like
    ``core.autocrlf=true``)."""
    (path / "miles_ext_kernels/cake").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for item in config:
        key, value = item.split("=", 1)
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    return path


def snapshot(directory: Path, skip: tuple[str, ...] = (".vendor.lock",)) -> dict:
    """Every entry below ``directory``: relative path -> (kind, bytes or target, mode, mtime_ns)."""
    state = {}
    if not directory.exists():
        return state
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(directory).as_posix()
            if rel in skip:
                continue
            st = full.lstat()
            if full.is_symlink():
                state[rel] = ("link", os.readlink(full), st.st_mode, st.st_mtime_ns)
            elif full.is_dir():
                state[rel] = ("dir", None, st.st_mode, None)
            else:
                state[rel] = ("file", full.read_bytes(), st.st_mode, st.st_mtime_ns)
    return state
