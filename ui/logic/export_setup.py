"""What an exported script says and writes about its setting (:mod:`ui.logic.export`): the
install line that makes it run, the name of the user's file, the dashboard's preset files and
a bounds estimate made under DP before the release.

The install line names this checkout by its absolute path: the dashboard runs from a checkout
(``app.py``, ``pages/`` and ``ui/`` are not packaged), and ``dpcore`` is not on a package index.
It is an editable install (``pip install -e "<checkout>[fast]"``), so the script runs the same
dpcore as the dashboard that wrote it (nothing is copied that could go stale; numba, the
``fast`` extra, gives the compiled path the dashboard has). Its dependencies come from PyPI or
the local pip cache; ``tests/ui/logic/test_export_fresh_env.py`` runs it in a fresh virtual
environment.

Streamlit-free.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import shlex
from pathlib import Path

import numpy as np

__all__ = [
    "DEFAULT_DATA_FILE",
    "ONE_STAGE_RUN",
    "TWO_STAGE_RUN",
    "REPOSITORY",
    "data_file_name",
    "estimate_lines",
    "install_line",
    "install_note",
    "notebook_from_script",
    "preset_file",
]

#: The checkout the dashboard runs from (holds ``pyproject.toml``).
REPOSITORY = Path(__file__).resolve().parents[2]
#: The path a script writes for uploaded data when the file's name is not known.
DEFAULT_DATA_FILE = "your_data.csv"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


def install_line(extras=("fast",), repository=None):
    """The shell command that installs dpcore for an exported script.

    Parameters
    ----------
    extras : sequence of str
        Extras of ``pyproject.toml`` to install (default the compiled path, ``fast``).
    repository : path, optional
        The checkout (default :data:`REPOSITORY`).

    Returns
    -------
    str
        ``python -m pip install -e '<checkout>[fast]'``, quoted for POSIX shells.
    """
    root = Path(repository or REPOSITORY).resolve()
    target = str(root) + (f"[{','.join(extras)}]" if extras else "")
    return f"python -m pip install -e {shlex.quote(target)}"


def install_note():
    """The docstring lines of a script that say how to install what it needs."""
    return ["Needs dpcore: in a fresh virtual environment (python -m venv dpcore-env, then",
            "activate it), install this dashboard's copy with its compiled path:",
            "",
            f"    {install_line()}",
            ""]


def data_file_name(name):
    """The path a script writes for its data file: for a preset of the dashboard
    (``assets/data/...``) its absolute path (:func:`preset_file`), for an uploaded file its
    base name (no folder, no control character: the file is put next to the script), or
    :data:`DEFAULT_DATA_FILE` when there is none.

    Parameters
    ----------
    name : str or None
        A preset's path, or the name the browser gave the uploaded file.

    Returns
    -------
    str
    """
    if not name:
        return DEFAULT_DATA_FILE
    if preset_file(name) != str(name):
        return preset_file(name)
    base = _UNSAFE.sub("", str(name).replace("\\", "/").rsplit("/", 1)[-1]).strip()
    return base if base not in ("", ".", "..") else DEFAULT_DATA_FILE


def preset_file(path):
    """Absolute path of a preset file of the dashboard (``assets/data/...``) for a script to
    read; any other path is returned unchanged (the user's own file, next to the script).

    Parameters
    ----------
    path : str

    Returns
    -------
    str
    """
    text = str(path)
    if text.replace("\\", "/").startswith("assets/data/") and (REPOSITORY / text).is_file():
        return str(REPOSITORY / text)
    return text


def estimate_lines(bounds_estimate):
    """The lines a script holds for bounds estimated under DP before its release.

    Parameters
    ----------
    bounds_estimate : mapping or None
        ``epsilon``: ε_b of the estimate (a release of its own, in the page's ledger);
        ``notes``: bound name -> the statement the release carries for it (as
        :func:`ui.logic.private_bounds.estimated_note` words it). None or no notes: no lines.

    Returns
    -------
    (list of str, list of str)
        The settings lines (``BOUNDS_EPSILON``, ``ESTIMATED``) and the lines after the
        release: its assumptions state the estimate (as on the page) and the total ε_b + ε is
        printed.

    Raises
    ------
    ValueError
        If ε_b is not a positive finite number.
    """
    if not bounds_estimate or not bounds_estimate.get("notes"):
        return [], []
    eps_b = float(bounds_estimate["epsilon"])
    if not (math.isfinite(eps_b) and eps_b > 0):
        raise ValueError(f"the bounds estimate's epsilon must be positive, got {eps_b!r}.")
    notes = {str(k): str(v) for k, v in bounds_estimate["notes"].items()}
    before = [
        "# Bounds estimated under DP before this release (a release of its own, recorded in "
        "the page's",
        "# ledger): the bounds named in ESTIMATED hold its ranges, rounded outward. Its budget "
        "adds to",
        "# this release's by sequential composition.",
        f"BOUNDS_EPSILON = {eps_b!r}",
        f"ESTIMATED = {notes!r}",
    ]
    after = [
        "# The release states the estimate in its assumptions, as on the page (a Release is",
        "# immutable: a copy with the notes added).",
        "from dataclasses import replace",
        "",
        "assumptions = {k: dict(v) if hasattr(v, \"items\") else v",
        "               for k, v in release.assumptions.items()}",
        "for name, note in ESTIMATED.items():",
        "    entry = assumptions.get(name)",
        "    if entry is not None and note:",
        "        entry[\"note\"] = f\"{entry['note']}; {note}\" if entry.get(\"note\") else note",
        "release = replace(release, assumptions=assumptions)",
        "print(\"bounds estimate epsilon_b:\", BOUNDS_EPSILON, \"total with this release:\",",
        "      BOUNDS_EPSILON + release.epsilon)",
    ]
    return before, after


# ----------------------------------------------------------- the frame of every script
def _header(title, *description):
    """The script's opening lines: its docstring (``title``, the ``description`` lines, the
    install line, how ``RELEASE_SEED`` works) and the setup cell's marker."""
    return ['"""' f"{title} scenario exported from the dpcore dashboard on "
            f"{_dt.date.today().isoformat()}.", "", *description, "", *install_note(),
            "RELEASE_SEED = None draws from OS entropy (for publication); a seed gives a "
            "reproducible demo.", '"""', "", "# %% Setup"]


def _array(value):
    return json.dumps(np.asarray(value, dtype=float).tolist())


def notebook_from_script(script):
    """A Jupyter notebook (nbformat 4 JSON text) with one cell per ``# %%`` section of
    ``script`` (the docstring becomes a markdown cell)."""
    head, _, rest = script.partition("# %%")
    doc = head.strip().strip('"').strip()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": doc}] if doc else []
    for part in ("# %%" + rest).split("# %%")[1:]:
        title, _, code = part.partition("\n")
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None,
                 "outputs": [], "source": f"# {title.strip()}\n{code.strip()}\n"})
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}, "cells": cells}
    for k, cell in enumerate(nb["cells"]):
        cell["id"] = f"cell-{k}"
    return json.dumps(nb, indent=1, ensure_ascii=False)


