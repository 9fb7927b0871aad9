r"""Monte Carlo oracle and adversarial search of the joint-regression audits on spaces whose
(p, v) support is too high-dimensional for product quadrature (SPD(2): 6-d, H²: 4-d).

A space is described by a ``geometry`` object (a module or namespace) with

* ``uniform_support(size, rng) -> (p, v)``: uniform draws (volume × Lebesgue) of the support
  B_{τ_m+τ}(C) × {‖v‖ ≤ V};
* ``gradient_norm(p, v, t, y)``: the audit's own ‖∇_{(p,v)} E_D‖ (finite differences);
* ``support_point(a) -> (p, v)``: a smooth map onto the open support (for local searches) and
  ``support_params(p, v) -> a``, an approximate inverse giving starting rows;
* ``response_point(a)``: rows of R^k onto the public response ball, with
  ``n_response_params = k``;
* optionally ``terms``, ``gradient_norm`` split into per-observation pieces
  (:class:`SharedTerms`; :class:`FDTerms` for finite differences of the energy). With them
  the oracle and the adversarial search compute each observation's part once and reuse it
  across data sets (same numbers, bit for bit, as ``gradient_norm``: the same elementwise
  operations and the same reductions); or ``gradient_norms(p, v, datasets)``, the list of
  ``gradient_norm(p, v, *data)`` computed together (the same numbers).

The densities are f_D ∝ exp(−g_D/σ) on the support; their normalizers are Monte Carlo
means over common uniform points, so log Z_D − log Z_D′ has a small standard error.
"""

from __future__ import annotations

import numpy as np

from . import _oracle as O
from . import _oracle_regression as RG


def fd_norm(energies, h):
    """‖(∂_p E, ∂_v E)‖ from the energies at :func:`FDTerms`-ordered points (central
    differences with step ``h``)."""
    gp = np.stack([(energies[i] - energies[i + 1]) / (2 * h)
                   for i in range(0, len(energies), 4)], axis=-1)
    gv = np.stack([(energies[i + 2] - energies[i + 3]) / (2 * h)
                   for i in range(0, len(energies), 4)], axis=-1)
    return np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))


class FDTerms:
    """``terms`` of a geometry whose ``gradient_norm`` takes central differences of the energy:
    ``fd_points(p, v)`` gives the points (p′, v′) where it evaluates the energy, in the order
    (Exp_p(+h e_k), Exp_p(−h e_k), v + h e_k, v − h e_k) per frame vector e_k, and
    ``term_losses(p, v, t, y)`` the per-observation Huber losses (..., n) whose mean over the
    last axis is the energy."""

    #: rows per block: rows are independent, and blocks of 2,000 keep the (rows, n, dim)
    #: temporaries in cache (about 20% faster on SPD(2) than 20,000; the same numbers)
    chunk = 2_000

    def __init__(self, fd_points, term_losses, h):
        self.fd_points, self.term_losses, self.h = fd_points, term_losses, h

    def prepare(self, p, v):
        return self.fd_points(p, v)

    def columns(self, points, t, y):
        return [self.term_losses(pp, vv, t, y) for pp, vv in points]

    def norm(self, points, parts, t):
        del points, t
        return fd_norm([losses.mean(axis=-1) for losses in parts], self.h)


def _key(t_i, y_i):
    return float(t_i), np.asarray(y_i).tobytes()


