"""What git knows about the vault: HEAD, the index and the working tree (``ctx.git``).

The git rules (``journal-append-only``, ``mass-deletion``, ``memory-churn``) compare
the new content of each memory file with its committed version. The new content is
the staged one (``check --staged``, and always in hook mode, where the commit being
made is what matters) or the working tree's.

Everything goes through the ``git`` command, in few processes, because the hook runs
on every commit of vaults with ten thousand notes:

1. ``git rev-parse``: the repository, where the vault sits in it, whether HEAD exists;
2. ``git diff --raw -M`` of HEAD against the index (or the working tree): which files
   changed, were deleted or renamed, with the blob ids of both sides;
3. ``git cat-file --batch``: the blobs of the files the rules look at, in one go;
4. ``git log`` (``memory-churn`` only): the recent commits that touched MEMORY.md.

Paths are kept in two forms: repository paths (relative to the repository root, what
git prints) and vault paths (relative to the vault root, what diagnostics show). The
vault may be a subfolder of the repository, and in the memory-only layout the
bootstrap files one level up are vault paths ``../NAME.md``, inside the repository
only when the repository is the whole workspace. The other way round, a workspace vault
whose memory folder is its own repository (the seeds' ``cd memory && git commit``) is
found too: its repository paths are vault paths under ``memory/``.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
from functools import cached_property
from pathlib import Path

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from vaultkit.vault.loader import Vault

NULL_OID = "0" * 40
GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")



class Notices:
    """Where the "git rules skipped" line is said: once per vault root for the caller
    that holds this (a run; ``vaultkit check``, over all its runs; a workspace), never
    with ``quiet`` (``check -q`` prints findings only). The caller owns it and hands it to
    each run's :class:`GitState`: nothing of it is process-wide."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.told: set[str] = set()  # the vault roots already told


class Change:
    """One entry of the diff against HEAD, in vault paths (None: outside the vault)."""

    __slots__ = _fields = ("status", "old", "new", "old_repo", "new_repo", "old_oid", "new_oid")
    status: str  # M A D R C T U (the letter only)
    old: str | None  # vault path in HEAD (None for A)
    new: str | None  # vault path in the new version (None for D)
    old_repo: str | None  # the same, relative to the repository root
    new_repo: str | None
    old_oid: str
    new_oid: str  # NULL_OID when git did not hash it (working-tree side)

    def __init__(self, status, old, new, old_repo, new_repo, old_oid, new_oid):
        self.status = status
        self.old = old
        self.new = new
        self.old_repo = old_repo
        self.new_repo = new_repo
        self.old_oid = old_oid
        self.new_oid = new_oid


# stash entries whose files count as holding uncommitted lines: a long stash list is read
# no further (git keeps every entry until dropped; the newest are the ones a commit races)
STASH_ENTRIES = 50


