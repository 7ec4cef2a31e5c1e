"""The cache values of mostly paths (the alias index, the name tables) are stored packed,
read back the same, and an older unpacked one is still read; a packed file that does not
inflate, or would inflate past its bound, is refused like any damaged cache file."""

import json
import marshal
import zlib

import pytest

from cli_invoke import invoke
from parse_store import StoreEntry
from vaultkit.vault.cachefile import PACKED, KeptFiles, load_marshal, packed, unmarshal


def _files(n):
    return {f"memory/semantic/project-notes/topic-{i:04d}.md":
            (f"---\naliases: [Topic {i}]\n---\n" if i % 7 == 0 else "")
            + f"# Topic {i}\n\nSee [[topic-{(i + 1) % n:04d}]] and [[Topic {(i + 3) % n}]].\n"
            for i in range(n)}


def test_the_alias_index_and_the_name_tables_are_stored_packed_at_a_fraction(make_vault):
    root = make_vault(_files(400))
    cached = invoke(["check", "--format", "json", "."], root)
    fresh = invoke(["check", "--no-cache", "--format", "json", "."], root)
    assert cached[:2] == fresh[:2]
    for name in ("aliases", "resolver"):
        raw = StoreEntry(root, name).read_bytes()
        assert raw.startswith(PACKED), name
        plain = marshal.dumps(unmarshal(raw))
        assert len(raw) < 0.35 * len(plain), (name, len(raw), len(plain))
    # the next run reads them (no rebuild) and says the same
    again = invoke(["check", "--format", "json", "."], root)
    assert again[:2] == fresh[:2]
    assert json.loads(again[1]) == json.loads(fresh[1])


def test_an_unpacked_cache_file_is_still_read(tmp_path):
    path = tmp_path / "old.marshal"
    path.write_bytes(marshal.dumps((2, 5, {"a.md": ((1, 2, 3, 4), None, ("A",))})))
    assert load_marshal(path) == (2, 5, {"a.md": ((1, 2, 3, 4), None, ("A",))})
    path.write_bytes(packed(marshal.dumps(("k", 1))))
    assert load_marshal(path) == ("k", 1)


@pytest.mark.parametrize("raw", [PACKED + b"not deflate", PACKED + zlib.compress(b"x" * 64)[:10],
                                 PACKED])
def test_a_packed_file_that_does_not_inflate_is_refused(tmp_path, raw):
    path = tmp_path / "bad.marshal"
    path.write_bytes(raw)
    with pytest.raises((ValueError, EOFError)):
        load_marshal(path)


def test_a_packed_file_never_inflates_past_the_bound(tmp_path):
    path = tmp_path / "bomb.marshal"
    path.write_bytes(packed(marshal.dumps(b"\0" * (1 << 20))))
    with pytest.raises(ValueError):
        load_marshal(path, limit=1 << 16)
    assert load_marshal(path) == b"\0" * (1 << 20)


def test_the_answering_process_keeps_a_packed_file_parsed(tmp_path):
    path = tmp_path / "kept.marshal"
    path.write_bytes(packed(marshal.dumps({"x": (1, 2)})))
    files = KeptFiles()
    files.keep([str(path)])
    assert str(path) in files.kept
    assert files.load(path) == {"x": (1, 2)}


def test_damaged_packed_tables_are_built_again_with_the_same_findings(make_vault):
    root = make_vault(_files(60))
    fresh = invoke(["check", "--no-cache", "--format", "json", "."], root)
    invoke(["check", "--format", "json", "."], root)
    for name in ("aliases", "resolver"):
        StoreEntry(root, name).write_bytes(PACKED + b"\x78\x01garbage")
    assert invoke(["check", "--format", "json", "."], root)[:2] == fresh[:2]
    assert unmarshal(StoreEntry(root, "resolver").read_bytes())
