"""`vaultkit search` reads no note when nothing changed, and never serves a stale one."""

import json
import os

import pytest

import vaultkit.vault.loader as vault_mod
from vaultkit.cli import main


def _age(root, seconds=30):
    for p in root.rglob("*"):
        if p.is_file() and ".vaultkit" not in p.parts:
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def search(capsys, root, query):
    assert main(["search", query, "--json", "--root", str(root), "--min-score", "0"]) == 0
    return [r["path"] for r in json.loads(capsys.readouterr().out)["results"]]


@pytest.fixture
def vault(make_vault):
    root = make_vault({
        "memory/semantic/cron.md": "# Cron schedules\n\nThe backup cron runs at 23:00 every night.\n",
        "memory/semantic/payments.md": "# Payments\n\nPayment validation rejects negative amounts.\n",
    })
    _age(root)
    return root


def test_unchanged_vault_is_not_read(vault, capsys, monkeypatch):
    assert search(capsys, vault, "payment validation")[0] == "memory/semantic/payments.md"

    def boom(*a, **k):
        raise AssertionError("the vault was loaded although nothing changed")

    monkeypatch.setattr(vault_mod, "load_vault", boom)
    assert search(capsys, vault, "backup cron")[0] == "memory/semantic/cron.md"


def test_deleted_note_is_gone_from_the_next_search(vault, capsys):
    assert "memory/semantic/payments.md" in search(capsys, vault, "payment validation")
    (vault / "memory/semantic/payments.md").unlink()
    assert "memory/semantic/payments.md" not in search(capsys, vault, "payment validation")


def test_edited_note_is_searched_as_it_is_now(vault, capsys):
    search(capsys, vault, "payment")
    (vault / "memory/semantic/cron.md").write_text("# Cron\n\nHeartbeat distillation on Sundays.\n")
    _age(vault, 10)
    assert search(capsys, vault, "distillation") == ["memory/semantic/cron.md"]
    assert "memory/semantic/cron.md" not in search(capsys, vault, "backup")


def test_a_file_changed_within_the_same_tick_is_read_again(make_vault, capsys):
    # written now, indexed now, then rewritten with the same size and the same mtime: the
    # listing cannot tell, so an index synced this recently must not be trusted
    root = make_vault({"memory/semantic/cron.md": "# Cron\n\nThe backup cron runs nightly.\n"})
    target = root / "memory/semantic/cron.md"
    st = target.stat()
    assert search(capsys, root, "backup") == ["memory/semantic/cron.md"]
    target.write_text(target.read_text().replace("backup", "resync"))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert search(capsys, root, "resync") == ["memory/semantic/cron.md"]
    assert search(capsys, root, "backup") == []
