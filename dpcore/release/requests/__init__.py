r"""Release requests: a private release described by its public inputs, before any data.

A *request* is a frozen, hashable dataclass that holds everything public about one release
(the manifold, ``n``, the budgets, the public bounds and where they came from, the mode,
scheme, sampler, number of draws and seed), and never the data. It is validated once, when
made, and then answers every question a user interface asks before and after the data are
touched, each by delegating to the functional API of :mod:`dpcore.release`:

- :meth:`plan`: exact or MCMC, and the label that follows (DESIGN §12);
- :meth:`work`: the estimated work (:class:`~dpcore.release.work.WorkEstimate`);
- :meth:`predict`: the accuracy predicted from public inputs (:mod:`dpcore.release.accuracy`);
- :meth:`event`: the privacy event the release will cost (a
  :class:`~dpcore.privacy.PrivacyEvent`: total ε or µ, δ, guarantee, label), with group
  privacy for a person with several rows;
- :meth:`run`: the release itself (a :class:`~dpcore.release.Release`), bit for bit the
  functional call with the same arguments and seed;
- :meth:`to_script_dict` / :meth:`from_script_dict`: the settings as JSON, for an exported
  script, and back; :meth:`replace`: a changed copy.

Equal requests compare equal and hash alike, so a request is a cache key (built-in manifolds
compare by their ``repr``, others by identity).

The idea follows OpenDP, where a *measurement* carries its privacy map and the guarantee is
known before it is invoked on data, and Google's ``dp_accounting``, where a mechanism's cost
is a ``DpEvent`` that an accountant composes: here the request is the measurement, and
:meth:`event` its event.

Classes: :class:`GeodesicRegressionRequest` (linear regression on ``Euclidean(d)`` through
:meth:`GeodesicRegressionRequest.linear`), :class:`FrechetMeanRequest`,
:class:`GaussianReleaseRequest` (the Riemannian Gaussian, µ-GDP), :class:`PrivateRangeRequest`,
:class:`TwoStageRegressionRequest` (a private centre, then the joint KNG in a ball about it).
"""

from ._base import BUILTIN_MANIFOLDS, Request, group_privacy, manifold_from_repr
from .bounds import PrivateRangeRequest
from .frechet import FrechetMeanRequest, GaussianReleaseRequest
from .regression import GeodesicRegressionRequest
from .two_stage import TwoStageRegressionRequest

#: Request classes by name (the ``request`` key of :meth:`Request.to_script_dict`).
REQUESTS = {cls.__name__: cls for cls in (GeodesicRegressionRequest, FrechetMeanRequest,
                                          GaussianReleaseRequest, PrivateRangeRequest,
                                          TwoStageRegressionRequest)}


def request_from_script_dict(data, manifold=None):
    """The request a :meth:`~Request.to_script_dict` dict describes, whatever its class.

    Raises
    ------
    ValueError
        For an unknown ``data["request"]``.
    """
    name = data.get("request") if hasattr(data, "get") else None
    if name not in REQUESTS:
        raise ValueError(f"`data['request']` must be one of {sorted(REQUESTS)}, got {name!r}.")
    return REQUESTS[name].from_script_dict(data, manifold=manifold)


__all__ = [
    "BUILTIN_MANIFOLDS",
    "REQUESTS",
    "FrechetMeanRequest",
    "GaussianReleaseRequest",
    "GeodesicRegressionRequest",
    "PrivateRangeRequest",
    "Request",
    "TwoStageRegressionRequest",
    "group_privacy",
    "manifold_from_repr",
    "request_from_script_dict",
]
