r"""The exponential mechanism for quantiles on a public interval (Smith 2011).

For real data :math:`x_1, \dots, x_n`, a level :math:`q \in [0, 1]` and an interval
:math:`[a, b]` fixed before the data are seen, the mechanism releases :math:`t \in [a, b]` with
density (Lebesgue measure on :math:`[a, b]`)

.. math::

    f_D(t) = \frac{\exp(-\varepsilon\, |c_D(t) - q n| / 2)}{Z_D}, \qquad
    c_D(t) = \#\{i : x_i < t\},

the exponential mechanism (McSherry and Talwar 2007) with utility
:math:`u_D(t) = -|c_D(t) - q n|`.

Privacy. Under the library's neighbouring relation, "one row replaced" (``n`` fixed), the
count :math:`c_D(t)` changes by at most 1 at every :math:`t`, so :math:`u` has sensitivity 1;
the unnormalized density then moves by a factor at most :math:`e^{\varepsilon/2}` and so does
:math:`Z_D`, hence :math:`|\log f_D(t) - \log f_{D'}(t)| \le \varepsilon`: pure
:math:`\varepsilon`-DP with :math:`\delta = 0`. Points outside :math:`[a, b]` are clipped to it
first; clipping is monotone, so :math:`c_D` on :math:`(a, b)` is unchanged and the output's
support is the public interval whatever the data.

Exact sampling. With :math:`z_{(1)} \le \dots \le z_{(n)}` the sorted clipped data and
:math:`z_{(0)} = a`, :math:`z_{(n+1)} = b`, :math:`c_D(t) = i` on the gap
:math:`(z_{(i)}, z_{(i+1)})`, :math:`i = 0, \dots, n`, so :math:`f_D` is piecewise constant: gap
:math:`i` has probability proportional to
:math:`(z_{(i+1)} - z_{(i)}) \exp(-\varepsilon |i - q n| / 2)` (computed in log space; gaps of
length zero, from ties or clipped points, have probability zero) and, given the gap, :math:`t` is
uniform in it. The sampler draws the gap by inverting the cumulative weights and then the
uniform. The released value is the midpoint of the draw's cell of a public lattice of
:math:`[a, b]` (:func:`lattice_cell_draws`): post-processing, so the same ε, and the set of
possible outputs does not depend on the data (float safety, DESIGN §12).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_interval, check_positive, check_quantile_levels
from .base import MechanismResult, size_tuple
from .protocol import Guarantee

__all__ = [
    "ExponentialQuantile",
    "quantile_edges",
    "quantile_log_weights",
    "sample_exponential_quantiles",
]

#: How the draws are made (recorded in results and releases).
SAMPLER = ("exact: gap drawn by its weight, then its cell of a public lattice of the interval "
           "(2^32 cells) by overlap")


def _check_data(data, name="data"):
    values = as_float_array(data, name)
    if values.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional (one value per row), got shape "
                         f"{values.shape}.")
    if values.size < 1:
        raise ValueError(f"`{name}` must hold at least one value.")
    if not np.all(np.isfinite(values)):
        row = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ValueError(f"`{name}` contains NaN or infinite values (first at index {row}).")
    return values


def quantile_edges(data, bounds):
    """The ends of the mechanism's ``n + 1`` gaps: ``a``, the data clipped to ``[a, b]`` and
    sorted, ``b``.

    Parameters
    ----------
    data : array-like, shape (n,)
    bounds : (float, float)
        The public interval ``(a, b)``, ``a < b``.

    Returns
    -------
    ndarray, shape (n + 2,)
        Non-decreasing; gap ``i`` is ``[edges[i], edges[i + 1]]`` and holds the ``t`` with
        ``#{x_j < t} = i``.
    """
    a, b = check_interval(bounds, "bounds")
    values = np.sort(np.clip(_check_data(data), a, b))
    return np.concatenate(([a], values, [b]))


def quantile_log_weights(edges, quantiles, epsilons):
    """Unnormalized log-probabilities of the gaps: ``log(length) - ε |i - q n| / 2``.

    Parameters
    ----------
    edges : ndarray, shape (n + 2,)
        From :func:`quantile_edges`.
    quantiles : ndarray, shape (m,)
        Levels in [0, 1].
    epsilons : ndarray, shape (m,)
        The budget of each quantile.

    Returns
    -------
    ndarray, shape (m, n + 1)
        ``-inf`` for gaps of length zero.
    """
    edges = np.asarray(edges, dtype=float)
    n = edges.size - 2
    lengths = np.diff(edges)
    rank = np.arange(n + 1, dtype=float)
    q = np.asarray(quantiles, dtype=float)[:, None]
    eps = np.asarray(epsilons, dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        log_len = np.log(lengths)
    return log_len[None, :] - 0.5 * eps * np.abs(rank[None, :] - q * n)


def sample_exponential_quantiles(data, quantiles, epsilon, bounds, size=None, rng=None):
    """Exact draws of the exponential quantile mechanism, one column per level.

    Parameters
    ----------
    data : array-like, shape (n,)
        Real values; those outside ``bounds`` are clipped to it.
    quantiles : float or array-like, shape (m,)
        Levels in [0, 1].
    epsilon : float or array-like, shape (m,)
        Budget of each level's draw (each draw is ε-DP on its own; together they cost the sum).
    bounds : (float, float)
        Public interval ``(a, b)`` holding the output, fixed before seeing the data.
    size : int or tuple of int, optional
        Independent draws of every level.
    rng : None, int or numpy.random.Generator
        None: OS entropy.

    Returns
    -------
    ndarray, shape (*size, m)
        Draws in ``[a, b]``.
    """
    rng = np.random.default_rng(rng)
    q = check_quantile_levels(quantiles, "quantiles")
    eps = np.atleast_1d(as_float_array(epsilon, "epsilon"))
    if eps.ndim != 1 or eps.size not in (1, q.size):
        raise ValueError(f"`epsilon` must be one budget or one per level ({q.size}), got "
                         f"shape {eps.shape}.")
    eps = np.broadcast_to(eps, q.shape).copy()
    for e in eps:
        check_positive(float(e), "epsilon")
    shape = size_tuple(size)
    count = int(np.prod(shape, dtype=np.int64))
    edges = quantile_edges(data, bounds)
    log_w = quantile_log_weights(edges, q, eps)
    a, b = float(edges[0]), float(edges[-1])
    draws = np.empty((count, q.size))
    for j in range(q.size):
        draws[:, j] = lattice_cell_draws(edges, log_w[j], a, b, count, rng)
    return draws.reshape(shape + (q.size,))


#: Cells of the public output lattice of [a, b] (float safety, DESIGN §12).
LATTICE_CELLS = 2**32


def lattice_cell_draws(edges, log_w, a, b, count, rng):
    r"""Exact draws of the piecewise-uniform law (gap ``i`` of mass :math:`e^{w_i}`), each
    released as the midpoint of its cell of the public lattice of ``[a, b]``.

    Cells are :math:`[c_K, c_{K+1})` with :math:`c_K = \mathrm{fl}(a + K (b - a)/N)`,
    :math:`N` = :data:`LATTICE_CELLS`. A gap is drawn with exact integer weights
    (:class:`~dpcore.sampling.floatsafe.IntegerWeights`; every gap of positive length has
    positive probability), then a cell uniformly among those it meets, accepted with
    probability (overlap length) / (cell width) (exact Bernoulli, positive for every positive
    overlap). Given the gap, the accepted cell has probability proportional to its overlap with
    the gap: the cell of an exact draw of the continuous law, i.e. post-processing, so the
    mechanism's ε is unchanged. The released float is a fixed function of the integer ``K``, and
    every cell meets some gap of positive length for every data set (the gaps partition
    ``[a, b]``), so the set of possible outputs does not depend on the data.
    """
    from ..sampling.floatsafe import IntegerWeights, bernoulli_exp

    n_cells = LATTICE_CELLS
    width = (b - a) / n_cells
    lengths = np.diff(edges)
    positive = np.flatnonzero(lengths > 0)
    weights = IntegerWeights(log_w[positive])

    def boundary(k):
        return np.where(k >= n_cells, b, a + k.astype(float) * width)

    first = np.clip(np.floor((edges[:-1] - a) / width).astype(np.int64) - 1, 0, n_cells - 1)
    last = np.clip(np.floor((edges[1:] - a) / width).astype(np.int64) + 1, 0, n_cells - 1)
    out, have = [], 0
    while have < count:
        m = max(16, 2 * (count - have))
        gap = positive[weights.draw(m, rng)]
        k = first[gap] + rng.integers(0, last[gap] - first[gap] + 1, dtype=np.int64)
        lo, hi = boundary(k), boundary(k + 1)
        overlap = np.minimum(hi, edges[gap + 1]) - np.maximum(lo, edges[gap])
        share = np.where(overlap > 0, overlap / np.maximum(hi - lo, 1e-300), 0.0)
        x = np.full(share.shape, np.inf)
        inside = share > 0
        x[inside] = -np.log(np.minimum(share[inside], 1.0))
        ok = bernoulli_exp(x, rng)
        out.append(k[ok][: count - have])
        have += out[-1].size
    k = np.concatenate(out)[:count]
    return np.minimum(a + (k.astype(float) + 0.5) * width, b)


class ExponentialQuantile:
    r"""Private quantiles of one real column by the exponential mechanism (Smith 2011).

    Each level gets ``epsilon / len(quantiles)`` (sequential composition), so one draw of all
    the levels is ``epsilon``-DP with δ = 0 for "one row replaced". Density of level ``q``:
    :math:`\propto \exp(-|\#\{x_i < t\} - q n| / \sigma)` on the public ``bounds``, with
    :math:`\sigma = 2 \Delta / \varepsilon_q` and rank sensitivity :math:`\Delta = 1`.

    Parameters
    ----------
    epsilon : float
        Budget of one draw of all the levels.
    quantiles : float or sequence of float
        Levels in [0, 1].
    bounds : (float, float)
        Public interval ``(a, b)`` known before seeing the data; the data are clipped to it and
        the output lies in it.
    """

    name = "exponential_quantile"

    def __init__(self, *, epsilon, quantiles, bounds):
        self.epsilon = check_positive(epsilon, "epsilon")
        self.quantiles = check_quantile_levels(quantiles, "quantiles")
        self.bounds = check_interval(bounds, "bounds")
        self.epsilon_each = self.epsilon / self.quantiles.size
        self.sensitivity = 1.0
        self.sigma = 2.0 * self.sensitivity / self.epsilon_each

    def guarantee(self):
        """One draw of all the levels is ε-DP with δ = 0 (exact sampler)."""
        return Guarantee(
            epsilon=self.epsilon, delta=0.0, mu=None, sensitivity=self.sensitivity,
            sigma=self.sigma,
            sigma_rule="2 Delta/epsilon_each (exponential mechanism, rank sensitivity 1)")

    def release(self, data, size=None, rng=None):
        """Draw the private quantiles of ``data`` (one value per row).

        Returns
        -------
        MechanismResult
            ``values`` of shape ``(*size, m)``, in the order of ``quantiles``.
        """
        values = sample_exponential_quantiles(data, self.quantiles, self.epsilon_each,
                                              self.bounds, size=size, rng=rng)
        return MechanismResult(values=values, exact=True, sampler=SAMPLER)
