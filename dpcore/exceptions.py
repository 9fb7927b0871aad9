"""Warnings and errors shared across dpcore."""

from __future__ import annotations


class PrivacyLeakWarning(UserWarning):
    """A quantity the privacy guarantee depends on was taken from the private data.

    The release is then *not* differentially private as stated; it reproduces the papers'
    experiments (``mode="paper"``) or previews a release whose bounds must still be fixed publicly.
    """


class PrivacyBudgetError(ValueError):
    """A release was refused because it would break or exceed its privacy guarantee."""
