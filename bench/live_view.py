"""What ``simulate --live`` costs over a plain run: the bundled image-typo story, and the maxUnavailable story
grown to 300 replicas, played at an unbounded speed into a terminal (a forced-terminal console writing to memory),
so only the drawing is measured.

Run: `.venv/bin/python bench/live_view.py`; prints the wall time of the plain run and of the live run.
"""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

from rich.console import Console

from rollwise.cli.live import run_live
from rollwise.cli.options import load_with_overrides
from rollwise.sim import Simulation

EXAMPLES = Path(__file__).resolve().parents[1] / "src/rollwise/examples"


def measure(path: Path) -> None:
    t0 = time.perf_counter()
    Simulation(load_with_overrides(str(path))).run()
    plain = time.perf_counter() - t0
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    t0 = time.perf_counter()
    run_live(load_with_overrides(str(path)), speed=1e12, console=console)
    live = time.perf_counter() - t0
    print(f"{path.name}: plain {plain:.2f} s, live {live:.2f} s, {len(out.getvalue()) // 1024} KiB drawn")


def main() -> None:
    measure(EXAMPLES / "image-typo-fixed.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        grown = Path(tmp) / "max-unavailable-300.yaml"
        text = (EXAMPLES / "max-unavailable-6.yaml").read_text()
        grown.write_text(text.replace("replicas: 6\n", "replicas: 300\n"))
        measure(grown)


if __name__ == "__main__":
    main()
