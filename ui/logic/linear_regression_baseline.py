"""diffprivlib's ``LinearRegression``, the Linear regression page's comparison, as a request.

The comparison is a release of the data of its own (it costs ε too). Described as dpcore's
releases are (:mod:`dpcore.release.requests`): a frozen, hashable object holding only public
inputs (the budget, the bounds, the mode and which bounds hold the data's range), whose
:meth:`DiffprivlibRequest.event` states, before any data are touched, what the release costs
and how it is labelled. The page's cost line and the ledger entry of the comparison both come
from that event (:class:`ui.release_panel.Companion`); :meth:`DiffprivlibRequest.fit_lines`
makes the release. No Streamlit here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpcore.privacy import PrivacyEvent
from dpcore.release.requests import group_privacy

__all__ = ["DiffprivlibRequest"]


@dataclass(frozen=True)
class DiffprivlibRequest:
    """diffprivlib's ``LinearRegression`` at a total ε with public bounds.

    Parameters
    ----------
    epsilon : float
        Its budget (the page gives it dpcore's total ε).
    covariate_range : (float, float) or None
        Public bounds of the covariate; None: taken from the data (paper mode).
    lower, upper : tuple of float
        The response box, one pair per response.
    mode : {"strict", "paper"}
        dpcore's mode: paper mode takes the bounds from the data.
    from_data : tuple of str
        The bounds that still hold the data's range (``bound_sources`` marked ``"data"``).
    """

    epsilon: float
    covariate_range: tuple | None
    lower: tuple
    upper: tuple
    mode: str = "strict"
    from_data: tuple = ()

    mechanism: ClassVar[str] = "diffprivlib LinearRegression"
    note: ClassVar[str] = "diffprivlib baseline"

    @classmethod
    def matching(cls, request, bounds):
        """The comparison of dpcore's ``request`` (a linear
        :class:`~dpcore.release.GeodesicRegressionRequest`): the same total ε and the same
        bounds (the page's ``bounds`` dict, :func:`ui.lr_bounds.bounds_widgets`)."""
        sources = bounds.get("bound_sources") or {}
        cr = bounds["covariate_range"]
        return cls(epsilon=float(request.eps_p + request.eps_v),
                   covariate_range=None if cr is None else (float(cr[0]), float(cr[1])),
                   lower=tuple(float(b[1]) for b in bounds["box"]),
                   upper=tuple(float(b[2]) for b in bounds["box"]), mode=request.mode,
                   from_data=tuple(sorted(k for k, v in sources.items() if v == "data")))

    @property
    def guarantee(self):
        """``"private"``, or ``"not private"`` when a bound comes from the data (paper mode,
        or a field still holding the data's range): the guarantee dpcore's release with the
        same bounds states."""
        return "not private" if self.mode == "paper" or self.from_data else "private"

    @property
    def label(self):
        from dpcore.release.record import DATA_BOUNDS_LABEL, LABELS

        if self.mode == "paper":
            return LABELS["not private"]
        if self.from_data:
            return DATA_BOUNDS_LABEL
        return "private (diffprivlib)"

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the release will cost, before it is made: pure ε-DP (δ = 0) at
        :attr:`epsilon`, with group privacy for ``rows`` rows per person.

        Returns
        -------
        PrivacyEvent
        """
        epsilon, delta, _ = group_privacy(self.epsilon, 0.0, None, rows)
        if int(rows) > 1 and not note:
            note = f"group privacy: {int(rows)} rows per person"
        return PrivacyEvent(epsilon=float(epsilon), delta=float(delta), mu=None,
                            guarantee=self.guarantee, label=self.label, source=source,
                            note=note)

    def fit_lines(self, x, y):
        """Make the release: diffprivlib's fit of ``y`` (n x d) on ``x`` (n,).

        Returns
        -------
        (intercept, coef) : two arrays of shape (d,)

        Raises
        ------
        ImportError
            When diffprivlib (or the scikit-learn it needs) cannot be imported.
        """
        from diffprivlib.models import LinearRegression

        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        d = y.shape[1]
        lo_x, hi_x = self.covariate_range or (float(x.min()), float(x.max()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LinearRegression(epsilon=self.epsilon, bounds_X=([lo_x], [hi_x]),
                                     bounds_y=(np.array(self.lower), np.array(self.upper)))
            model.fit(x[:, None], y)
        return (np.asarray(model.intercept_, dtype=float).reshape(d),
                np.asarray(model.coef_, dtype=float).reshape(d))
