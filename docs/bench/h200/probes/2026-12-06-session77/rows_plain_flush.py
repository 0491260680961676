"""Session 77: session 41's rows.py with the harness's L2 flush reduced to its plain zero_ (no
evict_last fill first), to see what the fill's evict_last lines do to a kernel's own L2 reuse.
  python rows_plain_flush.py <rows.py arguments>"""
import runpy
import sys
from pathlib import Path

from benchmarks.rmsnorm import timing

_init = timing.L2Flusher.__init__


def _plain_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self._pinned_fill = None
    self.method = "zero_ only (session 77 diagnostic)"


timing.L2Flusher.__init__ = _plain_init
rows = Path(__file__).resolve().parents[1] / "2026-12-03-session41" / "rows.py"
sys.argv = [str(rows)] + sys.argv[1:]
runpy.run_path(str(rows), run_name="__main__")
