"""Upstream git access (GitPython): open a checkout, refuse what it cannot read, resolve commits."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import git

from .errors import VendorError

_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass(frozen=True)
class ResolvedCommit:
    """A commit the user named: what was asked for, the full id and the commit object."""

    ref: str
    hexsha: str
    commit: git.Commit

    @property
    def tree_id(self) -> str:
        """Id of the commit's root tree."""
        return self.commit.tree.hexsha


def strip_credentials(url: str) -> str:
    """``url`` without user name / password (``https://user:tok@host/x`` -> ``https://host/x``)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme and "@" in parsed.netloc:
        host = parsed.netloc.rsplit("@", 1)[1]
        return urllib.parse.urlunsplit(parsed._replace(netloc=host))
    return url


class UpstreamRepo:
    """A read-only view of the upstream repository's object database."""

    def __init__(self, checkout: Path) -> None:
        """Open ``checkout`` (working tree or bare); refuse SHA-256 repositories clearly."""
        self.path = Path(checkout)
        if not self.path.exists():
            raise VendorError(f"--checkout {str(self.path)!r}: no such directory")
        try:
            self.repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise VendorError(f"--checkout {str(self.path)!r}: not a git repository") from exc
        self.object_format = self._object_format()
        if self.object_format != "sha1":
            raise VendorError(
                f"--checkout {str(self.path)!r}: the repository uses the {self.object_format} "
                "object format, which GitPython cannot read; vendor from a SHA-1 clone "
                "(or mirror) of upstream instead"
            )

    def _object_format(self) -> str:
        try:
            value = self.repo.git.rev_parse("--show-object-format").strip()
        except git.GitCommandError:
            value = ""
        if not value:
            reader = self.repo.config_reader()
            value = reader.get_value("extensions", "objectformat", "sha1")
        return str(value).lower()

    def close(self) -> None:
        """Stop the git helper processes GitPython started."""
        self.repo.close()

    def __enter__(self) -> UpstreamRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self) -> str | None:
        """URL of the ``origin`` remote (credentials stripped), or None without one."""
        try:
            urls = list(self.repo.remote("origin").urls)
        except (ValueError, git.GitCommandError):
            return None
        return strip_credentials(urls[0]) if urls else None

    def _full_commit_id(self, rev: str) -> str:
        """The full id of the commit ``rev`` names (``GitCommandError`` when none)."""
        return self.repo.git.rev_parse("--verify", f"{rev}^{{commit}}").strip()

    def resolve(self, ref: str) -> ResolvedCommit:
        """Resolve a full or abbreviated commit id (or any rev) to a commit; list ambiguity."""
        if not ref or ref.startswith("-") or any(ch.isspace() or ch == "\0" for ch in ref):
            raise VendorError(f"--commit {ref!r}: not a valid commit id")
        try:
            full = self._full_commit_id(ref)
        except git.GitCommandError as exc:
            stderr = str(exc.stderr or "")
            if "ambiguous" in stderr and _HEX.match(ref):
                candidates = self.candidates(ref)
                raise VendorError(
                    f"--commit {ref!r}: the abbreviated id is ambiguous; use more digits. "
                    "Candidates:",
                    candidates,
                ) from exc
            raise VendorError(
                f"--commit {ref!r}: no such commit in {str(self.path)!r}"
            ) from exc
        return ResolvedCommit(ref=ref, hexsha=full, commit=self.repo.commit(full))

    def resolve_recorded(self, oid: str, where: str) -> ResolvedCommit:
        """Resolve a full commit id recorded in VENDORED.json; ``where`` names its field."""
        id_len = 64 if self.object_format == "sha256" else 40
        if not (isinstance(oid, str) and len(oid) == id_len and _HEX.match(oid)):
            raise VendorError(
                f"{where} {oid!r} is not a full commit id ({id_len} hex digits); was "
                "VENDORED.json edited by hand? Re-vendor the op with `fi`"
            )
        try:
            full = self._full_commit_id(oid)
        except git.GitCommandError as exc:
            raise VendorError(
                f"{where} {oid!r} is not in the checkout {str(self.path)!r} (wrong checkout "
                "or shallow clone? fetch it, or pass --checkout of the upstream it came from)"
            ) from exc
        return ResolvedCommit(ref=oid, hexsha=full, commit=self.repo.commit(full))

    def candidates(self, prefix: str) -> list[str]:
        """Every object whose id starts with ``prefix``: ``<id> <type> [subject]``."""
        try:
            out = self.repo.git.rev_parse(f"--disambiguate={prefix.lower()}")
        except git.GitCommandError:
            return []
        lines = []
        for oid in sorted(out.split()):
            kind = self.repo.git.cat_file("-t", oid).strip()
            subject = ""
            if kind == "commit":
                subject = " " + self.repo.commit(oid).summary
            lines.append(f"{oid} {kind}{subject}")
        return lines
