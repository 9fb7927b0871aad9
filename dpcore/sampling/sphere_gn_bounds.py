r"""Gauss-Newton split lower bound of :math:`g = |G|` over a leaf (issue 28; used by
:mod:`dpcore.sampling.bundle_farfield`, evaluated by ``gn_term``, ``_gn_columns`` and
``_gn_lower`` in :mod:`dpcore.sampling._farfield_numba`).

Why
---
The mean-value bound of :mod:`~dpcore.sampling.sphere_jacobian_bounds`,
:math:`g(z) \ge g(c) - \sum_i\int_0^1|DG_i/ds|\,ds`, sums every term's change in absolute
value. Its largest part is each term's Gauss-Newton part: for an unclipped residual
:math:`D\varepsilon_i/ds \approx -\dot{\hat y}_i`, so :math:`DG_i/ds \approx \frac1n(Q_aL_i\delta,
tQ_bL_i\delta)`, whose sum over the terms cancels in the valley's thin directions
(:math:`\frac1n\sum_i|L_i\delta|` is about :math:`g(c)` on the leaves that carry the envelope
mass at :math:`n\epsilon = 1000`, while :math:`g` changes by 5-15 :math:`\sigma` over them).
Here that part is kept *exactly at the centre and summed with its signs* (a linear function
of the leaf's noise symbols), and only its change along the segment, and the
residual-dependent rest, are summed in absolute value.

Notation
--------
That of :mod:`~dpcore.sampling.sphere_jacobian_bounds` (terms, :math:`\rho = tW`, :math:`m`,
:math:`Q_a = \mathrm{diag}(1, \cos\rho)`, :math:`Q_b = \mathrm{diag}(1, \mathrm{sinc}\,\rho)` in
the parallel frame :math:`(e, N)` along the prediction geodesic) and of
:mod:`~dpcore.sampling.bundle_farfield` ("Prediction speed": the chart frame :math:`f`,
:math:`L(s)\delta = Q_a(w_s)\pi + tQ_b(w_s)\nu` the prediction's velocity
:math:`\dot{\hat y}` transported back to :math:`p(s)`, in :math:`f`-components, with
:math:`|L(s)\delta - L_c\delta| \le s\eta_1`, the speed :math:`\eta(s) \le \min(\eta_0 + s\eta_1,
P + tN)`, :math:`|\chi| \le X`, :math:`|\delta_w| \le D_w`, the slack shares :math:`s_0, s_1`).
:math:`G = -\frac1n\sum_i(a_i, b_i)`; a leaf is :math:`\{c + B\varepsilon + \zeta\}`,
:math:`\delta = z - c = B\varepsilon + \zeta`.

The bound
---------
Let :math:`U` be the terms with :math:`t_i \ge 0` whose angle stays below :math:`\tau` along
every segment from the centre into the leaf (:math:`\theta(c) + \min(\eta_0 + \eta_1/2, P +
tN) + 10^{-9} < \tau`, the range of :mod:`~dpcore.sampling.sphere_jacobian_bounds`). For
:math:`i \in U` the residual is :math:`\varepsilon = \mathrm{Log}_{\hat y}y` on the whole segment
and (Hessian of :math:`\theta` on :math:`S^2`, as in that module)
:math:`D\varepsilon/ds = -\dot{\hat y} + (1 - \theta\cot\theta)\dot{\hat y}_\perp`, so
:math:`|D\varepsilon/ds + \dot{\hat y}| \le \lambda(\theta)\eta`,
:math:`\lambda(\theta) = 1 - \theta\cot\theta`, increasing on :math:`[0, \pi)`, and
:math:`\lambda(x) \le x^2/3 + x^4/40` for :math:`x \le 1` (its series is
:math:`\sum_{k \ge 1}2\zeta(2k)(x/\pi)^{2k} = \frac{x^2}3 + \frac{x^4}{45} + \ldots`, and with
:math:`\zeta(2k) \le \zeta(6) < 1.0174` for :math:`k \ge 3` the terms from :math:`x^6` on sum
to at most :math:`2.035(x/\pi)^6/(1 - \pi^{-2}) < 0.00236x^4`, while
:math:`1/45 + 0.00236 < 1/40`); above 1 it is evaluated directly. The transport form of
:mod:`~dpcore.sampling.sphere_jacobian_bounds` writes
:math:`Da/ds = \Pi^{-1}Q_aD\varepsilon/ds + R_a`, :math:`|R_a| \le m\,\alpha_a`,
:math:`\alpha_a = P(c_1 + \min(\rho^2/2, 2)s) + tN(s + \rho)` (the holonomy and the
rotation of :math:`Q_a`'s frame), and :math:`Db/ds = t\Pi^{-1}Q_bD\varepsilon/ds + R_b`,
:math:`|R_b| \le tm\,\alpha_b`, :math:`\alpha_b = P(c_1 + \rho^2s/6) + tN\rho`; each
:math:`\alpha` is replaced by the smaller rotating-form bound :math:`\beta_a` (with the
piece's speed) or :math:`\beta_b` where that is smaller (the same :math:`R_a, R_b`,
bounded in the rotating frame of :mod:`~dpcore.sampling.sphere_jacobian_bounds`). Since
:math:`\Pi^{-1}Q_a\dot{\hat y} = Q_aL\delta` (:math:`Q_a` is diagonal in the parallel frame and
:math:`\Pi^{-1}\dot{\hat y}` is the transported Jacobi field :math:`L\delta`),

.. math:: \frac{DG_i}{ds} = GN_i(s) + E_i(s),\quad GN_i(s) = \tfrac1n(Q_aL\delta,\ tQ_bL\delta),
          \quad n|E_i| \le \sqrt{(\lambda\eta + m\alpha_a)^2 + t^2(\lambda\eta + m\alpha_b)^2},

:math:`m \le \theta_{hi}`, integrated over the pieces of the segment as in that module (on
piece :math:`k`, :math:`\theta \le \theta_{hi,k}` and :math:`\eta \le \eta_k`).

*Change of the Gauss-Newton part.* :math:`GN_i(s)` has :math:`f`-components
:math:`x(s) = (Q_a(w_s)L(s)\delta, tQ_b(w_s)L(s)\delta)`. Transported along :math:`p(s)` to
:math:`p(c)` the frame :math:`f` turns by at most :math:`s\sup k(r)|\chi| \le sX/2` (its
connection form is :math:`(1 - \cos r)d\varphi`, :math:`\dot\varphi = \chi/r^2`), so
:math:`|P_sGN_i(s) - GN_i(0)| \le \frac1n(\frac{sX}2|x(s)| + |x(s) - x(0)|)`, with
:math:`|x(s)| \le \sqrt{1 + t^2}\eta(s)` and, by :math:`\|Q_a(w_s) - Q_a(w_c)\| \le
stD_wq_a`, :math:`\|Q_b(w_s) - Q_b(w_c)\| \le 0.3727\,stD_w\rho` (the bounds of
:math:`dQ/ds` of :mod:`~dpcore.sampling.bundle_farfield`) and :math:`|L(s)\delta - L_c\delta|
\le s\eta_1`: :math:`|x(s) - x(0)| \le s[tD_w(q_a + 0.3727t\rho)\eta_{max} + (1 + t)\eta_1]`,
:math:`\eta_{max} = \min(\eta_0 + \eta_1, P + tN)`. Integrating :math:`s` over
:math:`[0, 1]` gives the factor :math:`\frac12`.

*The slack.* :math:`GN_i(0)` is linear in :math:`\delta`; on :math:`\zeta` it is at most
:math:`\frac1n\sqrt{1 + t^2}(s_0 + ts_1)` (:math:`|L_c\zeta| \le s_0 + ts_1`).

So, with :math:`K\varepsilon = \sum_{i \in U}GN_i(0)[B\varepsilon]` (in the frame
:math:`(e, n)` at :math:`p(c)`, :math:`e = v/|v|`, :math:`n = p \times e`: per term and noise
symbol :math:`j` the components :math:`\frac1n(\ell_1, \cos\rho\,\ell_2, t\ell_1,
t\,\mathrm{sinc}\rho\,\ell_2)`, :math:`\ell_1 = A_{je} + tB_{je}`, :math:`\ell_2 = \cos\rho
A_{jn} + t\,\mathrm{sinc}\rho\,B_{jn}` from the columns of :math:`A, B` at the centre), and
every term outside :math:`U` bounded by its mean-value bound :math:`\int|DG_i/ds|`:

.. math:: P_1G(z) = G(c) + K\varepsilon + \mathcal R, \qquad |\mathcal R| \le
          \frac1n\Big(\sum_{i \in U}r_i + \sum_{i \notin U}\mathrm{mv}_i\Big),

:math:`r_i` the sum of the three parts above. With :math:`d = G(c)/|G(c)|` (a unit vector, so
:math:`g(z) = |P_1G(z)| \ge d\cdot P_1G(z)`):

.. math:: g(z) \ge |G(c)| - \sum_j|d\cdot K_j| - |\mathcal R| ,

for every :math:`z` of the leaf in the public support (the same caps as the mean-value bound).
:class:`~dpcore.sampling.bundle_farfield.FarFieldBundleSampler` takes the larger of this and
the mean-value bound (both are lower bounds). The components of :math:`G(c)` in
:math:`(e, n)` come from the library's weighted sums (:math:`g_p\cdot e = -\sum_if_i\langle e_i,
y_i\rangle/n`, :math:`g_p\cdot n = -\langle W_p, n\rangle/n`, likewise for :math:`g_v`).

Float safety: relative margins :math:`10^{-9}` on :math:`r_i` and on
:math:`\sum_j|d\cdot K_j|`, :math:`10^{-9}` times the sum of the absolute column entries for
the cancellation in :math:`K`, :math:`d` shortened by :math:`10^{-12}`, and the absolute
:data:`~dpcore.sampling.bundle_farfield.G_SLACK` for the float centre (as the mean-value
bound). ``tests/sampling/test_sphere_gn_bounds.py`` checks the bound against the library's
:math:`g` on random leaves (near the fit and far from it, thin directions, near-antipodal
responses, terms clipped, unclipped and crossing :math:`\tau`) and the centre frame against
the library's gradient.
"""

from __future__ import annotations

__all__ = ["LAMBDA_SERIES_LIMIT"]

#: Below this angle the bound :math:`1 - x\cot x \le x^2/3 + x^4/40` is used.
LAMBDA_SERIES_LIMIT = 1.0
