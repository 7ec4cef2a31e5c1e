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


# -- the limits by version ------------------------------------------------------------------

def _install(prefix, version, monkeypatch):
    """An npm global install of OpenClaw ``version`` under ``prefix``, found there."""
    package = prefix / "lib" / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text(f'{{"name": "openclaw", "version": "{version}"}}')
    monkeypatch.setattr(openclaw, "_npm_prefixes", lambda: [prefix])
    return package / "package.json"


def test_limits_set_in_openclaw_json_say_so(tmp_path):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    cfg = tmp_path / "ws" / "openclaw.json"
    cfg.write_text("{agents: {defaults: {bootstrapMaxChars: 5000, bootstrapTotalMaxChars: 9000}}}")
    assert bootstrap_limits(vault) == (
        5000, 9000, f"per file: openclaw.json agents.defaults.bootstrapMaxChars ({cfg}); "
                    f"in all: openclaw.json agents.defaults.bootstrapTotalMaxChars ({cfg})")


def test_a_limit_the_config_leaves_out_is_the_installed_versions(tmp_path, monkeypatch):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    cfg = tmp_path / "ws" / "openclaw.json"
    cfg.write_text("{agents: {defaults: {bootstrapMaxChars: 5000}}}")
    package = _install(tmp_path / "npm", "2026.4.27", monkeypatch)
    assert bootstrap_limits(vault) == (
        5000, 60000, f"per file: openclaw.json agents.defaults.bootstrapMaxChars ({cfg}); "
                     f"in all: OpenClaw 2026.4.27 default (read from {package})")


def test_an_installed_version_with_the_old_defaults(tmp_path, monkeypatch):
    # 2026.4.27 cut each file at 12,000 (issue #78211), not today's 20,000
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    package = _install(tmp_path / "npm", "2026.4.27", monkeypatch)
    assert bootstrap_limits(vault) == (
        12000, 60000, f"OpenClaw 2026.4.27 default (read from {package}); "
                      "no openclaw.json found")


def test_the_openclaw_on_path_is_read_through_its_package(tmp_path, monkeypatch):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    package = tmp_path / "prefix" / "lib" / "node_modules" / "openclaw"
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "openclaw", "version": "2026.2.26"}')
    (package / "openclaw.mjs").write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "openclaw").symlink_to(package / "openclaw.mjs")
    monkeypatch.setattr(openclaw, "_which_openclaw", lambda: str(tmp_path / "bin" / "openclaw"))
    assert bootstrap_limits(vault) == (
        20000, 150000, f"OpenClaw 2026.2.26 default (read from {package / 'package.json'}); "
                       "no openclaw.json found")


def test_without_an_install_the_configs_last_writer_is_the_version(tmp_path):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    cfg = tmp_path / "ws" / "openclaw.json"
    cfg.write_text('{"meta": {"lastTouchedVersion": "2026.4.27"}, "agents": {}}')
    assert bootstrap_limits(vault) == (
        12000, 60000, f"OpenClaw 2026.4.27 default (read from meta.lastTouchedVersion in {cfg})")


def test_no_version_found_is_the_newest_known_labelled_so(tmp_path):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    assert bootstrap_limits(vault) == (
        20000, 60000, "default of the newest known version (no install found); "
                      "no openclaw.json found")


@pytest.mark.parametrize("version, limits, what", [
    ("2026.1.29", (20000, 150000), "OpenClaw 2026.1.29 default"),
    ("2026.4.27", (12000, 60000), "OpenClaw 2026.4.27 default"),
    ("2026.8.2", (20000, 60000), "OpenClaw 2026.8.2 default"),
    ("2026.11.30", (20000, 60000), "OpenClaw 2026.11.30 default"),
    ("2026.6.10", (20000, 60000),
     "OpenClaw 2026.6.10: its defaults are not verified (12,000/60,000 up to 2026.4.27, "
     "20,000/60,000 from 2026.8.2); the larger of each"),
    ("2026.3.12", (20000, 150000),
     "OpenClaw 2026.3.12: its defaults are not verified (20,000/150,000 up to 2026.2, "
     "12,000/60,000 from 2026.4.27); the larger of each"),
    ("soon", (20000, 60000),
     "default of the newest known version (OpenClaw version 'soon' not understood)"),
])
def test_version_defaults(version, limits, what):
    assert openclaw.version_defaults(version) == (*limits, what)


def test_a_package_json_of_another_package_is_not_openclaws(tmp_path, monkeypatch):
    vault = tmp_path / "ws" / "workspace"
    vault.mkdir(parents=True)
    package = _install(tmp_path / "npm", "2026.4.27", monkeypatch)
    package.write_text('{"name": "not-openclaw", "version": "2026.4.27"}')
    assert bootstrap_limits(vault)[:2] == (20000, 60000)


@pytest.mark.parametrize("version, cap, what", [
    ("2026.8.2", 4000, "USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
                       "bootstrapMaxChars cannot raise it)"),
    ("2026.9.4", 4000, "USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
                       "bootstrapMaxChars cannot raise it)"),
    ("2026.7.1-2", None, ""),
    ("2026.4.27", None, ""),
    ("2026.8.1-beta.1", None, "whether OpenClaw 2026.8.1-beta.1 caps USER.md is not verified "
                              "(not up to 2026.7.1, 4,000 from 2026.8.2); no cap applied"),
    (None, 4000, "USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
                 "bootstrapMaxChars cannot raise it); the newest known contract "
                 "(no install found)"),
    ("soon", 4000, "USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
                   "bootstrapMaxChars cannot raise it); the newest known contract "
                   "(OpenClaw version 'soon' not understood)"),
])
def test_user_file_cap_by_version(version, cap, what):
    assert openclaw.user_file_cap(version) == (cap, what)


@pytest.mark.parametrize("version, files", [
    ("2026.7.1-2", None),
    ("2026.4.27", None),
    ("2026.8.2", ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"]),
    (None, ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"]),
])
def test_file_set_by_version(version, files):
    got = openclaw.file_set(version)
    assert (got[0] if got else None) == files
    if got:
        assert got[1] == ["USER.md", "MEMORY.md"] and got[3] == ""
