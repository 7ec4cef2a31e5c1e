"""Patterns a run need not compile: the credential scan's prose hint for a note without
" is " (a commit hook's staged journal), the output boundary's control-character pattern for
output that ``str.isprintable`` passes. What answers instead must never say "nothing there"
where the pattern finds something."""

from __future__ import annotations

import subprocess
import sys

EVERY_CHAR = "".join(map(chr, range(0x110000)))


def fresh(code: str) -> list[str]:
    """What ``code`` prints in a fresh process (no pattern compiled before it), by word."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split()


def test_prose_hint_not_compiled_for_a_note_without_is():
    # a fresh process: scanning a note without " is " leaves the prose pattern uncompiled
    code = ("from vaultkit.vault import secretscan as s\n"
            "t = '## 14:30 Deploy\\n- key: value, token: none\\n- api_key=abc\\n'\n"
            "s.scan_text(t); s.has_candidates(t)\n"
            "print('_compiled' in s._PROSE_HINT.__dict__, s.has_candidates('my password is x'))\n")
    assert fresh(code) == ["False", "True"]


def test_plainly_safe_text_holds_no_control_character():
    # every code point, alone, after text, and beside a newline, tab or CR: whenever the
    # check without the pattern says safe, the pattern finds nothing
    from vaultkit.vault import outbound
    unsafe = outbound._UNSAFE_TEXT
    for ch in EVERY_CHAR:
        for text in (ch, f"ab{ch}\n", f"\t{ch}\r\n", f"{ch}\r"):
            if outbound._plainly_safe(text):
                assert unsafe.search(text) is None, hex(ord(ch))
    assert outbound._plainly_safe("memory/a.md:1:1: VK504 info: 14:30 — 中文\n\tok\n")
    assert not outbound._plainly_safe("a\r\nb") and not outbound._plainly_safe("a\u202eb")


def test_clean_output_leaves_the_control_pattern_uncompiled():
    # a fresh process: a clean output line passes the boundary without compiling the pattern
    code = ("from vaultkit.vault import outbound as o\n"
            "t = 'memory/a.md:1:1: VK504 info: 14:30 — 中文\\n'\n"
            "assert o.terminal(t) == t and o.neutralise(t) == t\n"
            "print('_compiled' in o._UNSAFE_TEXT.__dict__, o.terminal('a\\u202eb\\n'))\n")
    assert fresh(code) == ["False", "a\\u202eb"]
