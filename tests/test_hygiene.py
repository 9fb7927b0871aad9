"""Privacy hygiene of the library and of the code behind the dashboard (issue 6, point 4 and 6).

* Nothing random is reused: two identical strict-mode requests without a seed draw from OS
  entropy and differ; a seeded request is reproducible, flagged ``seeded`` and labelled "not for
  publication".
* The release record (:meth:`dpcore.release.Release.to_dict`, the dashboard's "Download release")
  holds private outputs and documented metadata only: only the documented keys, no value of the
  input data, no non-private estimate (the non-private geodesic fit, the non-private Fréchet
  mean, the extrinsic mean).
* No Streamlit cache (``st.cache_data`` / ``st.cache_resource``) wraps code that makes a
  release, except seeded simulations on synthetic data, listed below with the reason; no cache
  persists to disk.
* No ``eval`` / ``exec`` / ``pickle`` / ``yaml.load`` (or other deserialisers that run code) in
  the code that handles user input.

The dashboard side (uploads never reach disk, logs or caches; two presses of Release differ;
CSV downloads are neutralised) is in ``tests/app/test_hygiene_app.py``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import json
import tokenize
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.mechanisms import embed
from dpcore.mechanisms.laplace import unembed
from dpcore.release import (
    SEEDED_CAVEAT,
    private_frechet_mean,
    private_geodesic_regression,
    project_to_ball,
)

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"chain_length": 60, "burn_in": 40}
NORTH = np.array([0.0, 0.0, 1.0])

#: The documented contents of a release record (DESIGN §8, :class:`dpcore.release.Release`).
RECORD_KEYS = {"values", "mechanism", "epsilon", "delta", "mu", "sensitivity", "sigma",
               "assumptions", "diagnostics", "mode", "seeded", "version", "label", "caveats",
               "details", "guarantee", "private"}
REGRESSION_VALUES = {"footpoint", "shooting_vector", "intercept", "coef"}
REGRESSION_DETAILS = {"scheme", "epsilon_p", "epsilon_v", "epsilon_per_geodesic", "n",
                      "n_footpoints", "n_vectors", "sigma_rule", "kappa_low", "manifold"}
REGRESSION_ASSUMPTIONS = {"covariate_range", "tau", "tau_m", "center", "footpoint_support",
                          "max_speed"}
FRECHET_DETAILS = {"n", "n_draws", "epsilon_per_draw", "mu_per_draw", "manifold"}
FRECHET_ASSUMPTIONS = {"center", "radius", "ambient_radius"}
ASSUMPTION_FIELDS = {"value", "source", "note"}
#: "private (stage 1)": a two-stage release's centre, a released value of its first stage.
PUBLIC_SOURCES = {"public", "public default", "derived", "private (stage 1)"}
#: Sampler diagnostics: settings of the sampler and summaries of its chains (no draws).
DIAGNOSTIC_KEYS = {"sampler", "exact", "n_chains", "n_samples", "n_burn_in", "thin",
                   "step_size", "acceptance_rate_mean", "acceptance_rate_min",
                   "acceptance_rate_max", "ess", "rhat", "mu_accounting",
                   "fraction_left_manifold", "projected", "ambient_dimension",
                   "diagnostics_grouping", "proposals", "acceptance", "float_safety",
                   "lattice_spacing", "truncation_slack", "compute_path"}


# =========================================================================== helpers
def leaves(obj, path=""):
    """(path, number) for every numeric leaf of a JSON-like object."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{path}/{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, float(obj)


def matches(record, secrets, *, trivial=(0.0, 1.0, -1.0)):
    """Paths of the record's numeric leaves equal (to 1e-9, relative) to an entry of ``secrets``.

    Values such as 0 and ±1 are skipped: public centres and ranges hold them legitimately.
    """
    values = np.unique(np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in secrets]))
    values = values[np.isfinite(values) & ~np.isin(values, trivial)]
    hits = []
    for path, v in leaves(record):
        if not np.isfinite(v) or v in trivial:
            continue
        i = np.searchsorted(values, v)
        for j in (i - 1, i):
            if 0 <= j < values.size and abs(values[j] - v) <= 1e-9 * max(1.0, abs(v)):
                hits.append((path, v))
    return hits


