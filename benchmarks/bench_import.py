"""Import cost: ``import dpcore`` and ``import dpcore.release`` against ``import numpy``.

Each statement runs in a fresh interpreter that times it with ``time.perf_counter`` (so the
interpreter's own start-up is left out); the statements take turns, round after round, so a
busy machine slows them alike, and the table gives the median over the rounds. Ratio = median
/ the median of ``import numpy`` in the same run (issue 31 point 2: ``import dpcore.release``
should cost at most 1.5 times ``import numpy``).

Two settings of the bytecode cache:

``cached``
    As an installed package runs: compiled ``.pyc`` files are kept (in a private
    ``PYTHONPYCACHEPREFIX`` directory, filled by a first untimed round, so nothing is
    written into the source tree).
``source``
    ``PYTHONDONTWRITEBYTECODE=1`` with no cache, as in this repository's development
    sessions: every dpcore module is compiled from source on each import (numpy and scipy
    keep the ``.pyc`` files installed with them).

``from dpcore.release import *`` resolves every public name of the release package, that is
every pipeline and its dependencies: the cost of actually using it.

Run ``python -m benchmarks.bench_import [ROOT]`` to time the ``dpcore`` under ``ROOT``
(default: this repository), e.g. a ``git archive`` of an older commit for a before/after.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

#: Statements timed, each in its own fresh interpreter; the first is the baseline.
STATEMENTS = (
    "import numpy",
    "import scipy",
    "import scipy.special",
    "import scipy.stats",
    "import dpcore",
    "import dpcore.release",
    "from dpcore.release import *",
)

_PROGRAM = (
    "import time\n"
    "start = time.perf_counter()\n"
    "{statement}\n"
    "print(repr(time.perf_counter() - start))\n"
)


def _environment(cache_dir):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPATH")}
    if cache_dir is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(cache_dir)
    return env


def time_statement(statement, *, root=ROOT, env=None):
    """Seconds ``statement`` takes in a fresh interpreter started in ``root``.

    Parameters
    ----------
    statement : str
        Python source, e.g. ``"import numpy"``.
    root : path-like
        Working directory of the interpreter (on its ``sys.path`` first, so its ``dpcore``
        is the one imported).
    env : dict, optional
        Environment of the interpreter (default: this process's).

    Returns
    -------
    float
        The time ``statement`` took, measured inside the interpreter.
    """
    out = subprocess.run([sys.executable, "-c", _PROGRAM.format(statement=statement)],
                         cwd=root, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_times(statements=STATEMENTS, *, root=ROOT, rounds=15, cached=True):
    """Median import time of each statement over ``rounds`` rounds of fresh interpreters.

    Parameters
    ----------
    statements : sequence of str
        Statements to time; the first is the baseline of the ratios.
    root : path-like
        Directory holding the ``dpcore`` to import.
    rounds : int
        Fresh interpreters per statement; the statements alternate within a round.
    cached : bool
        Keep compiled bytecode in a private cache (filled by an untimed round) if true;
        compile every dpcore module from source if false.

    Returns
    -------
    pandas.DataFrame
        Indexed by statement: ``median_ms``, ``min_ms`` and ``ratio_to_numpy`` (median over
        the first statement's median).
    """
    with tempfile.TemporaryDirectory() as tmp:
        env = _environment(Path(tmp) if cached else None)
        for statement in statements:  # untimed: fills the cache, warms the file system
            time_statement(statement, root=root, env=env)
        samples = {s: [] for s in statements}
        for _ in range(rounds):
            for statement in statements:
                samples[statement].append(time_statement(statement, root=root, env=env))
    base = statistics.median(samples[statements[0]])
    rows = [{"statement": s, "median_ms": round(1e3 * statistics.median(t), 1),
             "min_ms": round(1e3 * min(t), 1),
             "ratio_to_numpy": round(statistics.median(t) / base, 2)}
            for s, t in samples.items()]
    return pd.DataFrame(rows).set_index("statement")


def main(root=ROOT, rounds=15):
    """Both cache settings side by side (``cached`` and ``source``), one row per statement."""
    cached = import_times(root=root, rounds=rounds, cached=True)
    source = import_times(root=root, rounds=rounds, cached=False)
    return pd.concat({"cached": cached, "source": source}, axis=1)


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else ROOT).to_string())
