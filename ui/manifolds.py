"""The dashboard's manifold vocabulary: one key, label, parameter and default public bounds per
manifold, and :func:`make_manifold`, the one way pages and ``ui`` modules build a manifold.

Keys and tokens
---------------
Each manifold has a key (``"sphere"``, ``"spd"``, ``"kendall"``, ``"euclidean"``) and at most one
integer parameter (SPD: matrix size k; Kendall: number of landmarks k; Euclidean: dimension d).
A *token* is the string a selectbox holds and a URL carries: the key for the default parameter
(``"spd"`` is SPD(2)), or the key followed by the parameter (``"spd3"`` is SPD(3)). Reading
accepts the key with its default parameter spelled out as well, so the older URL value
``"spd2"`` (the Fréchet-mean and sensitivity pages wrote it) still opens SPD(2); writing always
uses :func:`token`, so SPD(2) is ``"spd"`` on every page.

Which manifolds a page offers stays with the page (or its logic module): the regression pages
offer every key here, the Fréchet-mean and sensitivity pages a few tokens
(:data:`ui.logic.frechet_mean.FRECHET_MANIFOLDS`,
:data:`ui.logic.sensitivity.REGRESSION_MANIFOLDS`).

No Streamlit import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.manifolds.base import Manifold


@dataclass(frozen=True)
class ManifoldSpec:
    """One manifold of the dashboard.

    Attributes
    ----------
    key : str
        Canonical key: selectbox value and URL value (with :func:`token`), and the suffix of
        per-manifold widget keys such as ``gr_tau_<key>``.
    label : str
        Display name when the parameter is left to a separate widget (or there is none).
    build : callable
        ``build(param)`` returns the :class:`dpcore.manifolds.Manifold`; ``param`` is None for a
        manifold without a parameter.
    param : str, optional
        Name of the integer parameter (``"k"``, ``"d"``); None if there is none.
    param_label : str, optional
        Label of the widget that sets the parameter.
    param_range : (int, int, int), optional
        Lowest, highest and default parameter the dashboard offers.
    label_with_param : str, optional
        Display name for one parameter value, a format string with one ``{}``.
    tau : float
        Default public bound τ on the residual norms of a geodesic regression (strict mode).
    tau_m : float, optional
        Default radius τ_m of the public ball holding the regression responses; None when
        strict mode needs no such ball (compact spaces with κ_l >= 0).
    radius : float, optional
        Default public radius r of the ball holding the data of a Fréchet mean.
    """

    key: str
    label: str
    build: Callable[[int | None], Manifold]
    param: str | None = None
    param_label: str | None = None
    param_range: tuple[int, int, int] | None = None
    label_with_param: str | None = None
    tau: float = 0.1
    tau_m: float | None = None
    radius: float | None = None

    @property
    def default_param(self):
        """The default parameter (None for a manifold without one)."""
        return None if self.param_range is None else self.param_range[2]

    @property
    def needs_ball(self):
        """Whether strict-mode regression needs a public ball ``B_{tau_m}(center)``."""
        return self.tau_m is not None


#: The manifolds of the dashboard, in display order. Public bounds are generous guesses for the
#: synthetic data of each manifold, stated by the user, never read from the data.
MANIFOLDS: tuple[ManifoldSpec, ...] = (
    ManifoldSpec("sphere", "Sphere S²", lambda _: Sphere(2), tau=0.2, radius=math.pi / 8),
    ManifoldSpec("spd", "SPD(k) covariance matrices", SPD, param="k",
                 param_label="Matrix size k", param_range=(2, 3, 2),
                 label_with_param="SPD({}) covariance matrices", tau=0.1, tau_m=3.0,
                 radius=1.5),
    ManifoldSpec("kendall", "Kendall planar shapes", KendallShape, param="k",
                 param_label="Number of landmarks k", param_range=(3, 20, 8),
                 label_with_param="Kendall planar shapes ({} landmarks)", tau=0.15),
    ManifoldSpec("euclidean", "Euclidean Rᵈ", Euclidean, param="d",
                 param_label="Dimension d", param_range=(1, 6, 2),
                 label_with_param="Euclidean R^{}", tau=0.5, tau_m=6.0),
)
#: The canonical keys, in display order.
KEYS: tuple[str, ...] = tuple(spec.key for spec in MANIFOLDS)
_BY_KEY = {spec.key: spec for spec in MANIFOLDS}
_TOKEN = re.compile(r"([a-z_]+?)(\d+)")


def spec(key):
    """The :class:`ManifoldSpec` of a key or token (``"spd"``, ``"spd3"``, ``"spd2"``)."""
    return _BY_KEY[parse(key)[0]]


def parse(text):
    """Key and parameter of a token: ``"spd"`` -> ``("spd", None)``, ``"spd3"`` -> ``("spd", 3)``.

    Raises
    ------
    ValueError
        For an unknown key, or a parameter the manifold does not take or the dashboard does
        not offer.
    """
    if not isinstance(text, str):
        raise TypeError(f"A manifold key must be a string, got {type(text).__name__}.")
    if text in _BY_KEY:
        return text, None
    match = _TOKEN.fullmatch(text)
    if match and match.group(1) in _BY_KEY:
        key, param = match.group(1), int(match.group(2))
        _check_param(_BY_KEY[key], param)
        return key, param
    raise ValueError(f"Unknown manifold {text!r}; expected one of {KEYS} (SPD, Kendall and "
                     "Euclidean keys may end in their parameter, e.g. 'spd3').")


def _check_param(s, param):
    if s.param_range is None:
        raise ValueError(f"The {s.key} manifold takes no parameter, got {param!r}.")
    low, high, _ = s.param_range
    if not low <= param <= high:
        raise ValueError(f"The {s.key} parameter {s.param} must be from {low} to {high}, "
                         f"got {param}.")


def _resolve(key, param=None):
    """(spec, parameter or None) of a key or token and an optional explicit parameter."""
    base, embedded = parse(key)
    s = _BY_KEY[base]
    if param is not None:
        param = int(param)
        if embedded is not None and embedded != param:
            raise ValueError(f"{key!r} names parameter {embedded}, but param={param} was given.")
        _check_param(s, param)
    else:
        param = embedded
    return s, param


def token(key, param=None):
    """The canonical token of a manifold setting (what a URL carries): the key alone for the
    default parameter, else the key followed by the parameter (``token("spd", 3) == "spd3"``).

    ``key`` may itself be a token, so ``token("spd2") == "spd"``.
    """
    s, param = _resolve(key, param)
    if param is None or param == s.default_param:
        return s.key
    return f"{s.key}{param}"


def canonical(text):
    """:func:`token` of a value read from a URL or a session: an alias such as ``"spd2"`` becomes
    ``"spd"``. Raises ``ValueError`` for anything else (the URL readers then use their
    default)."""
    return token(str(text).strip().lower())


def full_name(key, param=None):
    """The key followed by its parameter, default included (``"spd2"``, ``"kendall8"``,
    ``"sphere"``): for file names and widget keys that must tell parameters apart."""
    s, param = _resolve(key, param)
    return s.key if s.param_range is None else f"{s.key}{param_of(s.key, param)}"


def label(key, param=None):
    """Display name: with the parameter when one is named (in ``key`` or as ``param``), else
    the generic one (``label("kendall") == "Kendall planar shapes"``).

    A manifold whose parameter a page fixes is shown with it: ``label("spd", 2)``, or the
    token ``label("spd3")``.
    """
    s, param = _resolve(key, param)
    if param is None or s.label_with_param is None:
        return s.label
    return s.label_with_param.format(param)


def param_of(key, param=None):
    """The parameter of a setting, the default when none is named (None for a manifold
    without one): ``param_of("spd") == 2``, ``param_of("spd3") == 3``."""
    s, param = _resolve(key, param)
    return s.default_param if param is None else param


def choice_label(key):
    """Display name of a page's choice whose parameter is fixed by the token (the default one
    when the token names none): ``choice_label("spd") == "SPD(2) covariance matrices"``."""
    return label(key, param_of(key))


def make_manifold(key, param=None):
    """The manifold of a dashboard setting.

    Parameters
    ----------
    key : str
        A key of :data:`MANIFOLDS` or a token (``"spd3"``; the older ``"spd2"`` is SPD(2)).
    param : int, optional
        SPD matrix size k, Kendall landmarks k or Euclidean dimension d (default: the
        manifold's default, see :attr:`ManifoldSpec.param_range`). Must be None for a manifold
        without a parameter.

    Returns
    -------
    dpcore.manifolds.Manifold

    Raises
    ------
    ValueError
        Unknown key, or a parameter out of the dashboard's range.
    """
    return spec(key).build(param_of(key, param))


__all__ = [
    "KEYS",
    "MANIFOLDS",
    "ManifoldSpec",
    "canonical",
    "choice_label",
    "full_name",
    "label",
    "make_manifold",
    "param_of",
    "parse",
    "spec",
    "token",
]
