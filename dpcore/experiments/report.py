r"""Regenerate the papers' figures and write a self-contained HTML report.

Run from the repository root::

    python -m dpcore.experiments.report [--quick] [--out reports] [--n-jobs 2] [--seed 2024]

(``make reproduce`` and ``make reproduce QUICK=1`` do this). The report goes to
``<out>/index.html``: every figure as an embedded plotly chart (plotly.js is included once, so the
file opens offline), the numbers behind each figure as CSV files beside it, a table of our numbers
next to the papers' with a sentence on each difference, the qualitative facts of the papers with
the margins by which they hold, and the time each figure took (also printed to stdout).

Two configurations: :data:`FULL` follows the papers' protocols with fewer replicates, shorter
chains and, for the slow manifolds (SPD(2), Kendall), fewer private draws per budget, so that the
whole run takes under 15 minutes on two cores; :data:`QUICK` (under 2 minutes, run in CI) shrinks
every study further and chooses sizes and budgets so that each qualitative fact holds by a wide
margin (see the report's "Qualitative facts" section).

The figures are drawn by :mod:`dpcore.visualization` (plotly only), the builders the dashboard
uses too; the report needs plotly but not the dashboard.

The sections themselves, one module per paper, are in :mod:`dpcore.experiments.sections`; this
module holds the two configurations, the list of sections, the HTML writer, :func:`build_report`
and the command line.

Parallelism: by default two joblib (loky) workers, one pool that serves every section (started by
the first, reused by the others). The jobs of a study travel in chunks, and a section made of
several studies (paper 001 fig. 1) runs them as plans sharing each parallel call
(:mod:`dpcore.experiments._parallel`); ``python -m benchmarks.bench_parallel`` times the biggest
figures in process and with two workers (the issue's target: at least 1.5 times faster).
Results do not depend on ``--n-jobs``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .budget import PAPER_TOTAL, default_eps_p_grid
from .sections._common import NOISE_Z, Section
from .sections.p001 import sec_p001_fig1
from .sections.p002 import (
    sec_p002_fig1,
    sec_p002_fig2,
    sec_p002_fig3,
    sec_p002_fig5,
    sec_p002_fig6,
    sec_p002_fig7,
    sec_p002_fig8,
    sec_p002_fig9_10,
)
from .sections.p004 import sec_p004_fig1
from .sections.wine import sec_wine

__all__ = ["FULL", "QUICK", "Section", "build_report", "main"]


def _ratio_grid(total, low_ratio, size):
    """ε_p values splitting ``total`` with ε_p/ε_v log-spaced from ``low_ratio`` to its inverse."""
    r = np.geomspace(low_ratio, 1.0 / low_ratio, size)
    return tuple(float(v) for v in total * r / (1.0 + r))


#: Settings of the full reproduction (paper protocols, reduced where noted in the report).
FULL = {
    "name": "full",
    "fig1": {"sizes": (20, 50, 100), "total": PAPER_TOTAL,
             "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 9)),
             "equal_totals": tuple(np.round(np.linspace(0.2, 2.0, 10), 10)), "replicates": 8,
             "draws": (10, 10), "chain": (300, 200)},
    "fig2": {"total": PAPER_TOTAL, "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 5)),
             "equal_totals": (0.2, 0.8, 1.4, 2.0), "replicates": 2, "draws": (4, 4),
             "chain": (300, 200)},
    "fig3": {"ages": (14, 30, 60, 90, 150), "eps": 0.3, "n_draws": 3, "chain": (1000, 500)},
    "fig5": {"noises": (0.01, 0.1), "n": 50, "totals": None, "chain": (500, 300)},
    "fig6": {"noises": (0.001, 0.01, 0.1), "n": 50, "totals": None, "replicates": 4,
             "draws": (5, 5), "chain": (300, 200)},
    "fig7": {"sizes": (20, 50, 100), "total": PAPER_TOTAL,
             "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 5)),
             "equal_totals": (0.2, 0.8, 1.4, 2.0), "replicates": 3, "draws": (4, 4),
             "chain": (300, 200)},
    "fig8": {"n": 50, "eps": 0.2, "n_covariates": 6, "n_draws": 3, "chain": (2000, 1000)},
    "fig9": {"sizes": (20, 50, 100), "pairs": 20},
    "p001": {"sizes": (10, 20, 40, 70, 100), "sens_replicates": 30, "replicates": 200,
             "kng_replicates": 10, "kng_chain": (300, 200), "epsilon": 1.0,
             "mechanisms": {"spd": ("laplace", "ambient_laplace"),
                            "sphere": ("laplace", "ambient_laplace", "gaussian")}},
    "p004": {"sigmas": tuple(k / 4 for k in range(1, 17)), "mc_replicates": 4,
             "tails_replicates": 2, "n_samples": 1000, "n_eps": 1000, "repeats": 100,
             "panel3_n": 10, "panel3_sigmas": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
             "panel3_replicates": 300},
    "wine": {"replicates": 200, "opacus_replicates": 20},
}

#: Settings of the quick run (CI): smaller everything; budgets and sizes chosen so that each
#: qualitative fact holds by a wide margin.
QUICK = {
    "name": "quick",
    "fig1": {"sizes": (20, 100), "total": 1.0, "eps_p_grid": _ratio_grid(1.0, 1 / 30, 5),
             "equal_totals": (0.2, 0.45, 1.0), "replicates": 2, "draws": (5, 5),
             "chain": (300, 200)},
    "fig2": {"total": PAPER_TOTAL, "eps_p_grid": _ratio_grid(PAPER_TOTAL, 1 / 30, 3),
             "equal_totals": (0.4, 2.0), "replicates": 1, "draws": (2, 2), "chain": (100, 100)},
    "fig3": {"ages": (14, 30, 60, 90, 150), "eps": 0.3, "n_draws": 1, "chain": (300, 200)},
    "fig5": {"noises": (0.01, 0.1), "n": 50, "totals": (0.2, 1.0, 2.0), "chain": (300, 200)},
    "fig6": {"noises": (0.001, 0.01, 0.1), "n": 50, "totals": (0.2, 0.6, 2.0), "replicates": 1,
             "draws": (3, 3), "chain": (300, 200)},
    "fig7": {"sizes": (20, 100), "total": PAPER_TOTAL,
             "eps_p_grid": _ratio_grid(PAPER_TOTAL, 1 / 30, 3), "equal_totals": (0.4, 2.0),
             "replicates": 1, "draws": (2, 2), "chain": (100, 100)},
    "fig8": {"n": 50, "eps": 0.2, "n_covariates": 6, "n_draws": 1, "chain": (300, 200)},
    "fig9": {"sizes": (20, 100), "pairs": 5},
    "p001": {"sizes": (10, 100), "sens_replicates": 20, "replicates": 150,
             "kng_replicates": 5, "kng_chain": (200, 100), "epsilon": 1.0,
             "mechanisms": {"spd": ("laplace", "ambient_laplace"),
                            "sphere": ("laplace", "ambient_laplace", "gaussian")}},
    "p004": {"sigmas": (0.25, 0.5, 1.0, 2.0, 4.0), "mc_replicates": 2, "tails_replicates": 1,
             "n_samples": 500, "n_eps": 500, "repeats": 20, "panel3_n": 10,
             "panel3_sigmas": (0.25, 1.0, 3.0), "panel3_replicates": 150},
    "wine": {"replicates": 50, "opacus_replicates": 5},
}


SECTIONS = (
    ("p002_fig1", sec_p002_fig1),
    ("p002_fig2", sec_p002_fig2),
    ("p002_fig3", sec_p002_fig3),
    ("p002_fig5", sec_p002_fig5),
    ("p002_fig6", sec_p002_fig6),
    ("p002_fig7", sec_p002_fig7),
    ("p002_fig8", sec_p002_fig8),
    ("p002_fig9_10", sec_p002_fig9_10),
    ("p001_fig1", sec_p001_fig1),
    ("p004_fig1", sec_p004_fig1),
    ("wine", sec_wine),
)


# ------------------------------------------------------------------------ HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1150px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.8em}h2{margin-top:2.2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:1em 0;font-size:.92em;width:100%}
th,td{border:1px solid #ccc;padding:.35em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}.ok{color:#0a7a2f;font-weight:600}.no{color:#b00020;font-weight:600}
.protocol{background:#f8f8f8;border-left:3px solid #999;padding:.5em .8em}
.small{font-size:.85em;color:#555}
"""


