"""Float audit of the exact samplers (DESIGN §12, floating point; issue 28 point 2).

A proof about a continuous law says nothing about the floats a sampler emits: if one data set
can emit a float its neighbour cannot, that one output tells them apart with certainty and
δ = 0 is false (Mironov, CCS 2012). For each output of a data set D, these tests decide
*exactly* whether the neighbour D' could have emitted the same float, from the mechanism's own
cells, and require that it could, in both directions.

The decision is written here independently of the sampler: for the refined envelope, an output
is reachable from D' iff its lattice index lies in one of D''s kept cells, its point is inside
the public domain and its acceptance is finite (every finite acceptance has positive
probability: :func:`dpcore.sampling.floatsafe.bernoulli_exp`, tested below). As a control, the
same audit applied to the former emission ``c + h U`` (a continuous draw in a data-dependent
cell, inverted bit by bit below) finds unreachable outputs: the audit can fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import Euclidean, Sphere
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.envelopes import joint_envelope
from dpcore.mechanisms.kng import (
    KNormGradient,
    frechet_envelope,
    frechet_mean_exact,
    regression_joint_exact,
)
from dpcore.sampling.envelope import RefinedEnvelope
from dpcore.sampling.floatsafe import IntegerWeights, bernoulli_exp
from dpcore.sensitivity import frechet_mean_sensitivity, geodesic_regression_sensitivity

# --------------------------------------------------------------------- neighbouring data
N_LINE, TAU, EPS = 100, 0.5, 2.0  # the Linear regression page's default: n = 100, eps 1 + 1


def _line_neighbours(seed=0):
    """R^1 regression data and a neighbour that replaces its first row by an outlier."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(size=N_LINE)
    y = (0.2 + 0.6 * t + 0.1 * rng.standard_normal(N_LINE))[:, None]
    t2, y2 = t.copy(), y.copy()
    t2[0], y2[0] = 1.0, [-0.9]
    return (t, y), (t2, y2)


def _joint_pair(seed=0, draws=20_000):
    dp, dv = geodesic_regression_sensitivity(N_LINE, TAU, 0.0)
    kng = KNormGradient(manifold=Euclidean(1), epsilon=EPS, sensitivity=float(np.hypot(dp, dv)))
    support = Ball.make(Euclidean(1), np.array([0.5]), 1.0)
    (t, y), (t2, y2) = _line_neighbours(seed)
    kw = dict(tau=TAU, support=support, max_norm=2.0, draws=draws)
    return kng, joint_envelope(kng, t, y, **kw), joint_envelope(kng, t2, y2, **kw)


# --------------------------------------------------------------------- the lattice emission
@pytest.fixture(scope="module")
def joint_pair():
    return _joint_pair()


def test_envelopes_of_neighbours_differ_but_share_the_lattice(joint_pair):
    _, env, env2 = joint_pair
    assert env.lattice == env2.lattice  # public: spacing, origin, coordinates
    cells = {(int(lv), *c) for lv, c in zip(env.level, env.corners.tolist(), strict=True)}
    cells2 = {(int(lv), *c) for lv, c in zip(env2.level, env2.corners.tolist(), strict=True)}
    assert cells != cells2  # the refinement reads the data (the old leak's source)


@pytest.mark.parametrize("direction", ["D->D'", "D'->D"])
def test_every_draw_is_reachable_from_the_neighbour(joint_pair, direction):
    """20,000 draws of the joint KNG at the page's default (R^1, n = 100, eps = 2): each
    emitted float is emitted by the neighbour's sampler with positive probability."""
    _, env, env2 = joint_pair
    src, dst = (env, env2) if direction == "D->D'" else (env2, env)
    index, _ = src.sample_indices(20_000, np.random.default_rng(1))
    floats = src.point(index)
    # The neighbour maps the same index to bit-identical floats (a fixed public function) ...
    np.testing.assert_array_equal(dst.point(index).view(np.int64), floats.view(np.int64))
    # ... and reaches that index: in a kept cell, inside the domain, finite acceptance.
    cells = _containing_cells(dst, index)
    assert np.all(cells >= 0)
    inside = np.abs(dst.coordinates(index)[:, 0]) <= 1.0
    inside &= np.abs(dst.coordinates(index)[:, 1]) <= 2.0
    assert np.all(inside)
    log_acc = dst.log_acceptance(dst.coordinates(index), cells,
                                 IntegerWeights(dst.log_bound + dst.log_volume))
    assert np.all(np.isfinite(log_acc)) and np.all(log_acc <= 1e-9)
    assert np.all(dst.reachable(index))  # the library's own decision agrees


