"""Riemannian manifolds with closed-form, batched geometry.

Every manifold exposes ``exp``, ``log``, ``dist``, ``inner``, ``norm``, ``transport``,
``proj_tangent``, ``random_point``, ``random_tangent``, ``curvature_bounds``,
``injectivity_radius``, ``is_homogeneous`` and the adjoint Jacobi maps
``adjoint_dexp_point`` / ``adjoint_dexp_vector`` used by geodesic regression. The volume laws
the exact samplers need are facts of each class too: ``log_volume_density`` (of ``exp``, in
normal coordinates) and its bound ``log_volume_density_max`` over annuli, the radial law
``radial_log_volume`` / ``radial_dlog_volume`` and ``volume_growth_rate`` (a space without a
closed form raises ``NotImplementedError``). So is the CSV format of a point, which
``dpcore.data.load_csv`` / ``to_csv`` use: ``csv_columns``, ``to_csv_rows`` /
``from_csv_rows`` and ``csv_problems`` (the rows that give no point, as :class:`RowProblems`
whose messages name the columns); the defaults write the flattened point in ``y1..yN``.
"""

from .base import CutLocusError, Manifold, RowProblems
from .euclidean import Euclidean
from .geomstats_adapter import GeomstatsManifold
from .hyperbolic import Hyperbolic
from .kendall import KendallShape
from .spd import SPD
from .sphere import Sphere

__all__ = [
    "SPD",
    "CutLocusError",
    "Euclidean",
    "GeomstatsManifold",
    "Hyperbolic",
    "KendallShape",
    "Manifold",
    "RowProblems",
    "Sphere",
]
