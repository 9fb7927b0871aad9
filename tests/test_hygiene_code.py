"""Privacy hygiene of the code behind the library and the dashboard, read from its source
(issue 6, points 4 and 6).

* No Streamlit cache (``st.cache_data`` / ``st.cache_resource``) wraps code that makes a
  release, except seeded simulations on synthetic data, listed below with the reason; no cache
  persists to disk.
* No ``eval`` / ``exec`` / ``pickle`` / ``yaml.load`` (or other deserialisers that run code) in
  the code that handles user input; the app code does not ``print``.
* The server is bound to localhost by default; the library never uses NumPy's global random
  state.

The releases themselves (fresh randomness, the release record) are checked in
``tests/test_hygiene.py``; the dashboard side in ``tests/app/test_hygiene_app.py``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
