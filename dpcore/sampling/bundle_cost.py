"""Public prediction of :class:`~dpcore.sampling.bundle_sampler.BundleKNGSampler`'s cost from
public inputs only: the sampler's certificate for a public model data set."""

from __future__ import annotations

import numpy as np

from .bundle_sampler import BundleKNGSampler

__all__ = ["model_data", "predict_bundle_cost"]


def model_data(n_terms, lattice, tau):
    """A public model data set (no data involved): ``n_terms`` covariates evenly spread on
    [0, 1] and responses along the geodesic from the lattice's centre with speed
    ``min(1, V/2)`` along ``e1``, offset alternately by ``+-tau/2`` across it (a spread of
    residuals like real data's, half of them near the clipping bound)."""
    k = int(n_terms)
    t = (np.arange(k) + 0.5) / k
    chart = lattice.chart
    speed = min(1.0, 0.5 * lattice.max_speed)
    p, v = chart.to_bundle(np.zeros(2), np.array([speed, 0.0]))
    pred = np.cos(speed * t)[:, None] * p + np.sin(speed * t)[:, None] * (v / speed)
    across = np.cross(pred, v / speed)
    side = np.where(np.arange(k) % 2 == 0, 1.0, -1.0) * 0.5 * tau
    y = np.cos(side)[:, None] * pred + np.sin(side)[:, None] * across
    return t, y / np.linalg.norm(y, axis=1, keepdims=True)


def predict_bundle_cost(n, sigma, tau, lattice, draws, *, model_terms=64, **options):
    """Public prediction of :class:`BundleKNGSampler`'s cost, from public inputs only.

    Builds the sampler's certificate for :func:`model_data` (``min(n, model_terms)`` terms;
    the gradient is a mean, so its scale does not depend on the number of terms) with the
    release's ``sigma`` and returns its boxes, its estimated proposals per draw and the work
    in gradient terms, ``n x (box_cost x boxes + draws x proposals per draw)`` (a box costs
    about ``box_cost`` point evaluations). The data's own certificate differs (a timing side
    channel, not a change of the output's law): this only says before sampling whether the
    request is within reach. Rough: the model has no outliers and a well-determined fit, and
    the refinement is capped (``max_boxes``, default 5000) to bound the prediction's own cost.

    Returns
    -------
    dict with ``boxes``, ``proposals_per_draw``, ``work``, ``seconds`` (the prediction's own
    run time).
    """
    import time

    start = time.perf_counter()
    options.setdefault("max_boxes", 5000)
    t, y = model_data(min(int(n), int(model_terms)), lattice, tau)
    sampler = BundleKNGSampler(t, y, tau, sigma, lattice, draws=draws, **options)
    per_draw = 1.0 / max(sampler.acceptance_estimate, 1e-300)
    boxes = sampler.lo_idx.shape[0]
    work = float(n) * (sampler.box_cost * boxes + float(draws) * per_draw)
    return {"boxes": int(boxes), "proposals_per_draw": float(per_draw), "work": work,
            "seconds": time.perf_counter() - start}
