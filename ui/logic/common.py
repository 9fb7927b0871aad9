"""What the analysis pages share: the size caps of their widgets, the assumptions box and
seeding of simulations."""

from __future__ import annotations

import numpy as np

__all__ = [
    "assumptions_markdown",
    "CAPS",
]

#: Upper bounds on the sizes a user can ask for on these pages (on top of
#: :func:`dpcore.settings.get_limits`). They keep every request well under a minute.
CAPS = {
    "cloud_draws": 200,  # private means per mechanism in the preview cloud
    "sim_replicates": 100,  # replicates per sample size in the Fréchet simulation
    "sim_sizes": 8,  # sample sizes in the Fréchet simulation
    "sim_max_n": 1000,  # largest sample size in the Fréchet simulation
    "sens_pairs": 200,  # adjacent pairs per sample size (sensitivity page)
    "sens_max_n": 500,  # largest sample size on the sensitivity page
    "mc_samples": 5000,  # Monte Carlo samples per centre and repeat (GDP estimates)
    "mc_repeats": 50,  # Monte Carlo repeats (GDP estimates)
    "mc_sigmas": 16,  # rates sigma in a Monte Carlo sweep
    "utility_replicates": 2000,  # draws per rate in the Gaussian vs Laplace comparison
    "example_rows": 2000,  # rows of the generated linear-regression example
    # Named columns of the linear-regression page's CSV. Its size is capped, as on every page,
    # by the upload limit dpcore.settings.Limits.max_upload_mb (Streamlit's maxUploadSize).
    "upload_columns": 200,
}


def assumptions_markdown(items):
    """A Markdown bullet list for an "Assumptions in force" box.

    Parameters
    ----------
    items : sequence of (str, str)
        ``(name, statement)`` pairs.

    Returns
    -------
    str
    """
    return "\n".join(f"- **{name}:** {text}" for name, text in items)


def _seed_for(*parts):
    """A generator seeded deterministically from integers (e.g. a seed and a sample size)."""
    return np.random.default_rng(np.random.SeedSequence([int(p) for p in parts]))
