"""The Okabe–Ito palette (:mod:`dpcore.visualization.colors`)."""


from dpcore.visualization import colors


def test_palette_is_okabe_ito_and_roles_are_distinct():
    assert colors.OKABE_ITO[0] == "#000000" and len(set(colors.OKABE_ITO)) == 8
    assert len({colors.DATA, colors.NONPRIVATE, colors.TRUTH, colors.PRIVATE[0]}) == 4
    for n in (1, 3, 5, 6, 20):
        cols = colors.private_colors(n)
        assert len(cols) == n == len(set(cols))
        assert colors.NONPRIVATE not in cols and colors.DATA not in cols
    assert colors.private_colors(0) == []
    assert colors.with_alpha("#D55E00", 0.2) == "rgba(213, 94, 0, 0.2)"
    assert colors.with_alpha("rgb(1, 2, 3)", 0.5) == "rgba(1, 2, 3, 0.5)"
