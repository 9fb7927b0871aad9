r"""Privacy-audit contract every mechanism on every manifold satisfies (issue 29 point 8).

One contract class per audit concept, reused by every (manifold, mechanism) audit: a concrete
test class ``class TestSPDLaplace(MechanismAuditContract)`` supplies the specifics (oracle
densities, samplers, neighbour construction, ε, cases, seeds, draw counts, thresholds) as three
plain functions of a case's arguments, set as class attributes (``exact = _laplace_exact``; no
``self``), and inherits the three audits, whose assertions live here only:

* ``test_exact_log_density_ratio[case]`` — ``exact(*case)`` returns an :class:`Exact`: the
  sup over z of |log f_D(z) − log f_D′(z)| of the normalized oracle densities of adversarial
  neighbours D, D′, with its quadrature tolerance; asserted ≤ ε + tol (+ a stated float
  slack), with, where the spec states them, the quadrature converged (tol < tol_cap) and
  the sensitivity bound on the oracle's grid (sup |g_D − g_D′| ≤ Δ (1 + rtol)).
* ``test_blackbox_distinguisher[case]`` — ``distinguisher(*case)`` returns a
  :class:`Distinguisher` whose event thresholds are fixed from the oracle *before* its ``draw``
  callable takes the library's draws (returning :class:`Draws`: the oracle log-ratio statistic
  of both samples, the per-draw δ and the goodness-of-fit p-values tying the draws to the
  oracle). Asserted: at least ``n_gof`` p-values (2: both data sets; 0 only where a black box
  has no goodness-of-fit test, stated there), every p-value > the GoF level, and no certified
  (one-sided Clopper–Pearson at the audit's shared Bonferroni level,
  :mod:`tests.audit._manifold_draws`, or the level a distinguisher states) event
  A = {log f_D − log f_D′ > c} or mirror has P_D(A) − e^ε P_D′(A) > δ.
* ``test_blackbox_has_power[case]`` — ``broken(*case)`` is the same machinery on draws the
  audit takes itself from a mechanism with too little noise; asserted: a violation is
  certified (δ = 0).

The spec methods make their own manifold-specific assertions on the way (records of the
release, support of the draws, attained bounds); genuinely manifold-specific audits stay plain
tests in the manifold's file. ``cases`` / ``blackbox_cases`` / ``power_cases`` are the
argument tuples of the three methods (one pytest case each); an entry may be
``pytest.param(*args, marks=...)`` to mark one case (``slow_first(seconds)``, which
tests/conftest.py orders by), and class marks (``@pytest.mark.slow``) mark every audit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ._manifold_draws import ALPHA_EACH, GOF_ALPHA, certify


@dataclass
class Exact:
    """Outcome of one exact log-density-ratio computation."""

    label: str
    sup: float
    eps: float
    tol: float
    #: additive float round-off allowance on top of ε + tol
    slack: float = 0.0
    #: the quadrature must have converged: tol < tol_cap (None: not asserted)
    tol_cap: float | None = None
    #: sup over the oracle's grid of |g_D − g_D′| and its bound Δ (None: not asserted)
    pointwise: float | None = None
    delta: float | None = None
    rtol: float = 0.0


@dataclass
class Draws:
    """Oracle statistic log f_D − log f_D′ of both samples, per-draw δ, GoF p-values."""

    stat_d: Any
    stat_e: Any
    delta: float = 0.0
    pvalues: tuple = ()


@dataclass
class Distinguisher:
    """Events fixed before sampling, and the callable that then samples."""

    label: str
    thresholds: Any
    draw: Callable[[], Draws]
    eps: float
    alpha: float = ALPHA_EACH
    #: false-failure chance of each goodness-of-fit test (the sphere audit's budget differs)
    gof_alpha: float = GOF_ALPHA
    #: the fewest goodness-of-fit p-values the draws must carry (both data sets' draws tied to
    #: the oracle). 0 only where the black box has no goodness-of-fit test: the joint
    #: regressions of SPD(2) and H², whose Monte Carlo oracles are checked by the exact-ratio
    #: audit and the oracle checks of their files, not against the draws.
    n_gof: int = 2


def _case_id(case):
    return "-".join(f"{v}" for v in case) or "single"


_PARAM = type(pytest.param())


def _case(entry):
    """One entry of ``cases`` / ``blackbox_cases`` / ``power_cases`` as a pytest parameter: an
    argument tuple, or ``pytest.param(*args, marks=...)`` for a case with its own marks (e.g.
    ``slow_first(seconds)``, which tests/conftest.py orders by)."""
    if isinstance(entry, _PARAM):
        args = tuple(entry.values)
        return pytest.param(args, marks=entry.marks, id=entry.id or _case_id(args))
    args = tuple(entry)
    return pytest.param(args, id=_case_id(args))


class _Cases:
    """Parametrizes each audit over the spec's argument tuples (pytest's class hook)."""

    def pytest_generate_tests(self, metafunc):
        for arg, attr in (("case", "cases"), ("bb_case", "blackbox_cases"),
                          ("power_case", "power_cases")):
            if arg in metafunc.fixturenames:
                cases = [_case(c) for c in getattr(self, attr)]
                assert cases, f"{type(self).__name__}.{attr} is empty"
                metafunc.parametrize(arg, cases)


class ExactRatioContract(_Cases):
    """Audit (a): exact log-density ratios of adversarial neighbours against ε."""

    #: argument tuples of ``exact``
    cases: tuple = ()

    #: (*case) -> Exact
    exact: Callable[..., Exact]

    def test_exact_log_density_ratio(self, case):
        r = type(self).exact(*case)
        print(f"\n{r.label}: sup |log f_D − log f_D'| = {r.sup:.4f} = {r.sup / r.eps:.4f} ε "
              f"(quadrature tol {r.tol:.1e})"
              + ("" if r.pointwise is None else
                 f"; sup |g_D − g_D'|/Δ = {r.pointwise / r.delta:.3f}"))
        if r.tol_cap is not None:
            assert r.tol < r.tol_cap
        if r.pointwise is not None:
            assert r.pointwise <= r.delta * (1 + r.rtol)
        assert r.sup <= r.eps + r.tol + r.slack


class DistinguisherContract(_Cases):
    """Audit (b): the black-box distinguisher certifies no violation of the library's draws,
    and the same machinery certifies one for a broken mechanism (power)."""

    blackbox_cases: tuple = ((),)
    power_cases: tuple = ((),)

    #: (*bb_case) -> Distinguisher of the library's draws
    distinguisher: Callable[..., Distinguisher]
    #: (*power_case) -> Distinguisher of a broken mechanism's draws
    broken: Callable[..., Distinguisher]

    @pytest.mark.statistical
    def test_blackbox_distinguisher(self, bb_case):
        a = type(self).distinguisher(*bb_case)
        thresholds = a.thresholds  # fixed before any draw
        d = a.draw()
        print(f"\n{a.label} GoF p-values: " + ", ".join(f"{p:.3f}" for p in d.pvalues))
        assert len(d.pvalues) >= a.n_gof  # the draws of both data sets are tied to the oracle
        assert all(p > a.gof_alpha for p in d.pvalues)
        bounds = certify(a.label, d.stat_d, d.stat_e, thresholds, a.eps, a.alpha, d.delta)
        assert all(b.excess <= d.delta for b in bounds)

    @pytest.mark.statistical
    def test_blackbox_has_power(self, power_case):
        a = type(self).broken(*power_case)
        d = a.draw()
        bounds = certify(a.label, d.stat_d, d.stat_e, a.thresholds, a.eps, a.alpha, 0.0)
        assert max(b.excess for b in bounds) > 0


class MechanismAuditContract(DistinguisherContract, ExactRatioContract):
    """The three audits of one strict mechanism on one manifold (exact ratios first)."""
