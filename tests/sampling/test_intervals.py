"""Interval arithmetic (dpcore.sampling.intervals): every float evaluation at points of the
inputs lies in the output interval (10,000 points per operation, endpoints included), ranges
are tight where the function's shape is known, and exact values (mpmath) of a few endpoint
cases are enclosed."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpcore.sampling.intervals import Interval, dot, hull, intersect, sinc, sqnorm, where

N_INTERVALS, N_POINTS = 500, 20  # 10,000 points per operation
TINY_ULPS = 16


def random_intervals(rng, kind, m=N_INTERVALS):
    """Intervals of one family: straddling 0, wide, tiny, positive, near +-1, huge spans."""
    if kind == "straddle":
        lo, hi = -rng.uniform(0, 3, m), rng.uniform(0, 3, m)
    elif kind == "wide":
        c = rng.uniform(-20, 20, m)
        r = rng.uniform(0, 15, m)
        lo, hi = c - r, c + r
    elif kind == "tiny":
        c = rng.uniform(-5, 5, m)
        lo, hi = c, c + np.abs(c) * rng.uniform(0, 1e-13, m)
    elif kind == "positive":
        lo = rng.uniform(1e-3, 4, m)
        hi = lo + rng.exponential(1.0, m)
    elif kind == "negative":
        hi = -rng.uniform(1e-3, 4, m)
        lo = hi - rng.exponential(1.0, m)
    elif kind == "mixed":  # a bit of everything, including exact points
        lo = rng.normal(0, 2, m)
        hi = lo + np.where(rng.random(m) < 0.2, 0.0, rng.exponential(1.0, m))
    else:
        raise ValueError(kind)
    return Interval(lo, hi)


def points_in(iv, rng, k=N_POINTS):
    """(m, k) points of each interval: both endpoints, then uniform draws."""
    lo, hi = iv.lo[:, None], iv.hi[:, None]
    x = lo + (hi - lo) * rng.random((lo.shape[0], k))
    x[:, 0], x[:, 1] = iv.lo, iv.hi
    return np.clip(x, lo, hi)


def assert_encloses(out, values):
    values = np.asarray(values)
    assert np.all(out.lo[:, None] <= values), np.min(values - out.lo[:, None])
    assert np.all(values <= out.hi[:, None]), np.min(out.hi[:, None] - values)


KINDS = ["straddle", "wide", "tiny", "positive", "negative", "mixed"]


@pytest.mark.parametrize("kind_a", KINDS)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_binary_operations_enclose(rng, op, kind_a):
    a = random_intervals(rng, kind_a)
    b = random_intervals(rng, KINDS[rng.integers(len(KINDS))])
    xa, xb = points_in(a, rng), points_in(b, rng)
    # pair every corner with every corner as well
    xb[:, 2:6] = np.stack([b.lo, b.hi, b.lo, b.hi], axis=1)
    xa[:, 2:6] = np.stack([a.lo, a.lo, a.hi, a.hi], axis=1)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    out = {"add": a + b, "sub": a - b, "mul": a * b}[op]
    assert_encloses(out, fn(xa, xb))
    # interval (op) array and array (op) interval
    pb = b.lo
    out_pt = {"add": a + pb, "sub": a - pb, "mul": a * pb}[op]
    assert_encloses(out_pt, fn(xa, pb[:, None]))
    out_rev = {"add": pb + a, "sub": pb - a, "mul": pb * a}[op]
    assert isinstance(out_rev, Interval)
    assert_encloses(out_rev, fn(pb[:, None], xa))


@pytest.mark.parametrize("kind_a, kind_b", [
    ("positive", "positive"), ("positive", "straddle"), ("straddle", "positive"),
    ("negative", "positive"), ("positive", "negative"), ("straddle", "straddle"),
    ("negative", "negative")])
def test_product_sign_cases(rng, kind_a, kind_b):
    """Each sign pattern of the product (the fast paths included), arrays and 0-d."""
    a, b = random_intervals(rng, kind_a), random_intervals(rng, kind_b)
    xa, xb = points_in(a, rng), points_in(b, rng)
    xa[:, 2:6] = np.stack([a.lo, a.lo, a.hi, a.hi], axis=1)
    xb[:, 2:6] = np.stack([b.lo, b.hi, b.lo, b.hi], axis=1)
    assert_encloses(a * b, xa * xb)
    for i in range(5):
        prod = a[i] * b[i]
        corners = np.outer([a.lo[i], a.hi[i]], [b.lo[i], b.hi[i]])
        assert prod.lo <= corners.min() and corners.max() <= prod.hi


@pytest.mark.parametrize("kind_b", ["positive", "negative", "tiny"])
def test_division_encloses(rng, kind_b):
    a = random_intervals(rng, "mixed")
    b = random_intervals(rng, kind_b)
    b = Interval(np.where(b.straddles_zero(), 1.0, b.lo), np.where(b.straddles_zero(), 2.0, b.hi))
    xa, xb = points_in(a, rng), points_in(b, rng)
    assert_encloses(a / b, xa / xb)
    assert_encloses(2.5 / b, 2.5 / xb)


def test_division_by_zero_is_explicit():
    a, b = Interval([1.0, 1.0], [2.0, 2.0]), Interval([-1.0, 1.0], [1.0, 2.0])
    with pytest.raises(ZeroDivisionError):
        a / b
    out = a.div(b, on_zero="whole")
    assert out.lo[0] == -np.inf and out.hi[0] == np.inf
    assert out.lo[1] <= 0.5 and out.hi[1] >= 2.0 and np.isfinite(out.hi[1])


UNARY = {
    "neg": (lambda iv: -iv, np.negative, KINDS),
    "square": (Interval.square, np.square, KINDS),
    "abs": (Interval.abs, np.abs, KINDS),
    "sqrt": (Interval.sqrt, np.sqrt, ["positive", "tiny_pos"]),
    "exp": (Interval.exp, np.exp, KINDS),
    "sin": (Interval.sin, np.sin, KINDS + ["huge"]),
    "cos": (Interval.cos, np.cos, KINDS + ["huge"]),
    "arccos": (Interval.arccos, np.arccos, ["unit", "near_one", "near_minus_one"]),
    "sinc": (sinc, lambda x: np.sin(x) / np.where(x == 0, 1.0, x) + (x == 0), KINDS),
}


def unary_input(rng, kind):
    m = N_INTERVALS
    if kind == "tiny_pos":
        lo = rng.uniform(0, 1e-300, m)
        return Interval(lo, lo * (1 + 1e-14))
    if kind == "huge":  # spans of several periods and narrow ones far out
        c = rng.uniform(-1e4, 1e4, m)
        r = np.where(rng.random(m) < 0.5, rng.uniform(3, 20, m), rng.uniform(0, 1, m))
        return Interval(c - r, c + r)
    if kind == "unit":
        lo = rng.uniform(-1, 1, m)
        return Interval(lo, np.minimum(1.0, lo + rng.exponential(0.3, m)))
    if kind == "near_one":
        hi = 1 - rng.uniform(0, 1e-9, m) * (rng.random(m) < 0.7)
        return Interval(hi - rng.uniform(0, 1e-6, m), hi)
    if kind == "near_minus_one":
        lo = -1 + rng.uniform(0, 1e-9, m) * (rng.random(m) < 0.7)
        return Interval(lo, lo + rng.uniform(0, 1e-6, m))
    return random_intervals(rng, kind)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_operations_enclose(rng, name):
    method, fn, kinds = UNARY[name]
    for kind in kinds:
        a = unary_input(rng, kind)
        if name == "exp":
            a = Interval(np.clip(a.lo, -50, 50), np.clip(a.hi, -50, 50))
        x = points_in(a, rng)
        out = method(a)
        assert_encloses(out, fn(x))


def test_sin_cos_critical_points_and_wide_spans():
    # Intervals with endpoints exactly at the floats nearest k pi / 2.
    k = np.arange(-12, 13)
    ends = k * (np.pi / 2)
    for lo, hi in [(ends[:-1], ends[1:]), (ends[:-2], ends[2:]), (ends[:-4], ends[4:])]:
        iv = Interval(lo, hi)
        x = np.linspace(lo, hi, 2001).T
        assert_encloses(iv.sin(), np.sin(x))
        assert_encloses(iv.cos(), np.cos(x))
    wide = Interval([0.0, -100.0, 5.0], [2 * np.pi + 1e-9, -90.0, 5.0 + 2 * np.pi])
    for out in (wide.sin(), wide.cos()):
        assert np.all(out.lo == -1.0) and np.all(out.hi == 1.0)


def ulps_from(value, target):
    return abs(value - target) / np.spacing(max(abs(target), 1e-300))


def test_tightness():
    s = Interval(0.0, np.pi).sin()
    assert -1e-15 < s.lo <= 0.0 and s.hi == 1.0
    s = Interval(0.1, 0.2).sin()
    assert ulps_from(s.lo, np.sin(0.1)) <= TINY_ULPS and ulps_from(s.hi, np.sin(0.2)) <= TINY_ULPS
    s = Interval(2.0, 4.0).sin()  # max at pi/2 is outside: both ends from the endpoints
    assert ulps_from(s.hi, np.sin(2.0)) <= TINY_ULPS and ulps_from(s.lo, np.sin(4.0)) <= TINY_ULPS
    c = Interval(-0.1, 0.1).cos()
    assert c.hi == 1.0 and ulps_from(c.lo, np.cos(0.1)) <= TINY_ULPS
    c = Interval(3.0, 3.5).cos()
    assert c.lo == -1.0 and ulps_from(c.hi, np.cos(3.5)) <= TINY_ULPS
    x = Interval(-1.0, 2.0)
    sq = x.square()
    assert sq.lo == 0.0 and ulps_from(sq.hi, 4.0) <= TINY_ULPS
    naive = x * x
    assert naive.lo <= -2.0  # the product does not know both factors are the same
    a = x.abs()
    assert a.lo == 0.0 and a.hi == 2.0
    assert x.mig() == 0.0 and x.mag() == 2.0
    assert Interval(-3.0, -2.0).mig() == 2.0
    ac = Interval(-1.0, 1.0).arccos()
    assert ac.lo == 0.0 and np.pi <= ac.hi <= np.pi * (1 + 1e-15)
    e = Interval(0.0, 1.0).exp()
    assert ulps_from(e.lo, 1.0) <= TINY_ULPS and ulps_from(e.hi, np.e) <= TINY_ULPS
    sc = sinc(Interval(-0.5, 1e-3))
    assert sc.hi == 1.0 and ulps_from(sc.lo, np.sin(0.5) / 0.5) <= TINY_ULPS
    r = Interval(4.0, 9.0).sqrt()
    assert ulps_from(r.lo, 2.0) <= TINY_ULPS and ulps_from(r.hi, 3.0) <= TINY_ULPS
    assert r.lo <= 2.0 and r.hi >= 3.0


def test_exact_endpoint_values_are_enclosed():
    mpmath.mp.prec = 200
    mpf = mpmath.mpf
    cases = [
        (Interval(1.0, 2.0).exp(), mpmath.exp(1), mpmath.exp(2)),
        (Interval(0.5, 3.0).log(), mpmath.log(mpf(0.5)), mpmath.log(3)),
        (Interval.point(1.0 + 2.0**-52).log(), mpmath.log(1 + mpf(2)**-52),
         mpmath.log(1 + mpf(2)**-52)),
        (Interval(0.1, 0.1) * 3.0, mpf(0.1) * 3, mpf(0.1) * 3),
        (Interval.point(1.0) / 3.0, mpf(1) / 3, mpf(1) / 3),
        (Interval.point(2.0).sqrt(), mpmath.sqrt(2), mpmath.sqrt(2)),
        (Interval(-1.0, -1.0 + 1e-10).arccos(), mpmath.acos(mpf(-1.0 + 1e-10)), mpmath.pi),
        (Interval(0.5, 0.5).arccos(), mpmath.pi / 3, mpmath.pi / 3),
        (Interval(np.pi, np.pi).sin(), mpmath.sin(mpf(np.pi)), mpmath.sin(mpf(np.pi))),
        (Interval(1e-8, 1e-8).cos(), mpmath.cos(mpf(1e-8)), mpmath.cos(mpf(1e-8))),
        (Interval(1e22, 1e22).sin(), mpmath.sin(mpf(1e22)), mpmath.sin(mpf(1e22))),
        (sinc(Interval(1e-9, 1e-9)), mpmath.sin(mpf(1e-9)) / mpf(1e-9), 1),
        (sinc(Interval(2.0, 5.0)), mpmath.sin(5) / 5, mpmath.sin(2) / 2),
        (Interval.point(np.full(1000, 0.1)).sum(), 1000 * mpf(0.1), 1000 * mpf(0.1)),
        (Interval.point(np.full(7, 1 / 7)).mean(), mpf(1 / 7), mpf(1 / 7)),
    ]
    for out, a, b in cases:
        assert mpf(float(np.min(out.lo))) <= min(a, b), (out, a, b)
        assert mpf(float(np.max(out.hi))) >= max(a, b), (out, a, b)


def test_libm_accuracy_assumption():
    """The module assumes numpy's exp/log/sin/cos/arccos are within 2 ulp; check a sample."""
    mpmath.mp.prec = 120
    rng = np.random.default_rng(5)
    near_k_pi = (np.arange(-8, 9) * np.pi / 2 + rng.uniform(-1e-7, 1e-7, 17))
    args = {
        np.sin: (mpmath.sin, np.concatenate([rng.uniform(-20, 20, 300), near_k_pi])),
        np.cos: (mpmath.cos, np.concatenate([rng.uniform(-20, 20, 300), near_k_pi])),
        np.exp: (mpmath.exp, rng.uniform(-40, 40, 300)),
        np.log: (mpmath.log, np.concatenate([np.exp(rng.uniform(-40, 40, 300)),
                                             1 + rng.uniform(-1e-6, 1e-6, 20)])),
        np.arccos: (mpmath.acos, np.concatenate([rng.uniform(-1, 1, 300),
                                                 1 - rng.uniform(0, 1e-8, 20)])),
    }
    for fn, (mfn, x) in args.items():
        y = fn(x)
        worst = max(float(abs(mpf_ - mfn(mpmath.mpf(float(xi)))) / np.spacing(abs(float(
            mfn(mpmath.mpf(float(xi))))))) for xi, mpf_ in zip(x, map(mpmath.mpf, y.tolist()),
                                                            strict=True))
        assert worst <= 2.0, (fn, worst)


