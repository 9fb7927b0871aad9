"""Page logic of the linear regression page (ui.logic.linear_regression)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore import visualization as V
from dpcore.data import DataValidationError
from ui import caps
from ui.caps import CAPS
from ui.logic import linear_regression as L

GOOD_CSV = (
    "id;temperature;yield;quality;note\n"
    "1;10.5;3,2;7;ok\n"  # semicolon-separated, decimal comma in 'yield'
)


def test_parser_reads_semicolons_and_decimal_commas():
    """Regression: the page's own pandas parser read '3,2' in a ';' file as text, so 'yield'
    was silently not offered; the library reader reads it as 3.2."""
    table = L.parse_numeric_csv(GOOD_CSV.encode("utf-8-sig"))
    assert table.numeric_columns == ("id", "temperature", "yield", "quality")
    assert table.text_columns == ("note",)
    np.testing.assert_allclose(L.select_numeric(table, ["temperature", "yield", "quality"]),
                               [[10.5, 3.2, 7]])


def test_parser_keeps_text_columns_out_of_the_numeric_ones():
    data = b"name,id,dose,response\nann,p1,1.5,2\nbob,p2,2.5,3\n"
    table = L.parse_numeric_csv(data)
    assert table.numeric_columns == ("dose", "response")
    assert table.text_columns == ("name", "id")
    with pytest.raises(DataValidationError, match=r"Row 2, column 'name': value 'ann'"):
        L.select_numeric(table, ["name", "dose"])


def test_parser_keeps_spreadsheet_row_numbers_across_blank_lines():
    table = L.parse_numeric_csv(b"x,y\n1,2\n\n3,oops\n")
    with pytest.raises(DataValidationError, match=r"Row 4, column 'y'") as info:
        L.select_numeric(table, ["x", "y"])
    assert (info.value.row, info.value.column) == (4, "y")


def test_parser_limits(monkeypatch):
    with pytest.raises(DataValidationError, match="more than 2 data rows"):
        L.parse_numeric_csv(b"x,y\n1,2\n3,4\n5,6\n", max_rows=2)
    # One size cap for every page: the dashboard's upload limit (Streamlit's
    # server.maxUploadSize, read by ui.caps), passed to the library as max_bytes.
    monkeypatch.setattr(caps, "upload_limit_mb", lambda: 1)
    with pytest.raises(DataValidationError, match=r"1,048,576 bytes") as info:
        L.parse_numeric_csv(b"x\n" + b"1\n" * (2**19 + 1))
    assert "max_bytes" in str(info.value) and "DPCORE_MAX_UPLOAD_MB" not in str(info.value)
    with pytest.raises(DataValidationError, match=r"more than the limit of 10 bytes"):
        L.parse_numeric_csv(b"x\n" + b"1\n" * 10, max_bytes=10)
    assert "upload_bytes" not in CAPS
    cols = CAPS["upload_columns"] + 1
    with pytest.raises(DataValidationError, match=f"{cols} columns"):
        L.parse_numeric_csv((",".join(f"c{j}" for j in range(cols)) + "\n").encode())
    with pytest.raises(TypeError):
        L.parse_numeric_csv("x,y\n1,2\n")


def test_parser_errors_are_data_validation_errors():
    for data, fragment in [(b"", "empty"), (b"name,city\nann,rome\n", "No column holds numbers"),
                           (b"x,x\n1,2\n", "appears 2 times"),
                           (b"x,y\n1,2\n2,3,4\n", "Row 3")]:
        with pytest.raises(DataValidationError, match=fragment):
            L.parse_numeric_csv(data)
    assert not hasattr(L, "CsvParseError")


def test_parser_reports_many_bad_cells_compactly():
    body = "\n".join(f"{i},bad" for i in range(30))
    table = L.parse_numeric_csv(("x,y\n" + body + "\n").encode("utf-16"))
    with pytest.raises(DataValidationError) as info:
        L.select_numeric(table, ["x", "y"])
    assert len(info.value.problems) == 20 and info.value.n_problems == 30
    assert "... and 10 more not shown." in str(info.value)


def test_example_linear_fit_and_mse():
    frame = L.example_regression_frame(200, seed=1)
    x = frame["dose"].to_numpy()
    y = frame[["response_a", "response_b"]].to_numpy()
    intercept, slope = L.linear_fit(x, y)
    for j in range(2):
        b, a = np.polyfit(x, y[:, j], 1)
        assert intercept[j] == pytest.approx(a) and slope[j] == pytest.approx(b)
    table = L.mse_table(y, ["a", "b"], {"fit": intercept + x[:, None] * slope})
    assert table.loc["all responses", "fit"] == pytest.approx(table["fit"][:2].mean())
    lo, hi = L.nice_bounds(x)
    assert lo <= x.min() and hi >= x.max()
    fig = V.linear_regression_figure(x, y, ["a", "b"], {"OLS": (intercept, slope),
                                                        "Private": (intercept, slope)})
    assert {tr.name for tr in fig.data} >= {"OLS", "Private"}



# --------------------------------------------------------------------------- red-wine preset
SHARED_WINE = Path(__file__).resolve().parents[3].parent / "shared" / "data" / \
    "winequality-red.csv"


def test_shipped_wine_file_is_the_shared_copy():
    if not SHARED_WINE.exists():
        pytest.skip(f"{SHARED_WINE} is absent (the shared data sit beside the project)")
    assert L.WINE_FILE.read_bytes() == SHARED_WINE.read_bytes()
    table = L.parse_numeric_csv(L.wine_bytes())
    assert len(table.cells) == 1599 and table.numeric_columns == table.columns


def test_wine_bounds_cover_every_column_and_clip_no_wine():
    """The preset's public bounds are set from domain knowledge (assets/data/README.md); on
    this file they clip nothing, so the strict release sees the data as they are."""
    table = L.parse_numeric_csv(L.wine_bytes()).to_numbers()
    assert set(L.WINE_BOUNDS) == set(table.columns)
    for name, (lo, hi) in L.WINE_BOUNDS.items():
        values = table.column(name)
        assert lo < hi and lo <= values.min() and values.max() <= hi, name
    assert L.WINE_MAPPING[0] in table.columns and set(L.WINE_MAPPING[1]) <= set(table.columns)
    readme = (L.WINE_FILE.parent / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in readme and "Cortez" in readme
    assert all(f"`{name}`" in readme for name in L.WINE_BOUNDS)


# --------------------------------------------------------------------------- release and figure
def test_release_settings_are_the_release_arguments():
    bounds = {"covariate_range": (8.0, 15.0), "tau": 5.0, "tau_m": 5.0, "center": [5.0],
              "box": [("class", 0.0, 10.0)]}
    kw = L.release_settings(1.0, 1.5, bounds, "strict")
    assert kw.keys() == {"eps_p", "eps_v", "tau", "covariate_range", "tau_m", "center", "mode"}
    np.testing.assert_array_equal(kw["center"], [5.0])
    paper = L.release_settings(1, 1, {**bounds, "center": None, "tau": None}, "paper")
    assert paper["center"] is None and paper["mode"] == "paper"


def test_plot_subsample_is_fixed_sorted_and_complete_when_small():
    np.testing.assert_array_equal(L.plot_subsample(30, 100), np.arange(30))
    idx = L.plot_subsample(50_000, 5000)
    assert idx.size == 5000 and np.unique(idx).size == 5000 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(idx, L.plot_subsample(50_000, 5000))


# --------------------------------------------------------------------------- exported scripts
def _run_script(script, tmp_path):
    path = tmp_path / "scenario.py"
    path.write_text(script, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    return {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
            for line in out.stdout.splitlines() if ":" in line}


def test_wine_export_reproduces_the_seeded_release(tmp_path):
    """The preset's script reads the shipped file and, seeded, prints the release that the
    page's logic gives at the same seed (to 1e-12)."""
    from dpcore.manifolds import Euclidean
    from dpcore.release import private_geodesic_regression
    from ui.logic import export as X

    bounds = {"covariate_range": (8.0, 15.0), "tau": 5.0, "tau_m": 5.0, "center": [5.0]}
    kw = L.release_settings(1.0, 1.0, bounds, "strict")
    script = X.linear_regression_script(kw, source="wine", covariate="alcohol",
                                        responses=["class"], release_seed=3)
    assert "CC BY 4.0" in script
    printed = _run_script(script, tmp_path)
    table = L.parse_numeric_csv(L.wine_bytes()).to_numbers(["alcohol", "class"])
    x, y = table.values[:, 0], table.values[:, 1:]
    rel = private_geodesic_regression(Euclidean(1), x, y, rng=3, **kw)
    assert printed["label"] == rel.label and rel.label.startswith("private")
    np.testing.assert_allclose(json.loads(printed["private slope"]),
                               np.asarray(rel.values["coef"]).reshape(-1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(json.loads(printed["least-squares slope"]),
                               L.linear_fit(x, y)[1], rtol=1e-12)


def test_upload_export_maps_columns_drops_blanks_and_embeds_no_data(tmp_path):
    """An uploaded file is read from the path the user fills in, through the same mapping:
    blank rows dropped with a count, the person column's largest group printed."""
    from ui.logic import export as X
    from ui.logic import regression_data as D

    text = ("ID;who;dose;effect;note\n1;a;0,5;1,25;x\n2;a;1,5;;y\n3;b;2,5;3,5;\n"
            "4;c;3,25;4,0;z\n5;c;4,0;5,5;z\n6;c;1,0;1,75;q\n")
    (tmp_path / "mine.csv").write_text(text, encoding="utf-8")
    bounds = {"covariate_range": (0.0, 5.0), "tau": 3.0, "tau_m": 3.0, "center": [3.0]}
    script = X.linear_regression_script(
        L.release_settings(1.0, 1.0, bounds, "strict"), source="upload", covariate="dose",
        responses=["effect"], group="who", data_file="mine.csv", release_seed=1)
    assert "3,25" not in script and "1.25" not in script
    printed = _run_script(script, tmp_path)
    mapped = D.apply_mapping(L.parse_numeric_csv(text.encode()),
                             D.ColumnMapping("dose", ("effect",), "who"))
    assert printed["rows used"].startswith(f"{mapped.n} dropped (empty cells): "
                                           f"{mapped.dropped}")
    assert int(printed["rows per person (largest group)"]) == mapped.rows_per_person == 3
    np.testing.assert_allclose(json.loads(printed["least-squares slope"]),
                               L.linear_fit(mapped.x, mapped.y)[1], rtol=1e-12)


# ------------------------------------------------------------------ accuracy before release
def test_observed_excess_is_the_excess_of_the_lines():
    """The table's excess over least squares equals (1/(nd)) sum |Δa + x Δb|², the quantity
    the prediction is about (least-squares residuals are orthogonal to (1, x))."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 10, 60)
    y = np.c_[1 + 0.5 * x + rng.normal(size=60), 3 - x + rng.normal(size=60)]
    a0, b0 = L.linear_fit(x, y)
    da, db = np.array([0.3, -0.2]), np.array([0.05, 0.01])
    preds = {"Non-private least squares": a0 + x[:, None] * b0,
             "other": (a0 + da) + x[:, None] * (b0 + db)}
    table = L.mse_table(y, ["u", "v"], preds)
    expected = np.mean((da[None, :] + x[:, None] * db[None, :]) ** 2)
    assert L.observed_excess(table, "other") == pytest.approx(expected, rel=1e-10)


def linear_request(n=100, d=1, epsilon=2.0, tau=5.0, tau_m=5.0, mode="strict"):
    """The page's release request at these public inputs (covariate on [0, 1], centre 0)."""
    from dpcore.release import GeodesicRegressionRequest

    return GeodesicRegressionRequest.linear(d, n, epsilon=epsilon, tau=tau, tau_m=tau_m,
                                            covariate_range=(0.0, 1.0), center=np.zeros(d),
                                            mode=mode)


def test_prediction_reads_the_request():
    from dpcore.release.accuracy import predict_linear_regression_error

    pred = L.predicted_error(linear_request())
    lib = predict_linear_regression_error(100, 1, epsilon=2.0, tau=5.0, tau_m=5.0, rng=0)
    assert pred["median"] == lib["median"] and pred["q95"] == lib["q95"]
    assert L.predicted_error(linear_request(mode="paper")) is None  # bounds from the data


def test_prediction_texts_are_finite_and_honest():
    pred = L.predicted_error(linear_request())
    text = L.predicted_error_text(pred, 2.0, 100)
    assert f"**{pred['median']:.3g}**" in text and f"**{pred['q95']:.3g}**" in text
    assert "model data set" in text and "bunched" in text
    assert "nan" not in text and "inf" not in text.split()
    assert "MCMC" in L.predicted_error_text(pred, 2.0, 100, mcmc=True)
    held = L.predicted_error_text(pred, 2.0, 100, data_bounds=True)
    assert "public inputs only" not in held and "not a public statement" in held
    assert "public inputs only" in text
    assert "paper mode" in L.predicted_error_text(None, 2.0, 100)
    missing = {"available": False, "reason": "too few"}
    assert L.predicted_error_text(missing, 2.0, 100).endswith("too few.")


def test_smallest_epsilon_text_states_the_per_person_cost():
    request = linear_request()
    pred = L.predicted_error(request)
    one = L.smallest_epsilon_text(request, pred["median"])
    three = L.smallest_epsilon_text(request, pred["median"], rows=3)
    import re

    eps = float(re.search(r"\*\*ε = ([0-9.]+)\*\*", one).group(1))
    assert 2.0 <= eps <= 2.02 and "per person" not in one  # rounded up: never below the target
    assert f"({3 * eps:.3g} per person with 3 rows)" in three
    assert "No ε up to 1000" in L.smallest_epsilon_text(request, 1e-12)


# ------------------------------------------------------ bounds still holding the data's range
def test_example_design_bounds_come_from_the_generator_alone():
    """The generated example's public bounds are facts of its generator: dose in its interval,
    each response's line over it ± EXAMPLE_NOISE_SDS noise sds, rounded outward. Checked in
    closed form, and the generator uses these very lines (OLS on 2000 rows recovers them)."""
    assert L.EXAMPLE_DESIGN["dose"] == L.EXAMPLE_DOSE == (0.0, 10.0)
    k = L.EXAMPLE_NOISE_SDS
    for name, (a, b, sd) in L.EXAMPLE_LINES.items():
        lo, hi = L.EXAMPLE_DESIGN[name]
        ends = sorted((a + b * L.EXAMPLE_DOSE[0], a + b * L.EXAMPLE_DOSE[1]))
        assert lo == np.floor(ends[0] - k * sd) and hi == np.ceil(ends[1] + k * sd), name
        assert lo <= ends[0] - k * sd < lo + 1 and hi - 1 < ends[1] + k * sd <= hi
    frame = L.example_regression_frame(CAPS["example_rows"], seed=0)
    x = frame["dose"].to_numpy()
    assert L.EXAMPLE_DOSE[0] <= x.min() and x.max() <= L.EXAMPLE_DOSE[1]
    names = list(L.EXAMPLE_LINES)
    intercept, slope = L.linear_fit(x, frame[names].to_numpy())
    for j, name in enumerate(names):
        a, b, sd = L.EXAMPLE_LINES[name]
        # OLS standard errors at n = 2000 over [0, 10]: below 0.1 sd (intercept) and 0.02 sd
        # (slope); 8 of them is a false-failure chance far below 1e-6.
        assert abs(intercept[j] - a) < 8 * 0.1 * sd and abs(slope[j] - b) < 8 * 0.02 * sd, name


def test_start_bounds_prefer_an_estimate_then_public_then_the_data():
    column = np.array([0.3, 2.7, 5.1])
    assert L.start_bounds("u", column) == (*L.nice_bounds(column), "data")
    assert L.start_bounds("u", column, public={"u": (0, 10)}) == (0.0, 10.0, "public")
    assert L.start_bounds("u", column, public={"u": (0, 10)}, estimated={"u": (1, 4)}) == (
        1.0, 4.0, "estimate")
    assert L.start_bounds("u", column, public={"v": (0, 10)})[2] == "data"


def test_default_tau_is_the_box_radius_to_two_digits():
    assert L.default_tau([0.0, 0.0], [3.0, 4.0]) == 2.5
    assert L.default_tau([-1.0], [12.0]) == 6.5
    assert L.default_tau([0.0], [1.234]) == 0.62


STARTS = {"x": (0.0, 5.0, "data"), "a": (-1.0, 9.0, "data"), "b": (2.0, 3.0, "public"),
          "c": (0.5, 1.5, "estimate")}


@pytest.mark.parametrize("cov, box, typed, expected", [
    # untouched data starts: all held, τ too (it follows the box)
    ((0.0, 5.0), [(-1.0, 9.0), (2.0, 3.0), (0.5, 1.5)], False,
     L.DataHeld(True, ("a",), True)),
    # τ typed: the box still holds the data, τ does not
    ((0.0, 5.0), [(-1.0, 9.0), (2.0, 3.0), (0.5, 1.5)], True, L.DataHeld(True, ("a",), False)),
    # the covariate replaced (one end is enough); the box row of 'a' replaced: τ follows it
    ((0.0, 6.0), [(-2.0, 9.0), (2.0, 3.0), (0.5, 1.5)], False, L.DataHeld()),
    # a value equal to a public or estimated start is not from the data
    ((0.0, 5.0 + 1e-6), [(-1.0, 9.5), (2.0, 3.0), (0.5, 1.5)], False, L.DataHeld()),
])
def test_data_held_names_the_fields_still_at_a_data_start(cov, box, typed, expected):
    held = L.data_held("x", ["a", "b", "c"], STARTS, cov, box, typed)
    assert held == expected and held.any == expected.any


def test_bound_sources_notes_and_warning_follow_the_held_fields():
    assert L.bound_sources(L.DataHeld()) == {}
    assert L.data_bounds_warning("x", L.DataHeld()) is None
    assert L.bound_sources(L.DataHeld(covariate=True)) == {"covariate_range": "data"}
    assert L.bound_sources(L.DataHeld(responses=("a",))) == {"tau_m": "data", "center": "data"}
    held = L.DataHeld(True, ("a", "b"), True)
    sources = L.bound_sources(held)
    assert sources == {"covariate_range": "data", "tau_m": "data", "center": "data",
                       "tau": "data"}
    notes = L.data_start_notes(sources)
    assert notes["covariate_range"] == notes["tau_m"] == L.DATA_START_NOTE
    assert notes["tau"] == L.TAU_START_NOTE and "not replaced" in notes["tau"]
    text = L.data_bounds_warning("dose", held)
    for fragment in ("covariate range ('dose')", "response box ('a', 'b')", "τ",
                     "NOT PRIVATE (bounds from the data)", "Estimate privately", "they are"):
        assert fragment in text, fragment
    one = L.data_bounds_warning("dose", L.DataHeld(covariate=True))
    assert "range ('dose') still holds" in one and "it is replaced" in one


def _bounds(sources=None):
    out = {"covariate_range": (0.0, 10.0), "tau": 6.0, "tau_m": 9.0, "center": [6.0],
           "box": [("response_a", -3.0, 15.0)]}
    if sources is not None:
        out["bound_sources"] = sources
    return out


def test_release_settings_and_labels_carry_the_sources():
    from dpcore.release.record import APPROXIMATE_LABELS, DATA_BOUNDS_LABEL, LABELS

    assert "bound_sources" not in L.release_settings(1, 1, _bounds({}), "strict")
    kw = L.release_settings(1, 1, _bounds({"tau": "data"}), "strict")
    assert kw["bound_sources"] == {"tau": "data"}
    assert "bound_sources" not in L.release_settings(1, 1, _bounds({"tau": "data"}), "paper")
    exact, mcmc = {"guarantee": "private"}, {"guarantee": "approximately private"}
    assert L.release_label(exact, _bounds({}), "strict") == ("private", "private")
    assert L.release_label(mcmc, _bounds(), "strict") == ("approximately private",
                                                          APPROXIMATE_LABELS["mcmc"])
    for plan in (exact, mcmc):
        assert L.release_label(plan, _bounds({"covariate_range": "data"}), "strict") == (
            "not private", DATA_BOUNDS_LABEL)
    assert L.release_label({"guarantee": "not private"}, _bounds(), "paper") == (
        "not private", LABELS["not private"])
    # the diffprivlib comparison's request states the same labels from the same sources
    from ui.logic.linear_regression_baseline import DiffprivlibRequest

    def baseline(sources, mode):
        request = DiffprivlibRequest(
            epsilon=1.0, covariate_range=(0.0, 1.0), lower=(0.0,), upper=(1.0,), mode=mode,
            from_data=tuple(sorted(k for k, v in sources.items() if v == "data")))
        return request.guarantee, request.label

    assert baseline({}, "strict") == ("private", "private (diffprivlib)")
    assert baseline({"tau_m": "data"}, "strict") == ("not private", DATA_BOUNDS_LABEL)
    assert baseline({}, "paper")[0] == "not private"


def test_a_release_with_held_bounds_is_labelled_and_annotated():
    """The page's path: release_settings -> the library (bound_sources) -> the notes. Its
    predicted label (release_label) is the release's own."""
    import warnings

    from dpcore.exceptions import PrivacyLeakWarning
    from dpcore.manifolds import Euclidean
    from dpcore.release import private_geodesic_regression
    from ui.logic import private_bounds as PB

    frame = L.example_regression_frame(60, seed=2)
    x, y = frame["dose"].to_numpy(), frame[["response_a"]].to_numpy()
    for held in (L.DataHeld(covariate=True), L.DataHeld(responses=("response_a",), tau=True),
                 L.DataHeld()):
        bounds = _bounds(L.bound_sources(held))
        plan = L.release_plan(len(x), 1, 1.0, 1.0, bounds, "strict")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            rel = private_geodesic_regression(Euclidean(1), x, y,
                                              **L.release_settings(1.0, 1.0, bounds, "strict"))
        rel = PB.annotate_release(rel, L.data_start_notes(bounds["bound_sources"]))
        assert (rel.guarantee, rel.label) == L.release_label(plan, bounds, "strict")
        data = {k for k, a in rel.assumptions.items() if a.get("source") == "data"}
        assert data == set(bounds["bound_sources"])
        for name in data:
            assert rel.assumptions[name]["note"].endswith("not replaced")
        assert rel.private == (not held.any)


def test_export_states_bounds_from_the_data(tmp_path):
    """The script of a scenario whose fields held the data's range does not present them as
    public: it says so and its release carries the same label as the page's."""
    from ui.logic import export as X

    sources = {"covariate_range": "data", "tau": "data"}
    kw = L.release_settings(1.0, 1.0, _bounds(sources), "strict")
    script = X.linear_regression_script(kw, source="example", covariate="dose",
                                        responses=["response_a"], example=(60, 2),
                                        release_seed=5)
    assert "NOT PUBLIC" in script and "(fixed before looking at the data)" not in script
    assert "bound_sources={'covariate_range': 'data', 'tau': 'data'}" in script
    printed = _run_script(script, tmp_path)
    assert printed["label"] == "NOT PRIVATE (bounds from the data)"
    assert printed["sampler"].endswith("-> not private (bounds from the data)")
    public = X.linear_regression_script(L.release_settings(1.0, 1.0, _bounds({}), "strict"),
                                        source="example", covariate="dose",
                                        responses=["response_a"], example=(60, 2))
    assert "NOT PUBLIC" not in public and "bound_sources" not in public