class SharedTerms:
    """``geometry.gradient_norm`` at fixed points (p, v) for many data sets, sharing the work.

    ``geometry.terms`` splits ``gradient_norm`` into per-observation pieces: ``prepare(p, v)``
    (work that depends on the points only, done once per chunk of ``terms.chunk`` rows),
    ``columns(state, t, y)`` (arrays with one entry per observation along axis 1) and
    ``norm(state, parts, t)`` (the norms from those arrays for one data set, its observations
    stacked along axis 1 in its own order). Each distinct observation's columns are computed
    once per call of :meth:`norms`, or once for all calls after :meth:`pin`. Every operation
    per observation is elementwise in it and the data set's arrays are rebuilt in its order, so
    the norms equal ``gradient_norm``'s bit for bit (checked by the audits that use it).
    """

    def __init__(self, geometry, p, v):
        self.terms = geometry.terms
        p, v = np.broadcast_arrays(np.asarray(p), np.asarray(v))
        self.shape = p.shape[:-1]  # points are vectors (..., dim)
        flat_p, flat_v = p.reshape(-1, p.shape[-1]), v.reshape(-1, p.shape[-1])
        step = self.terms.chunk
        self.states = [self.terms.prepare(flat_p[s:s + step], flat_v[s:s + step])
                       for s in range(0, flat_p.shape[0], step)]
        self.pinned = {}

    def _columns(self, obs):
        """{key: per chunk, per part, the observation's (B, ...) column} of ``obs``."""
        if not obs:
            return {}
        t = np.array([o[0] for o in obs.values()], float)
        y = np.array([o[1] for o in obs.values()])
        per_chunk = [self.terms.columns(state, t, y) for state in self.states]
        return {k: [[part[:, j].copy() for part in parts] for parts in per_chunk]
                for j, k in enumerate(obs)}

    def pin(self, t, y):
        """Keep the columns of these observations for every later call."""
        new = {}
        for t_i, y_i in zip(t, y, strict=True):
            k = _key(t_i, y_i)
            if k not in self.pinned:
                new[k] = (t_i, y_i)
        self.pinned.update(self._columns(new))

    def norms(self, datasets):
        """[gradient_norm(p, v, t, y) for (t, y) in datasets]."""
        keys = [[_key(t_i, y_i) for t_i, y_i in zip(t, y, strict=True)] for t, y in datasets]
        new = {}
        for (t, y), ks in zip(datasets, keys, strict=True):
            for k, t_i, y_i in zip(ks, t, y, strict=True):
                if k not in self.pinned and k not in new:
                    new[k] = (t_i, y_i)
        cols = {**self.pinned, **self._columns(new)}
        out = []
        for (t, _), ks in zip(datasets, keys, strict=True):
            t = np.asarray(t, float)
            parts = []
            for c, state in enumerate(self.states):
                n_parts = len(cols[ks[0]][c])
                stacked = [np.stack([cols[k][c][i] for k in ks], axis=1) for i in range(n_parts)]
                parts.append(self.terms.norm(state, stacked, t))
            out.append(np.concatenate(parts).reshape(self.shape))
        return out


def fd_gradient_coords(fd_points, energy, h, p, v, t, y):
    """(∂_p E, ∂_v E) in the frame at p by central differences of ``energy`` at the points
    ``fd_points(p, v)`` (per frame vector e, four: Exp_p(±h e) with v transported, then
    v ± h e); (..., frame size) each."""
    en = [energy(pp, vv, t, y) for pp, vv in fd_points(p, v)]
    gp = [(en[i] - en[i + 1]) / (2 * h) for i in range(0, len(en), 4)]
    gv = [(en[i + 2] - en[i + 3]) / (2 * h) for i in range(0, len(en), 4)]
    return np.stack(gp, axis=-1), np.stack(gv, axis=-1)


def fd_gradient_norm(coords, p, v, t, y, *, dim, chunk=20_000):
    """The norm of the gradient ``coords(p, v, t, y)`` (e.g. :func:`fd_gradient_coords`) at
    points and vectors of ``dim`` coordinates, ``chunk`` points at a time."""
    p, v = np.broadcast_arrays(np.asarray(p, float), np.asarray(v, float))
    flat_p, flat_v = p.reshape(-1, dim), v.reshape(-1, dim)
    out = np.empty(flat_p.shape[0])
    for s in range(0, flat_p.shape[0], chunk):
        gp, gv = coords(flat_p[s:s + chunk], flat_v[s:s + chunk], t, y)
        out[s:s + chunk] = np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))
    return out.reshape(p.shape[:-1])