def _containing_cells(env, index):
    """Independent lookup: the cell whose integer box holds each index. Every cell is
    considered: per refinement level (one side length s), the cells whose first corner
    coordinate c satisfies c <= k < c + s are found exactly by binary search among the level's
    cells sorted by c, then the second coordinate is checked the same way."""
    side = np.left_shift(np.int64(1), (env.levels - env.level).astype(np.int64))
    index = np.asarray(index, dtype=np.int64)
    rows_all = np.arange(index.shape[0])
    count = np.zeros(index.shape[0], dtype=np.int64)
    out = np.full(index.shape[0], -1)
    for s in np.unique(side):
        order = np.flatnonzero(side == s)
        order = order[np.argsort(env.corners[order, 0], kind="stable")]
        first = env.corners[order, 0]
        start = np.searchsorted(first, index[:, 0] - s, side="right")  # c > k - s
        stop = np.searchsorted(first, index[:, 0], side="right")  # c <= k
        n = stop - start
        rows = np.repeat(rows_all, n)
        cand = order[np.repeat(start - (np.cumsum(n) - n), n) + np.arange(n.sum())]
        c = env.corners[cand]
        hit = np.all((c <= index[rows]) & (index[rows] < c + s), axis=1)
        np.add.at(count, rows[hit], 1)
        out[rows[hit]] = cand[hit]
    assert np.all(count <= 1)  # cells partition the lattice
    return out


# --------------------------------------------------------------------- control: the old emission
def _legacy_floats(env, cells, j):
    """The former emission ``c + h U`` with ``U = -1 + 2 j 2^-53`` (numpy's uniform(-1, 1))."""
    u01 = j.astype(float) * 2.0**-53
    return env.centers[cells] + env.half[cells, None] * (-1.0 + 2.0 * u01)


def _legacy_reachable(env, x):
    """Exactly whether ``c + h U`` (some 53-bit U, some kept cell of ``env``) equals ``x``
    bit for bit: per candidate cell and axis, bisect the monotone map j -> fl(c + fl(h U)).

    The candidate cells are those of the lattice indices next to ``x`` (shifts of −1, 0, +1
    per axis); a row is reachable if any of them reaches it, so the shift 0 is tried first and
    each later shift only for the rows no earlier one reached (the same answer as trying every
    shift on every row, without bisecting rows already decided)."""
    approx = np.floor((x - env.origin) / env.spacing).astype(np.int64)
    ok = np.zeros(x.shape[0], dtype=bool)
    d = x.shape[1]
    shifts = np.stack(np.meshgrid(*([[-1, 0, 1]] * d), indexing="ij"), -1).reshape(-1, d)
    shifts = shifts[np.argsort(np.abs(shifts).sum(axis=1), kind="stable")]  # 0 first
    for shift in shifts:
        rows = np.flatnonzero(~ok)
        cells = env.cell_of(approx[rows] + shift)
        has = cells >= 0
        rows, cells = rows[has], cells[has]
        hit = np.ones(rows.size, dtype=bool)
        for a in range(d):
            c, h = env.centers[cells, a], env.half[cells]
            lo, hi = np.zeros(c.size, dtype=np.int64), np.full(c.size, 2**53 - 1, np.int64)
            target = x[rows, a]
            for _ in range(54):  # smallest j with value >= target
                mid = (lo + hi) // 2
                val = c + h * (-1.0 + 2.0 * (mid.astype(float) * 2.0**-53))
                go_up = val < target
                lo = np.where(go_up, mid + 1, lo)
                hi = np.where(go_up, hi, mid)
            val = c + h * (-1.0 + 2.0 * (lo.astype(float) * 2.0**-53))
            hit &= val == target
        ok[rows[hit]] = True
    return ok


