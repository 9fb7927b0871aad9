"""Page logic of the Geodesic regression page (ui.logic.geodesic_regression)."""

from ui.logic import geodesic_regression as G


def test_length_error_text_fits_a_metric_card():
    assert G.length_error_text(0.023) == "+2.3%"
    assert G.length_error_text(-0.5) == "-50%"
    assert G.length_error_text(2.3) == "+230%"
    assert G.length_error_text(6e17) == "6e+17× |v̂|"
    assert G.length_error_text(float("nan")) == "n/a"
    assert all(len(G.length_error_text(r)) <= 11 for r in (1e-4, 0.5, 9.99, 1e3, 1e20))


def test_assumption_rows_state_the_sampler_the_release_will_use():
    """The assumptions box never claims a δ for MCMC ("assuming the chain mixed" was gone from
    the labels but had stayed here); it follows the plan."""
    s = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=0.2,
                          covariate_range=(0.0, 1.0))
    exact = "\n".join(G.assumption_rows(s, plan=G.sampler_plan(s, 20)))
    assert "exact rejection sampling (δ = 0)" in exact and "sequential" not in exact
    mcmc = "\n".join(G.assumption_rows(s, plan=G.sampler_plan(s, 400)))
    assert "no δ is certified" in mcmc
    assert "assuming the chain mixed" not in exact + mcmc
    seq = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=0.2,
                            covariate_range=(0.0, 1.0), scheme="sequential")
    assert "NOT PRIVATE" in "\n".join(G.assumption_rows(seq, plan=G.sampler_plan(seq, 20)))


def test_unmixed_chains_are_flagged_with_the_fix():
    from types import SimpleNamespace

    rel = SimpleNamespace(diagnostics={
        "joint": {"exact": False, "rhat": 1.31, "ess": 12.0},
        "other": {"exact": False, "rhat": 1.01, "ess": 900.0},
        "exact_stage": {"exact": True}})
    flags = G.diagnostic_flags(rel)
    assert len(flags) == 1
    assert "R-hat = 1.31 > 1.05" in flags[0] and "ESS = 12 < 100" in flags[0]
    assert "chain length" in flags[0]
    assert G.diagnostic_flags(SimpleNamespace(diagnostics={"joint": {"exact": True}})) == []
