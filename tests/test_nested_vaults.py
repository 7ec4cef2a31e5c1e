"""links.obsidian.nested_vaults: the folders one or two levels down that are Obsidian
vaults of their own, found by the notes' folders (a few dozen), not by each note's path
(10,000 in a commit hook's vault)."""

from types import SimpleNamespace

from vaultkit.links.obsidian import NESTED_DEPTH, nested_vaults


class _Path(str):
    """A note path that counts the splits made of it."""
    splits = 0

    def split(self, *args, **kwargs):
        type(self).splits += 1
        return str.split(self, *args, **kwargs)


def _reference(paths, root):
    """Every folder at depth 1..NESTED_DEPTH above a note, that holds .obsidian/."""
    folders = set()
    for path in paths:
        parts = path.split("/")[:-1][:NESTED_DEPTH]
        folders.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return tuple(sorted(f for f in folders if (root / f / ".obsidian").is_dir()))


PATHS = ["MEMORY.md", "kb/a.md", "kb/deep/b.md", "kb/deep/er/c.md", "kb/deep/er/est/d.md",
         "projects/garden/e.md", "projects/garden/x/y/f.md", "projects/g.md", "memory/2026.md",
         "notes/x/y.md", "notes/x/z.md"]


def _vault(tmp_path, paths, marked):
    for folder in marked:
        (tmp_path / folder / ".obsidian").mkdir(parents=True)
    return SimpleNamespace(root=tmp_path, note_paths=lambda: list(paths))


def test_the_nested_vaults_are_the_same_as_by_every_path(tmp_path):
    marked = ["kb", "kb/deep", "kb/deep/er", "projects/garden", "memory", "empty", "notes/x"]
    vault = _vault(tmp_path, PATHS, marked)
    found = nested_vaults(vault)
    assert found == _reference(PATHS, tmp_path)
    assert found == ("kb", "kb/deep", "memory", "notes/x", "projects/garden")


def test_no_note_path_is_split(tmp_path):
    paths = [_Path(f"kb/notes/n{i}.md") for i in range(500)] + [_Path("top.md")]
    vault = _vault(tmp_path, paths, ["kb"])
    _Path.splits = 0
    assert nested_vaults(vault) == ("kb",)
    assert _Path.splits == 0


def test_a_listed_vault_finds_them_by_its_walked_folders_as_by_its_notes(tmp_path,
                                                                          monkeypatch):
    # a loaded vault asks its listing's folders (a warm check and a commit hook list no
    # note path for this); a folder walked that holds attachments only is no vault
    from vaultkit.vault.loader import Scan, load_vault

    for path in PATHS:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("# N\n")
    (tmp_path / "pictures" / "deep").mkdir(parents=True)
    (tmp_path / "pictures" / "deep" / "p.png").write_bytes(b"png")
    (tmp_path / "vaultkit.toml").write_text("")
    marked = ["kb", "kb/deep", "projects/garden", "memory", "empty", "notes/x", "pictures",
              "pictures/deep"]
    vault = load_vault(tmp_path, root=tmp_path, use_cache=False, save=False)
    for folder in marked:
        (tmp_path / folder / ".obsidian").mkdir(parents=True, exist_ok=True)
    listed = []
    for cls in (Scan, type(vault)):
        monkeypatch.setattr(cls, "note_paths", lambda self: listed.append(1) or [])
    found = nested_vaults(vault)
    assert found == _reference(PATHS, tmp_path) == ("kb", "kb/deep", "memory", "notes/x",
                                                    "projects/garden")
    assert listed == []
