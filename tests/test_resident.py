"""`vaultkit check` answered by a running `vaultkit watch` (vaultkit.cli.resident): the same
output and exit code as the command run here, the caller's folder and environment, and a
run here whenever the watcher cannot answer."""

from __future__ import annotations

import json
import marshal
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultkit.cli import resident

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the watcher answers on Linux")

JOURNAL = "memory/2026-11-20.md"
ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
       "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com",
       "GIT_CONFIG_NOSYSTEM": "1"}
# a client whose own `check` refuses to run: an answer can only come from the watcher
ONLY_ANSWERED = ("import sys\nimport vaultkit.cli.commands.check as check\n"
                 "def refuse(args):\n    raise SystemExit('ran here')\n"
                 "check.run = refuse\nfrom vaultkit.cli import main\n"
                 "sys.exit(main(sys.argv[1:]))\n")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV)
    env.pop("VAULTKIT_RESIDENT", None)
    env.update(extra)
    return env


def git(root: Path, *args: str, env=None) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env or _env()).stdout


def make(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging first\n",
                                    encoding="utf-8")
    (root / "memory" / "people").mkdir(parents=True)
    (root / "memory" / "people" / "ana.md").write_text(
        "---\ntype: person\n---\n# Ana\n\n- Runs the payments team; see [[nobody-here]]\n",
        encoding="utf-8")
    (root / JOURNAL).write_text(
        "# 2026-11-20\n\n### 09:00 — Morning\n- Reviewed the queue\n- Closed item 4\n"
        "- Next: item 5\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def vaultkit(root: Path, *args: str, env=None, cwd=None, script=None):
    command = [sys.executable, "-c", script, *args] if script else \
        [sys.executable, "-m", "vaultkit", *args]
    return subprocess.run(command, cwd=cwd or root, capture_output=True, text=True,
                          env=env or _env(), timeout=120)


@pytest.fixture
def watching(tmp_path):
    """A vault with `vaultkit watch` running in it (polling: no watchfiles needed)."""
    root = make(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "watch", "--poll", "0.5"],
                            cwd=root, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    sock = root / resident.SOCKET
    while not sock.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the watcher never listened"
        time.sleep(0.05)
    yield root
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert "answering `vaultkit check` on .vaultkit/check.sock" in err, err
    assert not sock.exists()  # a watcher that stops takes its socket away


def test_the_watcher_answers_exactly_what_the_command_prints_here(watching):
    root = watching
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 10:00 — Heartbeat\n- nothing to report\n")
    git(root, "add", "-A")
    here = vaultkit(root, "check", "--hook", JOURNAL, "memory/people/ana.md",
                    env=_env(VAULTKIT_RESIDENT="0"))
    answered = vaultkit(root, "check", "--hook", JOURNAL, "memory/people/ana.md",
                        script=ONLY_ANSWERED)
    assert "ran here" not in answered.stderr
    assert (answered.returncode, answered.stdout) == (here.returncode, here.stdout)
    assert answered.stderr == here.stderr
    assert "VK501 broken-link" in answered.stdout and "VK403" in answered.stdout
    # from a subfolder, in JSON: paths and format are the caller's
    sub = root / "memory"
    here = vaultkit(root, "check", "--format", "json", cwd=sub, env=_env(VAULTKIT_RESIDENT="0"))
    answered = vaultkit(root, "check", "--format", "json", cwd=sub, script=ONLY_ANSWERED)
    assert answered.stdout == here.stdout and json.loads(answered.stdout)


def test_the_asking_process_imports_no_more_than_it_needs(watching):
    """Asking is most of what the commit hook costs when a watcher answers: the asking
    process imports neither ``json`` nor ``socket`` (with them ``re`` and ``enum``)."""
    script = ("import sys\nfrom vaultkit.cli import main\ncode = main(sys.argv[1:])\n"
              "print(sorted(m for m in ('json', 'socket', 're', 'enum', 'argparse') "
              "if m in sys.modules), file=sys.stderr)\nsys.exit(code)\n")
    asked = vaultkit(watching, "check", "--hook", JOURNAL, script=script)
    # (argparse: a check run here would have parsed its arguments)
    assert "VK504" in asked.stdout and asked.stderr.strip() == "[]", asked.stderr


def test_the_caches_an_answer_need_not_wait_for_are_written_after_it(watching):
    """The child writes the cache entries its answer does not need once it has answered:
    they are there for the next check all the same."""
    from parse_store import has_entry, sql

    root = watching
    names = ("git-diff", "outbound-verified")
    for name in names:
        sql(root, "DELETE FROM entries WHERE name = ?", name)
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 11:00 — Later\n- one more line\n- and another\n")
    git(root, "add", "-A")
    answered = vaultkit(root, "check", "--hook", JOURNAL, script=ONLY_ANSWERED)
    assert "ran here" not in answered.stderr
    deadline = time.monotonic() + 30  # (the child may still be writing as the caller ends)
    while not all(has_entry(root, n) for n in names):
        assert time.monotonic() < deadline, [n for n in names if not has_entry(root, n)]
        time.sleep(0.05)


def _prepared_head(root: Path, deadline: float) -> str:
    """The newest snapshot, once the answering process has read the chain up to it (the
    versions file it keeps for the next check names it)."""
    versions = root / ".git" / "vaultkit" / "snapshots.versions"
    while True:
        head = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/vaultkit/snapshots"],
                              cwd=root, capture_output=True, text=True, env=_env()).stdout.strip()
        try:
            if head and marshal.loads(versions.read_bytes())[3] == head:
                return head
        except (OSError, EOFError, ValueError, TypeError, IndexError):
            pass
        assert time.monotonic() < deadline, "the snapshots were never read ahead"
        time.sleep(0.1)


