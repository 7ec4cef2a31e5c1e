"""Build the hostile vault: every kind of broken or malicious input in one folder.

Nothing here is committed as data: ``build(root)`` writes the files (the 50 MB one
included) into a temporary folder, so the repository stays small. ``EXPECTED`` lists
the finding each fixture must produce: ``(fixture, rule, path, line)`` with ``line``
None where the finding has no line.

Two inputs cannot be files on disk when the tests run as root (chmod 000 does not stop
root reading): the unreadable file and the file that vanishes during the scan. They
are written like the others and made hostile by :func:`deny_reads` and
:func:`vanish_after_walk`, which monkeypatch the readers.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path

SEM = "memory/semantic"
BIG_BYTES = 50 * 1024 * 1024
DEPTH = 5_000
SENTINEL = "vaultkit-pwned"  # a YAML tag that ran would create this file / set this variable

ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "---\n"
    "# Laughs\n"
)


def python_tags(sentinel_dir: Path) -> str:
    """Frontmatter whose tags would create a file, run a shell and set an env var if constructed."""
    target = sentinel_dir / SENTINEL
    return (
        "---\n"
        f"a: !!python/object/apply:os.system [\"touch {target}\"]\n"
        f"b: !!python/object/apply:builtins.open [\"{target}\", \"w\"]\n"
        f"c: !!python/object/apply:os.putenv [\"VAULTKIT_PWNED\", \"1\"]\n"
        "d: !!python/object/new:subprocess.Popen [[\"sh\", \"-c\", \"touch "
        f"{target}\"]]\n"
        "e: !!python/name:os.system\n"
        "---\n"
        "# Tags\n"
    )


def _day(ago: int) -> str:
    import datetime as dt

    return (dt.date.today() - dt.timedelta(days=ago)).isoformat()


def files(sentinel_dir: Path) -> dict[str, bytes]:
    """Every hostile file but the symlinks and the 50 MB one, as bytes."""
    crlf = ("---\r\ntype: knowledge\r\ntags: [crlf]\r\n---\r\n# CRLF\r\n"
            "\r\nsee [[crlf-missing]] here\r\n")
    out = {
        f"{SEM}/broken-yaml.md": "---\ntitle: ok\nbad: [unclosed\nmore: x\n---\n# B\n",
        f"{SEM}/alias-bomb.md": ALIAS_BOMB,
        f"{SEM}/python-tag.md": python_tags(sentinel_dir),
        f"{SEM}/latin1.md": b"# Caf\xe9\n\ncr\xe8me br\xfbl\xe9e\n",
        f"{SEM}/bom.md": b"\xef\xbb\xbf---\ntags: [bom]\n---\n# BOM\n\nsee [[bom-missing]]\n",
        f"{SEM}/crlf.md": crlf.encode(),
        f"{SEM}/nul.md": b"# NUL\n\nbefore\x00after\n",
        f"{SEM}/deep-list.md": "# Deep list\n\n" + "- " * DEPTH + "[[deep-list-missing]]\n",
        f"{SEM}/deep-quote.md": "# Deep quote\n\n" + "> " * DEPTH + "[[deep-quote-missing]]\n",
        f"{SEM}/deep-mixed.md": "# Deep mixed\n\n" + "> - " * (DEPTH // 2) + "x #deep\n"
                                + "".join(">" * i + "\n" for i in range(1, 200)),
        f"{SEM}/unclosed-fm.md": "---\ntitle: never closed\ntags: [x]\n# Heading\n\ntext\n",
        f"{SEM}/empty.md": b"",
        f"{SEM}/no-final-newline.md": "# No newline\n\nsee [[eof-missing]]",
        f"{SEM}/unreadable.md": "# Secret\n\nunreadable-marker text\n",
        f"{SEM}/vanishing.md": "# Gone soon\n\nvanishing-marker text\n",
        f"{SEM}/with space.md": "# Space\n\nsee [[space-missing]]\n",
        f"{SEM}/hash#sign.md": "# Hash\n\nsee [[hash-missing]]\n",
        f"{SEM}/caret^sign.md": "# Caret\n\nsee [[caret-missing]]\n",
        f"{SEM}/emoji 🧠.md": "# Emoji\n\nsee [[emoji-missing]]\n",
        f"{SEM}/中文笔记.md": "# 中文\n\n见 [[中文缺失]]\n",
        "MEMORY.md": "# Memory\n\n## Facts\n\n- links to [[with space]] and [[中文笔记]]\n",
        # journals, so that distill and archive meet the same inputs
        f"memory/{_day(0)}.md": f"# {_day(0)}\r\n\r\n### 09:00 \u2014 Deep\r\n\r\n"
                                + "- " * DEPTH + "lesson learned #lesson\r\n"
                                + "> " * DEPTH + "decided: keep it\r\n",
        f"memory/{_day(1)}.md": b"# day\n\n### 09:00 \xe9t\xe9\n\nlatin-1 journal\n",
        f"memory/{_day(2)}.md": b"# day\n\n### 09:00 \x00 nul\n",
        f"memory/{_day(40)}.md": ALIAS_BOMB + "\n### 09:00 \u2014 Old\n\na\nb\nc\n",
        f"memory/{_day(41)}.md": b"\xef\xbb\xbf# old\r\n\r\n### 09:00 \xe2\x80\x94 Old\r\n",
    }
    return {k: v.encode() if isinstance(v, str) else v for k, v in out.items()}


# (fixture, rule, path, line); rule None: the file is valid and has no finding at all
EXPECTED = [
    ("broken YAML", "frontmatter-invalid", f"{SEM}/broken-yaml.md", 4),
    ("alias bomb", "frontmatter-invalid", f"{SEM}/alias-bomb.md", 2),
    ("python tags", "frontmatter-invalid", f"{SEM}/python-tag.md", 2),
    ("non-UTF-8", "file-unreadable", f"{SEM}/latin1.md", 1),
    ("BOM", "broken-link", f"{SEM}/bom.md", 6),
    ("CRLF", "broken-link", f"{SEM}/crlf.md", 7),
    ("NUL bytes", "nul-byte", f"{SEM}/nul.md", 3),  # stray NULs: read, and reported
    ("50 MB file", "file-unreadable", f"{SEM}/huge.md", None),
    ("list nested 5,000 deep", "broken-link", f"{SEM}/deep-list.md", 3),
    ("blockquote nested 5,000 deep", "broken-link", f"{SEM}/deep-quote.md", 3),
    ("frontmatter never closes", "frontmatter-invalid", f"{SEM}/unclosed-fm.md", 1),
    ("empty file", None, f"{SEM}/empty.md", None),  # a valid (empty) note: no finding
    ("no final newline", "broken-link", f"{SEM}/no-final-newline.md", 3),
    ("symlink loop (folder)", "file-unreadable", f"{SEM}/loop", None),
    ("symlink loop (files)", "file-unreadable", f"{SEM}/loop-a.md", None),
    ("symlink out of the vault", "file-unreadable", f"{SEM}/outside.md", None),
    ("unreadable file", "file-unreadable", f"{SEM}/unreadable.md", None),
    ("deleted during the scan", "file-unreadable", f"{SEM}/vanishing.md", None),
    ("name with a space", "broken-link", f"{SEM}/with space.md", 3),
    ("name with #", "broken-link", f"{SEM}/hash#sign.md", 3),
    ("name with ^", "broken-link", f"{SEM}/caret^sign.md", 3),
    ("name with emoji", "broken-link", f"{SEM}/emoji 🧠.md", 3),
    ("Chinese name", "broken-link", f"{SEM}/中文笔记.md", 3),
]

OUTSIDE_SECRET = "outside-secret-4f1d"  # text that lives only outside the vault


def build(root: Path, *, big: bool = True) -> Path:
    """Write the hostile vault into ``root`` (created); returns it.

    Outside it (in ``root.parent``) go a secret file the out-of-vault symlink points at
    and the folder a constructed YAML tag would write into.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / ".obsidian").mkdir(exist_ok=True)
    for rel, data in files(sentinel_dir(root)).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    sem = root / SEM
    secret = root.parent / "outside-secret.md"
    secret.write_text(f"# Outside\n\n{OUTSIDE_SECRET}\n")
    os.symlink(secret, sem / "outside.md")
    os.symlink(".", sem / "loop")
    os.symlink("loop-b.md", sem / "loop-a.md")
    os.symlink("loop-a.md", sem / "loop-b.md")
    if big:
        write_big(sem / "huge.md")
    return root


