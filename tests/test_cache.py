"""The parse cache never serves a stale result and never runs code."""

import os

import pytest

import vaultkit.parse as parse_mod
import vaultkit.vault as vault_mod
from vaultkit.vault import load_vault


@pytest.fixture
def counting(monkeypatch):
    calls = []
    real = parse_mod.parse_note

    def spy(path, data, **kw):
        calls.append(path)
        return real(path, data, **kw)

    monkeypatch.setattr(parse_mod, "parse_note", spy)
    return calls


def _age(path, seconds=10):
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def _vault(make_vault):
    root = make_vault({"memory/2026-01-01.md": "# 2026-01-01\n[[A]]\n",
                       "memory/semantic/a.md": "# A\n"})
    for p in root.rglob("*.md"):
        _age(p)
    return root


def test_second_run_parses_nothing(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    assert sorted(counting) == ["memory/2026-01-01.md", "memory/semantic/a.md"]
    counting.clear()
    vault = load_vault(root)
    assert counting == []
    assert [lk.target for lk in vault.notes["memory/2026-01-01.md"].links] == ["A"]
    assert (root / ".vaultkit" / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55")
    assert (root / ".vaultkit" / ".gitignore").read_text().endswith("*\n")


def test_changed_file_is_reparsed(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    counting.clear()
    target = root / "memory/semantic/a.md"
    target.write_text("# A changed\n[[B]]\n")
    _age(target, 5)
    vault = load_vault(root)
    assert counting == ["memory/semantic/a.md"]
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["B"]


def test_same_size_edit_in_the_same_tick_is_not_trusted(make_vault, counting):
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    target = root / "memory/semantic/a.md"
    load_vault(root)  # cache written within the same second as the file
    before = os.stat(target)
    target.write_text("# A [[Y]]\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # and same mtime
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["Y"]


def test_deleted_and_new_files(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    (root / "memory/semantic/a.md").unlink()
    (root / "memory/semantic/b.md").write_text("# B\n")
    vault = load_vault(root)
    assert sorted(vault.notes) == ["memory/2026-01-01.md", "memory/semantic/b.md"]


@pytest.mark.parametrize("change", ["config", "version"])
def test_config_or_version_change_discards_cache(make_vault, counting, monkeypatch, change):
    root = _vault(make_vault)
    load_vault(root)
    counting.clear()
    if change == "config":
        (root / "vaultkit.toml").write_text("ignore = ['orphan-note']\n")
    else:
        monkeypatch.setattr(vault_mod, "__version__", "999.0")
    load_vault(root)
    assert len(counting) == 2


def test_garbage_cache_is_ignored(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    for f in (root / ".vaultkit" / "cache").iterdir():
        f.write_bytes(b"\x00garbage\xff" * 10)
    counting.clear()
    vault = load_vault(root)
    assert len(counting) == 2 and len(vault.notes) == 2


def test_no_cache_writes_nothing(make_vault):
    root = _vault(make_vault)
    load_vault(root, use_cache=False)
    assert not (root / ".vaultkit").exists()


def test_read_only_vault_still_loads(make_vault, tmp_path):
    root = _vault(make_vault)
    os.chmod(root, 0o555)
    try:
        vault = load_vault(root)
        assert len(vault.notes) == 2
    finally:
        os.chmod(root, 0o755)


def test_parallel_parse_matches_serial(make_vault, monkeypatch):
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(500)}
    root = make_vault(files)
    serial = load_vault(root, use_cache=False)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    parallel = load_vault(root, use_cache=False)
    assert [n.to_plain() for n in serial.notes.values()] == [n.to_plain() for n in parallel.notes.values()]


def test_leftover_temp_file_of_an_interrupted_write_is_not_scanned(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A\n",
                       "memory/semantic/.a.md.x1y2.vaultkit-tmp": "# half written\n"})
    vault = load_vault(root, use_cache=False)
    assert list(vault.notes) == ["memory/semantic/a.md"] and vault.attachments == {}
