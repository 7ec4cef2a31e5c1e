#!/usr/bin/env python3
"""vaultkit's benchmark: whole-process timings on synthetic vaults, beside the peers.

    python bench/run.py                       # 1,000 and 10,000 notes, 5 runs each
    python bench/run.py --sizes 1000,10000 --with-100k --runs 5 --json bench/out/results.json

For every size it builds (once, then reuses) a deterministic synthetic vault under
``bench/out/`` (see ``bench/synth.py``), makes it a git repository with everything
committed, and times these as separate processes, ``--runs`` times each:

- ``vaultkit --version``, and ``git status`` in the vault: the floor a commit hook is held to
- ``vaultkit snapshot`` with nothing changed since the last snapshot (target: at most 2x
  ``git status``, in the same run); its snapshots are removed afterwards
- ``vaultkit check`` cold (``.vaultkit/`` deleted before every run) and warm (cache filled),
  warm again with the fixable rules left out (no ``[*] N fixable`` line), and the size of
  the cache ``.vaultkit/`` beside the Markdown's
- the pre-commit hook with one changed file: today's journal gets one appended entry and is
  staged, then ``vaultkit check --hook memory/<today>.md`` runs from the vault root as
  pre-commit would (parse cache warm); every run stages the same entry, so all but the
  first reuse what the first computed. Then the same with a line linking a decision the
  journal did not link yet, another each run: a new link moves the in-degrees INDEX.md is
  ranked by, so each run renders the index again (what an agent's entry linking a note costs)
- ``vaultkit index`` (``--check`` when the command has it), ``vaultkit graph`` (statistics)
- ``vaultkit search QUERY``: first query with ``.vaultkit/`` deleted, then warm queries

Commands the installed vaultkit does not have are reported as "n/a (command missing)".
A run that exits 2 (vaultkit's usage/internal-error code) is reported as an error with
its message, not as a time.

Timing: wall-clock from just before ``fork/exec`` to the child's exit (``time.perf_counter``),
with output going to a temporary file. Each run is started by a small wrapper process (see
``WRAPPER``), which does the fork, exec and wait4 and reports the figures. The operating system's file cache is warm (the
vault was just written or read); "cold" means no vaultkit cache.

CPU: user + system time of the child and its reaped descendants (from the same
``os.wait4``), printed beside the wall time; when other work shares the machine, wall time
rises and CPU time mostly does not, so a gap between the two flags a noisy run.

Peak memory: the child is reaped with ``os.wait4``, whose resource usage covers the child
and every descendant it waited for (the parse worker processes too); ``ru_maxrss`` is the
largest resident set any single one of those processes reached (the kernel's high-water
mark, not a sample). It is exact per process and per run, but it is not the sum over
processes running at the same time. It is read in a ~5 MB wrapper process, not in this
script, because Linux carries the forking parent's peak into the child's ru_maxrss; figures
below ~5 MB would be the wrapper's floor (no Python command gets that low).

Peers, where installed, on the same vault in the same run: rumdl (a Markdown linter in
Rust, per-file rules only; ``bench/.peers/bin/rumdl`` or on PATH: ``python -m venv bench/.peers
&& bench/.peers/bin/pip install rumdl``) as ``rumdl check --no-cache .``, at every size,
its runs alternating with ``vaultkit check --no-cache .``'s (issue 42's cold pair);
markdownlint-cli2 (on PATH or in
``bench/node_modules/.bin``; ``npm install --prefix bench markdownlint-cli2``) linting every
``.md`` file with its default configuration (every rule on), and obsidiantools
(``pip install obsidiantools``, in this interpreter or the one ``--peer-python`` names, or
``bench/.peers/``) building its graph with ``Vault(path).connect()`` in a fresh process.
With the MCP SDK installed (``vaultkit-lint[mcp]``), warm ``memory_search`` calls to ``vaultkit mcp``
are timed as round trips through the SDK's stdio client (see ``bench/mcp_search.py``).

Standard library only: this script must run on a fresh machine with only vaultkit installed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import synth  # noqa: E402

MISSING = "n/a (command missing)"
NOT_INSTALLED = "n/a (not installed)"
QUERIES = ("kafka retry", "postgres migration", "rollback deploy", "oauth token rotation",
           "backup commit", "embedding chunk")
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": "2025-12-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-12-01T00:00:00Z"}
RACY_S = 2.1  # vaultkit.vault.store.RACY_NS, and a little
# after the watcher snapshotted a change: the wait before the hook, time for the answering
# process to read the new snapshot (it does when no check waits, within half a second)
SNAPSHOT_SETTLE_S = 2.0
HOOK_ENTRY = ("\n### 23:59 — Benchmark hook entry\n- Appended by the benchmark to time the hook.\n"
              "- One changed file, staged, as pre-commit passes it.\n- See [[INDEX]].\n")

# (key, label) in the order they run and print.
STEPS = (
    ("version", "vaultkit --version"),
    ("git_status", "git status (the floor)"),
    ("snapshot_unchanged", "snapshot, nothing changed"),
    ("check_cold", "check, cold (no cache)"),
    ("check_warm", "check, warm"),
    ("check_warm_nofix", "check, warm, no fixable shown"),
    ("check_changed", "check, after one note changed"),
    ("hook", "hook, one changed file"),
    ("hook_missing", "hook, one changed file, a new link to no note"),
    ("hook_link", "hook, one changed file, a new link"),
    ("hook_watch", "hook, answered by watch"),
    ("hook_watch_snapped", "hook, answered by watch, after its snapshot"),
    ("check_warm_watch", "check, warm, answered by watch"),
    ("index", "index"),
    ("graph", "graph"),
    ("search_first", "search, first query (cold)"),
    ("search_warm", "search, warm query"),
    ("mcp_search", "MCP memory_search, warm"),
    ("check_nocache", "check --no-cache (rounds alternating with rumdl)"),
    ("rumdl", "peer: rumdl check (no cache)"),
    ("markdownlint", "peer: markdownlint-cli2"),
    ("obsidiantools", "peer: obsidiantools connect()"),
)
LABELS = dict(STEPS)


# ---- running one process ----------------------------------------------------------------

# The process that starts the measured command must be small: Linux carries the parent's
# resident-set high-water mark over fork and exec into the child's ru_maxrss (exec records the
# old address space's peak), so a command started straight from this script would report at
# least this script's own size. This wrapper (a bare `python -I -S`, about 5 MB) forks and
# execs the command, reaps it with wait4 and writes (wall, cpu, maxrss, exit code) to a file.
WRAPPER = r"""
import os, signal, sys, time
result, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    except BaseException as exc:
        os.write(2, ("bench: cannot run %s: %s\n" % (argv[0], exc)).encode())
    os._exit(127)
