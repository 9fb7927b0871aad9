"""AppTest tests of "Estimate privately" on the Geodesic regression page (issue 14, point 2):
an uploaded file's covariate range estimated under DP with a stated ε_b, through the same
confirmation, session cap and ledger as a release; the estimate fills the covariate range
fields and the release states it in its assumptions; the total is ε_b + ε. Also: the exported
script of an upload reads the page's covariate column and reproduces the page's release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from dpcore.data import make_regression_data
from dpcore.manifolds import Sphere

from .pages import click_release, gr_open_sampler, gr_quick_sampler, open_app_page

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300
LEDGER = "privacy_ledger"
ESTIMATES = "gr_bounds_estimates"
BUTTON = "gr_bounds_estimate"
N = 200


def csv_bytes(n=N, seed=3, covariate="log_pop", low=6.7, high=7.6):
    """S² responses of a geodesic, the covariate (log population in [6.7, 7.6]: the issue's
    example, which the default range [0, 1] clips entirely), an identifier, a second numeric
    column and a person column (7 groups)."""
    d = make_regression_data(Sphere(2), n, noise=0.003, rng=seed)
    lines = [f"id,{covariate},area,y1,y2,y3,region"]
    lines += [f"{i + 1},{low + (high - low) * t:.6f},{10 + t:.3f},{a!r},{b!r},{c!r},r{i % 7}"
              for i, (t, (a, b, c)) in enumerate(zip(d.x, d.y.tolist(), strict=True))]
    return ("\n".join(lines) + "\n").encode()


def open_upload(data=None, **budget):
    """The page with the file uploaded; ``budget`` sets ε_p, ε_v and the draws (small by
    default, so that the release at n = 200 is exact and labelled private)."""
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value(
        ("pop.csv", data or csv_bytes(), "text/csv")).run()
    settings = {"gr_eps_p": 0.05, "gr_eps_v": 0.05, "gr_nf": 1, "gr_nv": 1, **budget}
    for key, value in settings.items():
        (at.select_slider if key.startswith("gr_eps") else at.number_input)(
            key=key).set_value(value)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def covariate_box(at):
    """The shared upload widget's covariate selectbox (key ``gr_map_cov_<scope>``)."""
    (box,) = [s for s in at.selectbox if s.key and s.key.startswith("gr_map_cov_")]
    return box


def person_box(at):
    """The shared upload widget's person selectbox (key ``gr_map_person_<scope>``)."""
    (box,) = [s for s in at.selectbox if s.key and s.key.startswith("gr_map_person_")]
    return box


def widget(elements, prefix):
    found = [w for w in elements if w.key and w.key.startswith(prefix)]
    assert len(found) == 1, [w.key for w in elements]
    return found[0]


def ledger(at):
    return at.session_state[LEDGER] if LEDGER in at.session_state else []


def range_fields(at):
    low = [n for n in at.number_input if n.label == "Covariate range: low"]
    high = [n for n in at.number_input if n.label == "high" and n.key.startswith("gr_hi_")]
    assert len(low) == len(high) == 1
    return low[0], high[0]


def preview(at):
    (text,) = [m.value for m in at.markdown if "covariates outside the public range" in m.value]
    return text


def assumptions(at):
    (text,) = [m.value for m in at.markdown if m.value.startswith("- ")
               and ("covariate range" in m.value or "`covariate_range`" in m.value)]
    return text