def _table_html(rows, columns):
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            v = r[c]
            if isinstance(v, bool | np.bool_):
                cells.append(f"<td class='{'ok' if v else 'no'}'>{'yes' if v else 'NO'}</td>")
            elif isinstance(v, float):
                cells.append(f"<td>{v:.3g}</td>")
            else:
                cells.append(f"<td>{html.escape(str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _write_html(path, sections, config, seed, n_jobs, total_seconds):
    parts = []
    plotly_included = False
    comparison = [r for s in sections for r in s.comparison]
    facts = [f.as_row() for s in sections for f in s.facts]
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    flag = " --quick" if config["name"] == "quick" else ""
    parts.append(f"<h1>Reproducing the papers with dpcore</h1><p class='small'>Generated {now} "
                 f"by <code>python -m dpcore.experiments.report{flag}</code>; configuration "
                 f"<b>{config['name']}</b>, seed {seed}, "
                 f"{n_jobs} job(s), dpcore {__version__}, total {total_seconds:.0f} s. "
                 "Every figure's numbers are in the CSV files beside this page.</p>")
    parts.append("<h2 id='summary'>Our numbers beside the papers'</h2>")
    parts.append(_table_html(comparison, ["figure", "paper", "ours", "difference"]))
    parts.append("<h2 id='facts'>Qualitative facts</h2><p>The papers' qualitative claims, "
                 "checked on this run (margins: the smallest amount by which the claim holds, "
                 "negative when it fails; see <code>dpcore.experiments.facts</code>). Trends "
                 f"over n and over ε count a step the wrong way as a failure only when it "
                 f"exceeds {NOISE_Z:g} standard errors of the replicates (smaller ones are "
                 "Monte Carlo noise and are listed in the detail); with one replicate every "
                 "step counts.</p>")
    parts.append(_table_html(facts, ["fact", "holds", "margin", "unit", "detail"]))
    parts.append("<h2 id='timings'>Timings</h2>")
    parts.append(_table_html([{"figure": s.key, "title": s.title, "seconds": s.seconds}
                              for s in sections], ["figure", "title", "seconds"]))
    for s in sections:
        parts.append(f"<h2 id='{s.key}'>{html.escape(s.title)}</h2>")
        parts.append(f"<p class='protocol'>{html.escape(s.protocol)}</p>")
        for fig in s.figures:
            parts.append(fig.to_html(full_html=False, include_plotlyjs=not plotly_included,
                                     config={"displaylogo": False}))
            plotly_included = True
        links = " · ".join(f"<a href='{s.key}_{name}.csv'>{s.key}_{name}.csv</a>"
                           for name in s.tables)
        parts.append(f"<p class='small'>Data: {links}. Time: {s.seconds:.1f} s.</p>")
        for r in s.comparison:
            parts.append(f"<p><b>Difference from the paper ({html.escape(r['figure'])}).</b> "
                         f"{html.escape(r['difference'])}</p>")
    doc = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
           "<meta name='viewport' content='width=device-width, initial-scale=1'>"
           f"<title>dpcore: reproducing the papers</title><style>{_CSS}</style></head><body>"
           + "\n".join(parts) + "</body></html>")
    Path(path).write_text(doc, encoding="utf-8")