def test_a_hook_after_a_snapshot_finds_the_chain_already_read(watching, tmp_path):
    """After each snapshot the answering process reads, while no check waits, what the next
    hook's snapshot rules ask git about it: that hook's child asks git nothing about the
    chain (no `git log` of it, no object of it: its one `cat-file` reads the journal's
    committed and staged sides), and answers what the hook run here answers."""
    root = watching
    deadline = time.monotonic() + 60
    first = _prepared_head(root, deadline)
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 11:00 — Later\n- one more line\n- and another\n- a third\n")
    git(root, "add", "-A")
    while _prepared_head(root, deadline) == first:  # the watcher's snapshot of it, read
        time.sleep(0.1)
    trace = tmp_path / "git-trace.json"
    answered = vaultkit(root, "check", "--hook", JOURNAL, script=ONLY_ANSWERED,
                        env=_env(GIT_TRACE2_EVENT=str(trace)))
    assert "ran here" not in answered.stderr
    here = vaultkit(root, "check", "--hook", JOURNAL, env=_env(VAULTKIT_RESIDENT="0"))
    assert (answered.returncode, answered.stdout) == (here.returncode, here.stdout)
    asked = [event["argv"][1:] for event in map(json.loads, trace.read_text().splitlines())
             if event.get("event") == "start"]
    assert asked, "no git process traced"
    chain = [args for args in asked if "log" in args and "--reverse" in args]
    assert chain == [], chain
    assert sum("cat-file" in args for args in asked) == 1, asked


def test_a_note_written_since_the_last_answer_is_seen_at_once(watching):
    root = watching
    first = vaultkit(root, "check", "-q", script=ONLY_ANSWERED)
    assert "VK501 broken-link warning: no note 'nobody-here'" in first.stdout
    (root / "memory" / "people" / "nobody-here.md").write_text(
        "---\ntype: person\n---\n# Nobody\n", encoding="utf-8")
    second = vaultkit(root, "check", "-q", script=ONLY_ANSWERED)  # no wait: the events are there
    assert "VK501" not in second.stdout, second.stdout


def test_the_callers_environment_is_used_the_index_being_committed_too(watching):
    root = watching
    alternate = root / ".git" / "next-index.lock-test"
    env = _env(GIT_INDEX_FILE=str(alternate))
    git(root, "read-tree", "HEAD", env=env)
    # the alternate index (as `git commit FILE` makes one) stages the journal's deletion;
    # the usual index and the file on disk keep it
    git(root, "update-index", "--force-remove", JOURNAL, env=env)
    args = ["check", "--hook", JOURNAL, "--select", "journal-append-only"]
    plain = vaultkit(root, *args, script=ONLY_ANSWERED)
    assert plain.returncode == 0 and "VK601" not in plain.stdout, plain.stdout + plain.stderr
    committing = vaultkit(root, *args, env=env, script=ONLY_ANSWERED)
    assert committing.returncode == 1 and "VK601 journal-append-only" in committing.stdout
    assert "journal taken out of git with the file kept" in committing.stdout, \
        committing.stdout
    here = vaultkit(root, *args, env=_env(GIT_INDEX_FILE=str(alternate), VAULTKIT_RESIDENT="0"))
    assert committing.stdout == here.stdout
    # one caller's environment is not the next one's (each request is a process of its own)
    again = vaultkit(root, *args, script=ONLY_ANSWERED)
    assert again.returncode == 0 and "VK601" not in again.stdout, again.stdout


