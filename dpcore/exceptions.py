"""Every warning and error class of dpcore, in one place.

The classes are importable from here and, for convenience, from where they are used:
:class:`CutLocusError` from :mod:`dpcore.manifolds`, :class:`ConvergenceWarning` from
:mod:`dpcore.learning`, :class:`LimitExceededError` from :mod:`dpcore.settings` and
:class:`DataValidationError` from :mod:`dpcore.data`. This module imports nothing from dpcore
(``tests/test_architecture.py`` checks that no other module defines an exception class).

* :class:`CutLocusError` (``ValueError``): two points are conjugate, so ``log`` and
  ``transport`` are undefined (antipodal points on the sphere, orthogonal shapes);
* :class:`ConvergenceWarning` (``UserWarning``): an iterative estimator stopped before its
  tolerance;
* :class:`LimitExceededError` (``ValueError``): a requested size is above a resource limit of
  :mod:`dpcore.settings`;
* :class:`PrivacyLeakWarning` (``UserWarning``): a quantity the guarantee depends on came from
  the data;
* :class:`PrivacyBudgetError` (``ValueError``): a release would break or exceed its guarantee;
* :class:`ApproximatePrivacyWarning` (``UserWarning``): a release is only approximately
  private (MCMC sampler or Monte Carlo calibration);
* :class:`ExactSamplingUnavailable` (``ValueError``): no exact sampler, or one beyond the work
  limit;
* :class:`WorkBudgetError` (``ValueError``): a request's estimated run time is above the
  work budget of :mod:`dpcore.release.work`;
* :class:`EnvelopeViolation` (``RuntimeError``): a rejection sampler met a point where its
  proven envelope is below the target (a bug: the draw would not be exact, so it is refused);
* :class:`DataValidationError` (``ValueError``): a data file has problems, each named by row
  and column.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

__all__ = [
    "ApproximatePrivacyWarning",
    "ConvergenceWarning",
    "CutLocusError",
    "DataValidationError",
    "EnvelopeViolation",
    "ExactSamplingUnavailable",
    "LawOutsideSupport",
    "LimitExceededError",
    "PrivacyBudgetError",
    "PrivacyLeakWarning",
    "Problem",
    "WorkBudgetError",
]

#: At most this many problems are listed in one :class:`DataValidationError`.
MAX_PROBLEMS = 20
ROW_NOTE = (
    "Rows are numbered as in a spreadsheet: the header is row 1 and the first data row is "
    "row 2 (row N is line N of the file)."
)


# ------------------------------------------------------------------ geometry and estimators
class CutLocusError(ValueError):
    """Raised when two points are (numerically) conjugate along the geodesic in use.

    On the sphere this means antipodal points, on Kendall shape space orthogonal shapes:
    the minimizing geodesic is not unique there, so ``log`` and ``transport`` are undefined.
    """


class ConvergenceWarning(UserWarning):
    """An iterative estimator stopped before reaching its tolerance."""


# ------------------------------------------------------------------ resource limits
class LimitExceededError(ValueError):
    """A requested size is above one of the limits of :class:`dpcore.settings.Limits`.

    Raised by :func:`dpcore.settings.check_limit`.

    Parameters
    ----------
    name : str
        The limit (a field of :class:`dpcore.settings.Limits`, e.g. ``"max_replicates"``).
    value : int or float
        The requested size.
    limit : int
        The value of the limit.
    env_var : str, optional
        The environment variable that changes the limit; by default ``DPCORE_`` followed by
        ``name`` in capitals (the convention of :data:`dpcore.settings.ENV_VARS`).
    what : str, optional
        What the limit counts (e.g. ``"private draws per request"``), shown in the message.

    Attributes
    ----------
    name, value, limit
        As passed.
    env_var : str
        The environment variable that changes the limit.
    """

    def __init__(self, name: str, value, limit: int, *, env_var: str | None = None,
                 what: str | None = None):
        self.name = name
        self.value = value
        self.limit = limit
        self.env_var = env_var if env_var is not None else f"DPCORE_{name.upper()}"
        shown = f"{value:,}" if isinstance(value, numbers.Integral) else f"{value:,.6g}"
        counted = f" ({what})" if what else ""
        super().__init__(
            f"{shown} exceeds the limit {name}={limit:,}{counted}. Ask for less, or, to change "
            f"the limit, set the environment variable {self.env_var} (e.g. "
            f"{self.env_var}={2 * limit}) and restart the app."
        )


# ------------------------------------------------------------------ privacy
class PrivacyLeakWarning(UserWarning):
    """A quantity the privacy guarantee depends on was taken from the private data.

    The release is then *not* differentially private as stated; it reproduces the papers'
    experiments (``mode="paper"``) or previews a release whose bounds must still be fixed publicly.
    """


class PrivacyBudgetError(ValueError):
    """A release was refused because it would break or exceed its privacy guarantee."""


class ApproximatePrivacyWarning(UserWarning):
    """A release is only approximately private: its sampler (MCMC) or its calibration (Monte
    Carlo) is not covered by a proof, so its label says "approximately private"."""


class ExactSamplingUnavailable(ValueError):
    """An exact sampler was asked for where none exists, or where its public worst-case cost
    exceeds the work limit; the message says which and what to do."""


class EnvelopeViolation(RuntimeError):
    """A rejection sampler found its envelope below the target at a proposal.

    The envelope is an upper bound by proof (:mod:`dpcore.sampling.envelope`); a violation
    means the proof's premises failed (e.g. a wrong Lipschitz constant), so the sampler's draws
    would not follow the mechanism's law. It is raised, never only counted.
    """


class LawOutsideSupport(RuntimeError):
    """An asymptotic law (a prediction, :mod:`dpcore.experiments.budget_law`) puts almost no
    mass on the mechanism's public support: no prediction is made from it."""