def build_report(out="reports", *, quick=False, seed=2024, n_jobs=None, only=None,
                 stream=None):
    """Run the studies and write ``<out>/index.html`` with CSVs beside it.

    Parameters
    ----------
    out : str or pathlib.Path
        Output directory (created if missing).
    quick : bool
        Use :data:`QUICK` instead of :data:`FULL`.
    seed : int
        Seed of the whole report; each section derives its own child from it and its key.
    n_jobs : int, optional
        joblib workers (default: the number of CPUs, at most 2).
    only : sequence of str, optional
        Keys of the sections to run (default all, see :data:`SECTIONS`).
    stream : file-like, optional
        Where per-figure timings are printed (default: standard output).

    Returns
    -------
    list of Section
    """
    config = QUICK if quick else FULL
    if stream is None:
        stream = sys.stdout
    if n_jobs is None:
        n_jobs = max(1, min(2, os.cpu_count() or 1))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [(k, f) for k, f in SECTIONS if only is None or k in set(only)]
    if only is not None and len(chosen) != len(set(only)):
        unknown = sorted(set(only) - {k for k, _ in SECTIONS})
        raise ValueError(f"Unknown section(s) {unknown}; choose from {[k for k, _ in SECTIONS]}.")
    sections = []
    start = time.perf_counter()
    print(f"[reproduce] configuration {config['name']}, seed {seed}, {n_jobs} job(s)",
          file=stream, flush=True)
    for key, func in chosen:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sec = func(config, seed, n_jobs)
        sec.seconds = time.perf_counter() - t0
        for name, table in sec.tables.items():
            table.to_csv(out / f"{key}_{name}.csv", index=False)
        sections.append(sec)
        print(f"[reproduce] {key:<13} {sec.seconds:7.1f} s  {sec.title}", file=stream,
              flush=True)
    total = time.perf_counter() - start
    pd.DataFrame([r for s in sections for r in s.comparison]).to_csv(out / "comparison.csv",
                                                                      index=False)
    pd.DataFrame([f.as_row() for s in sections for f in s.facts]).to_csv(out / "facts.csv",
                                                                         index=False)
    pd.DataFrame([{"figure": s.key, "seconds": round(s.seconds, 2)} for s in sections]).to_csv(
        out / "timings.csv", index=False)
    _write_html(out / "index.html", sections, config, seed, n_jobs, total)
    print(f"[reproduce] total         {total:7.1f} s  -> {out / 'index.html'}", file=stream,
          flush=True)
    failed = [f for s in sections for f in s.facts if not f.holds]
    for f in failed:
        print(f"[reproduce] fact does not hold: {f.name} ({f.detail})", file=stream, flush=True)
    return sections


