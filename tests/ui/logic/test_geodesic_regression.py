"""Page logic of the Geodesic regression page (ui.logic.geodesic_regression)."""

from ui.logic import geodesic_regression as G


def test_length_error_text_fits_a_metric_card():
    assert G.length_error_text(0.023) == "+2.3%"
    assert G.length_error_text(-0.5) == "-50%"
    assert G.length_error_text(2.3) == "+230%"
    assert G.length_error_text(6e17) == "6e+17× |v̂|"
    assert G.length_error_text(float("nan")) == "n/a"
    assert all(len(G.length_error_text(r)) <= 11 for r in (1e-4, 0.5, 9.99, 1e3, 1e20))
