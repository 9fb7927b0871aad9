"""Whether a Fréchet-mean request's draws will be float-safe (released on a public lattice,
DESIGN §12), decided from public inputs as the mechanisms decide it, and the coverage that
follows: what :meth:`~dpcore.release.requests.FrechetMeanRequest.plan` and
:meth:`~dpcore.release.requests.FrechetMeanRequest.event` state before the release.
"""

from __future__ import annotations

from ...mechanisms.laplace import LATTICE_SAMPLER  # noqa: F401 - the plans state it


def on_lattice(manifold, kind, *, sigma=None, epsilon=None, support=None, public_ball=None,
               truncate=False):
    """Whether :func:`~dpcore.mechanisms.laplace.lattice_release` draws these public inputs on
    its public lattice (float-safe, DESIGN §12): the mechanism's own decision
    (:func:`~dpcore.mechanisms.laplace.lattice_plan`), without a draw."""
    from ...mechanisms.laplace import lattice_plan

    return lattice_plan(manifold, kind, sigma=sigma, epsilon=epsilon, support=support,
                        public_ball=public_ball, truncate=truncate) is not None


def pure_coverage(exact, float_safe):
    """The coverage of a pure-DP draw: ``"mcmc"`` (not exact), ``"float"`` (an exact law whose
    floats depend on the data), else ``"proven"``; ``float_safe`` None (not known before the
    data: paper mode without the ball) counts as float-safe."""
    if not exact:
        return "mcmc"
    return "float" if float_safe is False else "proven"