if timeout > 0:
    signal.signal(signal.SIGALRM, lambda *a: os.kill(pid, signal.SIGKILL))
    signal.setitimer(signal.ITIMER_REAL, timeout)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(result, "w") as fh:
    fh.write(repr((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status))))
"""


def measure(argv, cwd, timeout=None):
    """Run ``argv`` once in ``cwd``; return ``{wall, cpu, maxrss_mb, rc, stdout, stderr}``.

    PYTHONDONTWRITEBYTECODE is not passed on: an installed vaultkit has its bytecode (pip
    compiles it), and without it every measured run would compile ~90 modules from source
    (about a third of a hook's CPU), never what a user's run pays."""
    import ast

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result")
        subprocess.run([sys.executable, "-I", "-S", "-c", WRAPPER, result, str(timeout or 0),
                        *map(str, argv)], cwd=cwd, stdout=out, stderr=err,
                       stdin=subprocess.DEVNULL, check=False, env=env)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        try:
            with open(result) as fh:
                wall, cpu, maxrss, rc = ast.literal_eval(fh.read())
        except (OSError, ValueError, SyntaxError):
            raise SystemExit(f"bench: the measuring wrapper failed: {last_line(stderr)}")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return {"wall": wall, "cpu": cpu, "maxrss_mb": maxrss * scale / 1e6, "rc": rc,
            "stdout": stdout, "stderr": stderr}


def summarise(runs):
    walls = [r["wall"] for r in runs]
    rss = [r["maxrss_mb"] for r in runs]
    return {"median": statistics.median(walls), "min": min(walls), "max": max(walls),
            "stdev": statistics.stdev(walls) if len(walls) > 1 else 0.0,
            "runs": len(walls), "walls": [round(w, 4) for w in walls],
            "cpu_median": statistics.median(r["cpu"] for r in runs),
            "peak_rss_mb": max(rss), "median_rss_mb": statistics.median(rss),
            "exit_codes": sorted({r["rc"] for r in runs})}


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


# ---- the vault ----------------------------------------------------------------------------

def git(vault, *args, check=True):
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(vault), "-c", "commit.gpgsign=false",
                           "-c", "core.hooksPath=/dev/null", *args],
                          capture_output=True, text=True, env=env, check=check)


def snapshot_head(vault):
    """The newest commit of the watcher's snapshot chain ("" when there is none)."""
    return git(vault, "rev-parse", "-q", "--verify", "refs/vaultkit/snapshots",
               check=False).stdout.strip()


def prepare_vault(out_dir, size, seed, rebuild=False, log=print):
    """Build (or reuse) the vault for ``size``; return ``(path, info)`` with a clean git tree."""
    vault = out_dir / f"vault-{size}-s{seed}"
    stamp = out_dir / f"vault-{size}-s{seed}.json"
    info = None
    if vault.is_dir() and stamp.is_file() and not rebuild:
        try:
            info = json.loads(stamp.read_text())
        except ValueError:
            info = None
        if not info or info.get("generator") != synth.GENERATOR_VERSION or \
                not (vault / ".git").is_dir():
            info = None
    if info is None:
        if vault.exists():
            shutil.rmtree(vault)
        stamp.unlink(missing_ok=True)
        t0 = time.perf_counter()
        log(f"building {size:,}-note vault in {vault} ...")
        info = synth.build(vault, size, seed)
        git(vault, "init", "-q", "-b", "main")
        git(vault, "add", "-A")
        git(vault, "commit", "-q", "-m", f"synthetic vault: {size} notes, seed {seed}")
        info["build_seconds"] = round(time.perf_counter() - t0, 1)
        stamp.write_text(json.dumps(info, indent=1))
    restore_vault(vault)
    return vault, info


def restore_vault(vault):
    """Back to the committed state, mtimes included, without vaultkit's cache."""
    top = git(vault, "rev-parse", "--show-toplevel").stdout.strip()
    if Path(top).resolve() != vault.resolve():  # never touch a repository that is not ours
        raise SystemExit(f"bench: {vault} is not its own git repository; remove it")
    changed = git(vault, "status", "--porcelain", "-uall").stdout.splitlines()
    if changed:
        git(vault, "reset", "-q", "--hard")
        git(vault, "clean", "-q", "-fd")
        for line in changed:
            rel = line[3:].strip().strip('"')
            p = vault / rel
            if p.is_file():
                os.utime(p, (synth.MTIME, synth.MTIME))
    shutil.rmtree(vault / ".vaultkit", ignore_errors=True)


def _peak_mb(pid: int) -> float | None:
    """The peak resident set (Linux), in MB, of a running process and of its children
    (the watcher's answering process), summed: what they hold together at most."""
    total, found = 0.0, False
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            children = [int(c) for c in fh.read().split()]
    except (OSError, ValueError):
        children = []
    for one in [pid, *children]:
        try:
            with open(f"/proc/{one}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1]) * 1024 / 1e6
                        found = True
        except (OSError, ValueError):
            continue
    return total if found else None


def new_link_targets(vault: Path, journal: bytes, count: int) -> list[str]:
    """``count`` decision notes (by name) that ``journal`` does not link yet."""
    text = journal.decode("utf-8", "replace")
    names = sorted(p.stem for p in (vault / "memory" / "decisions").glob("*.md"))
    out = [n for n in names if f"[[{n}" not in text][:count]
    if len(out) < count:
        raise SystemExit(f"bench: {vault} has fewer than {count} decisions to link")
    return out


def clear_cache(vault):
    shutil.rmtree(vault / ".vaultkit", ignore_errors=True)


# ---- the commands -------------------------------------------------------------------------

def find_vaultkit(spec):
    if spec:
        return shlex.split(spec)
    beside = Path(sys.executable).parent / "vaultkit"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("vaultkit")
    if found:
        return [found]
    return [sys.executable, "-m", "vaultkit"]


def interpreter_of(vk):
    if len(vk) >= 3 and vk[1] == "-m":
        return vk[0]
    try:
        first = Path(vk[0]).read_bytes()[:300].split(b"\n", 1)[0].decode()
        if first.startswith("#!"):
            return shlex.split(first[2:])[0]
    except (OSError, UnicodeDecodeError, IndexError):
        pass
    return sys.executable


def subcommands(vk):
    """The subcommands ``vaultkit --help`` lists, and the options of each (from its --help)."""
    res = subprocess.run([*vk, "--help"], capture_output=True, text=True)
    names = re.findall(r"^    ([a-z][\w-]*)(?:\s|$)", res.stdout, re.M)
    return set(names)


def options_of(vk, name):
    res = subprocess.run([*vk, name, "--help"], capture_output=True, text=True)
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", res.stdout))


def find_markdownlint(spec):
    for cand in (spec, shutil.which("markdownlint-cli2"),
                 str(HERE / "node_modules" / ".bin" / "markdownlint-cli2")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def find_rumdl(spec):
    for cand in (spec, str(HERE / ".peers" / "bin" / "rumdl"), shutil.which("rumdl")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def fixable_rules(vk):
    """The codes of the rules ``--fix`` can fix (from ``vaultkit rules --format json``)."""
    res = subprocess.run([*vk, "rules", "--format", "json"], capture_output=True, text=True)
    try:
        return [r["code"] for r in json.loads(res.stdout) if r.get("fixable")]
    except (ValueError, TypeError, KeyError):
        return []


def tree_bytes(folder):
    total = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def find_obsidiantools(spec):
    cands = [spec] if spec else [sys.executable, str(HERE / ".peers" / "bin" / "python")]
    for py in cands:
        if not py or not Path(py).exists():
            continue
        res = subprocess.run([py, "-c", "import importlib.metadata as m; "
                              "import obsidiantools.api; print(m.version('obsidiantools'))"],
                             capture_output=True, text=True)
        if res.returncode == 0:
            return py, res.stdout.strip()
    return None, None


OBSIDIANTOOLS_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from obsidiantools.api import Vault
t1 = time.perf_counter()
v = Vault(Path(sys.argv[1])).connect()
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "connect": t2 - t1, "notes": len(v.md_file_index),
                  "edges": v.graph.number_of_edges()}))
"""


class Bench:
    def __init__(self, args, log=print):
        self.args = args
        self.log = log
        self.vk = find_vaultkit(args.vaultkit)
        self.commands = subcommands(self.vk)
        self.mdl = None if args.no_peers else find_markdownlint(args.markdownlint)
        self.rumdl = None if args.no_peers else find_rumdl(args.rumdl)
        self.ot_python, self.ot_version = (None, None) if args.no_peers else \
            find_obsidiantools(args.peer_python)
        self.max_load = 0.0

    # one step, N runs ----------------------------------------------------------------------
    def repeat(self, argv, cwd, runs, before=None, ok=(0, 1), timeout=None, warmup=0):
        for _ in range(warmup):
            if before:
                before()
            measure(argv, cwd, timeout=timeout)
        results = []
        for _ in range(runs):
            if before:
                before()
            r = measure(argv, cwd, timeout=timeout)
            if r["rc"] not in ok:
                if r["rc"] == 2 and "invalid choice" in r["stderr"]:
                    return {"status": MISSING, "argv": argv}
                return {"status": f"error (exit {r['rc']}): {last_line(r['stderr'])}",
                        "argv": argv}
            results.append(r)
        out = {"status": "ok", "argv": argv, **summarise(results)}
        out["_runs"] = results
        return out

    def vk_step(self, name, sub, vault, before=None, warmup=0, runs=None):
        if sub[0] not in self.commands:
            return {"status": MISSING, "argv": [*self.vk, *sub]}
        return self.repeat([*self.vk, *sub], vault, runs or self.args.runs, before=before,
                           warmup=warmup, timeout=self.args.timeout)

    def run_size(self, size):
        args = self.args
        vault, info = prepare_vault(args.out, size, args.seed, args.rebuild, self.log)
        self.log(f"measuring {size:,} notes ({info['markdown_bytes'] / 1e6:.1f} MB of Markdown, "
                 f"{info['attachments']} attachments), {args.runs} runs each ...")
        res = {}
        say = self._progress

        res["version"] = self.repeat([*self.vk, "--version"], vault, args.runs, warmup=1)
        say("version", res)
        res["git_status"] = self.repeat(["git", "status"], vault, args.runs, warmup=1)
        say("git_status", res)
        res["snapshot_unchanged"] = self._snapshot_unchanged(vault)
        say("snapshot_unchanged", res)

        res["check_cold"] = self.vk_step("check", ["check", "."], vault,
                                         before=lambda: clear_cache(vault))
        say("check_cold", res)
        res["check_warm"] = self.vk_step("check", ["check", "."], vault, warmup=1)
        if ok(res["check_warm"]):
            res["check_warm"]["cache_bytes"] = tree_bytes(vault / ".vaultkit")
            res["check_warm"]["fixable_line"] = "fixable with" in measure(
                [*self.vk, "check", "."], vault)["stdout"]
        say("check_warm", res)
        fixers = fixable_rules(self.vk) if "check" in self.commands else []
        if fixers:
            res["check_warm_nofix"] = self.vk_step(
                "check", ["check", ".", "--ignore", ",".join(fixers)], vault, warmup=1)
        else:
            res["check_warm_nofix"] = {"status": "n/a (no rule list)"}
        say("check_warm_nofix", res)
        res["check_changed"] = self._after_a_change(vault)
        say("check_changed", res)

        today = f"memory/{synth.END_DATE.isoformat()}.md"
        journal = vault / today
        original = journal.read_bytes() if journal.is_file() else None
        if original is not None and "check" in self.commands:
            def change_one():
                journal.write_bytes(original + HOOK_ENTRY.encode())
                git(vault, "add", "--", today)
            opts = options_of(self.vk, "check")
            hook = ["check", "--hook", today] if "--hook" in opts else ["check", today]
            measure([*self.vk, "check", "."], vault)  # make sure the cache is warm
            res["hook"] = self.vk_step("check", hook, vault, before=change_one)
            # the same entry, linking a note that does not exist, another name each run:
            # broken-link then asks which notes hold the name as an alias (the alias index
            # the store keeps; the runs below write the journal anew, without this line)
            missing = iter(range(10 ** 6))

            def change_missing():
                line = f"- Linked [[No note {next(missing)} here]].\n"
                journal.write_bytes(original + HOOK_ENTRY.encode() + line.encode())
                git(vault, "add", "--", today)
            res["hook_missing"] = self.vk_step("check", hook, vault, before=change_missing)
            # the same entry, linking a note the journal did not link before, another each
            # run: a new link moves in-degrees, which INDEX.md ranks by (the first runs above
            # all stage the same text, so all but the first reuse what the first computed)
            linked = iter(new_link_targets(vault, original, args.runs))

            def change_link():
                line = f"- Linked [[{next(linked)}]].\n"
                journal.write_bytes(original + HOOK_ENTRY.encode() + line.encode())
                git(vault, "add", "--", today)
            res["hook_link"] = self.vk_step("check", hook, vault, before=change_link)
            # with `vaultkit watch` running, the hook is answered by it; each run appends
            # a line of its own to the entry (the journal only grows, as an agent's does),
            # which the watcher snapshots. It grows from what the runs above left: a text
            # without their link lines would be a loss, which the watcher restores by
            # writing the journal again, under the measured runs
            runs = iter(range(10 ** 6))
            grown = [journal.read_bytes()]

            def change_entry():
                grown[0] += f"- Run {next(runs)} of the benchmark.\n".encode()
                journal.write_bytes(grown[0])
                git(vault, "add", "--", today)
            res["hook_watch"], res["hook_watch_snapped"], res["check_warm_watch"] = \
                self._watched(vault, hook, change_entry)
            journal.write_bytes(original)
            os.utime(journal, (synth.MTIME, synth.MTIME))
            git(vault, "add", "--", today)
        else:
            for key in ("hook", "hook_missing", "hook_link", "hook_watch", "hook_watch_snapped",
                        "check_warm_watch"):
                res[key] = {"status": MISSING if "check" not in self.commands else
                            "n/a (vault too small for a journal)"}
        for key in ("hook", "hook_missing", "hook_link", "hook_watch", "hook_watch_snapped",
                    "check_warm_watch"):
            say(key, res)

        res["index"] = self._maybe("index", vault, prefer=("--check",))
        say("index", res)
        res["graph"] = self._maybe("graph", vault, prefer=("--stats",))
        say("graph", res)

        queries = iter(QUERIES * (args.runs * 2 + 2))
        if "search" in self.commands:
            def cold_search():
                clear_cache(vault)
            res["search_first"] = self._search(vault, queries, cold_search)
            say("search_first", res)
            res["search_warm"] = self._search(vault, queries, None, warmup=1)
        else:
            res["search_first"] = {"status": MISSING, "argv": [*self.vk, "search", "QUERY"]}
            res["search_warm"] = dict(res["search_first"])
            say("search_first", res)
        say("search_warm", res)
        res["mcp_search"] = self._mcp(vault)
        say("mcp_search", res)
        restore_vault(vault)
        res["check_nocache"], res["rumdl"] = self._cold_pair(vault)
        say("check_nocache", res)
        say("rumdl", res)
        restore_vault(vault)

        if size > args.peer_max_notes:
            skipped = {"status": f"n/a (skipped above --peer-max-notes {args.peer_max_notes})"}
            res["markdownlint"], res["obsidiantools"] = dict(skipped), dict(skipped)
        else:
            res["markdownlint"] = self._markdownlint(vault)
            say("markdownlint", res)
            res["obsidiantools"] = self._obsidiantools(vault)
        say("obsidiantools", res)
        restore_vault(vault)
        for v in res.values():
            v.pop("_runs", None)
        return {"vault": {"path": str(vault), "notes": info["notes"],
                          "attachments": info["attachments"],
                          "markdown_bytes": info["markdown_bytes"], "seed": args.seed,
                          "generator": info["generator"], "kinds": info["kinds"]},
                "results": res}

    def _snapshot_unchanged(self, vault):
        """``vaultkit snapshot`` with nothing changed since the last one (what the cron line
        or the heartbeat runs most of the time), right after ``git status``: the first
        snapshot records every file, and one more after the racy margin (a file written
        that close to a snapshot is read again by the next) settles it. The snapshots are
        removed afterwards, so no other step pays the snapshot rules."""
        if "snapshot" not in self.commands:
            return {"status": MISSING, "argv": [*self.vk, "snapshot"]}
        argv = [*self.vk, "snapshot", "--quiet", "--no-prune"] \
            if "--no-prune" in options_of(self.vk, "snapshot") else [*self.vk, "snapshot"]
        try:
            first = measure(argv, vault, timeout=self.args.timeout)
            if first["rc"] != 0:
                return {"status": f"error (exit {first['rc']}): {last_line(first['stderr'])}",
                        "argv": argv}
            time.sleep(RACY_S)
            return self.repeat(argv, vault, self.args.runs, ok=(0,), warmup=1,
                               timeout=self.args.timeout)
        finally:
            git(vault, "update-ref", "-d", "refs/vaultkit/snapshots", check=False)
            shutil.rmtree(vault / ".git" / "vaultkit", ignore_errors=True)

    def _after_a_change(self, vault):
        """`check .` right after one note was edited (another line appended to a decision
        each run), as a user runs it after an edit: the rest of the vault as the last
        check saw it. The note is put back afterwards."""
        folder = vault / "memory" / "decisions"
        notes = sorted(folder.glob("*.md")) if folder.is_dir() else []
        if not notes or "check" not in self.commands:
            return {"status": MISSING if "check" not in self.commands else
                    "n/a (no decision note)"}
        note = notes[0]
        original = note.read_bytes()
        runs = iter(range(10 ** 6))
        grown = [original]

        def edit():
            grown[0] += f"\n- Edited in benchmark run {next(runs)}.\n".encode()
            note.write_bytes(grown[0])
        try:
            measure([*self.vk, "check", "."], vault)  # (the last check saw the vault as is)
            return self.vk_step("check", ["check", "."], vault, before=edit)
        finally:
            note.write_bytes(original)
            os.utime(note, (synth.MTIME, synth.MTIME))

    def _watched(self, vault, hook, change):
        """The hook and a warm check with `vaultkit watch` running in the vault (it answers
        them: vaultkit.cli.resident): the hook right after the change, and again once the
        watcher snapshotted it (as a commit a while after the agent wrote comes); its
        snapshots are removed afterwards, so no other step pays the snapshot rules."""
        if "watch" not in self.commands or not sys.platform.startswith("linux"):
            status = {"status": MISSING if "watch" not in self.commands else
                      "n/a (the watcher answers on Linux)"}
            return status, dict(status), dict(status)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        proc = subprocess.Popen([*self.vk, "watch"], cwd=vault, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 600
            while not (vault / ".vaultkit" / "check.sock").exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    status = {"status": "error: the watcher did not start: "
                              + last_line(proc.stderr.read().decode("utf-8", "replace"))}
                    return status, dict(status), dict(status)
                time.sleep(0.05)
            # the watcher listens at once, then records its first snapshot of every file
            # (seconds at 10,000 notes): what is measured is the watcher at work after it
            while git(vault, "rev-parse", "-q", "--verify", "refs/vaultkit/snapshots",
                      check=False).returncode != 0:
                if proc.poll() is not None or time.monotonic() > deadline:
                    status = {"status": "error: the watcher took no snapshot"}
                    return status, dict(status), dict(status)
                time.sleep(0.1)
            hook_res = self.vk_step("check", hook, vault, before=change, warmup=2)

            unsnapped = []

            def change_then_snapshot():
                head = snapshot_head(vault)
                change()
                waited = time.monotonic() + 30
                while snapshot_head(vault) == head:
                    if time.monotonic() > waited:
                        unsnapped.append(head)
                        return
                    time.sleep(0.05)
                # the answering process reads a new snapshot when no check waits (within
                # half a second); a release that does not is measured as it is
                time.sleep(SNAPSHOT_SETTLE_S)
            snapped_res = self.vk_step("check", hook, vault, before=change_then_snapshot,
                                       warmup=1)
            if unsnapped:
                snapped_res = {"status": "error: the watcher took no snapshot of the change"}
            # a note written less than the racy margin ago may change again within its
            # mtime's tick, so nothing derived from it is kept that soon: the warm rows run
            # by themselves start from a settled vault, and so does this one
            time.sleep(RACY_S)
            warm_res = self.vk_step("check", ["check", "."], vault, warmup=1)
            # the measured runs are the asking processes; the watcher holds the vault
            peak = _peak_mb(proc.pid)
            for r in (hook_res, snapped_res, warm_res):
                if ok(r) and peak is not None:
                    r["watcher_peak_rss_mb"] = peak
            return hook_res, snapped_res, warm_res
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            git(vault, "update-ref", "-d", "refs/vaultkit/snapshots", check=False)
            shutil.rmtree(vault / ".git" / "vaultkit", ignore_errors=True)

    def _maybe(self, name, vault, prefer=()):
        if name not in self.commands:
            return {"status": MISSING, "argv": [*self.vk, name]}
        opts = options_of(self.vk, name)
        sub = [name, *[o for o in prefer if o in opts]]
        index_md = vault / "memory" / "INDEX.md"
        saved = index_md.read_bytes() if index_md.is_file() else None
        out = self.vk_step(name, sub, vault, warmup=1)
        if saved is not None and index_md.read_bytes() != saved:  # `index` wrote it: put back
            index_md.write_bytes(saved)
            os.utime(index_md, (synth.MTIME, synth.MTIME))
        return out

    def _search(self, vault, queries, before, warmup=0):
        runs = []
        for i in range(warmup + self.args.runs):
            if before:
                before()
            argv = [*self.vk, "search", next(queries)]
            r = measure(argv, vault, timeout=self.args.timeout)
            if r["rc"] not in (0, 1):
                status = MISSING if "invalid choice" in r["stderr"] else \
                    f"error (exit {r['rc']}): {last_line(r['stderr'])}"
                return {"status": status, "argv": argv}
            if i >= warmup:
                runs.append(r)
        return {"status": "ok", "argv": [*self.vk, "search", "QUERY"], **summarise(runs)}

    def _mcp(self, vault):
        if "mcp" not in self.commands:
            return {"status": MISSING, "argv": [*self.vk, "mcp"]}
        try:
            import mcp  # noqa: F401
            import mcp_search
        except ImportError:
            return {"status": "n/a (the MCP SDK is not installed: pip install 'vaultkit-lint[mcp]')"}
        try:
            out = mcp_search.mcp_search(self.vk, vault, self.args.runs)
        except (Exception, SystemExit) as exc:  # the SDK's own errors: reported, not fatal
            return {"status": f"error: {str(exc)[:200]}"}
        walls = out["walls"]
        return {"status": "ok", "argv": [*self.vk, "mcp", str(vault)],
                "median": statistics.median(walls), "min": min(walls), "max": max(walls),
                "stdev": statistics.stdev(walls) if len(walls) > 1 else 0.0,
                "runs": len(walls), "walls": [round(w, 4) for w in walls],
                "cpu_median": 0.0, "peak_rss_mb": 0.0, "median_rss_mb": 0.0,
                "round_trip": True, "first_from_start": out["first_from_start"],
                "after_change": out["after_change"]}

    def _cold_pair(self, vault):
        """``vaultkit check --no-cache .`` and ``rumdl check --no-cache .``, their runs
        alternating (one warm-up each), so both meet the same load: issue 42's cold target
        is the CPU of the one against the other's."""
        nocache = [*self.vk, "check", "--no-cache", "."]
        if "check" not in self.commands or "--no-cache" not in options_of(self.vk, "check"):
            vk = {"status": MISSING, "argv": nocache}
        else:
            vk = None
        if not self.rumdl:
            rd = {"status": NOT_INSTALLED,
                  "hint": "python -m venv bench/.peers && bench/.peers/bin/pip install rumdl"}
            return (vk or self.repeat(nocache, vault, self.args.runs,
                                      timeout=self.args.timeout, warmup=1)), rd
        rdargv = [self.rumdl, "check", "--no-cache", "."]
        runs = {"vk": [], "rd": []}
        failed = {}
        for i in range(self.args.runs + 1):  # the first round warms both up
            for key, argv, limit in (("vk", nocache, self.args.timeout),
                                     ("rd", rdargv, self.args.peer_timeout)):
                if (key == "vk" and vk is not None) or key in failed:
                    continue
                r = measure(argv, vault, timeout=limit)
                if r["rc"] not in (0, 1):
                    failed[key] = {"status": f"error (exit {r['rc']}): {last_line(r['stderr'])}",
                                   "argv": argv}
                elif i:
                    runs[key].append(r)

        def result(key, argv):
            if key in failed:
                return failed[key]
            return {"status": "ok", "argv": argv, **summarise(runs[key]), "_runs": runs[key]}
        rd = result("rd", rdargv)
        if rd["status"] == "ok":
            ver = subprocess.run([self.rumdl, "--version"], capture_output=True, text=True)
            rd["version"] = ver.stdout.strip().replace("rumdl ", "") or "?"
        return (vk or result("vk", nocache)), rd

    def _markdownlint(self, vault):
        if not self.mdl:
            return {"status": NOT_INSTALLED, "hint": "npm install --prefix bench markdownlint-cli2"}
        argv = [self.mdl, "**/*.md", "#node_modules", "#.vaultkit"]
        out = self.repeat(argv, vault, self.args.peer_runs, timeout=self.args.peer_timeout)
        if out["status"] == "ok":
            ver = subprocess.run([self.mdl, "--help"], capture_output=True, text=True).stdout
            m = re.search(r"markdownlint-cli2 v(\S+)", ver)
            out["version"] = m.group(1) if m else "?"
            found = re.search(r"Summary: (\d+) error", out["_runs"][-1]["stderr"] +
                              out["_runs"][-1]["stdout"])
            out["findings"] = int(found.group(1)) if found else None
            linted = re.search(r"Linting: (\d+) file", out["_runs"][-1]["stdout"] +
                               out["_runs"][-1]["stderr"])
            out["files_linted"] = int(linted.group(1)) if linted else None
        return out

    def _obsidiantools(self, vault):
        if not self.ot_python:
            return {"status": NOT_INSTALLED, "hint": "pip install obsidiantools"}
        argv = [self.ot_python, "-c", OBSIDIANTOOLS_SCRIPT, str(vault)]
        out = self.repeat(argv, vault, self.args.peer_runs, ok=(0,),
                          timeout=self.args.peer_timeout)
        if out["status"] == "ok":
            inner = [json.loads(r["stdout"].strip().splitlines()[-1]) for r in out["_runs"]]
            out["connect_median"] = statistics.median(x["connect"] for x in inner)
            out["import_median"] = statistics.median(x["import"] for x in inner)
            out["notes_seen"] = inner[-1]["notes"]
            out["edges"] = inner[-1]["edges"]
            out["version"] = self.ot_version
        return out

    def _progress(self, key, res):
        r = res[key]
        load = _loadavg()
        if load:
            r["load_after"] = load[0]  # other work on the machine inflates wall times
            self.max_load = max(self.max_load, load[0])
        self.log(f"  {LABELS[key]:<32} {fmt_cell(r)}  (load {load[0] if load else '?'})")


# ---- reporting ----------------------------------------------------------------------------

def fmt_s(x):
    return f"{x:.3f} s" if x < 10 else f"{x:.1f} s"


def fmt_cell(r):
    if r.get("status") != "ok":
        return r.get("status", "?")
    return (f"{fmt_s(r['median'])}  ({r['min']:.3f}–{r['max']:.3f}, sd {r['stdev']:.3f}, "
            f"n={r['runs']})  cpu {r['cpu_median']:.2f} s  peak {r['peak_rss_mb']:.0f} MB")


def ok(r):
    return r is not None and r.get("status") == "ok"


def evaluate_targets(sizes):
    """The issue's targets at 10,000 notes (and 100,000 for growth), each pass/fail/n/a."""
    t = []
    r10 = sizes.get(10000, {}).get("results")
    r100 = sizes.get(100000, {}).get("results")

    def row(what, target, measured, passed):
        t.append({"what": what, "target": target, "measured": measured,
                  "result": "n/a" if passed is None else ("pass" if passed else "FAIL")})

    if r10 is None:
        row("all targets", "measured at 10,000 notes", "10,000 not in --sizes", None)
        return t
    cc, mdl = r10["check_cold"], r10["markdownlint"]
    if ok(cc):
        row("check cold", "≤ 2.0 s", fmt_s(cc["median"]), cc["median"] <= 2.0)
        if ok(mdl):
            ratio = cc["median"] / mdl["median"]
            row("check cold vs markdownlint-cli2", "≤ 0.25×",
                f"{ratio:.2f}× ({fmt_s(mdl['median'])})", ratio <= 0.25)
        else:
            row("check cold vs markdownlint-cli2", "≤ 0.25×", mdl.get("status"), None)
    else:
        row("check cold", "≤ 2.0 s", cc.get("status"), None)
    for key, what, limit in (("check_warm", "check warm", 0.5), ("hook", "hook, one changed file", 0.6),
                             ("version", "vaultkit --version", 0.15),
                             ("search_warm", "search, warm query", 0.15)):
        r = r10[key]
        row(what, f"≤ {limit} s", fmt_s(r["median"]) if ok(r) else r.get("status"),
            (r["median"] <= limit) if ok(r) else None)
    g, ot = r10["graph"], r10["obsidiantools"]
    if ok(g) and ok(ot):
        ratio = g["median"] / ot["median"]
        row("graph vs obsidiantools connect()", "≤ 0.05×",
            f"{ratio:.3f}× ({fmt_s(g['median'])} vs {fmt_s(ot['median'])} per process; "
            f"connect() alone {fmt_s(ot['connect_median'])})", ratio <= 0.05)
    else:
        row("graph vs obsidiantools connect()", "≤ 0.05×",
            g.get("status") if not ok(g) else ot.get("status"), None)
    vk_keys = ("version", "check_cold", "check_warm", "check_changed", "hook", "hook_missing",
               "hook_link",
               "hook_watch", "hook_watch_snapped", "check_warm_watch", "index", "graph",
               "search_first", "search_warm")
    peaks = {k: max(r10[k]["peak_rss_mb"], r10[k].get("watcher_peak_rss_mb", 0))
             for k in vk_keys if ok(r10.get(k, {}))}
    if peaks:
        worst = max(peaks, key=peaks.get)
        row("peak memory (any vaultkit command)", "≤ 400 MB",
            f"{peaks[worst]:.0f} MB ({LABELS[worst]})", peaks[worst] <= 400)
    if r100 is not None and ok(r100["check_cold"]) and ok(cc):
        t100 = r100["check_cold"]["median"]
        growth = t100 / cc["median"]
        n10, n100 = sizes[10000]["vault"]["notes"], sizes[100000]["vault"]["notes"]
        # linear: per-note cost at 100k no more than 1.25× the per-note cost at 10k (noise margin)
        linear = growth <= 1.25 * n100 / n10
        row("100,000 notes: check cold", "≤ 25 s, no worse than linear",
            f"{fmt_s(t100)} ({growth:.1f}× the 10k time for {n100 / n10:.0f}× the notes)",
            t100 <= 25 and linear)
    else:
        row("100,000 notes: check cold", "≤ 25 s, no worse than linear",
            "not measured (--with-100k)" if r100 is None else r100["check_cold"].get("status"),
            None)
    return t


# Issue 42's targets, at 10,000 notes, each command a plain process: (results key, row,
# at most this many times `git status`); the hook ≤ 2× only when `vaultkit watch` answers it
FLOOR_VS_GIT_STATUS = (
    ("snapshot_unchanged", "snapshot, nothing changed", 2.0),
    ("hook", "hook, one changed note", 4.0),
    ("hook_missing", "hook, a note with a new link to no note", 4.0),
    ("hook_link", "hook, a note with a new link", 4.0),
    ("hook_watch", "hook, answered by `vaultkit watch`", 2.0),
    ("hook_watch_snapped", "the same, after its snapshot", 2.0),
    ("check_warm", "check warm (fixable shown)", 4.0),
    ("check_warm_nofix", "check warm (no fixable)", 4.0),
    ("check_warm_watch", "check warm, answered by watch", 4.0),
)
COLD_CPU_VS_RUMDL = 1.5  # `check --no-cache`'s CPU against `rumdl check --no-cache`'s
STORE_VS_MARKDOWN = 0.5  # .vaultkit/ against the Markdown it holds


def evaluate_floor_targets(sizes):
    """Issue 42's targets: vaultkit against `git status` and rumdl, measured in the same run.
    The ratios to `git status` are of wall time (a plain process, as a commit waits for it),
    their CPU ratio shown beside; the cold check's is of CPU seconds (rumdl loads cores
    alike), the target being stated in CPU."""
    t = []

    def row(what, target, measured, passed):
        t.append({"what": what, "target": target, "measured": measured,
                  "result": "n/a" if passed is None else ("pass" if passed else "FAIL")})

    for size, block in sizes.items():
        res = block.get("results", {})
        n = f"{block['vault']['notes']:,}" if "vault" in block else str(size)
        gs = res.get("git_status", {})
        for key, what, limit in FLOOR_VS_GIT_STATUS:
            r = res.get(key, {})
            if ok(r) and ok(gs):
                ratio = r["median"] / gs["median"]
                cpu = (f"; CPU {r['cpu_median'] / gs['cpu_median']:.1f}×"
                       if r.get("cpu_median") is not None and gs.get("cpu_median") else "")
                row(f"{n}: {what} / git status", f"≤ {limit:g}×",
                    f"{ratio:.1f}× ({fmt_s(r['median'])} vs {fmt_s(gs['median'])}){cpu}",
                    ratio <= limit)
            else:
                row(f"{n}: {what} / git status", f"≤ {limit:g}×",
                    r.get("status") if not ok(r) else gs.get("status"), None)
        cc, rd = res.get("check_nocache", {}), res.get("rumdl", {})
        which = "check --no-cache"
        if not ok(cc):  # (a tree without --no-cache: its cold run, which writes the cache)
            cc, which = res.get("check_cold", {}), "check cold"
        if ok(cc) and ok(rd) and rd["cpu_median"] > 0:
            ratio = cc["cpu_median"] / rd["cpu_median"]
            row(f"{n}: {which} CPU / rumdl CPU", f"≤ {COLD_CPU_VS_RUMDL:g}×",
                f"{ratio:.2f}× ({fmt_s(cc['cpu_median'])} vs {fmt_s(rd['cpu_median'])})",
                ratio <= COLD_CPU_VS_RUMDL)
        else:
            row(f"{n}: {which} CPU / rumdl CPU", f"≤ {COLD_CPU_VS_RUMDL:g}×",
                cc.get("status") if not ok(cc) else rd.get("status"), None)
        cw = res.get("check_warm", {})
        md = block.get("vault", {}).get("markdown_bytes")
        if ok(cw) and cw.get("cache_bytes") is not None and md:
            ratio = cw["cache_bytes"] / md
            row(f"{n}: cache / Markdown", f"≤ {STORE_VS_MARKDOWN:g}×",
                f"{ratio:.2f}× ({cw['cache_bytes'] / 1e6:.1f} MB vs {md / 1e6:.1f} MB)",
                ratio <= STORE_VS_MARKDOWN)
        mc = res.get("mcp_search", {})
        if ok(mc):
            row(f"{n}: MCP memory_search warm", "≤ 30 ms", f"{mc['median'] * 1000:.1f} ms",
                mc["median"] <= 0.030)
        if size == 100000 and ok(cc):
            row(f"{n}: check cold peak memory", "≤ 800 MB", f"{cc['peak_rss_mb']:.0f} MB",
                cc["peak_rss_mb"] <= 800)
    return t


def render(report):
    out = []
    m = report["machine"]
    out.append(f"vaultkit {report['vaultkit']['version']} ({report['vaultkit']['commit']}) · "
               f"{m['cpus']} CPUs ({m['cpu_model']}) · Python {m['python']} · {m['platform']} · "
               f"{m['date']} · load {m['loadavg_start'][0] if m['loadavg_start'] else '?'}"
               f"→{m['loadavg_end'][0] if m.get('loadavg_end') else '?'}")
    out.append(f"command: {report['command']}")
    busy = m.get("max_load_seen") or 0
    if busy > 0.75 * (m["cpus"] or 1):
        out.append(f"WARNING: the machine was busy (1-minute load up to {busy:.1f} on {m['cpus']} "
                   "CPUs): wall times are inflated by other work; compare the cpu column and "
                   "the min, and re-run on an idle machine before trusting a pass/fail.")
    for size, block in report["sizes"].items():
        v = block["vault"]
        out.append("")
        out.append(f"{v['notes']:,} notes, {v['markdown_bytes'] / 1e6:.1f} MB of Markdown, "
                   f"{v['attachments']} attachments (seed {v['seed']}, generator "
                   f"{v['generator']})")
        out.append(f"| {'what':<32} | {'median':>9} | {'min–max':>15} | {'stdev':>6} | "
                   f"{'cpu':>7} | {'peak RSS':>8} | runs |")
        out.append(f"|{'-' * 34}|{'-' * 10}:|{'-' * 16}:|{'-' * 7}:|{'-' * 8}:|{'-' * 9}:|"
                   "-----:|")
        res = block["results"]
        for key, label in STEPS:
            r = res.get(key, {})
            if ok(r):
                spread = f"{r['min']:.3f}–{r['max']:.3f}"
                out.append(f"| {label:<32} | {fmt_s(r['median']):>9} | {spread:>15} | "
                           f"{r['stdev']:>6.3f} | {fmt_s(r['cpu_median']):>7} | "
                           f"{r['peak_rss_mb']:>5.0f} MB | {r['runs']:>4} |")
            else:
                out.append(f"| {label:<32} | {r.get('status', '?')} | | | | | |")
        watcher = res.get("hook_watch", {}).get("watcher_peak_rss_mb")
        if watcher is not None:
            out.append(f"(the rows answered by `vaultkit watch` time the asking process; the "
                       f"watcher and its answering process peaked at {watcher:.0f} MB "
                       "together)")
        ratios = []
        cc, mdl, g, ot = (res.get(k, {}) for k in ("check_cold", "markdownlint", "graph",
                                                    "obsidiantools"))
        if ok(cc) and ok(mdl):
            ratios.append(f"check cold / markdownlint-cli2 {mdl['version']} = "
                          f"{cc['median'] / mdl['median']:.2f}×")
        if ok(g) and ok(ot):
            ratios.append(f"graph / obsidiantools {ot['version']} (whole process) = "
                          f"{g['median'] / ot['median']:.3f}× (connect() alone "
                          f"{fmt_s(ot['connect_median'])}, import {fmt_s(ot['import_median'])})")
        if ok(cc) and ok(ot):
            ratios.append(f"check cold / obsidiantools (whole process) = "
                          f"{cc['median'] / ot['median']:.2f}×")
        rd, gs, hk = (res.get(k, {}) for k in ("rumdl", "git_status", "hook"))
        nc = res.get("check_nocache", {})
        if ok(cc) and ok(rd):
            ratios.append(f"check cold CPU / rumdl {rd['version']} CPU = "
                          f"{cc['cpu_median'] / rd['cpu_median']:.2f}×")
        if ok(nc) and ok(rd):
            ratios.append(f"check --no-cache CPU / rumdl CPU = "
                          f"{nc['cpu_median'] / rd['cpu_median']:.2f}× (runs alternating)")
        if ok(hk) and ok(gs):
            ratios.append(f"hook / git status = {hk['median'] / gs['median']:.1f}×")
        cw = res.get("check_warm", {})
        if ok(cw) and cw.get("cache_bytes") is not None:
            ratios.append(f"cache {cw['cache_bytes'] / 1e6:.1f} MB = "
                          f"{cw['cache_bytes'] / v['markdown_bytes']:.2f}× the Markdown")
        if ratios:
            out.append("ratios: " + "; ".join(ratios))
    out.append("")
    out.append("Targets near the floor (issue 42: git status, wall time; rumdl, CPU; same run)")
    out.append(f"| {'what':<56} | {'target':<8} | {'measured':<48} | result |")
    out.append(f"|{'-' * 58}|{'-' * 10}|{'-' * 50}|--------|")
    for t in report.get("floor_targets", []):
        out.append(f"| {t['what']:<56} | {t['target']:<8} | {str(t['measured']):<48} | "
                   f"{t['result']} |")
    out.append("")
    out.append("Targets (issue #8; 10,000 notes, 2 cores)")
    out.append(f"| {'what':<36} | {'target':<29} | {'measured':<40} | result |")
    out.append(f"|{'-' * 38}|{'-' * 31}|{'-' * 42}|--------|")
    for t in report["targets"]:
        out.append(f"| {t['what']:<36} | {t['target']:<29} | {str(t['measured']):<40} | "
                   f"{t['result']} |")
    return "\n".join(out)


def machine_info(vk):
    py = interpreter_of(vk)
    res = subprocess.run([py, "-c", "import platform; print(platform.python_version())"],
                         capture_output=True, text=True)
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor() or "?"
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    return {"cpus": cpus, "cpu_model": model, "loadavg_start": _loadavg(),
            "python": res.stdout.strip() or platform.python_version(),
            "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def vaultkit_info(vk):
    res = subprocess.run([*vk, "--version"], capture_output=True, text=True)
    version = res.stdout.strip().replace("vaultkit ", "") or "?"
    repo = HERE.parent
    commit = "?"
    if (repo / ".git").exists():
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--",
                                "vaultkit", "rules"], capture_output=True, text=True).stdout.strip()
        commit = head + ("+uncommitted" if dirty else "") if head else "?"
    return {"version": version, "commit": commit, "argv": vk}


