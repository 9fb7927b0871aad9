r"""End-to-end private releases that state their guarantee (DESIGN §8).

Two modes:

``strict`` (default)
    Bounds are public inputs. Covariates are clipped to the public ``covariate_range`` and mapped
    to [0, 1] with it; residuals are clipped to norm ``tau`` inside every gradient; responses are
    projected onto the public ball ``B_{tau_m}(center)`` where the bounds need it; the
    mechanisms' supports are restricted to public balls on non-compact spaces. The stated
    guarantee then holds for every dataset. Randomness comes from OS entropy unless a seed is
    passed, in which case the release is labelled "not for publication".
``paper``
    Reproduces the papers' choices: missing bounds are taken from the data (τ = largest residual
    of the non-private fit, data min/max as covariate range), KNG uses σ = Δ/ε. A
    :class:`~dpcore.exceptions.PrivacyLeakWarning` is raised and the release is labelled not
    private.

Modules: :mod:`~dpcore.release.record` (the :class:`Release` record and what a label may
claim), :mod:`~dpcore.release.regression` and :mod:`~dpcore.release.frechet` (the pipelines),
:mod:`~dpcore.release.bounds` (columns' ranges estimated under DP, to serve as bounds),
:mod:`~dpcore.release.planning` (exact or MCMC, decided from public inputs before sampling),
:mod:`~dpcore.release.work` (a request's work estimated before it runs, and the budget that
refuses it), ``_common`` (checks shared by the pipelines).

The public names below are loaded on first use (PEP 562): ``import dpcore.release`` costs
almost nothing, and ``from dpcore.release import private_frechet_mean`` loads only the
modules that pipeline needs (issue 31 point 2; ``benchmarks/bench_import.py`` times it).
"""

import importlib

#: Public name -> the submodule that defines it.
_EXPORTS = {
    "project_to_ball": "_common",
    "DEFAULT_RANGE_QUANTILES": "bounds",
    "private_range": "bounds",
    "private_frechet_mean": "frechet",
    "exact_work": "planning",
    "plan_regression_sampler": "planning",
    "predicted_frechet_kng_work": "planning",
    "frechet_prediction": "planning",
    "predicted_joint_kng_work": "planning",
    **dict.fromkeys(
        ("APPROXIMATE_LABELS", "FRECHET_MECHANISMS", "GUARANTEES", "LABELS", "MCMC_CAVEAT",
         "MODES", "PAPER_CAVEAT", "PAPER_PUBLIC_BOUNDS_LABEL", "SAMPLERS", "SCHEMES",
         "SEEDED_CAVEAT", "SEQUENTIAL_CAVEAT", "SEQUENTIAL_STRICT_CAVEAT", "Release"),
        "record"),
    "private_geodesic_regression": "regression",
    "private_geodesic_regression_budgets": "regression",
    "FrechetMeanRequest": "requests",
    "GaussianReleaseRequest": "requests",
    "GeodesicRegressionRequest": "requests",
    "PrivateRangeRequest": "requests",
    "TwoStageRegressionRequest": "requests",
    "private_geodesic_regression_two_stage": "two_stage",
    "DEFAULT_WORK_BUDGET": "work",
    "WorkEstimate": "work",
    "estimate_frechet_work": "work",
    "estimate_monte_carlo_work": "work",
    "estimate_regression_work": "work",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    """Load a public name, or a submodule (``dpcore.release.work``), the first time it is
    asked for."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value  # later look-ups bypass __getattr__
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise  # a submodule that exists but fails to import
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
