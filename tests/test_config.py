"""The config file: defaults, validation, atomic owner-only writes, corrupt files kept aside."""

import json
import stat

import pytest

from core.config import Config, ConfigError, load_config, save_config, updated
from core.paths import config_path, data_home


def test_defaults_point_at_deepseek():
    config = Config()
    assert (config.base_url, config.model) == ("https://api.deepseek.com", "deepseek-flash")
    assert config.thinking is False
    assert config.max_round_trips == 12 and config.tool_limits["memory_query_max"] == 20


def test_a_missing_file_means_defaults_without_a_warning(tmp_path):
    assert load_config(tmp_path / "config.json") == (Config(), None)


def test_save_and_load_round_trip_with_owner_only_permissions(tmp_path):
    path = tmp_path / "home" / "config.json"
    config = updated(Config(), api_key="sk-secret-123456789", model="gpt-4o-mini",
                     base_url="https://api.openai.com/v1", max_round_trips=5)
    save_config(path, config)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(path) == (config, None)
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]  # no temp file left


def loaded(folder, content: str):
    """config.json written with `content`, then loaded: (path, config, warning, the files
    put aside)."""
    path = folder / "config.json"
    path.write_text(content)
    config, warning = load_config(path)
    return path, config, warning, list(folder.glob("config.json.invalid-*"))


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "invalid"),
    ('["a list"]', "JSON object"),
    ('{"version": 99}', "newer"),
])
def test_a_file_that_is_not_a_config_is_kept_aside_and_defaults_used(tmp_path, content,
                                                                      reason):
    path, config, warning, aside = loaded(tmp_path, content)
    assert config == Config()
    assert reason in warning and "using defaults" in warning
    assert len(aside) == 1 and aside[0].read_text() == content
    assert not path.exists()


@pytest.mark.parametrize(("content", "reason"), [
    ('{"api_key": "sk-kept-000000", "base_url": "ftp://x"}', "base_url"),
    ('{"api_key": "sk-kept-000000", "max_round_trips": 0}', "max_round_trips"),
    ('{"api_key": "sk-kept-000000", "tool_limits": {"persona_query_max": 0}}',
     "persona_query_max"),
    ('{"api_key": "sk-kept-000000", "colour": "blue"}', "unknown setting(s) ignored: colour"),
])
def test_a_config_with_bad_or_unknown_settings_keeps_every_good_one(tmp_path, content,
                                                                     reason):
    path, config, warning, aside = loaded(tmp_path, content)
    assert config.api_key == "sk-kept-000000"  # the key is not lost over one bad setting
    assert reason in warning and "every other setting was kept" in warning
    assert len(aside) == 1 and aside[0].read_text() == content
    assert stat.S_IMODE(aside[0].stat().st_mode) == 0o600
    for _start in range(3):  # the same bad file at every start: still one copy
        _config, told = load_config(path)
        assert aside[0].name in told
    assert list(tmp_path.glob("config.json.invalid-*")) == aside


def test_two_bad_files_in_one_second_keep_both_copies(tmp_path):
    path = tmp_path / "config.json"
    for content in ("{one", "{two"):
        path.write_text(content)
        load_config(path)
    kept = sorted(p.read_text() for p in tmp_path.glob("config.json.invalid-*"))
    assert kept == ["{one", "{two"]


def test_the_key_never_shows_in_repr_public_data_or_errors(tmp_path):
    key = "sk-very-secret-key-0042"
    config = updated(Config(), api_key=key)
    assert key not in repr(config) and key not in json.dumps(config.public())
    assert config.public()["api_key"] == "…0042"
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"api_key": key, "model": 7}))
    _, warning = load_config(path)
    assert key not in warning and "model" in warning


def test_bad_values_name_the_field():
    with pytest.raises(ConfigError, match="request_timeout"):
        updated(Config(), request_timeout=-1)
    with pytest.raises(ConfigError, match="unknown setting"):
        updated(Config(), top_k=2)


def test_data_home_comes_from_the_argument_then_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRULYMEM_HOME", str(tmp_path / "env"))
    assert data_home() == tmp_path / "env"
    assert data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("TRULYMEM_HOME")
    assert data_home().name == ".trulymem"
    assert config_path(tmp_path).name == "config.json"


def test_a_version_1_file_keeps_the_persons_choices_and_follows_new_defaults(tmp_path,
                                                                            monkeypatch):
    """Version 1 wrote every default; migrated, only what the person changed stays, so a
    default that changes later reaches them."""
    import core.config as config_module

    path = tmp_path / "config.json"
    v1 = {**config_module.V1_DEFAULTS, "version": 1, "api_key": "sk-kept-123456789",
          "max_round_trips": 20,
          "tool_limits": {**config_module.V1_DEFAULTS["tool_limits"], "memory_update_max": 3}}
    path.write_text(json.dumps(v1))
    config, warning = load_config(path)
    assert warning is None
    assert config.api_key == "sk-kept-123456789" and config.max_round_trips == 20
    assert config.tool_limits["memory_update_max"] == 3
    save_config(path, config)
    written = json.loads(path.read_text())
    assert written == {"version": 3, "api_key": "sk-kept-123456789", "max_round_trips": 20,
                       "tool_limits": {"memory_update_max": 3}}
    # A later release changes a default limit: the choice stays, the rest follows.
    monkeypatch.setitem(config_module.DEFAULT_LIMITS, "persona_update_max", 3)
    again, _ = load_config(path)
    assert again.max_round_trips == 20
    assert again.tool_limits["persona_update_max"] == 3
    assert again.tool_limits["memory_update_max"] == 3


@pytest.mark.parametrize("version", ['"two"', "0", "true"])
def test_a_config_with_a_version_that_is_not_a_number_is_kept_aside(tmp_path, version):
    path = tmp_path / "config.json"
    path.write_text(f'{{"version": {version}, "api_key": "sk-x-123456789012"}}')
    config, warning = load_config(path)
    assert "version must be a whole number" in warning and "kept as" in warning
    assert config == Config()
