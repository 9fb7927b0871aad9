"""Parts shared by the request classes: how a request compares its manifold, public points
held as tuples, the privacy event a release will cost (with group privacy), and the JSON
settings of an exported script.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ..._validation import check_int, check_manifold, check_positive
from ...manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from ...mechanisms.base import check_point
from ..record import Release
from ..work import refusal_message, resolve_budget

#: Manifolds whose ``repr`` names every parameter: a request compares them by it and
#: :func:`manifold_from_repr` rebuilds them.
BUILTIN_MANIFOLDS = {cls.__name__: cls for cls in (Euclidean, Sphere, SPD, KendallShape,
                                                   Hyperbolic)}


def manifold_key(manifold):
    """What a request compares its manifold by (for ``==`` and ``hash``).

    ``("Sphere", "Sphere(2)")`` for a built-in manifold (two ``Sphere(2)`` objects are the
    same space); for any other manifold (a wrapped geomstats space, whose ``repr`` does not
    name all its parameters) the object itself, compared by identity.
    """
    if type(manifold) in BUILTIN_MANIFOLDS.values():
        return (type(manifold).__name__, repr(manifold))
    return ("object", manifold)


def manifold_from_repr(text):
    """The built-in manifold a ``repr`` names (``"Sphere(2)"`` -> ``Sphere(2)``), without
    evaluating any code.

    Raises
    ------
    ValueError
        For a text that does not name a built-in manifold (:data:`BUILTIN_MANIFOLDS`).
    """
    match = re.fullmatch(r"\s*(\w+)\((\d+)\)\s*", str(text))
    if match is None or match.group(1) not in BUILTIN_MANIFOLDS:
        listed = ", ".join(f"{name}(k)" for name in BUILTIN_MANIFOLDS)
        raise ValueError(f"`manifold` must name a built-in manifold ({listed}), got {text!r}; "
                         "pass the manifold object instead.")
    return BUILTIN_MANIFOLDS[match.group(1)](int(match.group(2)))


def nested_tuple(values):
    """An array as nested tuples of floats (hashable, and bit-for-bit the same floats)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 0:
        return float(arr)
    return tuple(nested_tuple(row) for row in arr)


def point_tuple(manifold, value, name):
    """A public point checked against ``manifold`` (shape, finite, on the manifold), held as
    nested tuples; None stays None."""
    if value is None:
        return None
    return nested_tuple(check_point(manifold, value, name))


def optional_positive(value, name):
    """``value`` as a positive float (:func:`~dpcore._validation.check_positive`), or None."""
    return None if value is None else check_positive(value, name)


def optional_seed(value, name="seed"):
    """A seed: None (OS entropy) or an integer >= 0."""
    return None if value is None else check_int(value, name, minimum=0)


def optional_budget(value):
    """A work budget in seconds (:func:`~dpcore.release.work.resolve_budget`), or None."""
    return None if value is None else resolve_budget(value)


