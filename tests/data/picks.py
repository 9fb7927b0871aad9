"""Sampled-from strategies built once, for the composite strategies of this folder's property
tests: building ``st.sampled_from(values)`` anew on every draw (and Hypothesis validating each
new one) cost more than the draws themselves. The strategy is the same, so a composite draws
the same examples with :func:`pick` as with ``st.sampled_from``."""

from hypothesis import strategies as st

_BUILT = {}


def pick(values):
    """``st.sampled_from(values)``, built on the first call with these values (told apart by
    type and repr, not ``==``: ``0.0 == -0.0`` and ``1 == 1.0 == True``)."""
    values = tuple(values)
    key = tuple((type(v), repr(v)) for v in values)
    if key not in _BUILT:
        _BUILT[key] = st.sampled_from(values)
    return _BUILT[key]