def test_log_population_estimated_then_released(downloads):
    at = open_upload()
    assert covariate_box(at).value == "log_pop"
    # the default range [0, 1] clips every covariate, and the preview says so
    assert f"- {N} of {N} (100%) covariates outside the public range [0, 1]" in preview(at)
    # the enclosing interval: 'log_pop' has no known units, so the wide default must be
    # confirmed (or an interval typed)
    enc_lo, enc_hi = widget(at.number_input, "gr_enc_lo_"), widget(at.number_input, "gr_enc_hi_")
    assert (enc_lo.value, enc_hi.value) == (-1e6, 1e6)
    box = widget(at.checkbox, "gr_wide_ok_")
    assert "'log_pop'" in box.label and "-1,000,000, 1,000,000" in box.label
    assert at.button(key=BUTTON).disabled
    # a log population (natural log) of any city lies in [0, 25]: public knowledge
    enc_lo.set_value(0.0)
    enc_hi.set_value(25.0).run()
    assert not [c for c in at.checkbox if c.key.startswith("gr_wide_ok_")]
    assert not at.button(key=BUTTON).disabled
    # ε_b defaults to 10% of the release's cost (1 draw at ε_p + ε_v = 0.1): mostly noise
    assert widget(at.number_input, "gr_eps_b_").value == pytest.approx(0.01)
    assert any("ε_b + ε = 0.01 + 0.1 = 0.11" in c.value for c in at.caption)
    assert any("mostly noise" in w.value for w in at.warning)
    widget(at.number_input, "gr_eps_b_").set_value(3.0)
    widget(at.select_slider, "gr_trim_").set_value(5.0).run()
    assert not any("mostly noise" in w.value for w in at.warning)
    assert any("ε_b + ε = 3 + 0.1 = 3.1" in c.value for c in at.caption)
    assert any(md.value.startswith("**Cost of this release: ε = 3.**")
               and "the covariate range estimate only" in md.value for md in at.markdown)
    assert ledger(at) == []  # nothing spent before the confirmation

    click_release(at, BUTTON)
    assert not at.error, [e.value for e in at.error]
    (est,) = ledger(at)
    assert est["page"] == "Geodesic regression: bounds estimate"
    assert est["epsilon"] == pytest.approx(3.0) and est["delta"] == 0.0 and est["rows"] == 1
    assert est["guarantee"] == "private" and est["mechanism"] == "exponential_quantile"
    assert est["note"].startswith("bounds estimate of 'log_pop' (5%–95% quantiles)")
    assert "ε_b = 3" in est["note"] and "1 row(s) per person" in est["note"]

    # the estimate fills the fields (inside the enclosing interval) and the preview follows
    (stored,) = at.session_state[ESTIMATES].values()
    lo, hi = stored["range"]
    assert 0.0 <= lo < hi <= 25.0
    low, high = range_fields(at)
    assert (low.value, high.value) == (lo, hi) and "_est1" in low.key
    assert any("holds the range of 'log_pop' estimated under DP with ε_b = 3" in c.value
               for c in at.caption)
    x = np.array([float(row.split(",")[1]) for row in csv_bytes().decode().splitlines()[1:]])
    outside = int(np.sum((x < lo) | (x > hi)))
    assert f"- {outside} of {N} " in preview(at) and f"public range [{lo:g}, {hi:g}]" in preview(at)
    assert "estimated under DP with ε_b = 3" in assumptions(at)

    # the release: both entries, the total ε_b + ε, the assumption stated
    gr_quick_sampler(at).run()
    assert any("The session's total becomes ε = 3.1" in md.value for md in at.markdown)
    click_release(at, "gr_release_button")
    assert not at.error, [e.value for e in at.error]
    entries = ledger(at)
    assert [e["page"] for e in entries] == ["Geodesic regression: bounds estimate",
                                            "Geodesic regression"]
    assert sum(e["epsilon"] for e in entries) == pytest.approx(3.1)
    assert any(md.value.startswith("**Total:** ε = 3.1,") for md in at.sidebar.markdown)
    rel = at.session_state["gr_last"]["release"]
    assert rel.private and rel.label == "private" and entries[-1]["guarantee"] == "private"
    cov = rel.assumptions["covariate_range"]
    assert cov["source"] == "public" and tuple(cov["value"]) == (lo, hi)
    assert cov["note"].startswith("estimated under DP with ε_b = 3")
    assert "ε_b + ε by sequential composition" in cov["note"]
    assert "estimated under DP with ε_b = 3" in assumptions(at)
    at.run()
    assert len(ledger(at)) == 2  # a rerun spends nothing
    # the exported script reads the uploaded file by its name and records the estimate's ε_b
    at.session_state["gr_export_open"] = True  # the export is built once opened
    at.run()
    script = [d for name, d in downloads if name == "geodesic_regression_scenario.py"][-1]
    assert "DATA_FILE = 'pop.csv'" in script.decode()
    assert "BOUNDS_EPSILON = 3.0" in script.decode() and "'covariate_range'" in script.decode()

    # a retyped range is the user's own public choice: no longer said to be estimated
    low.set_value(6.0).run()
    assert not any("holds the range of" in c.value for c in at.caption)
    assert "estimated under DP" not in assumptions(at)


def test_cap_refuses_an_estimate_above_it():
    at = open_upload(gr_eps_p=1.0, gr_eps_v=2.0, gr_nf=3, gr_nv=3)
    at.sidebar.number_input(key="ledger_cap").set_value(1.0).run()
    widget(at.checkbox, "gr_wide_ok_").check().run()
    # the default ε_b is 10% of the release's cost 3 x 3 x (1 + 2) = 27: 2.7, above the cap
    assert widget(at.number_input, "gr_eps_b_").value == pytest.approx(2.7)
    refusals = [e.value for e in at.error if "above the cap" in e.value]
    assert refusals and "ε = 2.7" in refusals[0]
    assert at.button(key=BUTTON).disabled
    assert ledger(at) == []
    # within the cap it goes through, and the cap then counts it
    widget(at.number_input, "gr_eps_b_").set_value(0.5).run()
    assert not at.button(key=BUTTON).disabled
    click_release(at, BUTTON)
    assert [e["epsilon"] for e in ledger(at)] == [pytest.approx(0.5)]
    widget(at.number_input, "gr_eps_b_").set_value(0.6).run()
    assert at.button(key=BUTTON).disabled  # 0.5 + 0.6 > 1
    assert any("0.5 of the budget is left" in e.value for e in at.error)
    assert len(ledger(at)) == 1


