"""Readers of the files `vaultkit watch --service` writes, each following its format's own
documentation, so a test can say what the service manager will run (and nothing else).

- :func:`systemd_unit`: systemd.syntax(7) (sections, ``Key=value``, comments, a trailing
  backslash joining lines, the quoting and C escapes of "Quoting"), systemd.unit(5)
  (``%`` specifiers) and systemd.service(5) "Command lines" (``$VAR`` and ``$$`` in the
  arguments, not in the program's path).
- :func:`crontab_job`: crontab(5) (five time fields and the command; a ``%`` not escaped
  with a backslash ends the command and the rest is standard input, ``\\%`` is a ``%``),
  then the shell's words by :func:`shlex.split`.

Both raise ``ValueError`` on whatever the real reader would take differently from a plain
value: a specifier or a variable expanded, a quote unbalanced, standard input cut off.
"""

from __future__ import annotations

import re
import shlex

_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
              "\\": "\\", '"': '"', "'": "'", "s": " "}


def systemd_unit(text: str) -> dict[tuple[str, str], list[str]]:
    """``{(section, key): [raw values]}`` of a unit file (specifiers not yet expanded)."""
    out: dict[tuple[str, str], list[str]] = {}
    section = None
    lines = iter(text.split("\n"))
    for line in lines:
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        while line.endswith("\\"):  # joined with the next line that is not a comment
            nxt = next(lines, "").strip()
            while nxt[:1] in ("#", ";"):
                nxt = next(lines, "").strip()
            line = line[:-1] + " " + nxt
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if "=" not in line or section is None:
            raise ValueError(f"not a unit file line: {line!r}")
        key, value = line.split("=", 1)
        out.setdefault((section, key.strip()), []).append(value.strip())
    return out


def specifiers(value: str) -> str:
    """``%%`` read as ``%``; any other specifier would be expanded by systemd: an error."""
    def one(m):
        if m.group(1) != "%":
            raise ValueError(f"specifier %{m.group(1)} would be expanded in {value!r}")
        return "%"
    return re.sub(r"%(.?)", one, value, flags=re.S)


def _unescape(word: str, at: int) -> tuple[str, int]:
    ch = word[at + 1] if at + 1 < len(word) else ""
    if ch in _C_ESCAPES:
        return _C_ESCAPES[ch], at + 2
    for lead, size, base in (("x", 2, 16), ("u", 4, 16), ("U", 8, 16)):
        if ch == lead:
            return chr(int(word[at + 2:at + 2 + size], base)), at + 2 + size
    if ch.isdigit():
        return chr(int(word[at + 1:at + 4], 8)), at + 4
    raise ValueError(f"unknown escape \\{ch} in {word!r}")


def exec_words(value: str) -> list[str]:
    """An ``Exec*=`` value (specifiers expanded) split into words as systemd.syntax(7)
    "Quoting" says: a whole item in double or single quotes, C escapes everywhere."""
    words, i, n = [], 0, len(value)
    while i < n:
        if value[i].isspace():
            i += 1
            continue
        word = []
        quote = value[i] if value[i] in "\"'" else None
        i += 1 if quote else 0
        while i < n:
            ch = value[i]
            if quote and ch == quote:
                i += 1
                if i < n and not value[i].isspace():
                    raise ValueError(f"a closing quote not followed by a space: {value!r}")
                break
            if not quote and ch.isspace():
                break
            if ch == "\\":
                text, i = _unescape(value, i)
                word.append(text)
                continue
            word.append(ch)
            i += 1
        else:
            if quote:
                raise ValueError(f"unbalanced quoting: {value!r}")
        words.append("".join(word))
    return words


def exec_argv(value: str) -> list[str]:
    """What systemd runs for an ``ExecStart=`` value: specifiers, words, then ``$$`` as
    ``$`` in the arguments (a ``$VAR``/``${VAR}`` there would be expanded: an error)."""
    words = exec_words(specifiers(value))

    def dollar(m):
        if m.group(0) != "$$":
            raise ValueError(f"{m.group(0)} would be expanded in {value!r}")
        return "$"
    return words[:1] + [re.sub(r"\$\$|\$\{?\w*", dollar, w) for w in words[1:]]


def crontab_job(text: str) -> tuple[list[str], list[str]]:
    """``(five time fields, the command's words)`` of a crontab holding one job line."""
    if not text.endswith("\n") or text.count("\n") != 1:
        raise ValueError(f"not one crontab line: {text!r}")
    fields = text.rstrip("\n").split(None, 5)
    if len(fields) != 6:
        raise ValueError(f"not five time fields and a command: {text!r}")
    command, escaped = [], False
    for ch in fields[5]:  # crontab(5)'s % rule, as cron applies it
        if escaped:
            escaped = False
            if ch == "%":
                command[-1] = "%"  # (the escaping backslash is taken away)
                continue
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            raise ValueError(f"a % ends the command; the rest would be its input: {text!r}")
        command.append(ch)
    return fields[:5], shlex.split("".join(command), comments=True)