def test_reductions_enclose(rng):
    m, k = 300, 40
    a = Interval(rng.normal(0, 1, (m, k)), None)
    a = Interval(a.lo, a.lo + rng.exponential(0.1, (m, k)))
    b = Interval(rng.normal(0, 1, (m, k)), None)
    b = Interval(b.lo, b.lo + rng.exponential(0.1, (m, k)))
    for _ in range(25):  # 25 x 300 = 7,500 random points plus the corners below
        xa = a.lo + (a.hi - a.lo) * rng.random((m, k))
        xb = b.lo + (b.hi - b.lo) * rng.random((m, k))
        for out, val in [(a.sum(axis=1), xa.sum(axis=1)), (a.mean(axis=1), xa.mean(axis=1)),
                         (dot(a, b, axis=1), np.sum(xa * xb, axis=1)),
                         (sqnorm(a, axis=1), np.sum(xa * xa, axis=1))]:
            assert np.all(out.lo <= val) and np.all(val <= out.hi)
    for xa in (a.lo, a.hi):
        assert np.all(a.sum(axis=1).contains(xa.sum(axis=1)))
    # exact sums with mpmath for a few rows of nasty magnitudes
    mpmath.mp.prec = 300
    x = np.concatenate([[1e16, 1.0, -1e16, 3.0], rng.normal(0, 1e8, 50)])
    s = Interval.point(x).sum()
    exact = mpmath.fsum([mpmath.mpf(float(v)) for v in x])
    assert mpmath.mpf(float(s.lo)) <= exact <= mpmath.mpf(float(s.hi))
    assert sqnorm(Interval([-1.0, -2.0], [1.0, 3.0])).lo == 0.0


