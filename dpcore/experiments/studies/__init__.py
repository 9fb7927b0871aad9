r"""The papers' other experiments as functions returning tidy DataFrames.

Next to :func:`~dpcore.experiments.budget_sweep` (paper 002 figs. 1, 2, 7) this package runs,
one module per theme:

* :mod:`.sensitivity` -- :func:`sensitivity_ratios`, theoretical over empirical gradient
  sensitivity of geodesic regression on adjacent datasets (paper 002 app. G, figs. 9-10), and
  :func:`frechet_sensitivity_study`, the distance between the Fréchet means of adjacent datasets
  against the bound of paper 001 Thm 2 (paper 001 fig. 1, panels 1 and 3);
* :mod:`.frechet` -- :func:`frechet_mean_study`, private Fréchet means by the manifold Laplace,
  ambient Laplace, KNG and Gaussian mechanisms, the last at the µ equivalent to ε (paper 001
  fig. 1, panels 2 and 4; paper 004 fig. 1, panel 3);
* :mod:`.gdp` -- :func:`gdp_mu_curve`, the GDP parameter µ of the Gaussian mechanism against its
  rate σ on the circle and the line, exact and by Monte Carlo (paper 004 fig. 1, panels 1 and 2);
* :mod:`.noise` -- :func:`noise_spread_study` and :func:`noise_spread_geodesics`, the effect of
  the data spread δ on the sphere (paper 002 app. E, figs. 5-6);
* :mod:`.sweeps` -- :func:`real_data_budget_sweep`, budget sweeps on a fixed (real) dataset, and
  :func:`recorded_budget_sweep`, a synthetic-data budget sweep that records releases which break
  down numerically instead of raising (paper 002 fig. 7 on SPD(2) in paper mode);
* :mod:`.rat_skulls` -- :func:`load_rat_skulls`, :func:`rat_skull_budget_study`,
  :func:`rat_skull_shapes`: budget sweeps and predicted shapes on real planar shapes (paper 002
  figs. 2-3, on Vilmann's rat skulls instead of the non-public corpus-callosum data);
* :mod:`.spd_ellipses` -- :func:`spd_ellipses_study`, non-private and private SPD(2) geodesics at
  equally spaced covariates (paper 002 fig. 8);
* :mod:`.wine` -- :func:`load_wine`, :func:`linear_regression_comparison` and
  :func:`summarize_linear_regression`: DP geodesic regression on Euclidean space against
  diffprivlib on the Wine Quality data (papers 000 / 003, table 1);
* :mod:`._common` -- the shared plumbing (seeding, parallel map, argument checks,
  :func:`data_dir`).

Every public name is re-exported here, so ``from dpcore.experiments.studies import X`` works
whichever module defines ``X``.

Conventions shared by all of them: ``rng`` seeds the whole study (None, an int, a
:class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`); every independent unit of
work (a replicate, a cell) gets its own child of ``SeedSequence(rng).spawn``, fixed before any work
is distributed, so the results do not depend on ``n_jobs``. ``n_jobs`` is passed to joblib
(None or 1 runs in this process; any joblib backend, e.g. Dask or Ray, can be chosen with
``joblib.parallel_config``).
"""

from ._common import data_dir
from .frechet import FRECHET_STUDY_MECHANISMS, frechet_mean_study
from .gdp import gdp_mu_curve
from .noise import PAPER_NOISES, noise_spread_geodesics, noise_spread_study
from .rat_skulls import RAT_AGES, load_rat_skulls, rat_skull_budget_study, rat_skull_shapes
from .sensitivity import frechet_sensitivity_study, sensitivity_ratios
from .spd_ellipses import spd_ellipses_study
from .sweeps import NUMERICAL_ERRORS, real_data_budget_sweep, recorded_budget_sweep
from .wine import (
    WINE_COVARIATE,
    WINE_QUALITY_RANGE,
    WINE_RESPONSES,
    linear_regression_comparison,
    load_wine,
    summarize_linear_regression,
)

__all__ = [
    "FRECHET_STUDY_MECHANISMS",
    "NUMERICAL_ERRORS",
    "PAPER_NOISES",
    "RAT_AGES",
    "WINE_COVARIATE",
    "WINE_QUALITY_RANGE",
    "WINE_RESPONSES",
    "data_dir",
    "frechet_mean_study",
    "frechet_sensitivity_study",
    "gdp_mu_curve",
    "linear_regression_comparison",
    "load_rat_skulls",
    "load_wine",
    "noise_spread_geodesics",
    "noise_spread_study",
    "rat_skull_budget_study",
    "rat_skull_shapes",
    "real_data_budget_sweep",
    "recorded_budget_sweep",
    "sensitivity_ratios",
    "spd_ellipses_study",
    "summarize_linear_regression",
]
