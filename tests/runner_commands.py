"""How a GitHub Actions runner reads a line of a job's output: as a workflow command or not.

It follows actions/runner (src/Runner.Common/ActionCommand.cs, TryParseV2 then TryParse, as
ActionCommandManager.TryProcessCommand calls them; read on 2026-12-07): a line that starts
with ``::`` after its leading whitespace, and names a registered command before the next
``::``; else the older form, ``##[`` anywhere in the line followed by a registered command
and ``]``. Properties and data are unescaped as the runner unescapes them.
"""

from __future__ import annotations

import re

# the runner's command extensions, plus stop-commands (and the checkout's internal one)
REGISTERED = {"set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher",
              "remove-matcher", "debug", "warning", "error", "notice", "group", "endgroup",
              "echo", "stop-commands", "internal-set-repo-path"}

_DATA = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))
_LEGACY = (("%3B", ";"), ("%0D", "\r"), ("%0A", "\n"), ("%5D", "]"), ("%25", "%"))


def _unescape(text: str, table) -> str:
    for escaped, char in table:
        text = text.replace(escaped, char)
    return text


def command(line: str) -> tuple[str, dict[str, str], str] | None:
    """``(name, properties, data)`` when the runner would execute ``line``, else None."""
    message = line.lstrip()  # (.NET's TrimStart: leading white space)
    if message.startswith("::"):
        end = message.find("::", 2)
        if end >= 0:
            info = message[2:end]
            name = info.split(" ", 1)[0]
            if name in REGISTERED:
                props = {}
                if " " in info:
                    for pair in info.split(" ", 1)[1].strip().split(","):
                        key, eq, value = pair.partition("=")
                        if key and eq and value:
                            props[key] = _unescape(value, _PROPERTY)
                return name, props, _unescape(message[end + 2:], _DATA)
    at = line.find("##[")
    if at >= 0:
        close = line.find("]", at)
        if close >= 0:
            info = line[at + 3:close]
            name = info.split(" ", 1)[0]
            if name in REGISTERED:
                return name, {}, _unescape(line[close + 1:], _LEGACY)
    return None


def commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    """Every command the runner would execute in ``output`` (lines split as it reads them)."""
    found = []
    for line in re.split(r"\r\n|\r|\n", output):
        cmd = command(line)
        if cmd is not None:
            found.append(cmd)
    return found
