"""The HTML report in a real browser: headless Chromium loads it, every plot decodes, and
the screenshot shows them (not a blank page)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.report import report_document, write_report
from migration_evals.gate.report.plots import PLOTTERS
from tests.conftest import require_service
from tests.gate.ledgers import append, balanced

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
MARKER = (0x15, 0x65, 0xC0)  # the pass-rate plot's markers and interval bars


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def _near(rgb: tuple[int, int, int], target: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 8 for a, b in zip(rgb, target, strict=True))


@pytest.mark.browser
def test_the_report_renders_in_chromium(store: Store, gate_specs: SpecSet, tmp_path: Path) -> None:
    require_service("chromium", Path(CHROMIUM).exists(), "apt-get install chromium")
    append(store, gate_specs, balanced(per_bucket=12))
    evaluation = evaluate(store, gate_specs)
    document = report_document(evaluation, check(evaluation), "now")
    files = write_report(document, tmp_path / "r")
    url = files.html.resolve().as_uri()

    dom = _chromium(tmp_path / "p1", "--virtual-time-budget=10000", "--dump-dom", url).stdout
    loaded = re.search(r'data-images="(\d+)/(\d+)"', dom)
    assert loaded, "the page's load handler did not run"
    drawn = len(document["plots"])  # no gold and no strict trial: two plots are left out
    assert drawn == len(PLOTTERS) - 2
    assert loaded.groups() == (str(drawn), str(drawn))

    boxes = re.search(r'data-plot-boxes="([^"]*)"', dom)
    assert boxes
    x, y, width, height = (int(v) for v in boxes.group(1).split(";")[0].split(","))
    assert width > 300 and height > 150

    shot = tmp_path / "shot.png"
    _chromium(tmp_path / "p2", f"--window-size=1280,{y + height + 50}", f"--screenshot={shot}", url)
    image = Image.open(io.BytesIO(shot.read_bytes())).convert("RGB")
    plot = image.crop((x, y, x + width, y + height))
    colours = plot.getcolors(maxcolors=1 << 24) or []
    white = sum(n for n, rgb in colours if min(rgb) >= 250)
    assert len(colours) > 100, "the first plot's area is (nearly) uniform"
    assert white < 0.97 * width * height, "the first plot's area is blank"
    markers = sum(n for n, rgb in colours if _near(rgb, MARKER))
    assert markers > 50, "the pass-rate markers are not in the plot area"
