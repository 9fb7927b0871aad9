"""Privacy accounting (DESIGN §7).

- :mod:`dpcore.privacy.gdp`: generic accounting: pure-DP composition, Gaussian DP
  (δ_µ(ε), ε ↔ µ, composition, trade-off curve);
- :mod:`dpcore.privacy.profiles`: the GDP analysis of the Riemannian Gaussian mechanism
  (exact µ on S¹, Monte Carlo µ, σ calibration; paper 004);
- :mod:`dpcore.privacy.accountant`: a session's releases composed into one guarantee, with a
  budget cap that raises :class:`~dpcore.exceptions.PrivacyBudgetError`;
- :mod:`dpcore.privacy.ledger`: a session's releases recorded as ledger entries (group privacy
  per entry), their totals and their JSON file;
- :mod:`dpcore.privacy.risk`: what an attacker who starts at a prior can conclude about one
  person from one release's ε (with δ) or µ: belief and guessing bounds from the trade-off
  curve.
"""

from .accountant import PrivacyAccountant, PrivacyEvent, epsilon_of_gdp
from .gdp import (
    compose_dp,
    compose_gdp,
    delta_mu,
    eps_to_mu,
    mu_from_delta,
    mu_to_eps,
    tradeoff_gdp,
)
from .profiles import (
    calibrate_sigma,
    exact_gdp_accounting,
    gdp_mu_circle,
    gdp_mu_monte_carlo,
    privacy_profile_circle,
)
from .risk import (
    DisclosureRisk,
    average_posterior,
    disclosure_risk,
    posterior_bound,
    success_bound,
    tradeoff_dp,
)

__all__ = [
    "DisclosureRisk",
    "PrivacyAccountant",
    "PrivacyEvent",
    "average_posterior",
    "calibrate_sigma",
    "compose_dp",
    "compose_gdp",
    "delta_mu",
    "disclosure_risk",
    "eps_to_mu",
    "epsilon_of_gdp",
    "exact_gdp_accounting",
    "gdp_mu_circle",
    "gdp_mu_monte_carlo",
    "mu_from_delta",
    "mu_to_eps",
    "posterior_bound",
    "privacy_profile_circle",
    "success_bound",
    "tradeoff_dp",
    "tradeoff_gdp",
]