def test_estimate_counts_per_person_and_belongs_to_its_file_and_column():
    """The entry keeps the rows per person in effect (group privacy: the person column's
    largest group, 29 of 200 rows in 7 groups). The estimate belongs to its file and covariate
    column: another column starts from the default range, and coming back finds it again."""
    at = open_upload()
    person_box(at).set_value("region").run()
    assert "gr_eps_b_" not in str([n.key for n in at.number_input])  # rows per person first
    widget(at.checkbox, "gr_group_ok_").check().run()  # the largest group confirmed public
    widget(at.checkbox, "gr_wide_ok_").check().run()
    widget(at.number_input, "gr_eps_b_").set_value(0.2).run()
    assert any("Cost of this release: ε = 5.8 per person (29 rows each)" in md.value
               and "the covariate range estimate only" in md.value for md in at.markdown)
    click_release(at, BUTTON)
    (entry,) = ledger(at)
    assert entry["rows"] == 29 and "29 row(s) per person" in entry["note"]
    assert entry["epsilon"] == pytest.approx(0.2)
    (stored,) = at.session_state[ESTIMATES].values()
    assert tuple(v.value for v in range_fields(at)) == stored["range"]

    covariate_box(at).set_value("area").run()
    low, high = range_fields(at)
    assert "_est" not in low.key and (low.value, high.value) == (0.0, 1.0)
    assert not any("holds the range of" in c.value for c in at.caption)
    covariate_box(at).set_value("log_pop").run()
    assert tuple(v.value for v in range_fields(at)) == stored["range"]


def test_offered_for_uploads_in_strict_mode_only():
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    assert BUTTON not in [b.key for b in at.button]  # synthetic data: design ranges
    at.radio(key="gr_source").set_value("example").run()
    assert BUTTON not in [b.key for b in at.button]
    at.radio(key="gr_source").set_value("rats").run()
    assert not at.exception and at.radio(key="gr_source").value == "rats"
    assert BUTTON not in [b.key for b in at.button]
    at = open_upload()
    assert BUTTON in [b.key for b in at.button]
    at.radio(key="gr_mode").set_value("paper").run()
    assert not at.exception
    assert BUTTON not in [b.key for b in at.button]


@pytest.fixture
def downloads(monkeypatch):
    """Every payload handed to Streamlit's media file manager (download buttons): a list of
    ``(file_name, bytes)``."""
    seen = []
    original = MediaFileManager.add

    def add(self, path_or_data, mimetype, coordinates, file_name=None,
            is_for_static_download=False):
        data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
        seen.append((file_name, bytes(data)))
        return original(self, path_or_data, mimetype, coordinates, file_name=file_name,
                        is_for_static_download=is_for_static_download)

    monkeypatch.setattr(MediaFileManager, "add", add)
    return seen


def test_upload_export_reads_the_pages_covariate_and_reproduces_the_release(downloads,
                                                                            tmp_path):
    """An upload whose covariate is 'age' among an identifier, a second numeric column and a
    person column: the page's exported script reads 'age' (the other columns ignored) and,
    with the page's fixed release seed, prints the page's release to 1e-12."""
    data = csv_bytes(n=20, covariate="age", low=20.0, high=80.0)
    at = open_upload(data, gr_eps_p=1.0, gr_eps_v=2.0, gr_nf=2, gr_nv=1)
    assert covariate_box(at).value == "age"
    low, high = range_fields(at)
    low.set_value(0.0)
    high.set_value(100.0)
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    at.number_input(key="gr_release_seed").set_value(5)
    gr_quick_sampler(at).run()
    click_release(at, "gr_release_button")
    rel = at.session_state["gr_last"]["release"]
    assert rel.private and tuple(rel.assumptions["covariate_range"]["value"]) == (0.0, 100.0)
    at.session_state["gr_export_open"] = True  # the export is built once opened
    at.run()
    script = [d for name, d in downloads if name == "geodesic_regression_scenario.py"][-1]
    script = script.decode()
    assert "COVARIATE = 'age'" in script and "RELEASE_SEED = 5" in script
    assert "DATA_FILE = 'pop.csv'" in script  # the uploaded file's own name
    assert "BOUNDS_EPSILON" not in script  # the range was typed, not estimated
    (tmp_path / "pop.csv").write_bytes(data)
    (tmp_path / "scenario.py").write_text(script, encoding="utf-8")
    out = subprocess.run([sys.executable, "scenario.py"], capture_output=True, text=True,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Columns not used: id, area, region." in out.stdout
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in out.stdout.splitlines() if ":" in line}
    assert printed["label"] == rel.label
    np.testing.assert_allclose(np.array(json.loads(printed["footpoint"])),
                               np.asarray(rel.values["footpoint"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(json.loads(printed["shooting vector"])),
                               np.asarray(rel.values["shooting_vector"]), rtol=0, atol=1e-12)