def test_control_the_audit_finds_the_old_emission_leaky(joint_pair):
    """The same neighbours, drawn the old way (continuous U in a data-dependent cell): some
    outputs of one data set cannot be produced at all by the other."""
    _, env, env2 = joint_pair
    rng = np.random.default_rng(2)
    unreachable = 0
    for src, dst in ((env, env2), (env2, env)):
        w = IntegerWeights(src.log_bound + src.log_volume)
        cells = w.draw(20_000, rng)
        j = rng.integers(0, 2**53, size=(20_000, 2), dtype=np.int64)
        x = _legacy_floats(src, cells, j)
        keep = (np.abs(x[:, 0]) <= 1.0) & (np.abs(x[:, 1]) <= 2.0)
        assert np.all(_legacy_reachable(src, x[keep]))  # the check accepts what src emits
        unreachable += int(np.sum(~_legacy_reachable(dst, x[keep])))
    assert unreachable > 0


# --------------------------------------------------------------------- Fréchet KNG on S^2
def test_frechet_kng_draws_are_reachable_from_the_neighbour():
    m, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    rng = np.random.default_rng(3)
    n, r = 60, 0.4
    pts = m.exp(north, np.concatenate([rng.uniform(-0.2, 0.2, (n, 2)), np.zeros((n, 1))], 1))
    pts2 = pts.copy()
    pts2[0] = m.exp(north, np.array([0.25, -0.25, 0.0]))
    kng = KNormGradient(manifold=m, epsilon=5.0, sensitivity=frechet_mean_sensitivity(n, r, 1.0))
    support = Ball.make(m, north, r)
    env = frechet_envelope(kng, pts, support, draws=5000)
    env2 = frechet_envelope(kng, pts2, support, draws=5000)
    for src, dst in ((env, env2), (env2, env)):
        index, _ = src.sample_indices(5000, np.random.default_rng(4))
        np.testing.assert_array_equal(dst.point(index).view(np.int64),
                                      src.point(index).view(np.int64))
        assert np.all(dst.reachable(index))
    # The release path emits exactly these lattice points.
    res = frechet_mean_exact([kng], pts, size=50, rng=5, support=support)[0]
    assert res.diagnostics["lattice_spacing"] == env.spacing


def test_release_states_its_lattice_publicly():
    from dpcore.release import private_geodesic_regression

    (t, y), _ = _line_neighbours(5)
    rel = private_geodesic_regression(Euclidean(1), t, y, eps_p=1.0, eps_v=1.0, tau=TAU,
                                      covariate_range=(0, 1), tau_m=2.0, rng=6,
                                      sampler="exact")
    assert rel.diagnostics["joint"]["exact"]
    public = rel.to_dict()["diagnostics"]["joint"]
    assert public["lattice_spacing"] > 0
    assert "lattice" in public["float_safety"]


# --------------------------------------------------------------------- the primitives
def test_bernoulli_exp_is_positive_for_every_finite_x_and_matches_exp():
    rng = np.random.default_rng(7)
    # Finite x far beyond exp's underflow (745) is still accepted with positive probability:
    # each of ceil(x) steps succeeds with probability e^{-x/k} >= 1/e, never 0 in floats.
    x = np.array([800.0, 1e4])
    steps = np.ceil(x)
    assert np.all(np.exp(-x / steps) >= np.exp(-1.0))
    assert not np.any(bernoulli_exp(np.array([np.inf]), rng))
    # Law: chi-square over x values against e^-x (threshold 1e-6).
    xs = np.array([0.0, 0.1, 0.7, 1.3, 2.5, 4.0])
    k = 40_000
    hits = bernoulli_exp(np.repeat(xs, k), rng).reshape(xs.size, k).sum(axis=1)
    p = np.exp(-xs)
    assert hits[0] == k
    z = (hits[1:] - k * p[1:]) / np.sqrt(k * p[1:] * (1 - p[1:]))
    assert stats.chi2.sf(np.sum(z**2), df=xs.size - 1) > 1e-6


