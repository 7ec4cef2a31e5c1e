"""What a listing gives besides its files (its names' digest, the notes' paths and arrays)
comes from what the listing's own key already made (vaultkit.vault.loader._state): a commit
hook does not go through the 10,000 listed files again for each of them."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from vaultkit.vault.loader import MD_ENDINGS, list_vault, load_vault, names_digest
from vaultkit.vault.profile import load_settings


def _vault(tmp_path):
    root = tmp_path / "v"
    for folder in ("memory", "memory/decisions", "notes", "attachments"):
        (root / folder).mkdir(parents=True)
    (root / "vaultkit.toml").write_text('profile = "openclaw"\n', encoding="utf-8")
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    for i in range(4):
        (root / "memory" / f"2026-11-0{i + 1}.md").write_text(f"# Day {i}\n", encoding="utf-8")
        (root / "memory" / "decisions" / f"D{i}.MD").write_text(f"# D{i}\n", encoding="utf-8")
    (root / "notes" / "Café.Md").write_text("# Café\n", encoding="utf-8")
    (root / "attachments" / "a.png").write_bytes(b"\x89PNG")
    (root / "attachments" / "b.mdx").write_text("not a note\n", encoding="utf-8")
    return root.resolve()


class _NoPass(list):
    """The listed files, which a derived value must not go through again."""

    def __iter__(self):
        raise AssertionError("went through every listed file again")


def test_names_and_note_arrays_come_from_the_listing_key(tmp_path):
    root = _vault(tmp_path)
    settings = load_settings(root)
    scan = list_vault(root, settings)
    files = list(scan.files)
    notes = [f for f in files if f.rel.lower().endswith(".md")]
    expected_numbers = tuple([getattr(f, a) for f in notes]
                             for a in ("size", "mtime_ns", "ctime_ns", "ino"))
    scan.files = _NoPass(files)
    assert scan.note_paths() == [f.rel for f in notes]
    assert "notes/Café.Md" in scan.note_paths() and "attachments/b.mdx" not in scan.note_paths()
    assert tuple(list(a) for a in scan.note_numbers()) == expected_numbers
    digest = scan.names_digest()
    scan.files = files
    # the same digest as a vault's own (one loaded, its names counted from its notes and
    # attachments): the resolver's tables and the link facts are keyed on it
    attachments = [f.rel for f in files if not f.rel.lower().endswith(".md")]
    assert digest == names_digest([f.rel for f in notes], attachments)
    vault = load_vault(root, settings=settings, save=False)
    assert vault.names_digest == digest
    del vault.__dict__["_scan"]  # (a vault without its listing counts its names itself)
    vault.__dict__.pop("names_digest", None)
    assert vault.names_digest == digest
    # another name, another digest
    (root / "notes" / "new.md").write_text("# New\n", encoding="utf-8")
    assert list_vault(root, settings).names_digest() != digest


def test_note_endings_are_what_lower_case_gives():
    """``MD_ENDINGS`` stands for ``path.lower().endswith(".md")``: no other character has
    a lower case ending in "m", "d" or "." (checked on every code point)."""
    others = [c for c in map(chr, range(sys.maxunicode + 1))
              if c not in "mMdD." and c.lower()[-1:] in ("m", "d", ".")]
    assert others == []
    for name in ("a.md", "a.MD", "a.Md", "a.mD", "a.mdx", "a.m", "md", ".md", "a.ṁd"):
        assert name.endswith(MD_ENDINGS) == name.lower().endswith(".md")


class _Counted(list):
    """The listed paths, counting the passes made over them."""

    passes = 0

    def __iter__(self):
        type(self).passes += 1
        return super().__iter__()


def test_note_paths_and_arrays_take_one_pass_over_the_paths(tmp_path):
    """A hook asks the listing for its notes' paths and their arrays: one test of each
    path's ending serves both (the arrays are copied run by run from the listing's)."""
    root = _vault(tmp_path)
    scan = list_vault(root, load_settings(root))
    files = list(scan.files)
    notes = [f for f in files if f.rel.lower().endswith(".md")]
    scan.memo["paths"] = _Counted(scan.paths())
    _Counted.passes = 0
    assert scan.note_paths() == [f.rel for f in notes]
    assert tuple(list(a) for a in scan.note_numbers()) == tuple(
        [getattr(f, a) for f in notes] for a in ("size", "mtime_ns", "ctime_ns", "ino"))
    assert _Counted.passes == 1


@given(st.lists(st.booleans(), max_size=60))
def test_runs_are_the_true_flags(flags):
    from vaultkit.vault.loader import _runs

    runs = _runs(flags)
    assert [i for start, end in runs for i in range(start, end)] == \
        [i for i, f in enumerate(flags) if f]
    assert all(start < end for start, end in runs)
    # maximal: two runs never touch
    assert all(a[1] < b[0] for a, b in zip(runs, runs[1:]))


def test_listing_asks_no_python_exclusion_per_file(tmp_path, monkeypatch):
    """Without ``exclude`` patterns, a file is left out only when its path is a skip folder's
    (the pack's ``skip_folders: [backups, venv]``): the walk looks that up in the set, it
    calls no Python method for each of the vault's files. With patterns, it asks them."""
    from vaultkit.vault.profile import Settings

    root = _vault(tmp_path)
    (root / "venv").write_text("a file named as a skip folder\n", encoding="utf-8")
    (root / "backups").mkdir()
    (root / "backups" / "old.md").write_text("# Old\n", encoding="utf-8")
    asked: list[str] = []
    plain = Settings.is_excluded_file

    def counted(self, rel):
        asked.append(rel)
        return plain(self, rel)

    monkeypatch.setattr(Settings, "is_excluded_file", counted)
    scan = list_vault(root, load_settings(root))
    paths = [f.rel for f in scan.files]
    assert "venv" not in paths and not [p for p in paths if p.startswith("backups/")]
    assert "MEMORY.md" in paths and asked == []
    (root / "vaultkit.toml").write_text('profile = "openclaw"\nexclude = ["notes/*.Md"]\n',
                                        encoding="utf-8")
    scan = list_vault(root, load_settings(root))
    assert [p for p in (f.rel for f in scan.files) if p.startswith("notes/")] == []
    assert "venv" not in [f.rel for f in scan.files] and "MEMORY.md" in asked