def json_safe(value):
    """Settings as JSON types: tuples and arrays as lists, an infinite budget as ``"inf"``
    (the release reads it with ``float``)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(v) for v in (value.tolist() if isinstance(value, np.ndarray)
                                       else value)]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    return value


# ---------------------------------------------------------------------- privacy events
def group_privacy(epsilon=None, delta=None, mu=None, rows=1):
    r"""A guarantee for one person who contributes ``rows`` rows (group privacy): the
    ledger's :func:`dpcore.privacy.ledger.group`, with ``rows`` validated as a positive int.

    Returns
    -------
    (epsilon, delta, mu)
    """
    from ...privacy.ledger import group

    return group(epsilon, delta, mu, check_int(rows, "rows"))


def record_outline(*, mechanism, epsilon, delta, mu, coverage, mode, seeded, from_data=()):
    """A :class:`~dpcore.release.Release` without values: what a release with these public
    facts will be, so that its :attr:`~dpcore.release.Release.guarantee` and
    :attr:`~dpcore.release.Release.label` come from the record's own rules (DESIGN §12).

    ``from_data`` names the bounds that will be taken from the data (paper mode) or were
    supplied as taken from it (``bound_sources``).
    """
    return Release(values={}, mechanism=mechanism, epsilon=epsilon, delta=delta, mu=mu,
                   sensitivity={}, sigma={},
                   assumptions={name: {"value": None, "source": "data"} for name in from_data},
                   diagnostics={}, mode=mode, seeded=bool(seeded), coverage=coverage)


def planned_event(outline, *, rows=1, source="", note=""):
    """The :class:`~dpcore.privacy.PrivacyEvent` of a release outlined by
    :func:`record_outline`, for a person with ``rows`` rows (:func:`group_privacy`)."""
    from ...privacy import PrivacyEvent

    epsilon, delta, mu = group_privacy(outline.epsilon, outline.delta, outline.mu, rows)
    if int(rows) > 1 and not note:
        note = f"group privacy: {int(rows)} rows per person"
    return PrivacyEvent(epsilon=None if epsilon is None else float(epsilon),
                        delta=None if delta is None else float(delta),
                        mu=None if mu is None else float(mu), guarantee=outline.guarantee,
                        label=outline.label, source=source, note=note)


# ---------------------------------------------------------------------- the common base
class Request:
    """Behaviour shared by the request dataclasses (they define the fields).

    A subclass sets ``_SCRIPT_ONLY``, the keys of its script settings that are not fields
    with their only value (e.g. ``mechanism="gaussian"`` of a Gaussian request), and
    implements ``release_kwargs``.
    """

    _SCRIPT_ONLY = {}

    def _set(self, name, value):
        object.__setattr__(self, name, value)  # frozen dataclass: normalised once, here

    def _set_manifold(self):
        self._set("manifold", check_manifold(self.manifold))
        self._set("_manifold_key", manifold_key(self.manifold))

    def replace(self, **changes):
        """A copy with ``changes`` (:func:`dataclasses.replace`; validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def seeded(self):
        """Whether the release will be seeded (a reproducible demo, not for publication)."""
        return self.seed is not None

    def refusal(self, max_work=None, costs=None):
        """The message the work budget refuses this request with, or None within it
        (:func:`~dpcore.release.work.refusal_message`; ``max_work`` defaults to the
        request's own budget, if it has one)."""
        if max_work is None:
            max_work = getattr(self, "max_work", None)
        return refusal_message(self.work(costs=costs), max_work)

    def to_script_dict(self):
        """The public settings an exported script needs, as JSON types.

        Returns
        -------
        dict
            ``request`` (the class name), ``manifold`` (its ``repr``) and ``n`` where the
            request has them, ``settings`` (the keyword arguments of the functional release,
            JSON-safe: ``private_...(manifold, data, rng=release_seed, **settings)``) and
            ``release_seed`` (None: OS entropy). Never any data.
        """
        out = {"request": type(self).__name__}
        if hasattr(self, "manifold"):
            out["manifold"] = repr(self.manifold)
        if hasattr(self, "n"):
            out["n"] = int(self.n)
        out["settings"] = json_safe(self.release_kwargs())
        out["release_seed"] = self.seed
        return out

    @classmethod
    def from_script_dict(cls, data, manifold=None):
        """The request :meth:`to_script_dict` wrote (after a trip through JSON).

        Parameters
        ----------
        data : dict
        manifold : Manifold, optional
            Instead of the one ``data["manifold"]`` names (needed for a manifold that is not
            built in).
        """
        if data.get("request") != cls.__name__:
            raise ValueError(f"`data` describes a {data.get('request')!r}, not a "
                             f"{cls.__name__}.")
        kwargs = dict(data.get("settings", {}))
        for key, value in cls._SCRIPT_ONLY.items():
            if kwargs.pop(key, value) != value:
                raise ValueError(f"A {cls.__name__} has `{key}` = {value!r}, got "
                                 f"{data['settings'][key]!r}.")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise ValueError(f"`data` has settings {cls.__name__} does not take: {unknown}.")
        if "manifold" in names:
            kwargs["manifold"] = (manifold_from_repr(data["manifold"]) if manifold is None
                                  else manifold)
        if "n" in names:
            kwargs["n"] = data["n"]
        if kwargs.get("max_work") is not None:
            kwargs["max_work"] = float(kwargs["max_work"])
        return cls(seed=data.get("release_seed"), **kwargs)


def check_rows(data, n, name):
    """Refuse data whose row count is not the request's public ``n``."""
    rows = np.shape(data)[0] if np.ndim(data) else 0
    if rows != n:
        raise ValueError(f"`{name}` has {rows} rows, but the request was made for n = {n}: "
                         "make a request for this data set (replace(n=...)).")
