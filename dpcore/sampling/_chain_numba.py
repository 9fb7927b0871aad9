r"""The space-independent parts of the compiled Metropolis-Hastings loop (numba).

The chains of :mod:`dpcore.sampling._spd_numba` and :mod:`dpcore.sampling._kendall_numba` call
these around their own proposal and log density; together they are the loop of
:func:`dpcore.sampling._sphere_numba.run_steps`, itself the numpy path's ``_Stepper.step`` and
``_burn_in`` of :mod:`dpcore.sampling.mcmc`: the Metropolis acceptance, the Robbins-Monro
burn-in on log(step size) per group (the single-group rule when all chains are live, else the
per-group rule; both give the same rates up to rounding), and the thinned storage of the draws.

``stats`` is a work array ``(3, n_groups)``: each group's step size for this step, the sum of
its live chains' acceptance probabilities and their number. ``eta_state[:, g]`` is
``[log_eta, sum of log_eta over the second half of burn-in, fixed eta]`` of group g.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Robbins-Monro gain, as ``mcmc._GAIN``.
_GAIN = 3.0


@njit(cache=True, error_model="numpy")
def start_step(eta_state, phase, adapt, stats):
    """Each group's step size for this step into ``stats[0]``; clear its rate counters."""
    for grp in range(eta_state.shape[1]):
        stats[0, grp] = math.exp(eta_state[0, grp]) if phase == 0 and adapt else eta_state[2,
                                                                                           grp]
        stats[1, grp] = 0.0
        stats[2, grp] = 0.0


@njit(cache=True, error_model="numpy")
def accept(c, x, logp, proposal, logq, u_accept, grp, stats, phase, accepted_total):
    """The Metropolis decision of chain ``c`` (moves ``x[c]`` and ``logp[c]`` in place).

    From a zero-density state any proposal of positive density is accepted; between two
    zero-density states the ratio is NaN and the move is rejected, as ``_Stepper.step``.
    """
    live = logp[c] > -np.inf
    diff = logq - logp[c]
    if diff != diff:
        prob = 0.0
    else:
        prob = math.exp(min(diff, 0.0))
    if live:
        stats[2, grp] += 1.0
        stats[1, grp] += prob
    if u_accept < prob:
        for b in range(x.shape[1]):
            x[c, b] = proposal[b]
        logp[c] = logq
        if phase == 1:
            accepted_total[c] += 1.0


@njit(cache=True, error_model="numpy")
def finish_step(step, phase, adapt, eta_state, stats, n, target, log_cap, half, thin, burn_in,
                x, logp, samples, log_values):
    """After all chains moved: adapt the step sizes (burn-in) or store the thinned draw."""
    n_groups = eta_state.shape[1]
    if phase == 0:
        if adapt:
            gain = _GAIN / (1.0 + step / 10.0) ** 0.6
            for grp in range(n_groups):
                if n_groups == 1 and stats[2, 0] == n:
                    rate = stats[1, 0] * (1.0 / n)
                elif stats[2, grp] > 0:
                    rate = stats[1, grp] / stats[2, grp]
                else:
                    rate = target
                eta_state[0, grp] = min(eta_state[0, grp] + gain * (rate - target), log_cap)
                if step >= half:
                    eta_state[1, grp] += eta_state[0, grp]
        return
    i = step - burn_in
    if (i + 1) % thin == 0:
        for c in range(n):
            for b in range(x.shape[1]):
                samples[c, i // thin, b] = x[c, b]
            log_values[c, i // thin] = logp[c]
