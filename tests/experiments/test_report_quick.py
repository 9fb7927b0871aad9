"""`make reproduce QUICK=1`: the quick report runs end to end and writes what it promises.

The report is built once, with two joblib workers as ``make reproduce`` runs it, in a fresh
interpreter where importing the dashboard (``ui``) or Streamlit raises ``ImportError`` -- in the
interpreter and in each of its workers (:func:`tests.test_architecture.blocked_environment`) --
so the same build also is tests/test_architecture.py's dynamic check that the library builds
its report without the dashboard (DESIGN §1).
"""

import json
import re

import pandas as pd
import pytest

from tests.test_architecture import blocked_environment, run_blocked


@pytest.mark.slow
@pytest.mark.slow_first(18)
def test_quick_report_writes_html_and_csvs(tmp_path):
    out_dir = tmp_path / "report"
    out = run_blocked(f"""
        import json
        import os
        import re
        from pathlib import Path

        import sitecustomize
        from dpcore.experiments import report
        from dpcore.experiments._parallel import parallel_map

        out = Path({str(out_dir)!r})
        sections = report.build_report(out, quick=True, n_jobs=2)
        check_clean()
        # the workers that built it were blocked too (their probe runs in them, not here)
        probes = parallel_map(sitecustomize.probe, [()] * 8, 2)
        assert all(blocked for _, blocked in probes), probes
        assert os.getpid() not in {{pid for pid, _ in probes}}, probes
        check_clean()
        text = (out / "index.html").read_text(encoding="utf-8")
        n_figures = sum(len(s.figures) for s in sections)
        assert n_figures >= 15, n_figures
        assert len(re.findall(r"Plotly\\.newPlot\\(", text)) == n_figures
        print("figures", n_figures)
        print("SECTIONS " + json.dumps([{{"key": s.key, "figures": len(s.figures),
                                          "tables": list(s.tables)}} for s in sections]))
        """, timeout=600, env=blocked_environment(tmp_path / "site"))
    assert re.search(r"^figures \d+$", out, flags=re.MULTILINE)
    sections = json.loads(next(line for line in out.splitlines()
                               if line.startswith("SECTIONS "))[len("SECTIONS "):])

    index = out_dir / "index.html"
    assert index.exists()
    text = index.read_text(encoding="utf-8")
    # plotly.js is embedded exactly once; every figure is drawn from it.
    assert text.count("plotly.js v") == 1
    n_figures = sum(s["figures"] for s in sections)
    assert n_figures >= 15
    assert len(re.findall(r"Plotly\.newPlot\(", text)) == n_figures

    # Every figure the issue lists, each with its CSVs beside the page.
    keys = {s["key"] for s in sections}
    assert keys == {"p002_fig1", "p002_fig2", "p002_fig3", "p002_fig5", "p002_fig6",
                    "p002_fig7", "p002_fig8", "p002_fig9_10", "p001_fig1", "p004_fig1", "wine"}
    for s in sections:
        assert s["tables"]
        for name in s["tables"]:
            csv = out_dir / f"{s['key']}_{name}.csv"
            assert csv.exists() and csv.stat().st_size > 0
            assert f"{s['key']}_{name}.csv" in text
        # Per-figure timing printed to stdout.
        assert re.search(rf"\[reproduce\] {s['key']}\s+\d+\.\d s", out)

    comparison = pd.read_csv(out_dir / "comparison.csv")
    for number in ("0.873", "0.954", "7.856"):
        assert comparison["paper"].astype(str).str.contains(number).any()
    assert comparison["difference"].str.len().min() > 20

    facts = pd.read_csv(out_dir / "facts.csv")
    assert len(facts) >= 8
    assert facts["holds"].all(), facts.loc[~facts["holds"], ["fact", "detail"]].to_string()
    assert (out_dir / "timings.csv").exists()
