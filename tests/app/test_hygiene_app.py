"""Privacy hygiene of the dashboard, driven through ``app.py`` with AppTest (issue 6, point 4).

* An uploaded file never touches disk, logs or caches: a session uploads a CSV holding unique
  marker values (a covariate with 15 random digits, and in a second, malformed file a random
  token in a bad cell), releases, and then the temp directory, the Streamlit/cache/config
  folders of the home directory, the repository's working tree (and ``git status``), every log
  record of every logger at DEBUG (Streamlit's console output is its logging; that the app
  code has no ``print`` is checked in ``tests/test_hygiene_code.py``), warnings, the arguments of
  every ``st.cache_data`` call and the values in its stores, the download payloads and the URL
  are searched for the marker's text and its float64 bytes: none may hold it. The Fréchet mean
  and linear regression uploads are checked for caches and downloads too. (AppTest hands the
  file to the page directly; the real server's HTTP upload path is checked in
  ``test_concurrency_uploads.py``.)
* Nothing random is cached: two presses of Release with the same settings give different
  private values; with the fixed-seed option they are equal and labelled "not for
  publication".
* CSV downloads are neutralised against formula injection: the geodesic regression page's
  "Download data" payload is :func:`dpcore.data.to_csv` output (every cell through
  :func:`dpcore.data.neutralize_cell`).
* Limits: a request over a limit set by environment variable is an ``st.error`` naming the
  limit and the variable, not an exception.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import pickle
import re
import secrets
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.caching import cache_data_api, cache_utils
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import dpcore.data.csvio as csvio
from dpcore.data import load_csv, make_mean_data, make_regression_data, neutralize_cell, to_csv
from dpcore.manifolds import Sphere
from ui.logic import budget_split as B
from ui.logic import geodesic_regression as G
from ui.logic import regression_data as D

from .pages import click_release, gr_open_sampler, gr_quick_sampler, gr_release, open_app_page

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
TIMEOUT = 120
LEDGER = "privacy_ledger"
#: Folders of the home directory where Streamlit, Python tools or browsers keep state.
HOME_DIRS = (".streamlit", ".cache", ".config", ".local/share", ".local/state")
#: Folders never scanned: the virtual environment, git's object store, and (in the temp
#: directory) the job logs of the shell that runs this test, which echo its own output.
SKIP_DIRS = {".venv", ".git", "node_modules"}
SKIP_TEMP_PREFIXES = ("bash_jobs.", "bash_tool_")
MAX_FILE_BYTES = 64 * 2**20


# =========================================================================== helpers
def open_page():
    return open_app_page("geodesic_regression.py", timeout=TIMEOUT)


quick_sampler = gr_quick_sampler


press_release = gr_release


def last_release(at):
    return at.session_state["gr_last"]["release"]


@pytest.fixture
def downloads(monkeypatch):
    """Every payload handed to Streamlit's media file manager (download buttons): a list of
    ``(file_name, mimetype, bytes)``."""
    seen = []
    original = MediaFileManager.add

    def add(self, path_or_data, mimetype, coordinates, file_name=None,
            is_for_static_download=False):
        data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
        seen.append((file_name, mimetype, bytes(data)))
        return original(self, path_or_data, mimetype, coordinates, file_name=file_name,
                        is_for_static_download=is_for_static_download)

    monkeypatch.setattr(MediaFileManager, "add", add)
    return seen


@pytest.fixture
def cache_calls(monkeypatch):
    """Every call of an ``st.cache_data`` function: a list of ``(name, pickled arguments)``.
    The arguments make the cache key and the cached value, so uploaded data must never be
    among them."""
    seen = []
    original = cache_utils.CachedFunc._get_or_create_cached_value

    def recorded(self, func_args, func_kwargs, *args, **kwargs):
        try:
            blob = pickle.dumps((func_args, func_kwargs))
        except Exception:  # not picklable: its repr still shows array contents
            blob = repr((func_args, func_kwargs)).encode()
        seen.append((self._info.display_name, blob))
        return original(self, func_args, func_kwargs, *args, **kwargs)

    monkeypatch.setattr(cache_utils.CachedFunc, "_get_or_create_cached_value", recorded)
    return seen


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        try:
            text = record.getMessage()
        except Exception:  # a record whose arguments do not format: keep the raw parts
            text = f"{record.msg!r} {record.args!r}"
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(f"{record.name}: {text}")


@pytest.fixture
def all_logs(monkeypatch):
    """Every log record of the process at DEBUG. Streamlit's loggers do not propagate to the
    root logger, so every record handled by any logger is copied here (``callHandlers``), and
    every logger, existing or created during the test, is set to DEBUG."""
    import streamlit.logger

    handler = _Collect()
    original = logging.Logger.callHandlers

    def tee(self, record):
        handler.handle(record)
        return original(self, record)

    monkeypatch.setattr(logging.Logger, "callHandlers", tee)
    monkeypatch.setattr(streamlit.logger, "_global_log_level", logging.DEBUG)
    loggers = [logging.getLogger()] + [lg for lg in logging.root.manager.loggerDict.values()
                                       if isinstance(lg, logging.Logger)]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
    yield handler
    for lg, level in saved:
        lg.setLevel(level)


def marker_patterns(covariate, token):
    """Byte patterns that betray the marker: its digits as text, its float64 bytes (as numpy
    and pickle store arrays), and the token."""
    digits = repr(covariate)[2:16]  # 14 digits after "0."
    assert len(digits) == 14 and digits.isdigit()
    return [digits.encode(), np.float64(covariate).tobytes(), token.encode()]


def _walk(top, since, skip_temp=False):
    """Files under ``top`` (no symlinks) modified at or after ``since``."""
    stack = [Path(top)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name in SKIP_DIRS:
                continue
            if skip_temp and folder == Path(top) and entry.name.startswith(SKIP_TEMP_PREFIXES):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_mtime >= since and st.st_size <= MAX_FILE_BYTES:
                        yield Path(entry.path)
            except OSError:
                continue


def home_entries():
    home = Path.home()
    return {p.name for p in home.iterdir()} if home.is_dir() else set()


def files_holding(patterns, since, new_home_entries=()):
    """Files written since ``since`` in the temp directory, the home directory's tool folders
    (and any new top-level entry of the home directory) and the repository, that hold one
    of ``patterns``; plus the number of files read."""
    home = Path.home()
    roots = [(Path(tempfile.gettempdir()), True), (ROOT, False)]
    roots += [(home / d, False) for d in (*HOME_DIRS, *new_home_entries) if (home / d).is_dir()]
    hits, count = [], 0
    seen = set()
    top_files = [p for p in home.iterdir() if p.is_file() and not p.is_symlink()] \
        if home.is_dir() else []
    for path in [*top_files, *(f for root, skip in roots for f in _walk(root, since, skip))]:
        if path in seen:
            continue
        seen.add(path)
        try:
            if path.stat().st_mtime < since:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        count += 1
        if any(p in data for p in patterns):
            hits.append(str(path))
    return hits, count


def untracked_files():
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in out.splitlines() if line.startswith("??")}


def cached_blobs():
    """Every value held by ``st.cache_data`` (pickled bytes) in this process."""
    caches = cache_data_api._data_caches._function_caches
    blobs = []
    for session_caches in caches.values():
        for cache in session_caches.values():
            mem = cache.storage._mem_cache  # streamlit is pinned; see requirements.txt
            blobs.extend(bytes(v) for v in list(mem.values()))
    return blobs


def upload_csv(covariate, n=30, seed=4):
    """A valid sphere regression file whose row 6 has the marker covariate."""
    data = make_regression_data(Sphere(2), n, rng=seed)
    x = np.array(data.x)
    x[5] = covariate
    return to_csv(Sphere(2), data.y, x).encode()


# =========================================================================== uploads
def test_uploaded_data_never_reach_disk_logs_or_caches(all_logs, downloads, cache_calls):
    digits = str(1 + secrets.randbelow(8)) + "".join(
        str(secrets.randbelow(10)) for _ in range(13)) + str(1 + secrets.randbelow(9))
    covariate = float("0." + digits)  # 15 significant digits: repr gives them back
    token = "mk" + secrets.token_hex(8)
    patterns = marker_patterns(covariate, token)
    good = upload_csv(covariate)
    assert patterns[0] in good
    bad = f"x,y1,y2,y3\n0.1,1,0,0\n0.2,{token},1,0\n".encode()

    since = time.time() - 1.0
    before, home_before = untracked_files(), home_entries()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        at = open_page()
        at.radio(key="gr_source").set_value("upload").run()
        at.file_uploader(key="gr_upload").set_value((f"{token}.csv", good, "text/csv")).run()
        assert not at.exception and not at.error
        assert any("Uploaded CSV: n = 30" in c.value for c in at.caption)
        at.session_state["gr_export_open"] = True  # the exported script, built once opened
        press_release(quick_sampler(at))
        press_release(at)
        assert len(at.session_state[LEDGER]) == 2
        rel = last_release(at)
        at.file_uploader(key="gr_upload").set_value((f"{token}-bad.csv", bad, "text/csv")).run()
        assert not at.exception
        assert any("cannot be used" in e.value for e in at.error)
        # The session's own view may show the bad cell back to the analyst; that is all.
        shown_to_user = "\n".join(e.value for e in at.error)
    time.sleep(0.5)  # let any background writer finish before looking

    # The analyst sees the bad cell (row and column) in the page: that is its only way out.
    assert token in shown_to_user and "Row 3" in shown_to_user

    problems = {}
    hits, scanned = files_holding(patterns, since, home_entries() - home_before)
    if hits:
        problems["files"] = hits
    new_files = untracked_files() - before
    leaked_new = [f for f in new_files if token in f
                  or any(p in (ROOT / f).read_bytes() for p in patterns if (ROOT / f).is_file())]
    if leaked_new:
        problems["git status"] = leaked_new
    logs = "\n".join(all_logs.lines)
    if any(p.decode("latin-1") in logs for p in patterns):
        problems["logs"] = [line for line in all_logs.lines
                            if any(p.decode("latin-1") in line for p in patterns)][:5]
    texts = [str(w.message) for w in caught]
    if any(p.decode("latin-1") in t for t in texts for p in patterns):
        problems["warnings"] = texts
    if any(p in blob for blob in cached_blobs() for p in patterns):
        problems["st.cache_data values"] = True
    if any(p in blob for _, blob in cache_calls for p in patterns):
        problems["st.cache_data arguments"] = sorted({name for name, blob in cache_calls
                                                     if any(p in blob for p in patterns)})
    # The exported script names the uploaded file (DATA_FILE, its own name: issue 31 point 6),
    # so that the analyst's script reads it; that line is the one place a file's name may
    # appear in a download. Nothing else of the upload may.
    scripts = [data for name, _, data in downloads if name.endswith("_scenario.py")]
    assert any(f"DATA_FILE = '{token}.csv'".encode() in data for data in scripts)
    scrubbed = [(name, re.sub(rb"DATA_FILE = '[^'\n]*'", b"", data))
                for name, _, data in downloads]
    if any(p in data for _, data in scrubbed for p in patterns):
        problems["downloads"] = [name for name, data in scrubbed
                                 if any(p in data for p in patterns)]
    if any(p.decode("latin-1") in str(dict(at.query_params)) for p in patterns):
        problems["URL"] = dict(at.query_params)
    if any(p.decode("latin-1") in rel.to_json() for p in patterns):
        problems["release JSON"] = True
    assert not problems, problems
    # The captures saw the session (test_the_scans_would_see_a_leak checks that a written or
    # logged marker is found).
    assert all_logs.lines and cache_calls
    print(f"hygiene scan: {scanned} files written during the session read, "
          f"{len(all_logs.lines)} log records, {len(cached_blobs())} cached values")
    # Uploaded data are not offered for download; the release is.
    names = {name for name, _, _ in downloads}
    assert "geodesic_regression_release.json" in names
    assert not any(name and name.endswith(".csv") and "upload" in name for name in names)


def test_the_scans_would_see_a_leak(all_logs, tmp_path):
    """The disk and log scans find a marker that is written or logged (no false negatives)."""
    token = "mk" + secrets.token_hex(8)
    since = time.time() - 1.0
    target = Path(tempfile.gettempdir()) / f"dpcore-hygiene-{token}.bin"
    try:
        target.write_bytes(b"abc" + token.encode())
        hits, _ = files_holding([token.encode()], since)
        assert str(target) in hits
    finally:
        target.unlink(missing_ok=True)
    logging.getLogger("streamlit.runtime").debug("value %s", token)
    assert any(token in line for line in all_logs.lines)


def test_the_cache_recorder_sees_array_arguments(cache_calls):
    """Generated data are passed to ``cached_fit``: the recorder finds their values."""
    open_page()
    ds = D.synthetic_dataset("sphere", None, 50, D.SPHERE_NOISE_CHOICES[0], 0)
    pattern = np.float64(ds.x[3]).tobytes()
    assert "cached_fit" in {name.rsplit(".", 1)[-1] for name, blob in cache_calls
                            if pattern in blob}
    assert any(pattern in blob for blob in cached_blobs())  # cached_synthetic's value


def _frechet_upload():
    y = make_mean_data(Sphere(2), 40, radius=0.3, rng=10**6 + secrets.randbelow(10**9))
    content = to_csv(Sphere(2), y).encode()
    return content, load_csv(content, Sphere(2), task="mean")[5:10].ravel()


def _linear_upload():
    rng = np.random.default_rng(10**6 + secrets.randbelow(10**9))
    x = rng.uniform(0, 5, 40)
    rows = [f"{float(a)!r},{float(10 + 2 * a + rng.normal())!r}" for a in x]
    return ("age,height\n" + "\n".join(rows) + "\n").encode(), x[5:10]


#: page, source radio key, uploader key, release button key, data maker
OTHER_UPLOADS = {
    "frechet_mean": ("fm_source", "fm_upload", "fm_release", _frechet_upload),
    "linear_regression": ("lr_src", "lr_upload", "lr_release", _linear_upload),
}


@pytest.mark.parametrize("page_name", sorted(OTHER_UPLOADS))
def test_uploads_on_other_pages_are_never_cached(page_name, cache_calls, downloads):
    """The Fréchet mean and linear regression pages: uploaded values reach no cache (as
    argument or value) and no download but the release."""
    source_key, upload_key, release_key, make = OTHER_UPLOADS[page_name]
    content, values = make()
    patterns = [np.float64(v).tobytes() for v in values]
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.switch_page(f"pages/{page_name}.py").run()
    if page_name == "frechet_mean":  # a small preview keeps the test quick
        at.slider(key="fm_draws").set_value(20)
        at.run()
    at.radio(key=source_key).set_value("upload").run()
    at.session_state[f"{release_key[:2]}_export_open"] = True  # the export, built once opened
    at.file_uploader(key=upload_key).set_value(("mine.csv", content, "text/csv")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any(name.endswith("_scenario.py") for name, _, _ in downloads)
    click_release(at, release_key)
    assert not at.exception, at.exception
    assert len(at.session_state[LEDGER]) >= 1
    assert cache_calls
    leaked = sorted({name for name, blob in cache_calls if any(p in blob for p in patterns)})
    assert leaked == [], f"uploaded data passed to cached functions: {leaked}"
    assert not any(p in blob for blob in cached_blobs() for p in patterns)
    assert not any(p in data for _, _, data in downloads for p in patterns)


# =========================================================================== randomness
def test_two_presses_give_fresh_private_values(downloads):
    at = press_release(quick_sampler(open_page()))
    first = last_release(at)
    press_release(at)
    second = last_release(at)
    assert len(at.session_state[LEDGER]) == 2
    assert not first.seeded and first.label == "private"
    for key in ("footpoint", "shooting_vector"):
        assert not np.allclose(first.values[key], second.values[key]), key
    payloads = [json.loads(data) for name, _, data in downloads
                if name == "geodesic_regression_release.json"]
    assert payloads[-1]["seeded"] is False and payloads[-1]["label"] == "private"
    assert payloads[-1]["values"]["footpoint"] == second.to_dict()["values"]["footpoint"]


def test_fixed_seed_release_is_reproducible_and_labelled(downloads):
    at = quick_sampler(open_page())
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    at.number_input(key="gr_release_seed").set_value(42).run()
    press_release(at)
    first = last_release(at)
    press_release(at)
    second = last_release(at)
    assert first.seeded and "not for publication" in first.label
    np.testing.assert_array_equal(first.values["footpoint"], second.values["footpoint"])
    labels = [e["label"] for e in at.session_state[LEDGER]]
    assert labels and all("not for publication" in label for label in labels)
    assert any("not for publication" in s.value for s in at.success)
    payload = json.loads([data for name, _, data in downloads
                          if name == "geodesic_regression_release.json"][-1])
    assert payload["seeded"] is True and "not for publication" in payload["label"]


# =========================================================================== CSV exports
def _cells(text):
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


@pytest.mark.parametrize("source", ["synthetic", "example"])
def test_download_data_goes_through_neutralize_cell(downloads, monkeypatch, source):
    calls = []

    def spy(cell):
        calls.append(cell)
        return neutralize_cell(cell)

    monkeypatch.setattr(csvio, "neutralize_cell", spy)
    at = open_page()
    if source != "synthetic":
        at.radio(key="gr_source").set_value(source).run()
        assert not at.exception
    payloads = [data.decode() for name, mime, data in downloads
                if name == f"{source}_sphere.csv"]
    assert payloads, [name for name, _, _ in downloads]
    assert calls, "the data download did not go through neutralize_cell"
    if source == "synthetic":
        ds = D.synthetic_dataset("sphere", None, 20, G.default_noise("sphere", 0.001), 0)
    else:
        ds = D.example_dataset("sphere", None)
    assert payloads[-1] == to_csv(Sphere(2), ds.y, ds.x)
    cells = _cells(payloads[-1])
    assert len(calls) >= len(cells)
    assert all(neutralize_cell(c) == c for c in cells)
    assert [mime for name, mime, _ in downloads if name == f"{source}_sphere.csv"][-1] == \
        "text/csv"


def test_budget_split_csv_has_no_formula_cells():
    """The budget-split page's simulation CSV (:func:`ui.logic.budget_split.sweep_csv`) is written
    with ``DataFrame.to_csv``, not through ``neutralize_cell``; its cells are numbers and fixed
    view names, so none can start a formula. This pins that down."""
    config = B.SweepConfig(kind="euclidean", param=1, mode="paper", sample_sizes=(10,), n_equal=2,
                            replicates=1, n_footpoints=1, n_vectors=1, chain_length=20,
                            burn_in=10, views=("equal",))
    df = B.run_chunk(config, "equal", 10, 0)
    cells = _cells(B.sweep_csv(df))
    assert cells and all(neutralize_cell(c) == c for c in cells)


# =========================================================================== limits
def test_a_limit_in_the_app_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_CHAIN_LENGTH", "100")
    at = open_page()  # default chain length 300
    press_release(at)
    errors = "\n".join(e.value for e in at.error)
    assert "max_chain_length=100" in errors and "DPCORE_MAX_CHAIN_LENGTH" in errors
    assert at.session_state[LEDGER] == []