def main(argv=None):
    p = argparse.ArgumentParser(description="Benchmark vaultkit on synthetic vaults, beside "
                                "markdownlint-cli2 and obsidiantools.")
    p.add_argument("--sizes", default="1000,10000",
                   help="comma-separated vault sizes in notes (default 1000,10000)")
    p.add_argument("--with-100k", action="store_true", help="add the 100,000-note vault (slow)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    p.add_argument("--peer-runs", type=int, default=3, help="timed runs per peer (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=HERE / "out",
                   help="where the vaults are built (default bench/out/)")
    p.add_argument("--rebuild", action="store_true", help="rebuild the vaults even if present")
    p.add_argument("--json", metavar="FILE", type=Path, help="write every figure as JSON")
    p.add_argument("--vaultkit", metavar="CMD",
                   help="command that runs vaultkit (default: the console script beside this "
                        "Python, else on PATH, else 'python -m vaultkit')")
    p.add_argument("--markdownlint", metavar="PATH", help="markdownlint-cli2 executable")
    p.add_argument("--rumdl", metavar="PATH", help="rumdl executable")
    p.add_argument("--peer-python", metavar="PYTHON", help="interpreter with obsidiantools")
    p.add_argument("--no-peers", action="store_true",
                   help="skip rumdl, markdownlint-cli2 and obsidiantools")
    p.add_argument("--peer-max-notes", type=int, default=10000, metavar="N",
                   help="run the peers only on vaults of at most N notes (default 10000: "
                        "obsidiantools needs minutes per run at 10,000 notes)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per vaultkit run")
    p.add_argument("--peer-timeout", type=float, default=1800, help="seconds per peer run")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the final tables")
    args = p.parse_args(argv)
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error("--sizes takes comma-separated integers")
    if args.with_100k and 100000 not in sizes:
        sizes.append(100000)
    if args.runs < 1 or args.peer_runs < 1 or any(s < 1 for s in sizes):
        p.error("--runs, --peer-runs and sizes must be positive")
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    bench = Bench(args, log)
    report = {"command": " ".join(["python bench/run.py", *(argv if argv is not None
                                                             else sys.argv[1:])]),
              "machine": machine_info(bench.vk), "vaultkit": vaultkit_info(bench.vk),
              "peers": {"rumdl": bench.rumdl, "markdownlint-cli2": bench.mdl,
                        "obsidiantools": bench.ot_python},
              "method": {"timing": "wall clock per whole process (perf_counter around "
                                   "fork/exec..wait4), output to a temporary file",
                         "memory": "ru_maxrss from os.wait4 in a ~5 MB fork/exec wrapper: "
                                   "the largest resident set of the child or any "
                                   "descendant it reaped",
                         "cold": "no .vaultkit/ cache; operating-system file cache warm"},
              "sizes": {}}
    log(f"vaultkit: {' '.join(bench.vk)}; commands: {', '.join(sorted(bench.commands))}")
    log(f"peers: markdownlint-cli2 = {bench.mdl or 'not installed'}; obsidiantools = "
        f"{bench.ot_python or 'not installed'}")
    for size in sizes:
        report["sizes"][size] = bench.run_size(size)
    report["machine"]["loadavg_end"] = _loadavg()
    report["machine"]["max_load_seen"] = bench.max_load
    report["targets"] = evaluate_targets(report["sizes"])
    report["floor_targets"] = evaluate_floor_targets(report["sizes"])
    print(render(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