def gradient_norms(geometry, p, v, datasets):
    """``[geometry.gradient_norm(p, v, t, y) for (t, y) in datasets]``, sharing the work when
    the geometry splits it into per-observation ``terms`` or has its own ``gradient_norms``."""
    if getattr(geometry, "gradient_norms", None) is not None:
        return geometry.gradient_norms(p, v, datasets)
    if getattr(geometry, "terms", None) is not None:
        return SharedTerms(geometry, p, v).norms(datasets)
    return [geometry.gradient_norm(p, v, *data) for data in datasets]


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
        self.g = dict(zip("DE", gradient_norms(geometry, self.p, self.v, (d, e)), strict=True))
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
        return self.stat_from_g(*gradient_norms(self.geometry, p, v, (self.d, self.e)))

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
    fd = SharedTerms(geometry, p, v) if getattr(geometry, "terms", None) is not None else None
    best = (-np.inf, None)
    for name, (t_sh, y_sh) in shared(rng).items():
        def new_obs(a):
            return (np.clip(0.5 + 0.6 * np.tanh(a[..., k]), 0, 1),
                    geometry.response_point(a[..., :k]))

        def data_with(a, t_sh=t_sh, y_sh=y_sh):
            t_new, y_new = new_obs(a)
            return [(np.append(t_sh, tn), np.vstack([y_sh, yn]))
                    for tn, yn in zip(t_new, y_new, strict=True)]

        if fd is not None:  # the shared observations' losses: once per configuration
            fd.pinned = {}
            fd.pin(t_sh, y_sh)

        def objective(a):
            sets = data_with(a[:, :k + 1]) + data_with(a[:, k + 1:])
            if fd is not None:
                g = np.array(fd.norms(sets))
            else:
                g = np.array([geometry.gradient_norm(p, v, *s) for s in sets])
            return np.max(np.abs(g[:len(a)] - g[len(a):]), axis=1)

        starts = rng.normal(scale=2.0, size=(6, 2 * (k + 1)))
        starts[0] = [5.0] * (k + 1) + [-5.0] * (k + 1)
        x, f = O.local_search(objective, starts, rng, steps=12, scale=1.0)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            (t1, y1), (t2, y2) = new_obs(x[i, :k + 1]), new_obs(x[i, k + 1:])
            best = (f[i], ((np.append(t_sh, t1), np.vstack([y_sh, y1])),
                           (np.append(t_sh, t2), np.vstack([y_sh, y2])), name))
    return best[1]


def joint_gradient_norms(p, v, datasets, tau, chunk=20_000):
    """``[RG.joint_gradient_norm(p, v, t, y, tau) for (t, y) in datasets]`` on S², bit for bit,
    each distinct observation's term gradients computed once (neighbouring data sets share all
    but one): the terms of the union are computed by the same elementwise formulas
    (:func:`tests.audit._oracle_regression.term_gradients`), and each data set's (B, n, 3)
    terms are gathered in its own order and averaged as
    :func:`tests.audit._oracle_regression.regression_gradient` averages them."""
    p = np.atleast_2d(np.asarray(p, float))
    v = np.atleast_2d(np.asarray(v, float))
    p, v = np.broadcast_arrays(p, v)
    index, ts, ys, columns = {}, [], [], []
    for t, y in datasets:
        t, y = np.asarray(t, float), np.asarray(y, float)
        cols = []
        for t_i, y_i in zip(t, y, strict=True):
            cols.append(index.setdefault(_key(t_i, y_i), len(ts)))
            if cols[-1] == len(ts):
                ts.append(t_i)
                ys.append(y_i)
        columns.append((np.array(cols, dtype=np.intp), t))
    t_all, y_all = np.array(ts, float), np.array(ys, float)
    out = [np.empty(p.shape[0]) for _ in columns]
    step = max(1, chunk // t_all.size)  # rows are independent: any block gives the same numbers
    for i in range(0, p.shape[0], step):
        a, b = RG._regression_terms(p[i:i + step], v[i:i + step], t_all, y_all, tau)
        for o, (cols, t) in zip(out, columns, strict=True):
            gp = a[:, cols].mean(axis=1)
            gv = (t[None, :, None] * b[:, cols]).mean(axis=1)
            o[i:i + step] = np.sqrt(O.dot(gp, gp) + O.dot(gv, gv))
    return out