class GitState:
    """The git side of one run. Build it once per run (``Context.git`` does)."""

    def __init__(self, vault: "Vault", staged: bool = False, *,
                 notices: Notices | None = None):
        self.vault = vault
        self.staged = staged
        self.notices = notices if notices is not None else Notices()
        self.root = Path(vault.root)
        self.reason: str | None = None  # why git is unavailable
        self.toplevel: Path | None = None
        self.prefix = ""  # the vault root relative to the repository root, with '/'
        # the repository root relative to the vault root, when the repository is the
        # vault's memory folder (the seeds' `cd memory && git commit`, seen from the workspace)
        self.down = ""
        self.head: str | None = None
        self.state_files: tuple[str, ...] = ()  # the index and the config git reads
        self._probe()

    # -- running git -------------------------------------------------------------

    def _run(self, args: list[str], *, cwd: Path | None = None,
             stdin: bytes | None = None) -> subprocess.CompletedProcess:
        from vaultkit.core.gitenv import run_git

        # (run_git keeps GIT_INDEX_FILE: a hook sees the index being committed; it never
        # takes index.lock, which the commit holds)
        return run_git(args, cwd=cwd or self.toplevel or self.root, input=stdin)

    def _probe(self) -> None:
        self._probe_at(self.root)
        memory = self.vault.profile.memory_prefix
        if self.reason is not None and memory and (self.root / memory / ".git").exists():
            reason = self.reason
            self.reason = None
            self._probe_at(self.root / memory)
            if self.reason is None and self.prefix == "":
                self.down = memory
            else:
                self.reason, self.toplevel, self.prefix, self.head = reason, None, "", None
                self.state_files = ()

    def _probe_at(self, folder: Path) -> None:
        try:
            proc = self._run(["rev-parse", "--show-toplevel", "--show-prefix",
                              "--git-path", "index", "--git-path", "config",
                              "--verify", "-q", "HEAD^{commit}"], cwd=folder)
        except FileNotFoundError:
            self.reason = "git is not installed"
            return
        except OSError as exc:
            self.reason = f"git could not be run ({exc.strerror or exc})"
            return
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if proc.returncode not in (0, 1) or len(lines) < 4:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[0].removeprefix("fatal: ") if err else "git rev-parse failed"
            if "not a git repository" in detail:
                self.reason = f"{self.root} is not in a git repository"
            else:
                self.reason = f"git: {detail}"
            return
        self.toplevel = Path(lines[0])
        self.prefix = lines[1]
        if self.prefix and not self.prefix.endswith("/"):
            self.prefix += "/"
        # (relative to ``folder``; the index is $GIT_INDEX_FILE's when git set it for a hook)
        self.state_files = tuple(os.path.join(folder, line) for line in lines[2:4])
        if proc.returncode == 0 and len(lines) >= 5:
            self.head = lines[4].strip()

    @property
    def available(self) -> bool:
        """True when the vault is inside a git work tree and git runs."""
        return self.reason is None

    @property
    def has_head(self) -> bool:
        """False before the first commit: nothing is committed to compare with."""
        return self.head is not None

    def notice(self) -> None:
        """Say that the git rules were skipped, once per vault for the run's
        :class:`Notices` (not at all when they are quiet)."""
        notices = self.notices
        if self.reason is None or notices.quiet:
            return
        key = str(self.root)
        if key in notices.told:
            return
        notices.told.add(key)
        print(f"vaultkit: info: git rules ({', '.join(GIT_RULES)}) skipped: {self.reason}",
              file=sys.stderr)

    # -- paths -------------------------------------------------------------------

    @cached_property
    def _external(self) -> dict[str, str]:
        """Repository path -> vault path of bootstrap files above a memory-only vault root."""
        profile = self.vault.profile
        if profile.memory_prefix or self.toplevel is None or not self.prefix:
            return {}
        parent = self.prefix.rstrip("/").rpartition("/")[0]
        base = parent + "/" if parent else ""
        return {base + name: "../" + name for name in profile.bootstrap_files}

    def vault_path(self, repo_path: str) -> str | None:
        """The vault path of a repository path, or None when it is outside the vault."""
        if self.down:
            return self.down + repo_path
        if repo_path.startswith(self.prefix):
            return repo_path[len(self.prefix):]
        return self._external.get(repo_path)

    def repo_path(self, vault_path: str) -> str | None:
        """The repository path of a vault path, or None when git cannot see it."""
        if not self.available:
            return None
        if self.down:
            return vault_path[len(self.down):] if vault_path.startswith(self.down) else None
        if vault_path.startswith("../"):
            for repo, vp in self._external.items():
                if vp == vault_path:
                    return repo
            return None
        return self.prefix + vault_path

    def _pathspecs(self) -> list[str]:
        if not self.prefix:
            return []
        return [":(top,literal)" + p for p in [self.prefix, *self._external]]

    # -- the diff against HEAD ------------------------------------------------------

    @cached_property
    def changes(self) -> list[Change]:
        """Files that differ from HEAD (staged or working tree), renames detected."""
        if not self.available or not self.has_head:
            return []
        args = ["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-color", "--no-ext-diff",
                "--no-textconv", "--ignore-submodules"]
        if self.staged:
            args.append("--cached")
        args += ["HEAD", "--", *self._pathspecs()]
        memo = _DiffMemo.open(self, args)
        out = memo.lookup() if memo is not None else None
        if out is None:
            proc = self._run(args)
            if proc.returncode != 0:
                self.reason = "git diff failed: " + proc.stderr.decode("utf-8", "replace").strip()
                return []
            out = proc.stdout
            if memo is not None and memo.stamp == _DiffMemo.stamp_of(self):
                memo.store(out)  # (not when git refreshed the index meanwhile: next time)
        return self._parse_raw(out)

    def _parse_raw(self, out: bytes) -> list[Change]:
        fields = out.split(b"\0")
        changes: list[Change] = []
        i = 0
        while i < len(fields):
            meta = fields[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            parts = meta[1:].decode("ascii", "replace").split()
            if len(parts) < 5:
                i += 1
                continue
            old_oid, new_oid, status = parts[2], parts[3], parts[4][:1]
            if status in ("R", "C"):
                if i + 2 >= len(fields):
                    break
                old_repo = os.fsdecode(fields[i + 1])
                new_repo = os.fsdecode(fields[i + 2])
                i += 3
            else:
                if i + 1 >= len(fields):
                    break
                old_repo = new_repo = os.fsdecode(fields[i + 1])
                i += 2
            if status == "A":
                old_repo = None
            elif status == "D":
                new_repo = None
            old = self.vault_path(old_repo) if old_repo is not None else None
            new = self.vault_path(new_repo) if new_repo is not None else None
            if old is None and new is None:
                continue
            changes.append(Change(status, old, new, old_repo, new_repo, old_oid, new_oid))
        return changes

    @cached_property
    def by_new_path(self) -> dict[str, Change]:
        return {c.new: c for c in self.changes if c.new is not None}

    # -- contents -----------------------------------------------------------------

    def relevant(self, change: Change) -> bool:
        """Changes whose HEAD side the git rules read: a committed memory file that changed."""
        if change.old is None or change.status in ("A", "C", "U"):
            return False
        if not change.old.lower().endswith(".md"):
            return False
        return self.layer_of(change.old) in ("journal", "bootstrap", "structured", "knowledge",
                                             "topics", "dated")

    def layer_of(self, vault_path: str) -> str | None:
        if vault_path.startswith("../"):
            return "bootstrap"
        return self.vault.profile.layer_of(vault_path)

    @cached_property
    def _archive_adds(self) -> dict[str, list[Change]]:
        """Files added in the archive layer, by file name (a move git did not pair up)."""
        out: dict[str, list[Change]] = {}
        for c in self.changes:
            if c.status == "A" and c.new is not None and self.layer_of(c.new) == "archive":
                out.setdefault(c.new.rsplit("/", 1)[-1], []).append(c)
        return out

    def archived_copies(self, change: Change) -> list[tuple[str, str]]:
        """``(vault path, text)`` of archive files named like a deleted file: where a move
        that git did not detect as a rename (content changed, an untracked new copy) went."""
        name = (change.old or "").rsplit("/", 1)[-1]
        out = []
        for c in self._archive_adds.get(name, []):
            text = self.new_text(c)
            if text is not None:
                out.append((c.new, text))
        if not self.staged:  # an untracked copy is not in the diff; the vault has it
            seen = {path for path, _ in out}
            for path, layer in self.vault.layers.items():
                if layer == "archive" and path.rsplit("/", 1)[-1] == name and path not in seen:
                    note = self.vault.note(path)
                    if note is not None and not note.error:
                        out.append((path, note.text))
        return out

    def prefetch_diff(self) -> None:
        """Ask git now what differs from HEAD and read those files' blobs (what the git
        rules ask first: see Rule.asks_git)."""
        if self.available:
            self.changes
            self._blobs

    @cached_property
    def _blobs(self) -> dict[str, bytes]:
        """Every blob the rules need, read with one ``git cat-file --batch``."""
        wanted: list[str] = []
        for c in self.changes:
            if not self.relevant(c):
                continue
            if c.old_oid != NULL_OID:
                wanted.append(c.old_oid)
            if self.staged and c.new_oid != NULL_OID and c.new is not None:
                wanted.append(c.new_oid)
            if self.staged and c.new is None:  # deleted: an archived copy may be added
                name = (c.old or "").rsplit("/", 1)[-1]
                wanted += [a.new_oid for a in self._archive_adds.get(name, [])
                           if a.new_oid != NULL_OID]
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return {}
        if self.head and "_head_time" not in self.__dict__:
            wanted.append(self.head)  # (its committer time, for the snapshot rules)
        proc = self._run(["cat-file", "--batch"], stdin="".join(o + "\n" for o in wanted).encode())
        return _parse_batch(proc.stdout)

    def committed_text(self, vault_path: str) -> str | None:
        """The HEAD text of one file (None when not committed or git is unavailable)."""
        repo = self.repo_path(vault_path)
        if repo is None or not self.has_head:
            return None
        proc = self._run(["cat-file", "--batch"], stdin=f"HEAD:{repo}\n".encode())
        if proc.returncode != 0:
            return None
        blobs = _parse_batch(proc.stdout)
        return decode(next(iter(blobs.values()))) if len(blobs) == 1 else None

    def head_text(self, change: Change) -> str | None:
        """The committed (HEAD) text of the change's old path, decoded like a note."""
        data = self._blobs.get(change.old_oid)
        return None if data is None else decode(data)

    def new_text(self, change: Change) -> str | None:
        """The new text: the staged blob, or the working-tree note as the vault parsed it."""
        if change.new is None:
            return None
        if self.staged:
            if change.new_oid == change.old_oid and change.old_oid != NULL_OID:
                return self.head_text(change)
            data = self._blobs.get(change.new_oid)
            if data is not None:
                return decode(data)
            # an unhashed side (intent-to-add, or a symlink): fall back to the working tree
        note = self.vault.note(change.new)
        if note is None or note.error:
            return None
        return note.text

    @cached_property
    def index_oids(self) -> dict[str, str]:
        """Vault path -> staged blob of every file in the index (stage 0), from one
        ``git ls-files``: what the snapshot rules compare with the snapshots' blobs before
        reading any text."""
        if not self.available:
            return {}
        import re

        proc = self._run(["ls-files", "-s", "-z", "--full-name"], cwd=self.toplevel)
        if proc.returncode != 0:
            return {}
        # "MODE OID STAGE\tPATH\0" per entry; stage 0 only (a conflict has no one blob)
        found = re.findall(r"[0-7]+ ([0-9a-f]+) 0\t([^\0]*)\0",
                           os.fsdecode(proc.stdout))
        if not self.prefix and not self.down:  # the vault is the repository: same paths
            return {path: oid for oid, path in found}
        out: dict[str, str] = {}
        for oid, name in found:
            path = self.vault_path(name)
            if path is not None:
                out[path] = oid
        return out

    def index_against(self, commit: str) -> dict[str, str | None] | None:
        """Vault path -> staged blob (None: not in the index at stage 0) of every file
        whose staged blob is not the one ``commit``'s tree holds, from one ``git
        diff-index`` (git compares, so a vault of 10,000 files costs a few lines, not
        :attr:`index_oids` of them all). None when it cannot tell: git failed, or the
        vault is not the repository's top (paths would need mapping)."""
        if not self.available or self.prefix or self.down:
            return None
        asked = self.__dict__.setdefault("_index_against", {})  # (asked once per commit)
        if commit not in asked:
            asked[commit] = self._index_against_of(commit)
        return asked[commit]

    def _index_against_of(self, commit: str) -> dict[str, str | None] | None:
        proc = self._run(["diff-index", "--cached", "--raw", "-z", "--no-renames",
                          "--no-abbrev", commit, "--"], cwd=self.toplevel)
        if proc.returncode != 0:
            return None
        fields = proc.stdout.split(b"\0")
        out: dict[str, str | None] = {}
        for meta, name in zip(fields[0::2], fields[1::2]):
            parts = meta[1:].split()  # ":MODE MODE OID OID STATUS"
            if not meta.startswith(b":") or len(parts) < 5:
                return None
            oid = parts[3].decode("ascii")
            out[os.fsdecode(name)] = None if parts[4][:1] in (b"D", b"U") \
                or not oid.strip("0") else oid
        return out

    def read_index_texts(self, vault_paths) -> None:
        """Read the staged texts of ``vault_paths`` with one ``git cat-file --batch`` (what
        :meth:`index_texts` then answers without a process of its own each)."""
        memo = self.__dict__.setdefault("_index_texts", {})
        repos = {}
        for path in vault_paths:
            repo = self.repo_path(path)
            if repo is not None and path not in memo and "\n" not in repo:
                repos[path] = repo
        if len(repos) < 2 or not self.available:
            return  # (one file: index_texts asks for it as before)
        proc = self._run(["cat-file", "--batch"],
                         stdin="".join(f":{r}\n" for r in repos.values()).encode(
                             "utf-8", "surrogateescape"))
        if proc.returncode != 0:
            return
        # the answers come in the order asked, "<name> missing" for a path not staged
        out, pos = proc.stdout, 0
        for path in repos:
            eol = out.find(b"\n", pos)
            if eol < 0:
                return
            header = out[pos:eol].split(b" ")
            pos = eol + 1
            if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                memo[path] = None  # ("<name> missing": not staged)
                continue
            size = int(header[2])
            memo[path] = decode(out[pos:pos + size])
            pos += size + 1

    def index_texts(self, vault_path: str) -> str | None:
        """The staged (index) text of one file, None when it is not in the index."""
        memo = self.__dict__.get("_index_texts")
        if memo is not None and vault_path in memo:
            return memo[vault_path]
        repo = self.repo_path(vault_path)
        if repo is None:
            return None
        # (a staged change's blob was read with its HEAD side, when the rules read those)
        if self.staged and "changes" in self.__dict__ and "_blobs" in self.__dict__:
            change = self.by_new_path.get(vault_path)
            data = self._blobs.get(change.new_oid) if change is not None else None
            if data is not None:
                return decode(data)
        proc = self._run(["cat-file", "--batch"], stdin=f":{repo}\n".encode())
        if proc.returncode != 0:
            return None
        blobs = _parse_batch(proc.stdout)
        return decode(next(iter(blobs.values()))) if len(blobs) == 1 else None

    def lines_committed(self, vault_path: str) -> set[str]:
        """Every line (as :func:`split_lines` splits them) that a version of the file at
        ``vault_path`` holds in a commit reachable from HEAD or a local ref (branches,
        tags, remote-tracking branches; never vaultkit's snapshot refs): the lines git
        keeps whatever the snapshots say. Asked only when the snapshots hold lines the new
        text lacks (two git processes; memoised per path)."""
        memo = self.__dict__.setdefault("_lines_committed", {})
        if vault_path in memo:
            return memo[vault_path]
        repo = self.repo_path(vault_path)
        found: set[str] = set()
        if repo is not None and self.available and self.has_head:
            # (-m: a merge's own versions too; --root: the first commit's)
            proc = self._run(["log", "-m", "--root", "--raw", "--no-abbrev", "--no-renames",
                              "--format=", "--branches", "--tags", "--remotes", "HEAD",
                              "--", ":(top,literal)" + repo], cwd=self.toplevel)
            oids = []
            if proc.returncode == 0:
                for line in proc.stdout.decode("ascii", "replace").splitlines():
                    parts = line.split("\t", 1)[0].split()
                    if line.startswith(":") and len(parts) >= 5 and parts[3].strip("0"):
                        oids.append(parts[3])
            oids = list(dict.fromkeys(oids))
            if oids:
                batch = self._run(["cat-file", "--batch"],
                                  stdin="".join(o + "\n" for o in oids).encode())
                for data in _parse_batch(batch.stdout).values():
                    found.update(split_lines(decode(data))[0])
        memo[vault_path] = found
        return found

    def head_time(self) -> int | None:
        """HEAD's committer time (seconds since the epoch), None before the first commit."""
        return self._head_time

    @cached_property
    def _head_time(self) -> int | None:  # (both snapshot rules ask)
        if not self.available or not self.has_head:
            return None
        commit = self.__dict__.get("_blobs", {}).get(self.head or "")
        if commit is not None:  # the committer line's time, as %ct prints it
            for line in commit.split(b"\n\n", 1)[0].split(b"\n"):
                if line.startswith(b"committer "):
                    stamp = line.rsplit(b" ", 2)[-2:]
                    if len(stamp) == 2 and stamp[0].isdigit():
                        return int(stamp[0])
        proc = self._run(["log", "-1", "--format=%ct", "HEAD"])
        try:
            return int(proc.stdout.split()[0])
        except (IndexError, ValueError):
            return None

    def stash_texts(self, vault_path: str) -> list[str]:
        """The texts of one file that the newest :data:`STASH_ENTRIES` stash entries hold
        (``refs/stash`` and its reflog, ``stash@{0}`` on), and the autostash of a merge or
        rebase in progress: each entry's work tree, index and untracked files. ``git
        stash`` moves uncommitted lines there on purpose, so they are not lost. Read only
        when a loss is still unexplained: two git runs."""
        repo = self.repo_path(vault_path)
        if repo is None or not self.available:
            return []
        entries = self.__dict__.get("_stash_entries")
        if entries is None:
            proc = self._run(["log", "-g", "--format=%H", f"-n{STASH_ENTRIES}", "refs/stash",
                              "--"])
            # (no stash: git fails on the missing ref, and there is nothing to read)
            entries = proc.stdout.decode("ascii", "replace").split() \
                if proc.returncode == 0 else []
            entries += self._autostashes()
            self.__dict__["_stash_entries"] = entries
        if not entries:
            return []
        read = self.__dict__.setdefault("_stash_texts", {})  # (asked once per version)
        if repo not in read:
            sides = ("^1", "", "^2", "^3")  # the commit stashed on; work tree, index, untracked
            asked = "".join(f"{sha}{side}:{repo}\n" for sha in entries for side in sides)
            proc = self._run(["cat-file", "--batch"], stdin=asked.encode())
            got = _parse_batch_in_order(proc.stdout)
            texts = []
            for i in range(0, len(got) - len(sides) + 1, len(sides)):
                base = got[i]
                for data in got[i + 1:i + len(sides)]:
                    if data is None:
                        continue
                    text = decode(data)
                    # a stash holds the lines it took out of the work tree; the lines of
                    # the commit it was made on are that commit's, not moved by the stash:
                    # a committed line cut from the journal is not held by every stash
                    # taken while the line was there
                    if base is not None:
                        text = _without(text, decode(base))
                    texts.append(text)
            read[repo] = texts
        return read[repo]

    def _autostashes(self) -> list[str]:
        """The stash entries a merge or rebase in progress keeps aside (``--autostash``,
        ``merge.autoStash``, ``rebase.autoStash``): git writes the entry's id to
        ``MERGE_AUTOSTASH``, ``rebase-merge/autostash`` or ``rebase-apply/autostash`` in
        the work tree's git dir, not to ``refs/stash``, and applies it when the operation
        ends (the merge's commit included): the lines it holds are moved, not lost."""
        from vaultkit.core.bounded import ReadRefused, read_regular

        git_dir = _own_git_dir(self.toplevel) if self.toplevel is not None else None
        if git_dir is None:
            return []
        found = []
        for name in ("MERGE_AUTOSTASH", "rebase-merge/autostash", "rebase-apply/autostash"):
            try:
                oid = read_regular(os.path.join(git_dir, name), 4096).strip().decode("ascii")
            except (ReadRefused, OSError, UnicodeDecodeError):
                continue  # (none: no such operation in progress)
            if len(oid) in (40, 64) and all(c in "0123456789abcdef" for c in oid):
                found.append(oid)
        return found

    def unstaged_by_pre_commit(self, vault_path: str) -> str | None:
        """The lines pre-commit took out of the work tree of one file for this hook run,
        or None when it took none. Before it runs the hooks pre-commit saves the unstaged
        changes as a patch in its home, ``patch<time>-<its pid>``, and checks the staged
        versions out (pre-commit 4.7.0, ``pre_commit/staged_files_only.py``, read on
        2026-12-07): so under pre-commit the work tree of a partly staged file lacks the
        unstaged lines, which are the patch's added lines for that file."""
        if os.environ.get("PRE_COMMIT") != "1":
            return None
        patch = self.__dict__.get("_pre_commit_patch", False)
        if patch is False:
            patch = self.__dict__["_pre_commit_patch"] = _pre_commit_patch()
        repo = self.repo_path(vault_path)
        if not patch or repo is None:
            return None
        return _added_lines(patch, repo)

    def unstaged_by_running_pre_commit(self, vault_path: str) -> list[str]:
        """The lines pre-commit runs still in progress (any process: asked by a watcher,
        not by a hook) took out of the work tree of one file: while the hooks run, a
        partly staged journal lacks its unstaged lines, which are not lost (pre-commit
        puts them back when the hooks are done)."""
        repo = self.repo_path(vault_path)
        if repo is None:
            return []
        texts = (_added_lines(patch, repo) for patch in _running_pre_commit_patches())
        return [text for text in texts if text is not None]

    # -- history ------------------------------------------------------------------

    def commit_days(self, vault_path: str, days: int, *,
                    now: _dt.datetime | None = None) -> list[str]:
        """The author day (``YYYY-MM-DD``, in the author's zone) of each non-merge commit
        that changed ``vault_path`` in the last ``days`` days, newest first.

        The commit that created the file does not count: writing it is not changing it
        (a starter vault's first commit plus one edit is no churn). Nor does one that only
        appended OpenClaw dreaming's promoted sections (vaultkit.vault.promoted): the
        runtime's scheduled write, not the file used as a journal."""
        repo = self.repo_path(vault_path)
        if repo is None or not self.has_head:
            return []
        if now is None:  # (asked once per run: the first asking's now is the run's)
            asked = self.__dict__.setdefault("_commit_days", {})
            if (vault_path, days) not in asked:
                asked[vault_path, days] = self.commit_days(
                    vault_path, days, now=_dt.datetime.now(_dt.timezone.utc))
            return list(asked[vault_path, days])
        since = now - _dt.timedelta(days=days)
        proc = self._run(["log", "--no-merges", "--diff-filter=MT",
                          f"--since={since.isoformat()}", "-p", "--unified=0", "--no-color",
                          "--no-ext-diff", "--no-textconv", "--format=%x00%at %ad",
                          "--date=short", "HEAD", "--", ":(top,literal)" + repo])
        if proc.returncode != 0:
            return []
        from vaultkit.vault.promoted import only_promotions

        cutoff = since.timestamp()
        out = []
        for commit in proc.stdout.decode("utf-8", "replace").split("\0")[1:]:
            head, _, patch = commit.partition("\n")
            stamp, _, day = head.partition(" ")
            try:
                if int(stamp) < cutoff:
                    continue
            except ValueError:
                continue
            removed, added, hunks = [], [], False
            for line in patch.splitlines():
                if line.startswith("@@"):
                    hunks = True
                elif hunks and line.startswith("+"):
                    added.append(line[1:])
                elif hunks and line.startswith("-"):
                    removed.append(line[1:])
            if not only_promotions(removed, added):
                out.append(day.strip())
        return out


class _DiffMemo:
    """The last ``git diff --raw`` against HEAD, reused while nothing it reads changed.

    Comparing the working tree with HEAD makes git stat every tracked file: as long as a
    ``git status``, run by every warm check for the git rules. Its output depends on HEAD,
    the index, git's configuration and the files it compares; so it is reused when HEAD
    is the same commit, the index and the repository's config are the same files (path,
    inode, size, mtime and ctime: git replaces them whole), and the vault's listing is the
    same (every file's path, size, mtime, ctime and inode: the key the results cache uses),
    with the parse
    cache's racy margin. Not with the config's ``exclude``, nor a profile's
    ``skip_folders`` inside the memory folder: a file the listing leaves out there may be a
    tracked journal. The other folders no vault lists (``.obsidian/``, ``.trash/``, tool
    caches, a profile's ``backups/``) hold no file of a layer the git rules read. The
    rules still run on the diff each time: only git's answer is reused, never their
    findings (the snapshots and the clock they also read are read anew).
    Kept in the vault's store; only with a cache.
    """

    NAME = "git-diff"  # its entry in the vault's store (vaultkit.vault.store)
    VERSION = 1

    def __init__(self, store, key: str, stamp: str, vault):
        self.cache = store  # the vault's store
        self.key = key
        self.stamp = stamp  # the index's and config's identity, within the key
        self.vault = vault

    @staticmethod
    def stamp_of(state: "GitState") -> str:
        """The index's and config's path, inode, size, mtime and ctime. ``git diff`` against the
        working tree may rewrite the index (refreshing its stat data) as it runs: then the
        answer is stored only by a later run that finds the index as it left it."""
        files = []
        for path in state.state_files:
            try:
                st = os.stat(path)
            except OSError:
                files.append(f"{path}:-")
                continue
            files.append(f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        return "\0".join(files)

    @classmethod
    def open(cls, state: "GitState", args: list[str]) -> "_DiffMemo | None":
        vault = state.vault
        if not getattr(vault, "caching", False) or not getattr(vault, "state_digest", ""):
            return None
        settings = vault.settings
        memory = vault.profile.memory_prefix
        if settings.config.exclude or any(f.startswith(memory) for f in settings.skip_folders):
            return None
        stamp = cls.stamp_of(state)
        key = "\0".join([str(cls.VERSION), str(state.toplevel), state.head or "", stamp,
                         vault.state_digest, *args])
        return cls(vault.store, key, stamp, vault)

    def lookup(self) -> bytes | None:
        try:
            key, listed_ns, out = self.cache.get(self.NAME)
        except (EOFError, ValueError, TypeError):  # (none: TypeError)
            return None
        from vaultkit.vault.store import RACY_NS

        # (a file changed in the listing's clock tick may keep its size and mtime)
        if key != self.key or not isinstance(out, bytes) or not isinstance(listed_ns, int) \
                or self.vault.newest_mtime_ns >= listed_ns - RACY_NS:
            return None
        return out

    def store(self, out: bytes) -> None:
        import marshal

        data = marshal.dumps((self.key, self.vault.started_ns, out))
        self.cache.later(lambda: self.cache.put(self.NAME, data))




def decode(data: bytes) -> str:
    """Blob bytes as text the way the parser decodes files (BOM dropped, CRLF kept)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "replace")


def _pre_commit_patch() -> bytes | None:
    """The patch of unstaged changes the pre-commit process running this hook (the
    parent) saved, from its home (``PRE_COMMIT_HOME``, else ``$XDG_CACHE_HOME/pre-commit``,
    else ``~/.cache/pre-commit``), read within the size bound of a memory file."""
    from vaultkit.core.bounded import read_regular

    home = _pre_commit_home()
    # (a check answered by a running watcher is told the asking process's parent)
    suffix = f"-{os.environ.get(CALLER_PARENT) or os.getppid()}"
    try:
        names = [n for n in os.listdir(home) if n.startswith("patch") and n.endswith(suffix)]
    except OSError:
        return None
    # (a patch an earlier process with the same pid left is not this run's)
    names = [n for n in names if _writer_alive(n)]
    for name in sorted(names, reverse=True):  # the newest: one run per process
        try:
            return read_regular(os.path.join(home, name), _PATCH_LIMIT, follow_symlinks=False)
        except OSError:
            return None
    return None


def _pre_commit_home() -> str:
    return os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit")


def _added_lines(patch: bytes, repo: str) -> str | None:
    """The lines a patch of unstaged changes adds to the file ``repo``, or None."""
    header = f"diff --git a/{repo} b/{repo}".encode()
    added, inside = [], False
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            inside = line == header
        elif inside and line.startswith(b"+") and not line.startswith(b"+++ "):
            added.append(line[1:])
    return decode(b"\n".join(added) + b"\n") if added else None


def pre_commit_running() -> bool:
    """True while a pre-commit run that saved a patch of unstaged changes is still going
    (:func:`_running_pre_commit_patches`, without reading them): its hooks are running
    on the staged versions, and it checks the work tree out and applies the patch again
    when they are done, so anything else written into the files meanwhile is either a
    "fix" it rolls back or a change that fails the hook."""
    home = _pre_commit_home()
    try:
        names = [n for n in os.listdir(home) if n.startswith("patch")]
    except OSError:
        return False
    return any(_writer_alive(n) for n in names)


def _running_pre_commit_patches() -> list[bytes]:
    """The patches of unstaged changes in pre-commit's home whose pre-commit process
    (``patch<time>-<pid>``) is still running. pre-commit keeps the patches after a run,
    so only a live process's patch is one whose lines are out of the work tree now."""
    from vaultkit.core.bounded import read_regular

    home = _pre_commit_home()
    try:
        names = [n for n in os.listdir(home) if n.startswith("patch")]
    except OSError:
        return []
    out = []
    for name in names:
        if not _writer_alive(name):
            continue
        try:
            out.append(read_regular(os.path.join(home, name), _PATCH_LIMIT,
                                    follow_symlinks=False))
        except OSError:
            continue
    return out


def _writer_alive(name: str) -> bool:
    """Whether the pre-commit process that saved the patch ``name`` (``patch<time>-<pid>``)
    still runs. Its pid alone does not say so: pre-commit keeps its patches after a run, and
    the kernel hands the pid to a later process in time (:mod:`vaultkit.core.processes`).
    Taking a later process for the writer made a watcher wait for that commit's hooks as
    long as the unrelated process lived, snapshotting and restoring nothing."""
    from vaultkit.core.processes import runs_since

    stamp, _, pid = name[len("patch"):].rpartition("-")
    return pid.isdigit() and runs_since(int(pid), int(stamp) if stamp.isdigit() else None)


# the environment variable a check answered by a running watcher (vaultkit.cli.resident)
# finds the asking process's parent in
CALLER_PARENT = "VAULTKIT_CALLER_PARENT"
_PATCH_LIMIT = 64 * 1024 * 1024  # a patch of unstaged changes larger than this is not read


def _own_git_dir(toplevel: Path) -> str | None:
    """The work tree's own git folder (a linked worktree's, not the common one), found as
    the git runs of a :class:`GitState` find it, without starting one: ``GIT_DIR`` (git
    sets it for a hook in a linked worktree), else ``.git`` at the top, a folder or a file
    naming it; None when neither settles it."""
    from vaultkit.core.bounded import ReadRefused, read_regular

    named = os.environ.get("GIT_DIR")
    if named:
        return os.path.join(toplevel, named)
    dot = toplevel / ".git"
    if dot.is_dir():
        return str(dot)
    try:
        line = read_regular(dot, 4096).decode("utf-8", "surrogateescape").strip()
    except (ReadRefused, OSError):
        return None
    if line.startswith("gitdir:"):
        return os.path.join(toplevel, line[len("gitdir:"):].strip())
    return None


def _without(text: str, base: str) -> str:
    """The lines of ``text`` that ``base`` does not hold (as a multiset), in order."""
    from collections import Counter

    remaining = Counter(split_lines(base)[0])
    out = []
    for line in split_lines(text)[0]:
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            out.append(line + "\n")
    return "".join(out)


def _batch_answers(out: bytes):
    """``git cat-file --batch``'s answers in the order asked: ``(oid, type, bytes)``, or
    None for an object it did not find."""
    pos = 0
    n = len(out)
    while pos < n:
        eol = out.find(b"\n", pos)
        if eol < 0:
            break
        header = out[pos:eol].decode("ascii", "replace").split()
        pos = eol + 1
        # "<oid> <type> <size>", or "<object as asked> missing" (a path may hold spaces)
        if len(header) != 3 or not header[2].isdigit() or header[1] not in (
                "blob", "tree", "commit", "tag"):
            yield None
            continue
        length = int(header[2])
        yield header[0], header[1], out[pos:pos + length]
        pos += length + 1


def _parse_batch_in_order(out: bytes) -> list[bytes | None]:
    """The blobs of ``git cat-file --batch``'s answers in the order asked: None for an
    object it did not find or that is no blob."""
    return [a[2] if a is not None and a[1] == "blob" else None for a in _batch_answers(out)]


def _parse_batch(out: bytes) -> dict[str, bytes]:
    """``{oid: bytes}`` of ``git cat-file --batch``'s answers; those it did not find left out."""
    return {a[0]: a[2] for a in _batch_answers(out) if a is not None}


# -- comparing texts ---------------------------------------------------------------------

def split_lines(text: str) -> tuple[list[str], bool]:
    """Lines without endings (CRLF and LF alike) and whether the text ended with one."""
    text = text.replace("\r\n", "\n")
    final = text.endswith("\n")
    lines = text.split("\n")
    if final:
        lines.pop()
    elif lines == [""]:
        lines = []
    return lines, final


def first_change(old: str, new: str) -> tuple[int, str, str | None] | None:
    """Where ``new`` stops extending ``old`` line by line, or None when it does.

    Returns ``(line, old_line, new_line)``, 1-based, ``new_line`` None when the new
    text ends before that line. Line endings do not count (a CRLF/LF conversion is not
    an edit), and a missing final newline in ``old`` is tolerated: its last line may
    go on in the new text (``printf >>`` onto a file without a final newline).
    """
    old_lines, old_final = split_lines(old)
    new_lines, _ = split_lines(new)
    last = len(old_lines) - 1
    for i, line in enumerate(old_lines):
        if i >= len(new_lines):
            return i + 1, line, None
        now = new_lines[i]
        if now == line:
            continue
        if i == last and not old_final and now.startswith(line):
            continue
        return i + 1, line, now
    return None


def content_lines(text: str) -> int:
    """Non-blank lines: what mass-deletion counts."""
    return sum(1 for line in text.splitlines() if line.strip())
