"""Resource limits: defaults, environment overrides, validation and the errors they raise."""

from __future__ import annotations

import dataclasses

import pytest

from dpcore.exceptions import LimitExceededError
from dpcore.settings import ENV_VARS, Limits, check_limit, get_limits

ALL_VARS = [var for names in ENV_VARS.values() for var in names]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No limit variable from the calling shell leaks into a test."""
    for var in ALL_VARS:
        monkeypatch.delenv(var, raising=False)


def test_defaults():
    limits = get_limits()
    assert limits == Limits()
    assert limits.max_upload_mb == 200
    assert limits.max_rows == 1_000_000
    assert limits.max_replicates == 400
    assert limits.max_chain_length == 20_000
    assert limits.max_burn_in == 10_000
    assert limits.max_mc_samples == 200_000
    assert limits.max_sweep_cells == 2_000


def test_limit_error_is_importable_from_settings_and_exceptions():
    import dpcore.settings

    assert dpcore.settings.LimitExceededError is LimitExceededError
    assert issubclass(LimitExceededError, ValueError)


def test_every_field_has_its_own_dpcore_variable():
    fields = [f.name for f in dataclasses.fields(Limits)]
    assert list(ENV_VARS) == fields
    for name, names in ENV_VARS.items():
        assert names == (f"DPCORE_{name.upper()}",)


def test_limits_are_frozen_and_validated():
    limits = Limits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_rows = 5
    with pytest.raises(ValueError, match="max_rows"):
        Limits(max_rows=0)
    with pytest.raises(TypeError, match="max_replicates"):
        Limits(max_replicates=2.5)
    with pytest.raises(TypeError, match="max_burn_in"):
        Limits(max_burn_in=True)


@pytest.mark.parametrize(("name", "names"), list(ENV_VARS.items()))
def test_environment_overrides(monkeypatch, name, names):
    monkeypatch.setenv(names[-1], " 1_234 ")
    assert getattr(get_limits(), name) == 1234
    others = {f.name: getattr(Limits(), f.name) for f in dataclasses.fields(Limits)}
    others.pop(name)
    assert {k: getattr(get_limits(), k) for k in others} == others


def test_blank_variable_means_default(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_ROWS", "  ")
    assert get_limits().max_rows == 1_000_000


def test_file_size_reads_only_its_dpcore_variable(monkeypatch):
    """The library never reads an application's settings: Streamlit's upload variable changes
    nothing (the dashboard passes its own cap as ``max_bytes``)."""
    monkeypatch.setenv("STREAMLIT_SERVER_MAX_UPLOAD_SIZE", "5")
    assert get_limits().max_upload_mb == 200
    monkeypatch.setenv("DPCORE_MAX_UPLOAD_MB", "50")
    assert get_limits().max_upload_mb == 50


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "1.5", "1e5", "20MB"])
@pytest.mark.parametrize("var", ["DPCORE_MAX_REPLICATES", "DPCORE_MAX_UPLOAD_MB"])
def test_bad_environment_value_names_the_variable(monkeypatch, var, raw):
    monkeypatch.setenv(var, raw)
    with pytest.raises(ValueError, match=f"environment variable {var} must be a positive "
                                         "integer") as info:
        get_limits()
    assert repr(raw) in str(info.value)


def test_check_limit_passes_values_within_the_limit():
    assert check_limit("max_replicates", 400) == 400
    assert check_limit("max_replicates", 0) == 0
    assert check_limit("max_upload_mb", 19.5) == 19.5
    assert check_limit("max_rows", 7, Limits(max_rows=7)) == 7


def test_check_limit_error_says_which_limit_and_how_to_change_it():
    with pytest.raises(LimitExceededError) as info:
        check_limit("max_replicates", 1_000)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.name, err.value, err.limit, err.env_var) == (
        "max_replicates", 1_000, 400, "DPCORE_MAX_REPLICATES")
    text = str(err)
    assert "1,000 exceeds the limit max_replicates=400" in text
    assert "private draws per request" in text
    assert "set the environment variable DPCORE_MAX_REPLICATES" in text


@pytest.mark.parametrize("name", list(ENV_VARS))
def test_every_limit_error_names_its_variable(name):
    limit = getattr(Limits(), name)
    with pytest.raises(LimitExceededError, match=f"set the environment variable "
                                                 f"{ENV_VARS[name][0]}"):
        check_limit(name, limit + 1)


def test_file_size_limit_error_names_only_the_library_variable():
    with pytest.raises(LimitExceededError) as info:
        check_limit("max_upload_mb", 250.5)
    text = str(info.value)
    assert "250.5 exceeds the limit max_upload_mb=200 (MiB per file read)" in text
    assert "DPCORE_MAX_UPLOAD_MB" in text
    assert "streamlit" not in text.lower() and "maxUploadSize" not in text


def test_limit_error_built_directly():
    err = LimitExceededError("max_rows", 12, 10)
    assert (err.name, err.value, err.limit, err.env_var) == ("max_rows", 12, 10,
                                                             "DPCORE_MAX_ROWS")
    assert str(err).startswith("12 exceeds the limit max_rows=10. Ask for less")


def test_check_limit_reads_the_environment_by_default(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_CHAIN_LENGTH", "100")
    with pytest.raises(LimitExceededError, match="max_chain_length=100"):
        check_limit("max_chain_length", 101)
    assert check_limit("max_chain_length", 101, Limits()) == 101


def test_check_limit_argument_errors():
    with pytest.raises(ValueError, match="max_rows"):
        check_limit("rows", 5)
    with pytest.raises(TypeError, match="real number"):
        check_limit("max_rows", "5")
    with pytest.raises(TypeError, match="real number"):
        check_limit("max_rows", True)
    with pytest.raises(ValueError, match="nan"):
        check_limit("max_rows", float("nan"))
    with pytest.raises(TypeError, match="Limits"):
        check_limit("max_rows", 5, limits={"max_rows": 10})
