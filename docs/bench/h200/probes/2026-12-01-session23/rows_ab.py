"""The benchmark harness at row counts its grid does not hold (session 23, call 4).

Takes the harness's own flags; ``--rows`` and ``--hidden`` here name any T and H, and the plain
and residual cases of every pair are timed (BF16 weights) the way the harness times its grid.
Usage, from the repository root (the harness's --out, --only, --candidates ... as usual):
python3 docs/bench/h200/probes/2026-12-01-session23/rows_ab.py --rows 48,128 --hidden 6144 ...
"""

import dataclasses
import sys

from benchmarks.rmsnorm import shapes
from benchmarks.rmsnorm.__main__ import build_parser, make_config
from benchmarks.rmsnorm.runner import run


def main() -> None:
    """Runs the harness over plain and residual cases of the given rows and hidden sizes."""
    argv = sys.argv[1:]
    args = build_parser().parse_args(argv)
    rows = shapes.parse_int_list(args.rows, "--rows")
    hidden = shapes.parse_int_list(args.hidden, "--hidden")
    families = shapes.parse_choice_list(args.families, "--families", shapes.FAMILIES)
    cases = [shapes.plain_case(t, h) for h in hidden for t in rows]
    if families is None or "residual" in families:
        cases += [shapes.residual_case(t, h) for h in hidden for t in rows]
    args.rows = args.hidden = args.families = None  # the grid filter would drop these rows
    config = dataclasses.replace(make_config(args, argv), cases=cases)
    run(config)


if __name__ == "__main__":
    main()
