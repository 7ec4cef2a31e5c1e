"""vaultkit.vault.openclaw: discovery, JSON5 reading, agent overrides, bootstrap limits."""

from __future__ import annotations

import pytest

from vaultkit.vault import openclaw
from vaultkit.vault.openclaw import (agent_settings, bootstrap_limits, find_config, load_openclaw,
                               parse_duration, setting)

CONFIG = """{
  // JSON5: comments, unquoted keys, trailing commas
  agents: {
    defaults: {
      bootstrapMaxChars: 5000,
      compaction: { reserveTokensFloor: 20000, },
    },
    list: [
      { id: "ops", bootstrapTotalMaxChars: 9000, compaction: { memoryFlush: { enabled: false } } },
      { id: "main" },
    ],
  },
}
"""


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(openclaw.ENV_VAR, raising=False)
    return home


def test_load_json5_with_comments(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text(CONFIG)
    data, error = load_openclaw(path)
    assert error is None
    assert data["agents"]["defaults"]["compaction"]["reserveTokensFloor"] == 20000


@pytest.mark.parametrize("text, line, col", [
    ("{a: 1,\n b: }", 2, 5),
    ("{\n  agents: {\n    defaults: {\n", 4, 1),
    ("{a: 1} x", 1, 8),
])
def test_parse_error_has_line_and_column(tmp_path, text, line, col):
    path = tmp_path / "openclaw.json"
    path.write_text(text)
    data, error = load_openclaw(path)
    assert data is None
    message, got_line, got_col = error
    assert (got_line, got_col) == (line, col)
    assert message and "<string>" not in message


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("[1, 2]", "not an object"),
    (b"\xff\xfe\x00", "cannot be read"),
])
def test_unusable_config_is_an_error_not_a_crash(tmp_path, text, fragment):
    path = tmp_path / "openclaw.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    data, error = load_openclaw(path)
    assert data is None and fragment in error[0]


def test_missing_file_is_an_error(tmp_path):
    data, error = load_openclaw(tmp_path / "nope.json")
    assert data is None and "no such file" in error[0]


def test_setting_sources():
    import json5

    data = json5.loads(CONFIG)
    assert setting(data, "compaction.reserveTokensFloor") == (
        20000, "agents.defaults.compaction.reserveTokensFloor")
    assert setting(data, "compaction.memoryFlush.enabled") == (True, None)  # runtime default
    assert setting(data, "compaction.memoryFlush.enabled", "ops") == (
        False, "agents.list[ops].compaction.memoryFlush.enabled")
    assert setting(data, "heartbeat.every", "main") == ("30m", None)
    assert setting(None, "compaction.reserveTokensFloor") == (20000, None)
    assert setting(data, "no.such.key") == (None, None)


def test_agent_settings_merges_defaults_and_overrides():
    import json5

    data = json5.loads(CONFIG)
    merged = agent_settings(data, "ops")
    assert merged["bootstrapMaxChars"] == 5000
    assert merged["bootstrapTotalMaxChars"] == 9000
    assert merged["compaction"]["reserveTokensFloor"] == 20000
    assert merged["compaction"]["memoryFlush"] == {"enabled": False, "softThresholdTokens": 4000}
    assert "id" not in merged
    assert agent_settings(None)["heartbeat"]["every"] == "30m"
    assert agent_settings(data, "unknown")["bootstrapTotalMaxChars"] == 60000


def test_discovery_order(tmp_path, monkeypatch, _isolated_home):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    home_cfg = _isolated_home / ".openclaw" / "openclaw.json"
    home_cfg.parent.mkdir()
    home_cfg.write_text("{}")
    assert find_config(vault) == home_cfg
    parent_cfg = tmp_path / "ws" / "openclaw.json"
    parent_cfg.write_text("{}")
    assert find_config(vault) == parent_cfg
    env_cfg = tmp_path / "env.json"
    monkeypatch.setenv(openclaw.ENV_VAR, str(env_cfg))
    assert find_config(vault) == env_cfg  # returned even though it does not exist
    explicit = tmp_path / "explicit.json"
    assert find_config(vault, explicit) == explicit


def test_discovery_none(tmp_path):
    vault = tmp_path / "v"
    vault.mkdir()
    assert find_config(vault) is None


def test_memory_only_layout_looks_beside_the_workspace(tmp_path):
    from vaultkit.vault.loader import load_vault

    workspace = tmp_path / "openclaw" / "workspace"
    memory = workspace / "memory"
    (memory / ".obsidian").mkdir(parents=True)
    (memory / "vaultkit.toml").write_text('memory-dir = "."\n')
    cfg = tmp_path / "openclaw" / "openclaw.json"
    cfg.write_text("{agents: {defaults: {bootstrapMaxChars: 1234}}}")
    vault = load_vault(memory, use_cache=False)
    assert find_config(vault) == cfg
    per_file, total, where = bootstrap_limits(vault)
    assert (per_file, total) == (1234, 60000)
    assert str(cfg) in where


def test_bootstrap_limits(tmp_path):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    assert bootstrap_limits(vault)[:2] == (20000, 60000)
    assert "no openclaw.json" in bootstrap_limits(vault)[2]
    cfg = tmp_path / "ws" / "openclaw.json"
    cfg.write_text(CONFIG)
    assert bootstrap_limits(vault)[:2] == (5000, 60000)
    assert bootstrap_limits(vault, agent="ops")[:2] == (5000, 9000)
    cfg.write_text("{broken")
    per_file, total, where = bootstrap_limits(vault)
    assert (per_file, total) == (20000, 60000) and "does not parse" in where


@pytest.mark.parametrize("text, minutes", [
    ("30m", 30), ("0m", 0), ("1h", 60), ("1h30m", 90), ("90s", 1.5), ("2h ", 120), (15, 15),
    ("", None), ("soon", None), (None, None), (True, None),
])
def test_parse_duration(text, minutes):
    assert parse_duration(text) == minutes
