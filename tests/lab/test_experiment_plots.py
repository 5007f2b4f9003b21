"""Plots are optional: without matplotlib an experiment still writes its numbers and says which
picture it left out (the README's main install has no matplotlib)."""

from __future__ import annotations

import sys

from lab import locomo_report, rag_report


def test_without_matplotlib_nothing_is_drawn_and_it_says_so(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    assert locomo_report.plot({}, str(tmp_path / "locomo.png")) is False
    assert rag_report.write_plots({}, tmp_path / "plots") == []
    err = capsys.readouterr().err
    assert "not drawn: matplotlib is not installed" in err and "[experiments]" in err
    assert list(tmp_path.iterdir()) == []


def test_with_matplotlib_the_plot_is_written(tmp_path):
    results = {
        "summaries": {
            "hybrid": {
                "1": {"R@10": 0.5},
                "overall": {"R@10": 0.6, "search_p50_ms": 3.0, "search_p95_ms": 9.0},
            }
        }
    }
    path = tmp_path / "locomo.png"
    assert locomo_report.plot(results, str(path)) is True
    assert path.stat().st_size > 1000