def check_metadata(record, *, values, details, assumptions, strict=True):
    assert set(record) == RECORD_KEYS
    json.dumps(record, allow_nan=False)  # JSON-safe, no NaN
    assert set(record["values"]) == values
    assert set(record["details"]) == details
    assert set(record["assumptions"]) <= assumptions
    for name, a in record["assumptions"].items():
        assert set(a) <= ASSUMPTION_FIELDS and {"value", "source"} <= set(a), name
        if strict:
            assert a["source"] in PUBLIC_SOURCES, (name, a)
    diag = record["diagnostics"]
    stages = ([diag[k] for k in ("footpoint", "shooting_vector")] if "footpoint" in diag
              else [diag["joint"]] if "joint" in diag else [diag])
    for stage in stages:
        assert set(stage) <= DIAGNOSTIC_KEYS, set(stage) - DIAGNOSTIC_KEYS
        for key, value in stage.items():  # summaries only: no arrays (no chains, no draws)
            assert not isinstance(value, (list, dict)), key
    for key in ("sensitivity", "sigma"):
        for name, value in record[key].items():
            assert isinstance(value, float), (key, name)


# =========================================================================== data
REGRESSION_CASES = {
    "sphere": (Sphere(2), {"tau": 0.3}),
    "euclidean": (Euclidean(2), {"tau": 1.0, "tau_m": 8.0}),
    "spd": (SPD(2), {"tau": 0.3, "tau_m": 3.0}),
}
FRECHET_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")


def regression_data(kind):
    m, _ = REGRESSION_CASES[kind]
    data = make_regression_data(m, 25, rng=11)
    return m, data.x, data.y


def regression(kind, x=None, y=None, **kw):
    m, bounds = REGRESSION_CASES[kind]
    if x is None:
        _, x, y = regression_data(kind)
    args = {"eps_p": 1.0, "eps_v": 1.0, "covariate_range": (0.0, 1.0), "n_footpoints": 2,
            "n_vectors": 2, **bounds, **QUICK}
    args.update(kw)
    return private_geodesic_regression(m, x, y, **args)


@pytest.fixture(scope="module")
def mean_data():
    return make_mean_data(Sphere(2), 25, radius=0.6, rng=12)


def frechet(points, mechanism, **kw):
    budget = {"mu": 1.0} if mechanism == "gaussian" else {"epsilon": 1.0}
    args = {"mechanism": mechanism, "radius": 0.6, "center": NORTH, "n_draws": 3, **budget,
            **QUICK}
    args.update(kw)
    return private_frechet_mean(Sphere(2), points, **args)


# =========================================================================== randomness
class TestFreshRandomness:
    """Strict mode without a seed draws from OS entropy: identical requests differ."""

    def test_regression(self):
        a, b = regression("sphere"), regression("sphere")
        assert not a.seeded and not b.seeded
        assert a.label == "private" and SEEDED_CAVEAT not in a.caveats
        for key in REGRESSION_VALUES:
            assert not np.allclose(a.values[key], b.values[key]), key

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_mean(self, mean_data, mechanism):
        a, b = frechet(mean_data, mechanism), frechet(mean_data, mechanism)
        assert not a.seeded and "not for publication" not in a.label
        assert not np.allclose(a.values["mean"], b.values["mean"])

    def test_draws_within_a_request_differ(self):
        rel = regression("sphere", n_footpoints=3, n_vectors=1)
        foot = rel.values["footpoint"]
        assert not np.allclose(foot[0], foot[1]) and not np.allclose(foot[1], foot[2])


class TestSeededIsNotForPublication:
    @pytest.mark.parametrize("rng", [7, np.random.default_rng(7)], ids=["int", "generator"])
    def test_regression(self, rng):
        rel = regression("sphere", rng=rng)
        assert rel.seeded is True
        assert "not for publication" in rel.label
        assert SEEDED_CAVEAT in rel.caveats
        record = rel.to_dict()
        assert record["seeded"] is True and "not for publication" in record["label"]

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_mean(self, mean_data, mechanism):
        rel = frechet(mean_data, mechanism, rng=3)
        assert rel.seeded is True and "not for publication" in rel.to_dict()["label"]
        assert SEEDED_CAVEAT in rel.caveats

    def test_a_seed_reproduces_the_release(self, mean_data):
        a, b = regression("sphere", rng=5), regression("sphere", rng=5)
        np.testing.assert_array_equal(a.values["footpoint"], b.values["footpoint"])
        a, b = frechet(mean_data, "laplace", rng=5), frechet(mean_data, "laplace", rng=5)
        np.testing.assert_array_equal(a.values["mean"], b.values["mean"])

    def test_paper_mode_label_wins(self):
        _, x, y = regression_data("sphere")
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", rng=1, **QUICK)
        assert rel.seeded and rel.label.startswith("NOT PRIVATE")
        assert SEEDED_CAVEAT in rel.caveats


