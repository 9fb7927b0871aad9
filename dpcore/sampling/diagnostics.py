r"""Convergence diagnostics for multi-chain MCMC output (Gelman et al., BDA3 §11.4-11.5).

Both functions take the draws of one scalar summary as an array ``(n_chains, n_draws)``.
"""

from __future__ import annotations

import math

import numpy as np


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


def _autocovariance(x):
    """Biased autocovariance of each chain at every lag, computed with the FFT."""
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    spec = np.fft.rfft(centred, n=size, axis=1)
    return np.fft.irfft(spec * np.conj(spec), n=size, axis=1)[:, :n] / n


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
    acov = _autocovariance(x)
    w = np.mean(acov[:, 0]) * n / (n - 1.0)
    between = np.var(x.mean(axis=1), ddof=1) if m > 1 else 0.0
    var_plus = (n - 1.0) / n * w + between
    if not var_plus > 0:
        return math.nan
    rho = 1.0 - (w - acov.mean(axis=0)) / var_plus
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
