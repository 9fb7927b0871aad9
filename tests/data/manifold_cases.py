"""Manifolds every data-layer test runs on (shared by the test modules of this folder)."""

from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

MANIFOLDS = [Euclidean(3), Sphere(2), SPD(2), SPD(3), KendallShape(5), Hyperbolic(2)]
IDS = [repr(m) for m in MANIFOLDS]
