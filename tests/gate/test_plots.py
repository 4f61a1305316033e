"""The plots' labels never collide: contamination headings sit inside the plot, above their
two buckets, however long the model names and however many models."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from migration_evals.gate.report import plots


def _bucket(passed: int, graded: int) -> dict[str, Any]:
    rate = passed / graded if graded else None
    return {
        "passed": passed,
        "graded": graded,
        "rate": rate,
        "wilson_95": [max(0, (rate or 0) - 0.2), min(1, (rate or 0) + 0.2)],
    }


def _document(models: int) -> dict[str, Any]:
    checks = {
        f"a-very-long-model-name-{n}-2026-preview-with-a-suffix": {
            "status": "insufficient data" if n % 2 else "clear",
            "pre_cutoff": _bucket(n, 10),
            "post_cutoff": _bucket(10 - n, 10) if n % 3 else _bucket(0, 0),
        }
        for n in range(models)
    }
    return {"numbers": {"contamination": checks}, "publishable": False}


@pytest.mark.parametrize("models", [1, 3, 8])
def test_contamination_labels_never_collide(models: int) -> None:
    figure = plots.contamination(_document(models))
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    (axes,) = figure.axes
    labels = [t for t in axes.get_yticklabels() if t.get_text()]
    texts = [t for t in axes.texts if t.get_text()]
    headings = [t for t in texts if t.get_text().startswith("a-very-long")]
    assert len(headings) == models and len(labels) == 2 * models
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in [*labels, *texts]]
    for (one, a), (other, b) in combinations(boxes, 2):
        assert not a.overlaps(b), f"{one!r} overlaps {other!r}"
    plot_area = axes.get_window_extent(renderer)
    for heading in headings:
        box = heading.get_window_extent(renderer)
        assert plot_area.x0 <= box.x0 and box.x1 <= figure.bbox.x1  # over the plot, not the ticks