class WorkBudgetError(ValueError):
    """A request was refused before running: its estimated time exceeds the work budget
    (:mod:`dpcore.release.work`). The message gives the estimate and what to reduce.

    Attributes
    ----------
    seconds : float
        Estimated run time of the request.
    budget : float
        The budget it exceeds, in seconds.
    estimate : object
        The :class:`~dpcore.release.work.WorkEstimate`.
    """

    def __init__(self, message, *, seconds=None, budget=None, estimate=None):
        super().__init__(message)
        self.seconds = seconds
        self.budget = budget
        self.estimate = estimate


# ------------------------------------------------------------------ data validation
class Problem(NamedTuple):
    """One problem found in the data.

    Attributes
    ----------
    row : int or None
        Spreadsheet row number (header = 1, first data row = 2); None for file-level problems.
    column : str or None
        Column name as expected by the format; None when the problem is not about one column.
    message : str
        What is wrong and how to fix it.
    """

    row: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        parts = []
        if self.row is not None:
            parts.append("Header (row 1)" if self.row == 1 else f"Row {self.row}")
        if self.column is not None:
            parts.append(f"column '{self.column}'")
        if not parts:
            return self.message[:1].upper() + self.message[1:]
        loc = ", ".join(parts)
        return f"{loc[:1].upper()}{loc[1:]}: {self.message}"


class DataValidationError(ValueError):
    """The data could not be loaded; every problem found is listed with its row and column.

    Raised by :func:`dpcore.data.read_table` and :func:`dpcore.data.load_csv` (importable from
    :mod:`dpcore.data` too).

    Parameters
    ----------
    problems : str or sequence of (row, column, message)
        A single message (then ``row`` and ``column`` locate it) or a list of problems.
    row : int, optional
        Spreadsheet row number of a single problem (header = row 1, first data row = row 2).
    column : str, optional
        Column name of a single problem.
    n_problems : int, optional
        Total number of problems found when only the first ones are passed.

    Attributes
    ----------
    problems : list of Problem
        ``(row, column, message)`` tuples, at most :data:`MAX_PROBLEMS` of them, in file order.
    n_problems : int
        How many problems were found in total (may exceed ``len(problems)``).
    row, column : int or str or None
        Location of the first problem (either may be None for file-level problems).
    """

    def __init__(self, problems, *, row=None, column=None, n_problems=None):
        if isinstance(problems, str):
            problems = [(row, column, problems)]
        items = [Problem(*p) for p in problems]
        if not items:
            raise ValueError("DataValidationError needs at least one problem.")
        self.problems = items[:MAX_PROBLEMS]
        self.n_problems = max(int(n_problems or 0), len(items))
        self.row = items[0].row
        self.column = items[0].column
        super().__init__(self._format())

    def _format(self) -> str:
        with_rows = any(p.row is not None and p.row > 1 for p in self.problems)
        if self.n_problems == 1:
            text = str(self.problems[0])
        else:
            lines = [f"Found {self.n_problems} problems in the data:"]
            lines += [f"- {p}" for p in self.problems]
            hidden = self.n_problems - len(self.problems)
            if hidden > 0:
                lines.append(f"... and {hidden} more not shown.")
            text = "\n".join(lines)
        return f"{text}\n{ROW_NOTE}" if with_rows else text
