"""Warnings and errors shared across dpcore."""

from __future__ import annotations


class PrivacyLeakWarning(UserWarning):
    """A quantity the privacy guarantee depends on was taken from the private data.

    The release is then *not* differentially private as stated; it reproduces the papers'
    experiments (``mode="paper"``) or previews a release whose bounds must still be fixed publicly.
    """


class PrivacyBudgetError(ValueError):
    """A release was refused because it would break or exceed its privacy guarantee."""


class ApproximatePrivacyWarning(UserWarning):
    """A release is only approximately private: its sampler (MCMC) or its calibration (Monte
    Carlo) is not covered by a proof, so its label says "approximately private"."""


class ExactSamplingUnavailable(ValueError):
    """An exact sampler was asked for where none exists, or where its public worst-case cost
    exceeds the work limit; the message says which and what to do."""
