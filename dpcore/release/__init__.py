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
"""

from ._common import project_to_ball
from .bounds import DEFAULT_RANGE_QUANTILES, private_range
from .frechet import private_frechet_mean
from .planning import (
    exact_work,
    plan_regression_sampler,
    predicted_frechet_kng_work,
    predicted_joint_kng_work,
)
from .record import (
    APPROXIMATE_LABELS,
    FRECHET_MECHANISMS,
    GUARANTEES,
    LABELS,
    MCMC_CAVEAT,
    MODES,
    PAPER_CAVEAT,
    PAPER_PUBLIC_BOUNDS_LABEL,
    SAMPLERS,
    SCHEMES,
    SEEDED_CAVEAT,
    SEQUENTIAL_CAVEAT,
    SEQUENTIAL_STRICT_CAVEAT,
    Release,
)
from .regression import private_geodesic_regression, private_geodesic_regression_budgets
from .requests import (
    FrechetMeanRequest,
    GaussianReleaseRequest,
    GeodesicRegressionRequest,
    PrivateRangeRequest,
)
from .two_stage import private_geodesic_regression_two_stage
from .work import (
    DEFAULT_WORK_BUDGET,
    WorkEstimate,
    estimate_frechet_work,
    estimate_monte_carlo_work,
    estimate_regression_work,
)

__all__ = [
    "APPROXIMATE_LABELS",
    "DEFAULT_RANGE_QUANTILES",
    "DEFAULT_WORK_BUDGET",
    "FRECHET_MECHANISMS",
    "FrechetMeanRequest",
    "GUARANTEES",
    "GaussianReleaseRequest",
    "GeodesicRegressionRequest",
    "LABELS",
    "MCMC_CAVEAT",
    "MODES",
    "PAPER_CAVEAT",
    "PAPER_PUBLIC_BOUNDS_LABEL",
    "PrivateRangeRequest",
    "SAMPLERS",
    "SCHEMES",
    "SEEDED_CAVEAT",
    "SEQUENTIAL_CAVEAT",
    "SEQUENTIAL_STRICT_CAVEAT",
    "Release",
    "WorkEstimate",
    "estimate_frechet_work",
    "estimate_monte_carlo_work",
    "estimate_regression_work",
    "exact_work",
    "plan_regression_sampler",
    "predicted_frechet_kng_work",
    "predicted_joint_kng_work",
    "private_frechet_mean",
    "private_geodesic_regression",
    "private_geodesic_regression_budgets",
    "private_geodesic_regression_two_stage",
    "private_range",
    "project_to_ball",
]
