"""Every pattern that runs on note text is linear: pathological bodies parse in well under a
second, and ``check`` and ``log`` finish on them.

Each body once took from 18 s to over a minute (a quadratic regular expression in the
heading, HTML-comment, suppression-comment or Markdown-link pattern). Each runs in its own
process under a timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# name -> Python expression building the body
BODIES = {
    "heading followed by 100 KB of spaces": '"# h" + " " * 100_000 + "x\\n"',
    "'x <!--' 20,000 times": '"x <!--" * 20_000 + "\\n"',
    "an unclosed <!-- block": '"<!--\\n" + "a <!-- b\\n" * 20_000',
    "suppression comment followed by spaces": '"<!-- vaultkit-disable" + " " * 100_000 + "x\\n"',
    "suppression comment with spaces, closed": '"<!-- vaultkit-disable x" + " " * 100_000 + "y -->\\n"',
    "'[a](' then 100 KB of spaces": '"[a](" + " " * 100_000 + "\\n"',
    "'[a](b \"' 20,000 times": '"[a](b \\"" * 20_000 + "\\n"',
    "50,000 '['": '"[" * 50_000 + "\\n"',
    "'![' 20,000 times then links": '"![" * 20_000 + "[a](b)" * 5_000 + "\\n"',
    "code-span runs": '"`a``" * 20_000 + "\\n"',
    "'$1' 50,000 times": '"$1" * 50_000 + "\\n"',
    "'^[' 50,000 times": '"^[" * 50_000 + "\\n"',
    "block id then spaces": '"a ^b" + " " * 100_000 + "x\\n"',
    "'<a' then spaces": '"<a" + " " * 100_000 + "!\\n"',
    "'- - ' 30,000 times": '"- - " * 30_000 + "x\\n"',
    "'[' with 50,000 escapes": '"[" + "\\\\a" * 50_000 + "\\n"',
    "100,000 nested list markers": '"- " * 100_000 + "x\\n"',
    "'%%a' 20,000 times": '"%%a" * 20_000',
    "10,000 unclosed reference labels": '"[a\\n\\n" * 10_000',
    "a reference label over 50,000 lines": '"[" + "a\\n" * 50_000',
    "10,000 unclosed reference titles": '"[a]: b \'\\n\\n" * 10_000',
    # every line continues every open item and opens one more: the container match once
    # measured the indent again for each open container (cubic: 1 MB took 11 s)
    "a list nested one level deeper per line": '"".join("  " * i + "- x\\n" for i in range(700))',
    "the same with tabs": '"".join("\\t" * i + "- x\\n" for i in range(700))',
    "quotes and items nested deeper per line": '"".join("> " * i + "- x\\n" for i in range(700))',
}

PARSE = textwrap.dedent("""
    import sys, time
    from vaultkit.vault.parse import parse_note
    body = {expr}
    start = time.perf_counter()
    parse_note("n.md", body.encode())
    print(time.perf_counter() - start)
""")


def _run(code: str, timeout: float, **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s")


@pytest.mark.parametrize("expr", BODIES.values(), ids=BODIES.keys())
def test_pathological_body_parses_in_well_under_a_second(expr):
    proc = _run(PARSE.format(expr=expr), timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) < 0.5


def test_check_and_log_finish_on_the_pathological_bodies(make_vault, tmp_path):
    build = "\n".join(f"    {i}: {expr}," for i, expr in enumerate(BODIES.values()))
    bodies = _run("import json\nprint(json.dumps({\n" + build + "\n}))", timeout=30)
    texts = json.loads(bodies.stdout)
    files = {f"memory/semantic/n{i}.md": text for i, text in texts.items()}
    files["MEMORY.md"] = texts["1"]  # lesson-in-now and daily-record-in-memory read these
    files["NOW.md"] = texts["1"]
    files["memory/2026-01-05.md"] = "# 2026-01-05\n\n## 10:00 entry\n" + texts["2"]
    root = make_vault(files)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    check = _run("import sys, time; from vaultkit.cli import main; t = time.perf_counter(); "
                 "rc = main(['check', '--select', 'ALL', '--no-cache', '-o', 'out.json', '.']); "
                 "print(time.perf_counter() - t); sys.exit(rc)",
                 timeout=60, cwd=root, env=env)
    assert check.returncode in (0, 1), check.stderr
    assert float(check.stdout) < 10  # about 1 s; a quadratic pattern in a rule takes minutes
    assert "Traceback" not in check.stderr
    for key in ("0", "1", "3", "5"):
        log = _run("from vaultkit.cli import main; import sys; sys.exit(main(["
                   "'log', '--date', '2026-01-06', '--time', '10:00', '-']))",
                   timeout=60, cwd=root, env=env, input="entry title\n" + texts[key])
        assert "Traceback" not in log.stderr
        assert log.returncode in (0, 1, 2), log.stderr
