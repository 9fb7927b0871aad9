r"""Convergence diagnostics for multi-chain MCMC output.

Every function takes the draws of one scalar summary as an array ``(n_chains, n_draws)``.

- :func:`effective_sample_size` and :func:`split_rhat`: the classic estimates (Gelman et al.,
  BDA3 §11.4-11.5) on the raw values.
- :func:`ess_bulk`, :func:`ess_tail` and :func:`rank_rhat`: the rank-normalised versions of
  Vehtari, Gelman, Simpson, Carpenter and Bürkner, "Rank-normalization, folding, and
  localization: An improved R-hat for assessing convergence of MCMC" (Bayesian Analysis 16(2),
  2021), which the samplers report. They work on *split* chains (each chain cut in halves, so a
  trend within a chain shows as disagreement between halves) and on *rank-normalised* values:
  all draws are ranked together (average ranks for ties) and rank ``r`` of ``S`` draws becomes
  :math:`z = \Phi^{-1}((r - 3/8)/(S - 3/4 + 1))` (Blom's offset), which makes the diagnostics
  well defined for heavy tails and invariant to monotone transformations. Bulk-ESS is the ESS
  of ``z``; tail-ESS is the smaller ESS of the indicators :math:`I(\theta \le q_{0.05})` and
  :math:`I(\theta \le q_{0.95})`; the R-hat is the larger split-R-hat of ``z`` and of the
  rank-normalised *folded* draws :math:`|\theta - \operatorname{median}\theta|`, which also
  sees chains that differ in scale only. The paper's recommendations: R-hat below 1.01, and
  bulk- and tail-ESS above about 100 per chain.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._lazy import lazy_module

special = lazy_module("scipy.special")  # ndtri, on first use


def _as_chains(chains, min_draws):
    x = np.asarray(chains, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"`chains` must have shape (n_chains, n_draws), got {x.shape}.")
    if x.shape[1] < min_draws:
        raise ValueError(f"`chains` needs at least {min_draws} draws per chain, got {x.shape[1]}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("`chains` contains NaN or infinite values.")
    return x


def _mean_autocovariance(x):
    """Biased autocovariance at every lag, averaged over the chains, computed with the FFT:
    ``x`` of shape ``(..., m, n)`` (m chains of n draws) gives ``(..., n)``.

    The average of the chains' autocovariances is the inverse transform of the average of
    their power spectra (the transform is linear), so one inverse FFT serves all chains."""
    m, n = x.shape[-2:]
    centred = x - x.mean(axis=-1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    spec = np.fft.rfft(centred, n=size, axis=-1)
    power = np.add.reduce(np.square(spec.real), axis=-2)
    power += np.add.reduce(np.square(spec.imag), axis=-2)
    return np.fft.irfft(power / m, n=size, axis=-1)[..., :n] / n


def effective_sample_size(chains) -> float:
    r"""Effective sample size of one scalar summary over all chains.

    The autocorrelation at lag t combines all chains as in BDA3 (eq. 11.7 with the
    within-chain autocovariances): :math:`\hat\rho_t = 1 - (W - \bar\gamma_t)/\widehat{var}^+`.
    The sum is truncated by Geyer's initial positive sequence (pairs
    :math:`\hat\rho_{2k} + \hat\rho_{2k+1}` summed while positive, made monotone), and
    :math:`\text{ESS} = m n / \hat\tau` with :math:`\hat\tau = -1 + 2\sum_k P_k`.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar (a 1-D array is one chain); at least 4 draws per chain.

    Returns
    -------
    float
        The effective sample size (``nan`` if the summary is constant).
    """
    x = _as_chains(chains, 4)
    m, n = x.shape
    acov = _mean_autocovariance(x)
    w = acov[0] * n / (n - 1.0)
    between = np.var(x.mean(axis=1), ddof=1) if m > 1 else 0.0
    var_plus = (n - 1.0) / n * w + between
    if not var_plus > 0:
        return math.nan
    rho = 1.0 - (w - acov) / var_plus
    rho[0] = 1.0
    n_pairs = n // 2
    pairs = rho[: 2 * n_pairs].reshape(n_pairs, 2).sum(axis=1)
    nonpositive = np.flatnonzero(pairs <= 0)
    if nonpositive.size:
        pairs = pairs[: nonpositive[0]]
    pairs = np.minimum.accumulate(pairs)
    tau = -1.0 + 2.0 * np.sum(pairs)
    # As in Stan, an antithetic chain cannot claim more than m n log10(m n) effective draws.
    tau = max(tau, 1.0 / math.log10(m * n))
    return float(m * n / tau)


def split_rhat(chains) -> float:
    r"""Split-:math:`\hat R` (BDA3 eq. 11.4 on chains cut in halves).

    Each chain is split into its first and second half (a middle draw is dropped when the length
    is odd), so a trend within a chain also raises :math:`\hat R`. Values near 1 (say < 1.01)
    indicate the chains agree.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar; at least 4 draws per chain.

    Returns
    -------
    float
        :math:`\sqrt{\widehat{var}^+ / W}` (``nan`` if every half-chain is constant).
    """
    x = _as_chains(chains, 4)
    half = x.shape[1] // 2
    halves = np.concatenate([x[:, :half], x[:, -half:]], axis=0)
    n = halves.shape[1]
    w = np.mean(np.var(halves, axis=1, ddof=1))
    between = np.var(halves.mean(axis=1), ddof=1)
    if not w > 0:
        return math.nan
    return float(math.sqrt(((n - 1.0) / n * w + between) / w))


# ---------------------------------------------------------------------- rank-normalised
def _split(x):
    """Each chain cut into its first and second half (the middle draw of an odd length is
    dropped): ``(2 m, n // 2)``."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def rank_normalize(chains, *, tie_tol=0.0):
    r"""Rank-normalised draws :math:`\Phi^{-1}((r - 3/8)/(S + 1/4))` (Vehtari et al. 2021).

    Parameters
    ----------
    chains : array_like
        Draws of one scalar, any shape; all of them are ranked together (average ranks for
        ties, so a discrete summary keeps its number of distinct values).
    tie_tol : float, optional
        Consecutive sorted values at most this far apart count as ties (0: exact ties only).

    Returns
    -------
    numpy.ndarray
        Normal scores of the same shape.
    """
    x = np.asarray(chains, dtype=float)
    flat = x.ravel()
    order = np.argsort(flat)  # ties get their average rank, so their order does not matter
    return _normal_scores(order, flat[order], tie_tol).reshape(x.shape)


def _normal_scores(order, ordered, tie_tol):
    """:func:`rank_normalize` of the flat draws whose sorting permutation is ``order``
    (``ordered`` the sorted draws); flat normal scores. The scores are computed in sorted
    order and put in place at once; without ties they are those of the ranks 1..S, the
    same for every summary of S draws (:func:`_untied_scores`)."""
    size = ordered.size
    distinct = np.diff(ordered) > tie_tol
    out = np.empty(size)
    if distinct.all():
        out[order] = (_untied_scores(size) if size <= _BATCH_DRAWS
                      else _untied_scores.__wrapped__(size))
        return out
    starts = np.flatnonzero(np.concatenate([[True], distinct]))
    ends = np.append(starts[1:], size)
    ranks = np.repeat(0.5 * (starts + 1 + ends), ends - starts)  # 1-based, averaged
    out[order] = special.ndtri((ranks - 0.375) / (size + 0.25))
    return out


@functools.lru_cache(maxsize=16)
def _untied_scores(size):
    """Normal scores of the ranks 1..size (read-only; cached for up to
    :data:`_BATCH_DRAWS` draws)."""
    scores = special.ndtri((np.arange(1, size + 1, dtype=float) - 0.375) / (size + 0.25))
    scores.flags.writeable = False
    return scores


def _rhat_core(x):
    """Split-R-hat of chains that are already split: sqrt(var+ / W) (BDA3 eq. 11.4)."""
    return float(_rhat_stack(x[None])[0])


def _rhat_stack(xs):
    """:func:`_rhat_core` of each of the stacked split chains ``xs`` ``(k, M, N)``."""
    n = xs.shape[2]
    w = np.mean(np.var(xs, axis=2, ddof=1), axis=1)
    between = np.var(xs.mean(axis=2), axis=1, ddof=1)
    with np.errstate(all="ignore"):
        r = np.sqrt(((n - 1.0) / n * w + between) / w)
    return np.where(w > 0, r, math.nan)


def _ess_core(x):
    r"""ESS of chains ``(M, N)`` as in Vehtari et al. (2021, §3.2).

    :math:`\hat\rho_t = 1 - (W - \frac1M \sum_m s_m^2 \hat\rho_{t,m}) / \widehat{var}^+`, with
    :math:`s_m^2 \hat\rho_{t,m}` the chain's autocovariance at lag t scaled by N/(N - 1) (so
    that :math:`\hat\rho_0 = 1`), truncated by Geyer's initial monotone sequence of the
    pair sums :math:`\hat P_k = \hat\rho_{2k} + \hat\rho_{2k+1}` (summed while positive,
    each replaced by the smallest before it), :math:`\hat\tau = -1 + 2 \sum_k \hat P_k` and
    ESS = MN / :math:`\hat\tau`, with :math:`\hat\tau \ge 1/\log_{10}(MN)` so that
    antithetic chains cannot claim more than :math:`MN \log_{10}(MN)` draws.
    """
    return float(_ess_stack(x[None])[0])


def _ess_stack(xs):
    """:func:`_ess_core` of each of the stacked chains ``xs`` ``(k, M, N)`` (one FFT for
    all of them); a list of floats."""
    k, m, n = xs.shape
    # The chains' mean of s_m^2 rho_{t,m} at every lag.
    acov = _mean_autocovariance(xs) * (n / (n - 1.0))
    w = acov[:, 0]
    var_plus = (n - 1.0) / n * w + (np.var(xs.mean(axis=2), axis=1, ddof=1) if m > 1 else 0.0)
    with np.errstate(all="ignore"):
        rho = 1.0 - (w[:, None] - acov) / var_plus[:, None]
    pairs = rho[:, : 2 * (n // 2)].reshape(k, -1, 2).sum(axis=2)
    negative = pairs < 0
    first = np.where(negative.any(axis=1), negative.argmax(axis=1), pairs.shape[1])
    monotone = np.minimum.accumulate(pairs, axis=1)
    floor = 1.0 / math.log10(m * n)
    out = []
    for i in range(k):
        if not var_plus[i] > 0:
            out.append(math.nan)
            continue
        tau = -1.0 + 2.0 * float(np.add.reduce(monotone[i, : first[i]]))
        out.append(float(m * n / max(tau, floor)))
    return out


#: Arrays of chains are stacked into one call of the vectorised diagnostics up to this many
#: draws in all (small ones: the calls' overhead dominates); larger ones go one at a time.
_BATCH_DRAWS = 1 << 16


def _batched(function, arrays):
    """``function`` (of a stack ``(k, M, N)``, one value per array) on ``arrays`` of one
    shape, stacked in batches of at most :data:`_BATCH_DRAWS` draws; a list of floats."""
    per_batch = max(1, _BATCH_DRAWS // arrays[0].size)
    out = []
    for start in range(0, len(arrays), per_batch):
        batch = arrays[start:start + per_batch]
        stack = batch[0][None] if len(batch) == 1 else np.stack(batch)
        out.extend(float(v) for v in function(stack.astype(float, copy=False)))
    return out


def _sorted_quantile(ordered, q):
    """``np.quantile(ordered, q)`` (its default, linear interpolation) of sorted draws, for
    ``0 <= q < 1``: the same arithmetic, without the partition."""
    index = (ordered.size - 1) * q
    below = math.floor(index)
    gamma = index - below
    a, b = float(ordered[below]), float(ordered[below + 1])
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def _sorted_median(ordered):
    """``np.median`` of sorted draws (the mean of the middle two for an even count)."""
    size = ordered.size
    if size % 2:
        return float(ordered[size // 2])
    return float(ordered[size // 2 - 1] + ordered[size // 2]) / 2.0


def rank_diagnostics(chains):
    """Bulk-ESS, tail-ESS and rank-normalised split-R-hat at once (the rank-normalised split
    chains are computed once for the bulk-ESS and the R-hat).

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar; at least 4 draws per chain.

    Returns
    -------
    tuple of float
        ``(ess_bulk, ess_tail, rank_rhat)`` as :func:`ess_bulk`, :func:`ess_tail` and
        :func:`rank_rhat` return them (all ``nan`` for a constant summary).
    """
    return _rank_diagnostics_many([chains])[0]


def _rank_diagnostics_many(summaries):
    """:func:`rank_diagnostics` of several summaries of the same shape ``(n_chains,
    n_draws)``: a list of ``(ess_bulk, ess_tail, rank_rhat)``. Each summary is sorted once
    (its normal scores, its quantiles and median, and the order of its folded draws all come
    from that sort); the autocovariances and R-hats of several summaries take one call
    (:func:`_batched`)."""
    out = [None] * len(summaries)
    split, scores, indicators, folded = [], [], [], []
    for i, chains in enumerate(summaries):
        x = _split(_as_chains(chains, 4))
        if np.ptp(x) == 0:
            out[i] = (math.nan, math.nan, math.nan)
            continue
        flat = x.ravel()
        order = np.argsort(flat)  # ties get their average rank: their order does not matter
        ordered = flat[order]
        split.append(i)
        scores.append(_normal_scores(order, ordered, 0.0).reshape(x.shape))
        for q in (0.05, 0.95):
            indicators.append(x <= _sorted_quantile(ordered, q))
        # The two draws either side of the median (an even count) are equally far from it;
        # one rounding may break that tie, and with it the ranks: distances within a few
        # roundings of each other are ranked as ties, so the R-hat does not jump with the
        # last bit of a draw.
        tol = 8.0 * np.finfo(float).eps * max(abs(float(ordered[0])), abs(float(ordered[-1])))
        folded_order, folded_sorted = _folded_ranking(x, order, ordered)
        folded.append(_normal_scores(folded_order, folded_sorted, tol).reshape(x.shape))
    if not split:
        return out
    k = len(split)
    ess = _batched(_ess_stack, scores + indicators)
    rhat = _batched(_rhat_stack, scores + folded)
    for j, i in enumerate(split):
        tail = float(min([ess[k + 2 * j], ess[k + 2 * j + 1]]))
        finite = [float(v) for v in (rhat[j], rhat[k + j]) if not math.isnan(v)]
        # (the folded R-hat is nan if |x - med| is constant: two symmetric values)
        out[i] = (ess[j], tail, float(max(finite)) if finite else math.nan)
    return out


def _tail_ess(x):
    """Tail-ESS of the split chains ``x``."""
    values = [_ess_core((x <= q).astype(float)) for q in np.quantile(x, [0.05, 0.95])]
    return float(min(values))


def _folded(x, median):
    return np.abs(x - median)


def _folded_ranking(x, order, ordered):
    """A sorting permutation of the flat folded draws :math:`|x - \\operatorname{median} x|`
    and their sorted values, from the sorting permutation ``order`` of ``x`` (``ordered``: the
    sorted draws). The distances of the draws below the median, taken from the median
    outwards, and those of the others form two sorted runs (rounding is monotone), which a
    stable sort (timsort) merges in linear time; it sorts correctly whatever its input."""
    median = _sorted_median(ordered)
    below = int(np.searchsorted(ordered, median, side="left"))
    runs = np.concatenate([order[:below][::-1], order[below:]])
    # |x - median| of the draws in the order of the runs (the same values as
    # _folded(x, median)[runs], computed from the sorted draws without a gather)
    distances = _folded(np.concatenate([ordered[:below][::-1], ordered[below:]]), median)
    merge = np.argsort(distances, kind="stable")
    return runs[merge], distances[merge]


def _rank_rhat(x, z):
    bulk = _rhat_core(z)
    tol = 8.0 * np.finfo(float).eps * float(np.max(np.abs(x)))  # see _rank_diagnostics_many
    folded = _rhat_core(rank_normalize(_folded(x, np.median(x)), tie_tol=tol))
    finite = [v for v in (bulk, folded) if not math.isnan(v)]  # folded is nan if |x - med| is
    return float(max(finite)) if finite else math.nan  # constant (two symmetric values)


def ess_bulk(chains) -> float:
    """Bulk effective sample size: the ESS of the rank-normalised split chains.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar (a 1-D array is one chain); at least 4 draws per chain.

    Returns
    -------
    float
        Bulk-ESS (``nan`` if the summary is constant).
    """
    x = _split(_as_chains(chains, 4))
    if np.ptp(x) == 0:
        return math.nan
    return _ess_core(rank_normalize(x))


def ess_tail(chains) -> float:
    """Tail effective sample size: the smaller ESS of the indicators of the draws at or below
    the 5 % and the 95 % quantiles of all draws, on split chains.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar; at least 4 draws per chain.

    Returns
    -------
    float
        Tail-ESS (``nan`` if the summary is constant).
    """
    x = _split(_as_chains(chains, 4))
    if np.ptp(x) == 0:
        return math.nan
    return _tail_ess(x)


def rank_rhat(chains) -> float:
    """Rank-normalised split-R-hat: the larger of the split-R-hat of the rank-normalised draws
    and of the rank-normalised folded draws ``|x - median(x)|``.

    Parameters
    ----------
    chains : array_like, shape (n_chains, n_draws)
        Draws of one scalar; at least 4 draws per chain.

    Returns
    -------
    float
        R-hat (``nan`` if the summary is constant); below 1.01 is the paper's threshold.
    """
    x = _split(_as_chains(chains, 4))
    if np.ptp(x) == 0:
        return math.nan
    return _rank_rhat(x, rank_normalize(x))