def test_set_operations_and_helpers():
    a, b = Interval([0.0, 1.0], [2.0, 3.0]), Interval([1.0, -1.0], [4.0, 0.5])
    h = hull(a, b)
    np.testing.assert_array_equal(h.lo, [0.0, -1.0])
    np.testing.assert_array_equal(h.hi, [4.0, 3.0])
    i = intersect(a[:1], b[:1])
    assert i.lo[0] == 1.0 and i.hi[0] == 2.0
    with pytest.raises(ValueError):
        intersect(a[1:], b[1:])
    w = where(np.array([True, False]), a, b)
    np.testing.assert_array_equal(w.lo, [0.0, -1.0])
    with pytest.raises(ValueError):
        Interval(1.0, 0.0)
    with pytest.raises(ValueError):
        Interval(-2.0, -1.0).sqrt()
    with pytest.raises(ValueError):
        Interval(1.5, 2.0).arccos()
    assert Interval(-0.5, 4.0).sqrt().lo == 0.0
    assert Interval(0.5, 3.0).arccos().lo == 0.0  # argument clamped to [-1, 1]
    assert isinstance(np.ones(2) * a, Interval)
    p = Interval.point([1.0, 2.0])
    assert np.all(p.width() == 0) and np.all(p.mid() == [1.0, 2.0])
    st = Interval.stack([a, b], axis=-1)
    assert st.shape == (2, 2)
