"""How fast vaultkit refuses hostile input and how long the bounded worst cases take.

Run: ``python bench/limits.py``. Prints one line per case: the input, the time taken and
the outcome. The inputs are those of docs/reliability-limits.md: each used to hang a
command or cost minutes, and each should now take at most a few seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{n}: &{n} [{','.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
)


def timed(label: str, fn) -> None:
    started = time.perf_counter()
    try:
        outcome = fn()
    except Exception as exc:  # a refusal is the expected outcome for most cases
        outcome = f"{type(exc).__name__}: {str(exc)[:90]}"
    print(f"{label:<58} {time.perf_counter() - started:8.3f} s  {outcome}")


def cli(root: Path, *argv: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=root,
                          capture_output=True, timeout=600)
    tail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
    return f"exit {proc.returncode}: {tail[-1][:90] if tail else ''}"


def main() -> None:
    from vaultkit.core.bounded import load_json, load_json5, load_yaml, read_regular, regex_problem

    base = Path(tempfile.mkdtemp(prefix="vaultkit-limits-"))
    print(f"{'case':<58} {'time':>10}  outcome")
    timed(f"YAML alias bomb ({len(ALIAS_BOMB.encode())} bytes)", lambda: load_yaml(ALIAS_BOMB))
    timed("JSON nested 100,000 deep", lambda: load_json("[" * 100_000 + "]" * 100_000))
    timed("JSON 5,000-digit integer", lambda: load_json("[" + "9" * 5_000 + "]"))
    item = '{ id: "agent", workspace: "/home/u/ws", tools: ["a", "b"], },\n'
    json5_64k = "{ agents: { list: [\n" + item * (64 * 1024 // len(item) - 1) + "] } }"
    timed(f"JSON5 at the bound ({len(json5_64k):,} chars)",
          lambda: type(load_json5(json5_64k)).__name__)
    timed("JSON5 of 10 MB", lambda: load_json5(item * (10 * 1024 * 1024 // len(item)),
                                                 max_chars=1 << 30))
    fifo = base / "fifo.md"
    os.mkfifo(fifo)
    timed("read a FIFO named *.md", lambda: read_regular(fifo, 1 << 20))
    if os.path.exists("/dev/zero"):
        timed("read /dev/zero", lambda: read_regular("/dev/zero", 1 << 20))
    timed("config regex (a+)+$ checked", lambda: regex_problem("(a+)+$"))
    from vaultkit.vault.parse import parse_note

    for lines in (1_000, 2_000):  # 1 MB and 4 MB: once 11 s and over a minute (cubic)
        nested = "".join("  " * i + "- x\n" for i in range(lines)).encode()
        timed(f"parse: a list one level deeper per line ({len(nested) / 1e6:.0f} MB)",
              lambda: f"{parse_note('n.md', nested).line_count:,} lines")

    root = base / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "MEMORY.md").write_text("# M\n\nthe limits of memory\n")
    (root / "memory" / "headings.md").write_text(
        "".join(f"## H{i}\n\nsee [[headings#H{i}]]\n\n" for i in range(60_000)))
    timed("check: 60,000 headings, each linked (no cache)",
          lambda: cli(root, "check", "--no-cache", "."))
    words = [f"w{i:05d}x" for i in range(60_000)]
    timed("search: 60,000-word query", lambda: cli(root, "search", "--root", ".", "limits", *words))
    (root / "memory" / "unclosed_work.yaml").write_text(ALIAS_BOMB)
    timed("audit: alias bomb in unclosed_work.yaml", lambda: cli(root, "audit", "."))
    history_rewrite(base, 68)  # before the bound: 561 MB and 6.8 s on the same machine
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def history_rewrite(base: Path, megabytes: int) -> None:
    """``vaultkit history`` on a repository whose journal of ``megabytes`` MB was rewritten
    (its first line removed): time and the peak memory of the vaultkit process. Each side
    of the rewrite is over budgets.max_file_bytes, so neither is loaded (it once took
    801 MB for 68 MB, and a MemoryError for 137 MB)."""
    repo = base / f"history-{megabytes}"
    (repo / ".obsidian").mkdir(parents=True)
    (repo / "memory").mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}

    def git(*argv: str) -> None:
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q")
    # written by a child process: Linux keeps a process's peak memory across exec, so
    # this process must never hold the journal, or every process it starts would seem big
    write = ("import sys; line = '- a journal line of some length, as agents write them\\n'; "
             "n = int(sys.argv[2]) * 1_000_000 // len(line); open(sys.argv[1], 'w').write("
             "'# 2026-01-05\\n\\n## 10:00 ' + sys.argv[3] + '\\n' + line * (n - int("
             "sys.argv[4])))")
    journal = str(repo / "memory" / "2026-01-05.md")
    subprocess.run([sys.executable, "-c", write, journal, str(megabytes), "first", "0"],
                   check=True)
    git("add", "-A")
    git("commit", "-qm", "first")
    subprocess.run([sys.executable, "-c", write, journal, str(megabytes), "rewritten", "1"],
                   check=True)
    git("commit", "-qam", "rewrite")
    probe = ("import resource as r, sys; from vaultkit.cli import main; rc = main(['history', "
             "'.']); print(f'exit {rc}, peak', r.getrusage(r.RUSAGE_SELF).ru_maxrss // 1024, "
             "'MB (git:', r.getrusage(r.RUSAGE_CHILDREN).ru_maxrss // 1024, 'MB)', "
             "file=sys.stderr)")

    def run() -> str:
        proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                              timeout=600, env={**os.environ, "PYTHONPATH": str(
                                  Path(__file__).resolve().parent.parent)})
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return tail[-1] if tail else f"exit {proc.returncode}"

    timed(f"history: a {megabytes} MB journal rewritten (the vaultkit process)", run)

if __name__ == "__main__":
    main()
