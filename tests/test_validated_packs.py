"""The bundled packs' validated form shipped beside them (rules/validated.json): a vault
without vaultkit.toml gets its settings from it without pydantic, equal to validating."""

from __future__ import annotations

import json
import subprocess
import sys

from vaultkit.core.plain import asdict
from vaultkit.core.resources import rules_dir
from vaultkit.vault import profile as P


def _fresh(name: str) -> P.Profile:
    return P._apply(P.load_profile(rules_dir() / name), P.ConfigFile(), P.CONFIG_NAME)


def test_shipped_file_is_current():
    # (if this fails after a pack or profile.py changed: run
    #  python -c "from vaultkit.vault.profile import write_validated_packs as w; w()")
    shipped = json.loads((rules_dir() / P.VALIDATED_PACKS).read_text())
    packs = sorted(p.name for p in rules_dir().glob("*.yaml"))
    assert sorted(shipped) == packs
    for name in packs:
        key = P._validated_key((rules_dir() / name).read_bytes())
        assert list(shipped[name]) == [key], name
        assert shipped[name][key] == json.loads(json.dumps(asdict(_fresh(name)))), name


def test_no_config_settings_equal_validation(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# agents\n")
    (tmp_path / "notes").mkdir()
    for vault, pack in ((tmp_path, "openclaw.yaml"), (tmp_path / "notes", "obsidian.yaml")):
        settings = P.load_settings(vault, use_cache=False)
        built = P._validated_pack(rules_dir() / pack)
        assert built is not None
        assert asdict(settings.profile) == asdict(built) == asdict(_fresh(pack))
        assert asdict(settings.profile) == asdict(_fresh(pack))
        # in the same order too: a mapping's order is meaning (the graph's colour groups,
        # the first matching folder), which a dict comparison does not see
        assert json.dumps(asdict(settings.profile)) == json.dumps(asdict(_fresh(pack)))


def test_no_config_check_imports_no_pydantic(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# agents\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-12-07.md").write_text("# 2026-12-07\n\n- a note\n")
    code = ("import sys; from vaultkit.cli import main; "
            "rc = main(['check', '--no-cache', '-q', sys.argv[1]]); "
            "print('pydantic' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


def test_config_file_is_validated(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# agents\n")
    (tmp_path / "vaultkit.toml").write_text("[budgets]\nentry-max-lines = 9\n")
    settings = P.load_settings(tmp_path, use_cache=False)
    assert settings.profile.budgets.entry_max_lines == 9
    (tmp_path / "vaultkit.toml").write_text("[budgets]\nentry-max-lines = 'many'\n")
    try:
        P.load_settings(tmp_path, use_cache=False)
    except P.ConfigError as exc:
        assert "entry-max-lines" in str(exc)
    else:
        raise AssertionError("an invalid vaultkit.toml passed")


def test_stale_entry_is_not_used(monkeypatch):
    # a pack or schema changed since the file was written: its key no longer matches, so
    # the pack is validated again, never taken from the old entry
    monkeypatch.setattr(P, "_validated_key", lambda pack: "0" * 40)
    assert P._validated_pack(rules_dir() / "openclaw.yaml") is None
    # a pack that is not a bundled one is always validated
    assert P._validated_pack(rules_dir().parent / "openclaw.yaml") is None