def _literal(value):
    if isinstance(value, np.ndarray) or (isinstance(value, (list, tuple)) and value
                                    and isinstance(value[0], (list, tuple, np.ndarray))):
        return f"np.array({_array(value)})"
    if isinstance(value, tuple):
        return repr(tuple(float(v) for v in value))
    if isinstance(value, (np.floating, np.integer)):
        return repr(value.item())
    return repr(value)


# The plan and the release of a one-stage script (the functional API) and of a two-stage one
# (its request, which runs both stages).
ONE_STAGE_RUN = (
    "# %% What will run (public inputs only)",
    "plan = plan_regression_sampler(",
    "    manifold, len(y), eps_p=SETTINGS[\"eps_p\"], eps_v=SETTINGS[\"eps_v\"],",
    "    tau=SETTINGS.get(\"tau\"), tau_m=SETTINGS.get(\"tau_m\"),",
    "    draws=SETTINGS[\"n_footpoints\"] * SETTINGS[\"n_vectors\"], mode=SETTINGS[\"mode\"],",
    "    scheme=SETTINGS[\"scheme\"], sampler=SETTINGS[\"sampler\"])",
    "print(\"sampler:\", \"exact\" if plan[\"exact\"] else \"MCMC\", \"->\",",
    "      plan[\"guarantee\"])",
    "",
    "# %% Release",
    "release = private_geodesic_regression(manifold, x, y, rng=RELEASE_SEED, **SETTINGS)",
)
TWO_STAGE_RUN = (
    "# %% What will run (public inputs only): a private centre (stage 1), then the geodesics",
    "# with the footpoint within footpoint_radius of it (stage 2); the budgets add up.",
    "request = TwoStageRegressionRequest(manifold, len(y), **SETTINGS)",
    "plan = request.plan()",
    "print(\"stage 1:\", \"exact\" if plan[\"stage1\"][\"exact\"] else \"MCMC\",",
    "      \"stage 2:\", \"exact\" if plan[\"stage2\"][\"exact\"] else \"MCMC\", \"->\",",
    "      plan[\"guarantee\"], \"total epsilon:\", request.epsilon)",
    "",
    "# %% Release",
    "release = request.run(x, y, rng=RELEASE_SEED)",
)