def test_commands_that_write_or_wait_run_here(watching):
    root = watching
    for args in (["check", "--fix"], ["check", "--write-b"], ["check", "-o", "out.txt"],
                 ["check", "--watch"], ["index"], ["check", "--select", "-x"]):
        assert not resident.delegable(args), args
    assert resident.delegable(["check", "--hook", "--select=broken-link", "a.md"])
    fixed = vaultkit(root, "check", "--fix", script=ONLY_ANSWERED)
    assert "ran here" in fixed.stderr  # not sent to the watcher


def test_a_watcher_of_another_version_declines(watching):
    root = watching
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        resident.at_socket(conn.connect, str(root / resident.SOCKET))
        conn.sendall(marshal.dumps({"version": "0.0.1",
                                    "argv": ["check"], "cwd": str(root), "env": {},
                                    "tty": False}))
        conn.shutdown(socket.SHUT_WR)
        answer = marshal.loads(conn.recv(1 << 16))
    assert "declined" in answer and "code" not in answer
    # a request of the format before (JSON), or of the right format but not a request's
    # shape, is declined, and the watcher goes on answering
    for request in (json.dumps({"version": resident.release(), "argv": ["check"],
                                "cwd": str(root), "env": {}, "tty": False}).encode() + b"\n",
                    marshal.dumps({"version": resident.release(), "argv": ["check", 1],
                                   "cwd": str(root), "env": {}}),
                    marshal.dumps({"version": resident.release(), "argv": ["check"],
                                   "cwd": str(root), "env": {"A": 1}})):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            resident.at_socket(conn.connect, str(root / resident.SOCKET))
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
            assert marshal.loads(conn.recv(1 << 16)) == {"declined": "not a request"}
    answered = vaultkit(root, "check", "-q", script=ONLY_ANSWERED)
    assert "ran here" not in answered.stderr