# =========================================================================== release record
class TestReleaseRecordHoldsNoData:
    def test_the_check_finds_planted_data(self):
        m, x, y = regression_data("sphere")
        record = regression("sphere", x, y).to_dict()
        assert matches(record, [x, y]) == []
        planted = json.loads(json.dumps(record))
        planted["details"]["extra"] = y[3].tolist()
        planted["values"]["footpoint"][0][1] = float(x[5]) * (1 + 1e-12)
        assert {p for p, _ in matches(planted, [x, y])} == {
            "/details/extra[0]", "/details/extra[1]", "/details/extra[2]",
            "/values/footpoint[0][1]"}

    @pytest.mark.parametrize("kind", sorted(REGRESSION_CASES))
    def test_regression_strict(self, kind):
        m, x, y = regression_data(kind)
        _, bounds = REGRESSION_CASES[kind]
        rel = regression(kind, x, y)
        record = rel.to_dict()
        check_metadata(record, values=REGRESSION_VALUES, details=REGRESSION_DETAILS,
                       assumptions=REGRESSION_ASSUMPTIONS)
        # The non-private estimates the release starts from, fitted as the release does, and
        # the plain non-private fit in the original units.
        yp = y
        if "tau_m" in bounds:
            yp = project_to_ball(m, y, np.asarray(record["assumptions"]["center"]["value"]),
                                 bounds["tau_m"])
        secrets = [x, y, yp]
        for data_y in (y, yp):
            fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(x, data_y)
            secrets += [fit.footpoint_, fit.shooting_vector_]
            secrets += [getattr(fit, a) for a in ("intercept_", "coef_") if hasattr(fit, a)]
        secrets.append(m.dist(y, y[::-1]))  # distances between data points
        assert matches(record, secrets) == []
        # Only the release's own outputs are arrays of points.
        text = json.dumps(record)
        assert "nan" not in text.lower()

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_strict(self, mean_data, mechanism):
        m = Sphere(2)
        rel = frechet(mean_data, mechanism)
        record = rel.to_dict()
        values = {"mean"} | ({"ambient", "left_manifold"} if mechanism == "ambient_laplace"
                             else set())
        check_metadata(record, values=values, details=FRECHET_DETAILS,
                       assumptions=FRECHET_ASSUMPTIONS)
        projected = project_to_ball(m, mean_data, NORTH, 0.6)
        extrinsic = embed(m, projected).mean(axis=0)
        secrets = [mean_data, projected, frechet_mean(m, mean_data), frechet_mean(m, projected),
                   extrinsic, unembed(m, extrinsic), embed(m, mean_data).mean(axis=0)]
        assert matches(record, secrets) == []

    def test_spd_frechet_strict(self):
        m = SPD(2)
        y = make_mean_data(m, 20, radius=1.0, rng=4)
        rel = private_frechet_mean(m, y, epsilon=1.0, radius=1.0, center=np.eye(2), n_draws=2)
        record = rel.to_dict()
        check_metadata(record, values={"mean"}, details=FRECHET_DETAILS,
                       assumptions=FRECHET_ASSUMPTIONS)
        assert matches(record, [y, frechet_mean(m, y)]) == []

    def test_paper_mode_data_values_are_flagged(self, mean_data):
        """Paper mode takes bounds from the data; such values appear only as assumptions with
        source "data" in a record labelled NOT PRIVATE, never among the outputs."""
        m, x, y = regression_data("sphere")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            reg = private_geodesic_regression(m, x, y, eps_p=1.0, eps_v=1.0, mode="paper",
                                              **QUICK)
            fm = private_frechet_mean(m, mean_data, epsilon=1.0, mode="paper")
        fit = GeodesicRegression(m, covariate_range=(float(x.min()), float(x.max())),
                                 tol=1e-8).fit(x, y)
        cases = [
            (reg, REGRESSION_VALUES, REGRESSION_DETAILS, REGRESSION_ASSUMPTIONS,
             [x, y, fit.footpoint_, fit.shooting_vector_]),
            (fm, {"mean"}, FRECHET_DETAILS, FRECHET_ASSUMPTIONS,
             [mean_data, frechet_mean(m, mean_data)]),
        ]
        for rel, values, details, assumptions, secrets in cases:
            record = rel.to_dict()
            assert record["label"].startswith("NOT PRIVATE") and not rel.private
            check_metadata(record, values=values, details=details, assumptions=assumptions,
                           strict=False)
            for path, _ in matches(record, secrets):
                name = path.split("/")[2]
                assert path.startswith("/assumptions/"), path
                assert record["assumptions"][name]["source"] == "data", path


