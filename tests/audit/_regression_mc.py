r"""Monte Carlo oracle and adversarial search of the joint-regression audits on spaces whose
(p, v) support is too high-dimensional for product quadrature (SPD(2): 6-d, H²: 4-d).

A space is described by a ``geometry`` object (a module or namespace) with

* ``uniform_support(size, rng) -> (p, v)``: uniform draws (volume × Lebesgue) of the support
  B_{τ_m+τ}(C) × {‖v‖ ≤ V};
* ``gradient_norm(p, v, t, y)``: the audit's own ‖∇_{(p,v)} E_D‖ (finite differences);
* ``support_point(a) -> (p, v)``: a smooth map onto the open support (for local searches) and
  ``support_params(p, v) -> a``, an approximate inverse giving starting rows;
* ``response_point(a)``: rows of R^k onto the public response ball, with
  ``n_response_params = k``.

The densities are f_D ∝ exp(−g_D/σ) on the support; their normalizers are Monte Carlo
means over common uniform points, so log Z_D − log Z_D′ has a small standard error.
"""

from __future__ import annotations

import numpy as np

from . import _oracle as O


class MonteCarloOracle:
    """Both densities on common uniform support points; normalizers by Monte Carlo.

    Parameters
    ----------
    geometry : module or namespace
        See the module docstring.
    d, e : (t, y)
        The neighbouring data sets (covariates in [0, 1], responses in the ball).
    sigma : float
    size : int
        Monte Carlo points.
    seed : int
    n_draws : int
        Draws per data set of the black-box test the thresholds are for.
    """

    def __init__(self, geometry, d, e, sigma, *, size, seed, n_draws):
        self.geometry, self.d, self.e, self.sigma, self.n_draws = geometry, d, e, sigma, n_draws
        rng = np.random.default_rng(seed)
        self.p, self.v = geometry.uniform_support(size, rng)
        self.g = {k: geometry.gradient_norm(self.p, self.v, *data)
                  for k, data in (("D", d), ("E", e))}
        self.log_z, self.log_z_se = {}, {}
        for k in "DE":
            w = np.exp(-self.g[k] / sigma)
            self.log_z[k] = float(np.log(w.mean()))
            self.log_z_se[k] = float(w.std() / (w.mean() * np.sqrt(w.size)))
        # log Z_D − log Z_D′ with common random numbers: standard error of the difference.
        wd, we = np.exp(-self.g["D"] / sigma), np.exp(-self.g["E"] / sigma)
        ratio = wd / wd.mean() - we / we.mean()
        self.diff_se = float(ratio.std() / np.sqrt(ratio.size))

    def stat_from_g(self, g_d, g_e):
        """log f_D − log f_D′ from the two gradient norms."""
        return -(g_d - g_e) / self.sigma - (self.log_z["D"] - self.log_z["E"])

    def stat(self, p, v):
        gn = self.geometry.gradient_norm
        return self.stat_from_g(gn(p, v, *self.d), gn(p, v, *self.e))

    def grid_stat(self):
        return self.stat_from_g(self.g["D"], self.g["E"])

    def thresholds(self, alpha):
        """Event thresholds from the Monte Carlo points alone (before any draw)."""
        lf_d = -self.g["D"] / self.sigma - self.log_z["D"]
        lf_e = -self.g["E"] / self.sigma - self.log_z["E"]
        return O.event_thresholds(self.grid_stat(), lf_d, lf_e, np.ones_like(lf_d),
                                  self.n_draws, alpha)

    def sup_abs_stat(self, rng, n_starts=6):
        """sup |log f_D − log f_D′| over the points, refined by local searches from the best."""
        s = self.grid_stat()
        best = float(np.max(np.abs(s)))
        for sign in (1.0, -1.0):
            idx = np.argsort(-sign * s)[:n_starts]
            a0 = self.geometry.support_params(self.p[idx], self.v[idx])

            def objective(a, sign=sign):
                return sign * self.stat(*self.geometry.support_point(a))

            _, f = O.local_search(objective, a0, rng, steps=40, scale=0.05)
            best = max(best, float(f.max()))
        return best


def adversarial_pair(geometry, shared, rng, n_points=1500):
    """((t_D, y_D), (t_D′, y_D′), name): the largest sup |g_D − g_D′| found on ``n_points``
    support points, over the shared configurations ``shared(rng) -> {name: (t, y)}`` and the
    replaced observation (covariate in [0, 1], response in the ball)."""
    k = geometry.n_response_params
    p, v = geometry.uniform_support(n_points, rng)
    best = (-np.inf, None)
    for name, (t_sh, y_sh) in shared(rng).items():
        def new_obs(a):
            return (np.clip(0.5 + 0.6 * np.tanh(a[..., k]), 0, 1),
                    geometry.response_point(a[..., :k]))

        def g_with(a, t_sh=t_sh, y_sh=y_sh):
            t_new, y_new = new_obs(a)
            return np.array([geometry.gradient_norm(p, v, np.append(t_sh, tn),
                                                    np.vstack([y_sh, yn]))
                             for tn, yn in zip(t_new, y_new, strict=True)])

        def objective(a):
            return np.max(np.abs(g_with(a[:, :k + 1]) - g_with(a[:, k + 1:])), axis=1)

        starts = rng.normal(scale=2.0, size=(6, 2 * (k + 1)))
        starts[0] = [5.0] * (k + 1) + [-5.0] * (k + 1)
        x, f = O.local_search(objective, starts, rng, steps=12, scale=1.0)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            (t1, y1), (t2, y2) = new_obs(x[i, :k + 1]), new_obs(x[i, k + 1:])
            best = (f[i], ((np.append(t_sh, t1), np.vstack([y_sh, y1])),
                           (np.append(t_sh, t2), np.vstack([y_sh, y2])), name))
    return best[1]
