r"""Random choices whose support does not depend on the data, in floating point (DESIGN §12).

A proof about a continuous law says nothing about the floats a sampler emits (Mironov, CCS
2012). Two float effects can make a data set emit an output its neighbour cannot:

1. **Acceptance that underflows.** ``U < exp(-x)`` with ``U`` a 53-bit uniform is false for
   every ``U`` once ``exp(-x)`` underflows (``x > 745``), and ``log U < -x`` is false for every
   ``U > 0`` once ``x > 53 log 2``. Whether a proposal can be accepted then depends on whether
   its ``x`` (a function of the data) crosses a threshold. :func:`bernoulli_exp` draws
   Bernoulli(:math:`e^{-x}`) as the conjunction of :math:`k = \lceil x \rceil` independent
   Bernoulli(:math:`e^{-x/k}`) trials, each with success probability at least :math:`e^{-1}`.
   A trial ``U < p`` with ``U`` uniform on the multiples of :math:`2^{-53}` in [0, 1) succeeds
   with probability :math:`\lceil p\,2^{53}\rceil / 2^{53} \in [p, p + 2^{-53}]`, a relative
   error of at most :math:`e\,2^{-53}`, and it is positive for every ``p > 0``. So every finite
   ``x`` is accepted with positive probability (for every data set), and the acceptance
   probability is :math:`e^{-x}` up to a relative :math:`k\,(e+2)\,2^{-53}` (the trials'
   quantization plus the rounding of ``exp``).

2. **Proposals drawn with float weights.** ``Generator.choice(p=...)`` inverts a float
   cumulative sum: a component whose weight falls below the sum's rounding is never drawn, and
   which component that is depends on the data. :class:`IntegerWeights` draws a component
   with probability exactly :math:`W_i / \sum_j W_j` for integer weights
   :math:`W_i = \lfloor 2^{52} m_i / \sum_j m_j \rfloor + 1 \ge 1` (exact integer arithmetic:
   ``Generator.integers`` is exactly uniform and ``searchsorted`` on an integer cumulative sum is
   exact). Every component has positive probability, and a rejection step that divides by the
   *integer* weight it used (:meth:`IntegerWeights.log_ratio`) leaves the target law exact
   whatever the rounding of the float masses :math:`m_i`.
"""

from __future__ import annotations

import math

import numpy as np

#: Scale of :class:`IntegerWeights` (weights sum to about this many units).
WEIGHT_BITS = 52


def bernoulli_exp(x, rng):
    r"""Independent Bernoulli(:math:`e^{-x}`) draws with positive probability for finite ``x``.

    Parameters
    ----------
    x : array_like of float, ``>= 0`` (``+inf`` gives False)
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of bool, the shape of ``x``

    Notes
    -----
    ``x`` is split into :math:`k = \max(1, \lceil x\rceil)` equal steps of at most 1, so each
    step accepts with :math:`p = e^{-x/k} \ge e^{-1}` (module docstring). A draw survives a step
    with probability at most :math:`e^{-1/2}`, so the expected number of steps is below 2.6 and
    the loop ends after a few dozen rounds for any batch size.
    """
    x = np.asarray(x, dtype=float)
    if np.any(np.isnan(x)) or np.any(x < 0):
        raise ValueError("bernoulli_exp needs x >= 0 (or +inf), no NaN.")
    flat = x.reshape(-1)
    out = np.zeros(flat.size, dtype=bool)
    finite = np.flatnonzero(np.isfinite(flat))
    if finite.size == 0:
        return out.reshape(x.shape)
    steps = np.maximum(1.0, np.ceil(flat[finite]))
    p = np.exp(-flat[finite] / steps)
    alive = np.arange(finite.size)
    left = steps.copy()
    while alive.size:
        passed = rng.random(alive.size) < p[alive]
        left[alive] -= 1.0
        done = passed & (left[alive] <= 0)
        out[finite[alive[done]]] = True
        alive = alive[passed & (left[alive] > 0)]
    return out.reshape(x.shape)


class IntegerWeights:
    r"""Draw components with probability exactly proportional to integer weights.

    Parameters
    ----------
    log_mass : array_like, shape ``(k,)``
        Log of each component's (envelope) mass; ``-inf`` allowed (weight 1 still).

    Attributes
    ----------
    weights : ndarray of int64
        :math:`W_i = \lfloor 2^{52} m_i / M \rfloor + 1` with :math:`M = \sum_j m_j` (float).
    log_scaled : ndarray
        :math:`\log(2^{52} m_i / M)`, the float the weights were rounded from.
    """

    def __init__(self, log_mass):
        log_mass = np.asarray(log_mass, dtype=float)
        top = np.max(log_mass)
        log_total = top + math.log(np.sum(np.exp(log_mass - top)))
        self.log_scaled = log_mass - log_total + WEIGHT_BITS * math.log(2.0)
        scaled = np.exp(np.minimum(self.log_scaled, WEIGHT_BITS * math.log(2.0)))
        self.weights = np.floor(scaled).astype(np.int64) + 1
        self.cumulative = np.cumsum(self.weights)
        self.total = int(self.cumulative[-1])

    def draw(self, size, rng):
        """``size`` component indices, each ``i`` with probability ``W_i / sum W``."""
        r = rng.integers(0, self.total, size=size, dtype=np.int64)
        return np.searchsorted(self.cumulative, r, side="right")

    def log_ratio(self, idx):
        r""":math:`\log(2^{52} m_i / M) - \log W_i \le 0`: the factor by which the integer
        weight exceeds the component's scaled mass, for the acceptance step."""
        return self.log_scaled[idx] - np.log(self.weights[idx].astype(float))


__all__ = ["WEIGHT_BITS", "IntegerWeights", "bernoulli_exp"]