# =========================================================================== caches
PAGE_FILES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
UI_FILES = sorted((ROOT / "ui").rglob("*.py"))
LIB_FILES = sorted((ROOT / "dpcore").rglob("*.py"))
#: Functions that make (or record) a release: never behind a Streamlit cache.
RELEASE_FUNCTIONS = {"private_geodesic_regression", "private_geodesic_regression_budgets",
                     "private_frechet_mean", "private_range", "estimate_bounds", "run_release",
                     "record_release", "record_event",
                     "private_geodesic_regression_two_stage"}
#: Cached functions that do reach a release function, and why that is safe. Each must take a
#: seed (so its output is a deterministic function of its arguments, the same for everyone).
ALLOWED_CACHED_RELEASES = {
    ("geodesic_regression.py", "cached_prediction"):
        "accuracy before release: seeded releases of a model data set built from public inputs "
        "only (dpcore.release.accuracy); no user data, nothing published",
    ("frechet_mean.py", "cached_prediction"):
        "as above: the noise scale is read from a seeded release of a public model data set",
    ("frechet_mean.py", "cached_smallest"):
        "as above, for each ε of the search",
    ("budget_split.py", "cached_chunk"):
        "seeded budget-split simulation on synthetic data (SweepConfig.seed); no user data",
    ("linear_regression.py", "cached_prediction"):
        "accuracy before release: seeded importance sampling of the exact target of a public "
        "model data set (dpcore.release.accuracy); no user data, nothing published",
    ("linear_regression.py", "cached_smallest"):
        "as above, for each ε of the search",
    ("frechet_mean.py", "frechet_mechanism_draws"):
        "seeded preview draws (seed argument); the page only uses the cached version for "
        "synthetic data (cache_ok), uploaded data go to the uncached function",
}
SEED_PARAMETERS = {"seed", "config", "rng"}


@functools.cache
def _trees():
    """The parsed app, pages, ui and library files (parsed once; nothing here modifies them)."""
    return {p: ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in PAGE_FILES + UI_FILES + LIB_FILES}