def test_no_watcher_a_dead_socket_or_anothers_runs_here(tmp_path, monkeypatch):
    root = make(tmp_path)
    expected = vaultkit(root, "check", env=_env(VAULTKIT_RESIDENT="0"))
    (root / ".vaultkit").mkdir(exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    resident.at_socket(dead.bind, str(root / resident.SOCKET))
    dead.close()  # a watcher killed with its socket left behind
    again = vaultkit(root, "check")
    assert (again.returncode, again.stdout) == (expected.returncode, expected.stdout)
    monkeypatch.chdir(root)
    assert resident.find_socket(["check"]) == str(root / resident.SOCKET)
    monkeypatch.setattr(os, "getuid", lambda: 4242)  # the socket is not this user's
    assert resident.find_socket(["check"]) is None


def test_a_second_watcher_leaves_the_socket_to_the_first(watching):
    root = watching
    proc = subprocess.run([sys.executable, "-c",
                           "from pathlib import Path\n"
                           "from vaultkit.cli.commands._check_server import CheckServer\n"
                           f"s = CheckServer(Path({str(root)!r}))\n"
                           "print(s.start())\n"], capture_output=True, text=True,
                          env=_env(), timeout=60)
    assert "another watcher answers the commit hook" in proc.stdout, proc.stdout + proc.stderr
    assert (root / resident.SOCKET).exists()


def test_the_socket_is_found_from_the_root_here_or_the_first_file_named(tmp_path, monkeypatch):
    """The hook runs at the repository's top; a vault in a subfolder of it is found from
    the files the hook names."""
    repo = tmp_path / "repo"
    vault = repo / "vault"
    (vault / ".vaultkit").mkdir(parents=True)
    (vault / "memory").mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    resident.at_socket(server.bind, str(vault / resident.SOCKET))
    try:
        monkeypatch.chdir(repo)
        expected = str(vault / resident.SOCKET)
        assert resident.find_socket(["check", "--hook"]) is None
        assert resident.find_socket(["check", "--hook", "vault/memory/a.md"]) == expected
        assert resident.find_socket(["check", "--select", "vault/x", "--hook",
                                     "vault/memory/a.md"]) == expected
        assert resident.find_socket(["check", "--select", "broken-link", "other/a.md"]) is None
        assert resident.find_socket(["check", "--root", "vault"]) == expected
        assert resident.find_socket(["check", "--root=vault"]) == expected
        assert resident.find_socket(["check", "--root", ".", "vault/memory/a.md"]) is None
    finally:
        server.close()


def test_a_caller_that_goes_away_leaves_the_watcher_answering(watching):
    """A caller interrupted (Ctrl-C) before the answer, or one that sends garbage, costs
    the watcher nothing: the next check is answered."""
    root = watching
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        resident.at_socket(conn.connect, str(root / resident.SOCKET))
        conn.sendall(b"\x00\xff not json\n")
        conn.shutdown(socket.SHUT_WR)
        assert b"declined" in conn.recv(1 << 16)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        resident.at_socket(conn.connect, str(root / resident.SOCKET))
        conn.sendall(marshal.dumps({"version": resident.release(), "argv": ["check"],
                                    "cwd": str(root), "env": _env(), "tty": False}))
    # (closed before the answer came)
    answered = vaultkit(root, "check", "-q", script=ONLY_ANSWERED)
    assert "ran here" not in answered.stderr and "VK501" in answered.stdout


def test_a_check_in_a_deleted_folder_is_one_line_not_a_traceback(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import os, sys\nos.chdir(sys.argv[1])\n"
                             "os.rmdir(sys.argv[1])\nfrom vaultkit.cli import main\n"
                             "sys.exit(main(['check']))\n", str(gone)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert err.startswith("vaultkit: error:") and len(err.strip().splitlines()) == 1


def test_an_answer_to_a_reader_gone_away_ends_quietly(watching):
    """`vaultkit check | head -1`: the reader closes the pipe; as a check run here, the
    answered one exits 0 without a traceback."""
    root = watching
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line
    try:
        proc = subprocess.run([sys.executable, "-c", ONLY_ANSWERED, "check"], cwd=root,
                              stdout=w, stderr=subprocess.PIPE, text=True, env=_env(),
                              timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "ran here" not in proc.stderr


def test_no_socket_through_a_symlink(tmp_path, monkeypatch):
    """`.vaultkit` shipped as a symlink (a cloned vault) gets no socket made through it, and
    a socket file that is a symlink is never connected to."""
    from vaultkit.cli.commands._check_server import CheckServer

    root = make(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".vaultkit").symlink_to(elsewhere, target_is_directory=True)
    why = CheckServer(root).start()
    assert why is not None and "is a symlink" in why
    assert list(elsewhere.iterdir()) == []
    (root / ".vaultkit").unlink()
    (root / ".vaultkit").mkdir()
    real = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    resident.at_socket(real.bind, str(elsewhere / "real.sock"))
    try:
        (root / resident.SOCKET).symlink_to(elsewhere / "real.sock")
        monkeypatch.chdir(root)
        assert resident.find_socket(["check"]) is None
    finally:
        real.close()


def test_a_socket_deep_in_the_file_system_is_reached(tmp_path, monkeypatch):
    """AF_UNIX names stop at about 100 bytes; a vault deeper than that is reached from
    inside its folder."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = str(deep / "check.sock")
    assert len(path) > 110
    monkeypatch.chdir(tmp_path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    try:
        resident.at_socket(server.bind, path)
        server.listen(1)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            resident.at_socket(client.connect, path)
        assert os.getcwd() == here  # (back where it was)
    finally:
        server.close()


def test_the_cache_files_a_child_parsed_are_parsed_once_for_the_next(tmp_path, monkeypatch):
    """The answering process parses again the cache files its last child parsed, so the
    next child takes them as they are, without reading them; each is known by its identity,
    so one replaced since is read anew, and what is kept is handed out once (the caller may
    change it: a second reader in the same process reads the file)."""
    import marshal

    import vaultkit.core.bounded as bounded
    from vaultkit.cli.commands._check_server import _learn, _learned
    from vaultkit.session.workspace import Workspace
    from vaultkit.vault import cachefile

    path = tmp_path / "snapshots.versions"
    path.write_bytes(marshal.dumps({"findings": [1, 2, 3]}))
    parent = Workspace(tmp_path)  # the answering process's workspace
    child = Workspace(tmp_path)  # (a child's copy of it, as forked)
    files = child.blobs.files
    assert files.load(path) == {"findings": [1, 2, 3]}  # (the child's read)
    assert files.read_names() == [str(path)]
    _learn(_learned(child), parent)  # the answering process, once the child is done
    reads = []
    real = bounded.read_regular
    monkeypatch.setattr(bounded, "read_regular",
                        lambda p, *a, **k: reads.append(str(p)) or real(p, *a, **k))
    files = parent.blobs.files  # (the next child's copy)
    assert files.read_names() == []  # (the answering process read nothing through it)
    kept = files.load(path)  # the next child
    assert kept == {"findings": [1, 2, 3]} and reads == []
    assert files.read_names() == [str(path)]  # (so that it is kept for the one after)
    kept["findings"].append(4)  # (its own to change)
    assert files.load(path) == {"findings": [1, 2, 3]} and reads == [str(path)]
    # kept again while unchanged: the same parse, not a new one
    files.keep([str(path)])
    first = files.kept[str(path)][1]
    files.keep([str(path)])
    assert files.kept[str(path)][1] is first
    # replaced since it was kept (another process wrote it): read anew
    tmp = tmp_path / "new.tmp"
    tmp.write_bytes(marshal.dumps({"findings": []}))
    os.replace(tmp, path)
    assert files.load(path) == {"findings": []}
    # a symlink, a folder, a damaged file or one past the bound is not kept
    (tmp_path / "link.marshal").symlink_to(path)
    (tmp_path / "damaged.marshal").write_bytes(b"\x00garbage")
    monkeypatch.setattr(cachefile, "KEEP_AT_MOST_BYTES", 64)
    (tmp_path / "big.marshal").write_bytes(marshal.dumps(list(range(100))))
    files.keep([str(tmp_path / n) for n in ("link.marshal", "damaged.marshal",
                                             "big.marshal")] + [str(tmp_path)])
    assert files.kept == {}
    # another workspace (another vault in the same process) was handed nothing
    assert Workspace(tmp_path).blobs.files.kept == {}


def test_a_command_handed_the_workspace_lists_from_its_pinned_listing(tmp_path, monkeypatch,
                                                                      capsys):
    """The answering child's command lists the vault from the listing its workspace pinned
    at the fork (handed down as ``main(argv, workspace=...)``, no registry), and answers
    what a plain run prints; another ``--profile`` lists for itself."""
    from vaultkit.cli import main
    from vaultkit.session.workspace import Workspace
    from vaultkit.vault import loader

    root = make(tmp_path).resolve()
    monkeypatch.chdir(root)
    assert main(["check", "--no-cache"]) == 0
    plain = capsys.readouterr()
    workspace = Workspace(root)
    workspace.pin(workspace.scan())
    walks = []
    real = loader.list_vault
    monkeypatch.setattr(loader, "list_vault", lambda *a: walks.append(a) or real(*a))
    monkeypatch.setattr(resident, "SERVING", True)  # (the child asks no watcher)
    assert main(["check", "--no-cache"], workspace=workspace) == 0
    assert capsys.readouterr() == plain and walks == []
    assert main(["check", "--no-cache", "--profile", "obsidian"],
                workspace=workspace) in (0, 1)
    assert len(walks) == 1  # (other settings: not the pinned listing)
    workspace.close()


def test_a_vault_opened_whole_for_the_workspace_takes_its_listing_and_store(tmp_path):
    """A command that loads the whole vault (not deferred) under a workspace is given the
    workspace's pinned listing and store, and the vault is the one a plain load makes."""
    from argparse import Namespace

    from vaultkit.cli.commands._common import forget_opened_vaults, open_vault
    from vaultkit.session.workspace import Workspace
    from vaultkit.vault.loader import load_vault

    root = make(tmp_path).resolve()
    workspace = Workspace(root)
    workspace.pin(workspace.scan())
    args = Namespace(root=None, profile=None, no_cache=False, workspace=workspace)
    vault = open_vault(args, root, named=False)
    forget_opened_vaults()
    assert vault.store is workspace.store
    plain = load_vault(root, save=False)
    assert sorted(vault.notes) == sorted(plain.notes) and vault.paths == plain.paths
    workspace.close()


def test_a_command_handed_the_workspace_reads_the_workspace_store(tmp_path, monkeypatch,
                                                                   capsys):
    """The answering child's command reads the vault's caches through the store its
    workspace hands with the pinned listing (no registry by root): the entries it read are
    told to the answering process, which keeps them parsed in that store, and the next
    child is handed them from there, answering what a plain run prints."""
    from vaultkit.cli import main
    from vaultkit.cli.commands._check_server import _learn, _learned
    from vaultkit.session.workspace import Workspace

    root = make(tmp_path).resolve()
    monkeypatch.chdir(root)
    assert main(["check"]) == 0  # (the store written)
    plain = capsys.readouterr()
    monkeypatch.setattr(resident, "SERVING", True)  # (the child asks no watcher)
    workspace = Workspace(root)
    workspace.pin(workspace.scan())
    assert main(["check"], workspace=workspace) == 0  # a child
    assert capsys.readouterr() == plain
    assert "results" in workspace.store.read_names()
    _learn(_learned(workspace), workspace)  # the answering process, once it is done
    assert "results" in workspace.store.kept
    assert main(["check"], workspace=workspace) == 0  # the next child
    assert capsys.readouterr() == plain
    assert "results" not in workspace.store.kept  # (handed out: the child's to change)
    workspace.close()


def test_the_objects_a_child_read_are_held_for_the_next(tmp_path, monkeypatch):
    """What a child read of the snapshots' objects from git, the answering process holds
    in its workspace's memo once the child is done: the next child asks git only for new
    ones."""
    from vaultkit.cli.commands._check_server import _learn, _learned
    from vaultkit.session.workspace import Workspace

    workspace = Workspace(tmp_path)
    workspace.blobs.remember([("a" * 40, b"old\n")])  # (held before the fork)
    workspace.blobs.start_telling()  # the child
    workspace.blobs.remember([("b" * 40, b"read\n")])
    told = _learned(workspace)
    parent = Workspace(tmp_path)  # (the answering process's, as it was at the fork)
    _learn(told, parent)
    assert parent.blobs.held == {"b" * 40: b"read\n"}  # (what the child read, not all it held)
    assert parent.blobs.told is None  # (it tells nobody: it forks the children)


@pytest.fixture
def watching_only(tmp_path):
    """:func:`watching` with `--no-restore`: a watcher that writes nothing back, so what
    the work tree lacks stays lacking."""
    root = make(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "watch", "--poll", "0.5",
                             "--no-restore"], cwd=root, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (root / resident.SOCKET).exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the watcher never listened"
        time.sleep(0.05)
    yield root
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def test_under_pre_commit_the_unstaged_lines_it_took_are_found_by_the_watcher_too(
        watching_only, tmp_path):
    """pre-commit checks the staged version out while its hooks run and keeps the unstaged
    lines in `patch<time>-<its pid>` in its home; the hook reads them there, through the
    pid of the process that started it, which a check answered by the watcher is told."""
    from vaultkit.vault.gitstate import CALLER_PARENT

    assert resident.CALLER_PARENT == CALLER_PARENT
    root = watching_only
    journal = root / JOURNAL
    staged = journal.read_text(encoding="utf-8")
    entry = "\n### 12:00 — Review\n- Reviewed the payment change\n- Two comments\n- Merged\n"
    journal.write_text(staged + entry, encoding="utf-8")
    ref = "refs/vaultkit/snapshots"
    deadline = time.monotonic() + 30
    while "Merged" not in subprocess.run(["git", "show", f"{ref}:{JOURNAL}"], cwd=root,
                                         capture_output=True, text=True, env=_env()).stdout:
        assert time.monotonic() < deadline, "the watcher never snapshotted the entry"
        time.sleep(0.1)
    # what pre-commit leaves for its hooks: the staged version in the work tree, the rest
    # in its patch (this test process stands for pre-commit: the hook's parent)
    first = "\n### 11:00 — Triage\n- Triaged the alerts\n- Paged nobody\n- Next: review\n"
    journal.write_text(staged + first, encoding="utf-8")
    git(root, "add", JOURNAL)  # an older version staged (`git add -p` takes the first)
    journal.write_text(staged + first + entry, encoding="utf-8")
    home = tmp_path / "pre-commit-home"
    home.mkdir()
    diff = git(root, "diff", "--", JOURNAL)  # the unstaged entry, as pre-commit saves it
    patch = home / f"patch{int(time.time())}-{os.getpid()}"
    patch.write_text(diff, encoding="utf-8")
    git(root, "checkout", "--", JOURNAL)  # and the staged version checked out
    env = _env(PRE_COMMIT="1", PRE_COMMIT_HOME=str(home))
    args = ["check", "--hook", JOURNAL, "--select", "journal-append-only"]
    answered = vaultkit(root, *args, env=env, script=ONLY_ANSWERED)
    assert answered.returncode == 0 and "VK601" not in answered.stdout, \
        answered.stdout + answered.stderr
    here = vaultkit(root, *args, env=_env(PRE_COMMIT="1", PRE_COMMIT_HOME=str(home),
                                          VAULTKIT_RESIDENT="0"))
    assert (here.returncode, here.stdout) == (answered.returncode, answered.stdout)
    # without pre-commit's patch the lines are nowhere but in the snapshot: refused
    patch.unlink()
    refused = vaultkit(root, *args, env=env, script=ONLY_ANSWERED)
    assert refused.returncode == 1 and "are only in that snapshot" in refused.stdout


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc/*/stat's parent ids)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rfind(b")") + 2:].split()[1])
    found, todo = [], [pid]
    while todo:
        one = todo.pop()
        found.append(one)
        todo += [p for p, parent in parents.items() if parent == one]
    return found


def test_a_stopped_watcher_leaves_the_check_to_run_here(watching):
    """A watcher stopped with Ctrl-Z (SIGSTOP to its process group) still has its socket,
    which still accepts: the check gives up waiting after a short limit and runs here,
    with the output and exit code of a run here, nothing added."""
    import struct

    root = watching
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        resident.at_socket(probe.connect, str(root / resident.SOCKET))
        cred = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        watcher = struct.unpack("3i", cred)[0]  # (the process that listened)
    here = vaultkit(root, "check", "--hook", JOURNAL, env=_env(VAULTKIT_RESIDENT="0"))
    stopped = _descendants(watcher)
    assert len(stopped) >= 2  # the watcher and its answering process
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        asked = subprocess.run([sys.executable, "-m", "vaultkit", "check", "--hook", JOURNAL],
                               cwd=root, capture_output=True, text=True, env=_env(),
                               timeout=60)
        took = time.monotonic() - started
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    assert (asked.returncode, asked.stdout, asked.stderr) == \
        (here.returncode, here.stdout, here.stderr)
    assert took < resident.FIRST_REPLY_S + 30  # (not for ever: the limit, then a run here)


def test_a_stopped_process_is_told_from_a_running_one():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not resident._stopped(proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while not resident._stopped(proc.pid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGCONT)
    finally:
        proc.kill()
        proc.wait()
    assert not resident._stopped(proc.pid)  # (gone)


def test_a_write_that_raises_no_event_in_the_vault_is_seen(watching, tmp_path):
    """A note written through a hard link made outside the vault raises no file event in
    the vault's folders (nor does a write from the other side of a network or VM share):
    the answering process stats what it listed, as a plain run does, and sees it."""
    root = watching
    note = root / "memory" / "people" / "ana.md"
    outside = tmp_path / "ana-elsewhere.md"
    os.link(note, outside)
    first = vaultkit(root, "check", "--format", "json", script=ONLY_ANSWERED)
    assert "secret-in-memory" not in first.stdout and "ran here" not in first.stderr
    with open(outside, "a", encoding="utf-8") as fh:  # (in place: the same inode)
        fh.write("- token: ghp_R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2\n")
    git(root, "add", "memory/people/ana.md")
    for args in (["check", "--format", "json"], ["check", "--hook", "memory/people/ana.md"]):
        here = vaultkit(root, *args, env=_env(VAULTKIT_RESIDENT="0"))
        assert here.returncode == 1 and "secret-in-memory" in here.stdout
        answered = vaultkit(root, *args, script=ONLY_ANSWERED)
        assert "ran here" not in answered.stderr
        assert (answered.returncode, answered.stdout, answered.stderr) == \
            (here.returncode, here.stdout, here.stderr)