def test_integer_weights_give_every_component_positive_exact_probability():
    log_mass = np.array([0.0, -800.0, -40.0, -np.inf, 2.0])
    w = IntegerWeights(log_mass)
    assert np.all(w.weights >= 1) and w.weights.dtype == np.int64
    assert np.all(w.log_ratio(np.arange(5)) <= 0)
    draws = w.draw(200_000, np.random.default_rng(8))
    counts = np.bincount(draws, minlength=5)
    expected = 200_000 * np.exp(log_mass - np.logaddexp.reduce(log_mass[np.isfinite(log_mass)]))
    big = expected > 50
    chi = np.sum((counts[big] - expected[big]) ** 2 / expected[big])
    assert stats.chi2.sf(chi, df=int(big.sum()) - 1) > 1e-6


def test_a_violated_envelope_raises():
    """A Lipschitz constant that is too small gives an envelope below the target somewhere:
    sampling refuses (EnvelopeViolation) instead of counting it."""
    kng, _, _ = _joint_pair(draws=200)
    (t, y), _ = _line_neighbours(0)
    from dpcore.learning.regression import regression_gradient
    from dpcore.sampling.envelope import ProductBallDomain

    def g(z):
        gp, gv = regression_gradient(Euclidean(1), z[:, 0], z[:, 1], t, y, tau=TAU)
        return np.sqrt(gp[:, 0] ** 2 + gv[:, 0] ** 2)

    env = RefinedEnvelope(None, None, g, 0.0, kng.sigma, max_cells=64,
                          domain=ProductBallDomain(np.array([0.5]), 1.0, 2.0), draws=10)
    with pytest.raises(EnvelopeViolation, match="not be exact"):
        env.sample(2000, np.random.default_rng(9), n_terms=N_LINE)


def test_regression_joint_exact_outputs_are_lattice_points():
    kng, env, _ = _joint_pair(draws=30)
    (t, y), _ = _line_neighbours(0)
    res = regression_joint_exact([kng], t, y, size=30, rng=10, tau=TAU,
                                 support=Ball.make(Euclidean(1), np.array([0.5]), 1.0),
                                 max_norm=2.0)[0]
    u = np.concatenate([res.values[:, 0] - 0.5, res.values[:, 1]], axis=1)
    index = np.round((u - env.origin) / env.spacing - 0.5).astype(np.int64)
    np.testing.assert_array_equal(env.point(index).view(np.int64), res.values.view(np.int64))


# --------------------------------------------------------------------- exponential quantiles
def test_quantile_draws_are_lattice_cells_every_neighbour_reaches():
    """Private quantiles (exponential mechanism): each output is the midpoint of a cell of the
    public lattice of [a, b], and the neighbour's gaps (of positive length) meet that cell, so
    the neighbour emits the same float with positive probability."""
    from dpcore.mechanisms.quantile import (
        LATTICE_CELLS,
        quantile_edges,
        sample_exponential_quantiles,
    )

    rng = np.random.default_rng(11)
    x = rng.normal(50.0, 10.0, size=500)
    x2 = x.copy()
    x2[0] = 1e9  # clipped to the upper bound
    bounds = (0.0, 100.0)
    a, b = bounds
    width = (b - a) / LATTICE_CELLS
    for src, dst in ((x, x2), (x2, x)):
        t = sample_exponential_quantiles(src, [0.05, 0.5, 0.95], 0.5, bounds, size=4000,
                                         rng=12).ravel()
        k = np.round((t - a) / width - 0.5).astype(np.int64)
        np.testing.assert_array_equal(np.minimum(a + (k + 0.5) * width, b), t)
        edges = quantile_edges(dst, bounds)
        lo = a + k.astype(float) * width
        hi = np.where(k + 1 >= LATTICE_CELLS, b, a + (k + 1).astype(float) * width)
        gaps = np.flatnonzero(np.diff(edges) > 0)
        # some positive-length gap of the neighbour overlaps each emitted cell
        j = np.searchsorted(edges[gaps + 1], lo, side="right")
        j = np.minimum(j, gaps.size - 1)
        overlap = (np.minimum(hi, edges[gaps[j] + 1]) - np.maximum(lo, edges[gaps[j]]))
        assert np.all(overlap > 0)