def _is_cache(expr):
    """Whether ``expr`` is ``st.cache_data`` / ``st.cache_resource`` (called or not)."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    return isinstance(expr, ast.Attribute) and expr.attr in ("cache_data", "cache_resource")


def _module_aliases(tree):
    """Local name -> dotted module for ``import a.b as x`` / ``from a import b as x``."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _function(trees, module, name):
    path = ROOT / (module.replace(".", "/") + ".py")
    for node in ast.walk(trees[path]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    raise AssertionError(f"{module}.{name} not found")


def cached_functions():
    """(file, function name, decorator or wrapper call, FunctionDef) of every cached function
    in the app, pages and ui: ``@st.cache_data(...)`` decorators and
    ``st.cache_data(...)(module.function)`` wrappers."""
    trees = _trees()
    found = []
    for path in PAGE_FILES + UI_FILES:
        tree = trees[path]
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    if _is_cache(dec):
                        found.append((path.name, node.name, dec, node))
            elif isinstance(node, ast.Call) and _is_cache(node.func) and node.args:
                target = node.args[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    module, name = aliases[target.value.id], target.attr
                elif isinstance(target, ast.Name) and target.id in aliases:
                    module, name = aliases[target.id].rsplit(".", 1)
                elif isinstance(target, ast.Name):  # defined in the same file
                    module = str(path.relative_to(ROOT).with_suffix("")).replace("/", ".")
                    name = target.id
                else:
                    raise AssertionError(f"unexpected cache target {ast.unparse(target)}")
                found.append((path.name, name, node.func, _function(trees, module, name)))
    return found, trees


#: Method calls ``receiver.method(...)`` the scan does not follow by the method's bare name,
#: with what they are. A release request's ``run`` makes a release
#: (:mod:`dpcore.release.requests`), so every other ``x.run(...)`` is followed into it.
NOT_FOLLOWED = {
    ("compiled", "run"): "the compiled Metropolis-Hastings chain of dpcore/sampling/mcmc.py, "
                         "not a release request's run",
    ("self", "predict"): "an estimator's own predict (GeodesicRegression.mse, scikit-learn's "
                         "API), not a release request's accuracy prediction, which no request "
                         "calls on itself",
}


def _calls(func):
    """``(receiver, name)`` of every call in the body of ``func`` (nested bodies included)."""
    out = []
    for node in ast.walk(func):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            receiver = (f.value.id if isinstance(f, ast.Attribute)
                        and isinstance(f.value, ast.Name) else None)
            out.append((receiver, name))
    return out


#: id(trees) -> (trees, {name: [(FunctionDef, its calls)]}): the index of :func:`reachable_calls`,
#: built once per parse (``trees`` is kept with it, so the id stays its own).
_CALL_INDEX = {}


def _call_index(trees):
    if id(trees) not in _CALL_INDEX:
        index = {}
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    index.setdefault(node.name, []).append((node, _calls(node)))
        _CALL_INDEX[id(trees)] = (trees, index)
    return _CALL_INDEX[id(trees)][1]


def reachable_calls(func, trees):
    """Names of every function the body of ``func`` may call, transitively (by bare name over
    dpcore, ui and pages; an over-approximation, but for :data:`NOT_FOLLOWED`)."""
    index = _call_index(trees)
    names, stack = set(), [_calls(func)]
    while stack:
        for receiver, name in stack.pop():
            if (receiver, name) in NOT_FOLLOWED:
                continue
            if name and name not in names:
                names.add(name)
                stack.extend(calls for _, calls in index.get(name, []))
    return names


def test_the_cache_scan_finds_the_known_caches():
    found, _ = cached_functions()
    names = {(f, n) for f, n, _, _ in found}
    assert ("geodesic_regression.py", "cached_fit") in names  # the scan works
    assert ("budget_split.py", "cached_chunk") in names


def test_the_scan_follows_a_release_request_but_not_the_compiled_chain():
    trees = _trees()
    request_run = ast.parse("def cached(seed):\n    return request.run(y, rng=seed)\n").body[0]
    assert "private_geodesic_regression" in reachable_calls(request_run, trees)
    chain = ast.parse("def cached(seed):\n    return compiled.run(x)\n").body[0]
    assert not reachable_calls(chain, trees) & RELEASE_FUNCTIONS
    accuracy = ast.parse("def cached(seed):\n    return request.predict(rng=seed)\n").body[0]
    assert "private_geodesic_regression" in reachable_calls(accuracy, trees)


def test_no_cache_wraps_a_release():
    found, trees = cached_functions()
    reaching = {}
    for file, name, _, func in found:
        hit = reachable_calls(func, trees) & RELEASE_FUNCTIONS
        if hit:
            reaching[file, name] = sorted(hit)
    unexpected = {k: v for k, v in reaching.items() if k not in ALLOWED_CACHED_RELEASES}
    assert not unexpected, f"cached functions that make a release: {unexpected}"
    stale = set(ALLOWED_CACHED_RELEASES) - set(reaching)
    assert not stale, f"allow-list entries that no longer apply (remove them): {stale}"
    for file, name, _, func in found:
        if (file, name) in ALLOWED_CACHED_RELEASES:
            params = {a.arg for a in func.args.args + func.args.kwonlyargs}
            assert params & SEED_PARAMETERS, (file, name, "takes no seed")


def test_no_cache_persists_to_disk_or_is_a_resource():
    found, _ = cached_functions()
    for file, name, call, _ in found:
        # st.cache_resource shares one object between all sessions: not used for anything.
        attr = (call.func if isinstance(call, ast.Call) else call).attr
        assert attr == "cache_data", (file, name, attr)
        if isinstance(call, ast.Call):
            keywords = {k.arg for k in call.keywords}
            assert "persist" not in keywords, (file, name, "persist= writes the cache to disk")


def test_release_helpers_are_not_cached_objects():
    """The functions pages call to release are plain functions (no cache wrapper)."""
    import dpcore.release as release_module
    from ui.logic import geodesic_regression

    for func in (release_module.private_geodesic_regression,
                 release_module.private_frechet_mean, geodesic_regression.run_release):
        assert inspect.isfunction(func) and not hasattr(func, "clear"), func


# =========================================================================== dangerous calls
SCANNED = sorted({*PAGE_FILES, *UI_FILES, *LIB_FILES})
#: (file relative to the repo, token) pairs that are allowed, with the reason.
ALLOWED_DANGEROUS = {}


def dangerous_tokens(path):
    """Code tokens (not comments or strings) that run or deserialise code: ``eval(``,
    ``exec(``, ``compile(`` on source, anything named ``*pickle*`` (pickle, cloudpickle,
    ``allow_pickle=``), ``marshal``, ``shelve``, ``dill``, ``yaml.load`` / ``unsafe_load``,
    ``joblib.load``, ``__import__``."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]
    hits = []
    for i, tok in enumerate(toks):
        if tok.type != tokenize.NAME:
            continue
        nxt = toks[i + 1].string if i + 1 < len(toks) else ""
        prev = toks[i - 2].string if i >= 2 and toks[i - 1].string == "." else ""
        word = tok.string
        if (
            (word in ("eval", "exec", "__import__") and nxt == "(")
            or "pickle" in word.lower()
            or word in ("marshal", "shelve", "dill")
            or (prev == "yaml" and word in ("load", "unsafe_load", "full_load"))
            or (prev == "joblib" and word == "load")
        ):
            hits.append((word, tok.start[0]))
    return hits


def test_scan_catches_dangerous_calls(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import pickle\nx = eval(s)\n# eval(comment)\ny = 'exec(string)'\n"
                   "np.load(f, allow_pickle=True)\nyaml.load(f)\nexec(code)\n")
    words = [w for w, _ in dangerous_tokens(bad)]
    assert words == ["pickle", "eval", "allow_pickle", "load", "exec"]


def test_no_eval_exec_or_pickle_in_the_code():
    hits = []
    for path in SCANNED:
        rel = str(path.relative_to(ROOT))
        for word, line in dangerous_tokens(path):
            if (rel, word) not in ALLOWED_DANGEROUS:
                hits.append(f"{rel}:{line}: {word}")
    assert not hits, "code that evaluates or unpickles input:\n" + "\n".join(hits)


def test_app_code_does_not_print():
    """The app's console output is its logging (checked for uploaded data by
    tests/app/test_hygiene_app.py); a ``print`` in the app code would bypass that."""
    allowed = {"ui/_preview.py": "development command line tool (figure previews), not "
                                 "imported by the app"}
    hits = []
    for path in [*PAGE_FILES, *UI_FILES]:
        if str(path.relative_to(ROOT)) in allowed:
            continue
        toks = list(tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline))
        for i, tok in enumerate(toks[:-1]):
            if tok.type == tokenize.NAME and tok.string == "print" and toks[i + 1].string == "(":
                hits.append(f"{path.relative_to(ROOT)}:{tok.start[0]}")
    assert not hits, hits


# =========================================================================== localhost
def test_server_is_bound_to_localhost_by_default():
    """.streamlit/config.toml binds the server to localhost, and `make run` says so too."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text("utf-8"))
    assert config["server"]["address"] == "localhost"
    makefile = (ROOT / "Makefile").read_text("utf-8")
    run = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert run and "--server.address localhost" in run.group(1), run
    assert "0.0.0.0" not in makefile


# =========================================================================== global randomness
def test_library_never_uses_numpy_global_random_state():
    """dpcore draws only from Generators it is given or creates (issue 11): no legacy
    ``np.random.<function>`` call (seed, get_state, rand, normal, ...) anywhere in the library."""
    import ast

    allowed = {"default_rng", "Generator", "SeedSequence", "PCG64", "BitGenerator"}
    found = []
    for path in sorted((ROOT / "dpcore").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "random" and isinstance(node.value.value, ast.Name)
                    and node.value.value.id in {"np", "numpy"} and node.attr not in allowed):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} np.random.{node.attr}")
    assert found == []
