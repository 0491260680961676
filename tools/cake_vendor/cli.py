"""Click CLI of the vendoring tool: ``fi``, ``verify``, ``audit``, ``status``.

Exit status: 0 success / clean; 1 drift (``verify``, ``audit``, ``status``) or changes pending
(``fi --dry-run``); 2 usage error, refusal or I/O error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path

import click

from .api import vendor_op
from .audit import audit_vendor
from .config import find_root, load_config, require_checkout_root
from .errors import EXIT_DRIFT, EXIT_ERROR, EXIT_OK, VendorError
from .verify import vendor_status, verify_vendor

ROOT_HELP = (
    "Downstream repository root; files go to ROOT/miles_ext_kernels/cake/_vendor. "
    "Default: the nearest directory above the current one holding miles_ext_kernels/cake."
)


def plural(count: int, noun: str) -> str:
    """``"1 file"``, ``"2 files"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _emit_json(payload: dict) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=True))


def _handle_errors(func: Callable) -> Callable:
    @wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except VendorError as exc:
            if kwargs.get("as_json"):
                _emit_json({"error": str(exc), "details": exc.details})
            else:
                click.echo(f"error: {exc.render()}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_ERROR)

    return wrapper


def _root(root: Path | None) -> Path:
    """The downstream root: ``--root`` (checked) or the one found above the current directory."""
    return require_checkout_root(root) if root is not None else find_root(Path.cwd())


root_option = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=None, help=ROOT_HELP
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Vendor FlashInfer Cake packages byte for byte from a pinned upstream git commit.

    \b
    fi      copy an op's packages at a commit into miles_ext_kernels/cake/_vendor/
    verify  offline: re-hash vendored files against VENDORED.json (0 clean, 1 drift, 2 error)
    audit   re-derive every blob id from the upstream object database at the recorded commit
    status  what is vendored, per op, and whether it is clean
    """


@main.command("fi")
@click.option("--checkout", type=click.Path(path_type=Path), default=None,
              help="Upstream git checkout (default: [tool.miles-ext-kernels.vendor] checkout in "
                   "ROOT/pyproject.toml, else ../flashinfer relative to ROOT).")
@click.option("--commit", required=True,
              help="Full or abbreviated commit id (any rev git resolves to a commit); the full "
                   "id is recorded. An ambiguous prefix is an error listing the candidates.")
@click.option("--op", required=True, help="Op name, e.g. rmsnorm (its profile picks packages).")
@click.option("--package", "packages", multiple=True,
              help="Upstream path (directory or file) to vendor instead of the op profile; "
                   "repeatable. A leading flashinfer/ is dropped in the vendor directory.")
@click.option("--dry-run", is_flag=True,
              help="Print adds, updates, deletes and mode changes; exit 1 if anything would "
                   "change.")
@click.option("--force", is_flag=True, help="Overwrite vendored files that were edited locally.")
@json_option
@root_option
@_handle_errors
def fi_command(checkout, commit, op, packages, dry_run, force, as_json, root) -> None:
    """Vendor an op's Cake packages from upstream at COMMIT (atomic; manifest written last)."""
    progress = None if as_json else sys.stderr
    result = vendor_op(_root(root), checkout, commit, op, tuple(packages), dry_run=dry_run,
                       force=force, progress=progress)
    summary = result.to_dict()
    if as_json:
        _emit_json(summary)
    else:
        verb = "would" if dry_run else "did"
        click.echo(f"{op} @ {result.commit} (layout {result.layout}) -> {result.vendor_dir}")
        if result.recovered:
            click.echo(f"recovered an interrupted run: {result.recovered}")
        for kind in ("add", "update", "delete", "mode"):
            for path in summary[kind]:
                click.echo(f"  {kind:<6} {path}")
        if summary["manifest_changed"]:
            click.echo(f"  {verb} update VENDORED.json")
        _print_blockers(summary)
        if not result.plan.changes_anything:
            click.echo("  up to date: nothing changed")
        for note in result.notes:
            click.echo(f"warning: {note}", err=True)
    if dry_run and result.plan.changes_anything:
        sys.exit(EXIT_DRIFT)


_BLOCKERS = (
    ("unowned_in_the_way", "refuse", "nobody owns it; move it away"),
    ("owned_by_other_ops", "refuse", "another op owns it with different content"),
    ("local_edits", "edited", "edited locally; --force overwrites it"),
)


def _print_blockers(summary: dict) -> None:
    """List what stops (or, with --force, is overwritten by) a run; only a dry run gets here."""
    for key, label, why in _BLOCKERS:
        for path in summary[key]:
            click.echo(f"  {label:<6} {path} ({why})")


def _print_drift(report: dict, kinds: tuple[str, ...]) -> None:
    for kind in kinds:
        for path in report[kind]:
            click.echo(f"  {kind:<18} {path}")


@main.command("verify")
@json_option
@root_option
@_handle_errors
def verify_command(as_json, root) -> None:
    """Offline: re-hash vendored files against VENDORED.json (exit 0 clean, 1 drift, 2 error)."""
    vendor_dir = load_config(_root(root)).vendor_dir
    report = verify_vendor(vendor_dir).to_dict()
    if as_json:
        _emit_json(report)
    else:
        state = "clean" if report["clean"] else "DRIFT"
        click.echo(f"{vendor_dir}: {plural(report['checked'], 'file')}, {state}")
        _print_drift(report, ("modified", "missing", "extra", "mode_changed"))
    sys.exit(EXIT_OK if report["clean"] else EXIT_DRIFT)


@main.command("audit")
@click.option("--checkout", type=click.Path(path_type=Path), required=True,
              help="Upstream git checkout holding the recorded commits.")
@json_option
@root_option
@_handle_errors
def audit_command(checkout, as_json, root) -> None:
    """Re-derive blob ids from upstream at the recorded commit; report every difference."""
    vendor_dir = load_config(_root(root)).vendor_dir
    report = audit_vendor(vendor_dir, checkout).to_dict()
    if as_json:
        _emit_json(report)
    else:
        state = "clean" if report["clean"] else "DRIFT"
        click.echo(f"{vendor_dir}: {plural(report['checked'], 'upstream file')} audited, "
                   f"{state}")
        _print_drift(report, tuple(k for k in report if isinstance(report[k], list)))
    sys.exit(EXIT_OK if report["clean"] else EXIT_DRIFT)


@main.command("status")
@json_option
@root_option
@_handle_errors
def status_command(as_json, root) -> None:
    """What is vendored, per op: upstream, commit, packages, file counts, clean or not.

    Exits like ``verify``: 0 clean, 1 drift (files owned by no op included), 2 error.
    """
    vendor_dir = load_config(_root(root)).vendor_dir
    status = vendor_status(vendor_dir)
    if as_json:
        _emit_json(status)
    else:
        _print_status(vendor_dir, status)
    sys.exit(EXIT_OK if status["clean"] else EXIT_DRIFT)


def _print_status(vendor_dir: Path, status: dict) -> None:
    """The text form of ``status``."""
    up = status["upstream"]
    click.echo(f"{vendor_dir}: upstream {up['name']} {up['url'] or '(no url)'} "
               f"[{up['object_format']}]")
    if status["transaction_problem"]:
        click.echo(f"  {status['transaction_problem']}")
    elif status["pending_transaction"]:
        click.echo("  an interrupted run left a transaction; the next `fi` rolls it back "
                   "(or completes it when its manifest was already written)")
    for name, op in status["ops"].items():
        state = "clean" if op["clean"] else "DRIFT (run verify)"
        click.echo(f"  {name}: {op['commit']} (ref {op['ref']}, layout {op['layout']}, "
                   f"license {op['license']}): {plural(op['files'], 'file')}, {state}")
        for path, count in op["packages"].items():
            click.echo(f"    {path}: {plural(count, 'file')}")
        for warning in op["warnings"]:
            click.echo(f"    warning: {warning}")
    drift = status["drift"]
    for path in drift["extra"]:
        click.echo(f"  extra {path} (owned by no op; run verify)")
    state = "clean" if status["clean"] else "DRIFT (run verify)"
    click.echo(f"  {plural(len(status['ops']), 'op')}, {plural(drift['checked'], 'file')}: "
               f"{state}")
