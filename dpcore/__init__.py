"""dpcore: differential privacy for statistics on Riemannian manifolds.

Subpackages: :mod:`dpcore.manifolds` (geometry), :mod:`dpcore.learning` (non-private
estimators), :mod:`dpcore.data` (synthetic data, CSV loading and validation).
"""

__version__ = "0.1.0"