def sentinel_dir(root: Path) -> Path:
    return root.parent / "sentinel"


def write_big(path: Path, size: int = BIG_BYTES) -> None:
    """A Markdown file of ``size`` bytes, written in chunks (never held whole)."""
    line = b"- a line of a very large note with [[a-link]] and #tag\n"
    chunk = line * (1024 * 1024 // len(line) + 1)
    written = 0
    with open(path, "wb") as fh:
        fh.write(b"# Huge\n")
        written = 7
        while written < size:
            part = chunk[:size - written]
            fh.write(part)
            written += len(part)


def deny_reads(monkeypatch, *paths: Path) -> None:
    """Make opening ``paths`` fail with EACCES, as chmod 000 would for a non-root user."""
    denied = {os.path.realpath(p) for p in paths}

    def check(file) -> None:
        if isinstance(file, (str, bytes, os.PathLike)):
            name = os.fsdecode(os.fspath(file))
            if os.path.realpath(name) in denied:
                raise PermissionError(13, "Permission denied", name)

    real_open, real_os_open = builtins.open, os.open

    def fake_open(file, *args, **kwargs):
        check(file)
        return real_open(file, *args, **kwargs)

    def fake_os_open(path, *args, **kwargs):
        check(path)
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    import pathlib

    real_read_bytes, real_read_text = pathlib.Path.read_bytes, pathlib.Path.read_text

    def fake_read_bytes(self):
        check(self)
        return real_read_bytes(self)

    def fake_read_text(self, *args, **kwargs):
        check(self)
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_bytes", fake_read_bytes)
    monkeypatch.setattr(pathlib.Path, "read_text", fake_read_text)


def vanish_after_walk(monkeypatch, path: Path) -> None:
    """Delete ``path`` after the scan lists it and before it is read."""
    import vaultkit.vault.scan
    import vaultkit.vault.loader

    real_walk = vaultkit.vault.scan.walk

    def walk(*args, **kwargs):
        result = real_walk(*args, **kwargs)
        if path.exists():
            path.unlink()
        return result

    monkeypatch.setattr(vaultkit.vault.scan, "walk", walk)
    monkeypatch.setattr(vaultkit.vault.loader, "walk", walk)
