"""The output boundary remembers the texts it scanned and found clean (by digest), so a warm
check does not scan the report it printed last time; any other text is scanned as before."""

import marshal
import os

import pytest

from cli_invoke import modules_after_check
from parse_store import StoreEntry, entry, set_entry, store
from vault_files import age_files
from vaultkit.cli import main
from vaultkit.vault import outbound

# a GitHub token shape (built here, never written out whole in a test id)
TOKEN = "ghp_" + "Zq7Xw2Lm9Pk4Rt6Vb1Nc8Hd3Jf5Gs0Ya2Ue" + "K9t"


def check(capsys, root, *extra):
    main(["check", str(root), *extra])
    return capsys.readouterr().out


@pytest.fixture
def scans(monkeypatch):
    """The texts the boundary scanned for credentials in this test (``_mask`` spied on)."""
    seen = []
    real = outbound._mask
    monkeypatch.setattr(outbound, "_mask", lambda text: seen.append(text) or real(text))
    return seen


@pytest.fixture
def vault(make_vault):
    # "secret-plan.md:" in the report is a keyword and a separator: a candidate the
    # detector has to look at (as the bench vault's file names are)
    root = make_vault({"memory/semantic/secret-plan.md": "# Plan\n[[missing]]\n",
                       "memory/semantic/b.md": "# B\n[[secret-plan]]\n"})
    age_files(root)
    return root


def _verified(root):
    return StoreEntry(root, outbound.Verified.NAME)


def test_a_report_printed_before_is_not_scanned_again(vault, capsys, scans):
    first = check(capsys, vault)
    assert "secret-plan.md:2:1: VK501 broken-link" in first
    assert any("secret-plan.md" in text for text in scans)  # the first run scanned it
    scans.clear()
    assert check(capsys, vault) == first
    assert scans == []


def test_each_scanned_clean_text_is_recorded_once(vault, capsys):
    check(capsys, vault)
    lines = _verified(vault).read_text().splitlines()
    assert lines[0].startswith("vaultkit ") and " detector " in lines[0]
    digests = lines[1:]
    assert digests and len(set(digests)) == len(digests)
    stamp = _verified(vault).stamp()
    check(capsys, vault)
    assert _verified(vault).stamp() == stamp  # nothing new: not written


def test_a_credential_planted_in_a_cached_message_is_still_masked(vault, capsys):
    check(capsys, vault)
    check(capsys, vault)  # every text of this report is now recorded
    key, stamp, results, suppressions, *last = entry(vault, "results")
    rows = results["broken-link"]
    rows[0] = rows[0][:6] + (f"no note '{TOKEN}' in the vault",) + rows[0][7:]
    set_entry(vault, "results", (key, stamp, results, suppressions, *last))
    out = check(capsys, vault)
    assert TOKEN not in out
    assert f"no note 'ghp_…{TOKEN[-4:]}' in the vault" in out


def test_a_report_that_needed_masking_is_scanned_every_time(make_vault, capsys, scans):
    root = make_vault({f"memory/semantic/{TOKEN}.md": "# T\n[[missing]]\n"})
    age_files(root)
    first = check(capsys, root)
    assert TOKEN not in first and f"…{TOKEN[-4:]}.md:2:1: VK501" in first
    scans.clear()
    assert check(capsys, root) == first
    assert any(f"{TOKEN}.md" in text for text in scans)  # not recorded: scanned again


def test_digests_of_another_detector_are_not_used(vault, capsys, scans):
    first = check(capsys, vault)
    path = _verified(vault)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["vaultkit 0.0.1 detector 1", *lines[1:], ""]))
    scans.clear()
    assert check(capsys, vault) == first
    assert any("secret-plan.md" in text for text in scans)
    assert path.read_text().splitlines()[0] == lines[0]  # written again for this detector


@pytest.mark.parametrize("damage", [b"\xff\xfe\x00garbage", b"", b"vaultkit\n" + b"z" * 64],
                         ids=["binary", "empty", "bad-header"])
def test_a_damaged_record_is_ignored_and_replaced(vault, capsys, scans, damage):
    first = check(capsys, vault)
    path = _verified(vault)
    header = path.read_text().splitlines()[0]
    path.write_bytes(damage)
    scans.clear()
    assert check(capsys, vault) == first
    assert scans
    assert capsys.readouterr().err == ""
    assert path.read_text().splitlines()[0] == header


def test_a_symlinked_record_is_neither_read_nor_written(vault, capsys, scans, tmp_path):
    first = check(capsys, vault)
    path = store(vault)
    outside = tmp_path / "elsewhere"
    outside.write_bytes(path.read_bytes())  # the right digests, but behind a symlink
    path.unlink()
    path.symlink_to(outside)
    before = outside.read_bytes()
    scans.clear()
    assert check(capsys, vault) == first
    assert scans  # not trusted through the link
    assert outside.read_bytes() == before and not path.is_symlink()  # (removed, rebuilt)


def test_no_record_without_the_cache(vault, capsys, scans):
    check(capsys, vault, "--no-cache")
    assert not (vault / ".vaultkit" / "cache").exists()
    scans.clear()
    check(capsys, vault, "--no-cache")
    assert scans


def test_outside_a_check_every_text_is_scanned(scans):
    text = "memory/secret-plan.md:2:1: a finding\n"
    assert outbound._VERIFIED[0] is None
    outbound.mask_credentials(text)
    outbound.mask_credentials(text)
    assert scans == [text, text]


def test_json_output_is_listed_whole_not_string_by_string(vault, capsys, scans):
    first = check(capsys, vault, "--format", "json")
    digests = _verified(vault).read_text().splitlines()[1:]
    # the JSON text, its closing newline, the "git rules skipped" line (no git here): not
    # the twenty-odd strings of the two findings
    assert 1 <= len(digests) <= 3
    stamp = _verified(vault).stamp()
    scans.clear()
    assert check(capsys, vault, "--format", "json") == first
    assert not [text for text in scans if text.startswith("[")]  # the whole JSON: not again
    assert _verified(vault).stamp() == stamp


def test_a_warm_check_printing_a_verified_report_imports_no_detector(vault, capsys):
    """The detector (its patterns, its tables) is imported only to scan: a warm check whose
    report and summary were verified before needs none of it."""
    check(capsys, vault)
    imported = modules_after_check(vault, expect="secret-plan.md:2:1: VK501")
    assert "vaultkit.vault.outbound" in imported
    assert "vaultkit.vault.secretscan" not in imported