def main(argv=None):
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m dpcore.experiments.report",
                                     description="Reproduce the papers' figures as an HTML "
                                                 "report.")
    parser.add_argument("--quick", action="store_true", help="small, fast configuration (CI)")
    parser.add_argument("--out", default="reports", help="output directory (default: reports)")
    parser.add_argument("--n-jobs", type=int, default=None, help="joblib workers (default 2)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the whole report")
    parser.add_argument("--only", default=None,
                        help="comma-separated section keys, e.g. p002_fig1,wine")
    parser.add_argument("--scheduler", default=os.environ.get("DPCORE_DASK_SCHEDULER"),
                        help="address of a running Dask scheduler (default: the environment "
                             "variable DPCORE_DASK_SCHEDULER); the sweeps' cells then run on "
                             "that cluster, with results identical to one process")
    args = parser.parse_args(argv)
    only = None if args.only is None else [s.strip() for s in args.only.split(",") if s.strip()]
    if not args.scheduler:
        build_report(args.out, quick=args.quick, seed=args.seed, n_jobs=args.n_jobs, only=only)
        return 0
    import joblib
    from dask.distributed import Client

    with Client(args.scheduler) as client, joblib.parallel_config(backend="dask"):
        workers = max(1, sum(client.nthreads().values()))
        print(f"[reproduce] Dask scheduler {args.scheduler}: {workers} worker thread(s)",
              flush=True)
        build_report(args.out, quick=args.quick, seed=args.seed,
                     n_jobs=args.n_jobs or workers, only=only)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
