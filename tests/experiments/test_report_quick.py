"""`make reproduce QUICK=1`: the quick report runs end to end and writes what it promises."""

import re

import pandas as pd
import pytest

from dpcore.experiments import report


@pytest.mark.slow
def test_quick_report_writes_html_and_csvs(tmp_path, capsys):
    sections = report.build_report(tmp_path, quick=True, n_jobs=2)
    out = capsys.readouterr().out

    index = tmp_path / "index.html"
    assert index.exists()
    text = index.read_text(encoding="utf-8")
    # plotly.js is embedded exactly once; every figure is drawn from it.
    assert text.count("plotly.js v") == 1
    n_figures = sum(len(s.figures) for s in sections)
    assert n_figures >= 15
    assert len(re.findall(r"Plotly\.newPlot\(", text)) == n_figures

    # Every figure the issue lists, each with its CSVs beside the page.
    keys = {s.key for s in sections}
    assert keys == {"p002_fig1", "p002_fig2", "p002_fig3", "p002_fig5", "p002_fig6",
                    "p002_fig7", "p002_fig8", "p002_fig9_10", "p001_fig1", "p004_fig1", "wine"}
    for s in sections:
        assert s.tables
        for name in s.tables:
            csv = tmp_path / f"{s.key}_{name}.csv"
            assert csv.exists() and csv.stat().st_size > 0
            assert f"{s.key}_{name}.csv" in text
        # Per-figure timing printed to stdout.
        assert re.search(rf"\[reproduce\] {s.key}\s+\d+\.\d s", out)

    comparison = pd.read_csv(tmp_path / "comparison.csv")
    for number in ("0.873", "0.954", "7.856"):
        assert comparison["paper"].astype(str).str.contains(number).any()
    assert comparison["difference"].str.len().min() > 20

    facts = pd.read_csv(tmp_path / "facts.csv")
    assert len(facts) >= 8
    assert facts["holds"].all(), facts.loc[~facts["holds"], ["fact", "detail"]].to_string()
    assert (tmp_path / "timings.csv").exists()
