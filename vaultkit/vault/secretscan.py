"""Find credentials in Markdown text: known token formats and keyword-anchored values.

One detector serves the ``secret-in-memory`` rule, ``vaultkit log`` (and every writer
that takes text from outside), the ``secrets`` check of ``vaultkit audit`` and the
marks ``search`` and ``get`` put on snippets.

Speed decides the design: the commit hook runs on every commit and the cold ``check``
of 10,000 notes has a budget of a few hundred milliseconds for this. A note costs a
few substring searches (``str.find``/``in``, which run in C) unless one of the
literal prefixes of a known format (``sk-``, ``ghp_``, ``:AA``, ``eyJ``, ``-----BEGIN``
…) or a keyword (password, token, 密码, пароль …) appears; only the lines holding one
go through the regular expressions, and only values that match go through the
placeholder and entropy checks.

Values are never returned: a finding carries the kind and a masked form
(``sk-ant-…Q3xz``) that is safe to print.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from vaultkit.core.lazyre import lazy_re
from vaultkit.core.plain import Frozen, Plain
# the detector's version: bump it (in vaultkit/vault/__init__.py) when what is found
# changes; per-note results are cached under it
from vaultkit.vault import DETECTOR_VERSION

# (kind, literal prefixes, regular expression of the value, prefix kept in the mask).
# _FORMAT_HINT below must find every literal prefix (a test holds it to that).
# Order matters where formats overlap: the first that matches at a place wins.
_FORMATS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("Anthropic API key", ("sk-ant-",), r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{32,}",
     "sk-ant-"),
    ("OpenRouter API key", ("sk-or-",), r"sk-or-v\d-[0-9a-f]{48,}", "sk-or-v1-"),
    # sk-None- is the form of OpenAI's older user keys
    ("OpenAI API key", ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-", "T3BlbkFJ"),
     r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{32,}"
     r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
     "sk-"),
    # DashScope, DeepSeek, Moonshot and the other OpenAI-compatible providers; sk-sp- keys
    ("sk- API key", ("sk-sp-",), r"sk-sp-[A-Za-z0-9]{24,}", "sk-sp-"),
    ("sk- API key", ("sk-",), r"sk-[A-Za-z0-9]{32,}", "sk-"),
    # a provider's own sk-<name>- variant (sk-kimi-…, sk-cp-…): random-looking only (_format_finding)
    ("sk- API key", ("sk-",), r"sk-[a-z]{2,12}-[A-Za-z0-9_\-]{32,}", "sk-"),
    ("xAI API key", ("xai-",), r"xai-[A-Za-z0-9_]{40,}", "xai-"),
    ("GitLab token", ("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}", "glpat-"),
    ("npm token", ("npm_",), r"npm_[A-Za-z0-9]{36}", "npm_"),
    ("SendGrid API key", ("SG.",), r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}", "SG."),
    ("Azure storage account key", ("AccountKey=",), r"AccountKey=[A-Za-z0-9+/]{80,100}={0,2}",
     "AccountKey="),
    ("NVIDIA API key", ("nvapi-",), r"nvapi-[A-Za-z0-9_\-]{40,}", "nvapi-"),
    ("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,}", ""),
    ("Google OAuth client secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_\-]{24,}", "GOCSPX-"),
    ("Google API key", ("AIza",), r"AIza[0-9A-Za-z_\-]{35}", "AIza"),
    # also inside a Bot API URL: https://api.telegram.org/bot<token>/sendMessage
    ("Telegram bot token", (":AA",), r"(?:(?<=bot)|(?<![A-Za-z0-9_\-]))\d{8,10}:AA[0-9A-Za-z_\-]{33}",
     ""),
    ("JSON Web Token", (".eyJ",),  # the dot before the payload
     r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}", "eyJ"),
    ("AWS access key", ("AKIA", "ASIA"), r"(?:AKIA|ASIA)[0-9A-Z]{16}", ""),
    ("Slack token", ("xox",), r"xox[abposr]-[0-9A-Za-z\-]{10,}", ""),
    ("Stripe secret key", ("k_live_",), r"[sr]k_live_[0-9A-Za-z]{24,}", ""),
    ("Hugging Face token", ("hf_",), r"hf_[A-Za-z0-9]{34,}", "hf_"),
    ("Groq API key", ("gsk_",), r"gsk_[A-Za-z0-9]{48,}", "gsk_"),
    ("private key", ("-----BEGIN",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", ""),
    ("Slack webhook URL", ("https://hooks.slack.com/",),
     r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,120}",
     "https://hooks.slack.com/"),
    ("password in a URL", ("://",),
     r"[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@`'\"]{0,64}:(?P<pw>[^\s@/`'\"]{3,128})@[\w.\-]+",
     ""),
)

# A token stands alone: no identifier character right before or after it, except the one or
# two underscores of Markdown emphasis (_ghp_…_, __ghp_…__), which stand alone themselves.
# A hyphen is not an identifier character: a token pasted into a note's name
# ([[missing-ghp_…]], [[ghp_…-old]]) is still one (as gitleaks' word boundary has it).
_NOT_AFTER_TOKEN = (r"(?:(?<![A-Za-z0-9_])|(?<=(?<![A-Za-z0-9_])_)"
                    r"|(?<=(?<![A-Za-z0-9_])__))")
_NOT_BEFORE_TOKEN = r"(?:(?![A-Za-z0-9_])|(?=__?(?![A-Za-z0-9_])))"
_FORMAT_PATTERN = "|".join(
    # a format may set its own left boundary (a look-behind of its own); else: none of these
    f"(?P<k{i}>{'' if rx.startswith('(?:(?<=') else _NOT_AFTER_TOKEN}(?:{rx})"
    f"{_NOT_BEFORE_TOKEN})"
    for i, (_, _, rx, _) in enumerate(_FORMATS))

# Keywords that label a credential, by the kind reported, in the languages of real
# workspaces. (Lower case: matched case-insensitively.)
_KEYWORDS = {
    "password": ("password", "passwd", "passphrase", "_pass", "_pwd", "密码", "口令", "парол"),
    "API key": ("api key", "api_key", "api-key", "apikey", "access key", "access_key",
                "secret key", "secret_key", "ключ api", "api-ключ", "api ключ", "ключ доступа"),
    "secret": ("secret", "密钥", "秘钥", "секрет"),
    "private key": ("私钥", "private key", "private_key", "приватный ключ"),
    "token": ("token", "bearer", "authorization", "令牌", "токен"),
    "credential": ("credential", "凭证", "凭据"),
}


def _alternation(words) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"[ _\-]?")
                    for w in sorted(set(words), key=len, reverse=True))


_GROUP_OF = {w: kind for kind, words in _KEYWORDS.items() for w in words}
# identifier characters around an ASCII keyword: X_API_KEY, db_password, X-MBX-APIKEY
_ID = r"[A-Za-z0-9_.\-]*"
# From a keyword found by _KEYWORD_HINT on: the rest of the key, the separator, the value.
_KEY_AT_PATTERN = (
    r"(?:" + _alternation(_GROUP_OF) + r")(?P<tail>" + _ID + r"[а-яё]*)"
    # closing wrappers and up to three more words of a label ("API key for Binance:")
    r"(?P<label>[*_`\"'\]]*(?:[ \t]+[^\s:=|：`\"']{1,24}){0,3}?)[*_`\"'\]]*[ \t]*"
    r"(?:[:=：]|=>|\||[ \t]+(?:是|为|—|–|is[ \t])|(?<=[密码令牌钥证据])(?:是|为))[ \t]*"
    r"[*_`\"'\[(]*[ \t]*"
    r"(?:(?:Bearer|Basic|Token|token|bearer)[ \t]+)?"
    r"(?P<v>[^\s|`\"'\u3000-\u303f\uff00-\uffef]{1,513})")  # (CJK punctuation ends it; longer
    # is no credential: see _plausible)
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_LONGEST_PREFIX = max(len(p) for _, prefixes, _, _ in _FORMATS for p in prefixes)

# The prefilters: one pass each over a whole note, both anchored on characters that are
# rare in prose so the regex engine skips most positions without trying a match.
# Literal prefixes of the formats, anchored on their punctuation:
_FORMAT_HINT = lazy_re(
    r"-(?:(?<=sk-)|(?<=nvapi-)|(?<=GOCSPX-)|(?<=xai-)|(?<=glpat-)|----BEGIN)|:(?://|AA)"
    r"|J(?<=\.eyJ)|A(?:KIA|SIA|Iza)|G(?<=SG)\.|K(?<=AccountK)ey="
    r"|x(?<=xox)|_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=k_live_)|(?<=hf_)|(?<=gsk_)"
    r"|(?<=npm_))")
# A keyword followed by a separator, found in the reversed, lower-cased note: anchored on the
# separator (":", "=", "|", "是" …), then back over wrappers, up to three label words and
# identifier characters to the keyword. Possessive quantifiers and the look-ahead on the
# keywords' (last) letters keep a separator that leads nowhere ("14:30") cheap.
_REVERSED_KEYWORDS = sorted({w[::-1] for w in _GROUP_OF}, key=len, reverse=True)
_KEYWORD_HINT = lazy_re(
    r"(?:[:=：|]|是|为|—|–)[ \t]*+[*_`\"'\[]*+(?:[^\s:=|：`\"']{1,24}+[ \t]++){0,3}?"
    r"[*_`\"'\[]*+(?:[a-z0-9]{1,12}+[_.\-]){0,2}[а-яё]?"
    r"(?=[" + re.escape("".join(sorted({w[0] for w in _REVERSED_KEYWORDS}))) + r"])(?:"
    + "|".join(re.escape(w).replace(r"\ ", r"[ _\-]?") for w in _REVERSED_KEYWORDS) + ")",
    re.IGNORECASE)  # (on the note as written: lower-casing a whole note costs a pass of its own)

# Prose: "the password is X", "my api key is X". Anchored on the literal " is " (a fast
# substring search in C); the look-behinds then ask for a keyword right before it.
_PROSE_WORDS = ("password", "passphrase", "passwd", "api key", "api-key", "api_key", "apikey",
                "access key", "secret key", "token", "secret")
_PROSE_HINT = lazy_re(" is (?:" + "|".join(
    "(?<=" + "".join(f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c) for c in w) + " is )"
    for w in _PROSE_WORDS) + ")")

_PLACEHOLDER_PATTERN = (
    r"x{3,}|\*{3,}|•{3,}|\.{3}|…|<|>|\$\{|\{\{|%\(|^\$|^\{|^\[|(.)\1{5,}"
    r"|your|example|placeholder|changeme|change_me|redacted|dummy|sample|fake|replace|insert"
    r"|p@ssw0rd|passw0rd|^todo|^tbd|^none$|^null$|^true$|^false$|test|0123456789|123456"
    r"|abcdefgh|qwerty|here$"
    r"|^env:|^secret:|^vault:|^keyring:|^op:|getenv|environ|process\.env"
    r"|1password|bitwarden|keychain|keyring|lastpass|^(?:the|see|in|from|stored|set|use|via|not)$")
_PATH_OR_URL = lazy_re(r"^(?:/|~|\.\.?/)|://|\.(?:json|ya?ml|env|txt|md|toml|ini|pem|key|"
                          r"cfg|conf|sh|py)$", re.IGNORECASE)
_ENV_NAME = lazy_re(r"^[A-Z][A-Z0-9_]*$")
_WORDY = lazy_re(r"^(?:[A-Za-z]+|\d+)(?:[-_.:/](?:[a-z]+|[A-Z][a-z]+|[A-Z]+|\d+))*$")
_HEX = lazy_re(r"^[0-9a-fA-F]+$")
_CALL = lazy_re(r"[A-Za-z_][A-Za-z0-9_.]{2,}\(")
_DATE = lazy_re(r"^\d{4}-\d{2}-\d{2}|^\d{1,2}:\d{2}")
_HASH_CONTEXT = lazy_re(r"commit|\bsha\b|sha-?\d|hash|checksum|digest|fingerprint|\brev\b|"
                           r"revision|哈希|提交|коммит|хеш", re.IGNORECASE)
_EXAMPLE = lazy_re(r"example|e\.g\.|sample|placeholder|示例|例如|样例|举例|пример",
                      re.IGNORECASE)
_TRAILING = "*.,;:)]}>，。；：、!?\"'`"
_DATA_URI = lazy_re(r"data:[\w.+\-]+/[\w.+\-]+;base64,[A-Za-z0-9+/=]*")


@lru_cache(maxsize=None)
def _regex(name: str) -> re.Pattern:
    """The larger expressions, compiled on first use: most runs (and every clean note) never
    get past the prefilters, and ``search``/``get`` start faster without them."""
    if name == "format":
        return re.compile(_FORMAT_PATTERN)
    if name == "glued":  # (a token glued to another: no boundary before it)
        return re.compile("|".join(f"(?:{rx}){_NOT_BEFORE_TOKEN}" for _, _, rx, _ in _FORMATS
                                   if not rx.startswith("(?:(?<=")))
    if name == "key":
        return re.compile(_KEY_AT_PATTERN, re.IGNORECASE)
    if name == "keyword":
        return re.compile(_alternation(_GROUP_OF), re.IGNORECASE)
    return re.compile(_PLACEHOLDER_PATTERN, re.IGNORECASE)


class Finding(Frozen, Plain):
    """A credential found in a text: where, what kind, and its masked form."""

    __slots__ = _fields = ("line", "column", "kind", "masked", "label", "length")
    __hash__ = Plain.field_hash  # (frozen: a value, usable as a key)
    line: int  # 1-based
    column: int  # 1-based, of the value
    kind: str  # "Telegram bot token", "password", …
    masked: str  # safe to print: "sk-ant-…Q3xz"
    label: str  # the keyword that anchored it ("密码"), for keyword-anchored findings
    length: int  # characters of the value from ``column`` on (what the output boundary masks)

    def __init__(self, line, column, kind, masked, label="", length=0):
        _set = object.__setattr__
        _set(self, "line", line)
        _set(self, "column", column)
        _set(self, "kind", kind)
        _set(self, "masked", masked)
        _set(self, "label", label)
        _set(self, "length", length)

    def describe(self) -> str:
        """``Telegram bot token (…Q3xz)`` or ``password after '密码' (…, 9 chars)``."""
        what = f"{self.kind} after '{self.label}'" if self.label else self.kind
        return f"{what} ({self.masked})"

    def to_plain(self) -> tuple:
        return (self.line, self.column, self.kind, self.masked, self.label, self.length)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def mask(value: str, prefix: str = "") -> str:
    """A form of ``value`` that is safe to print: the format's public prefix and the last
    four characters of a long value, nothing of a short one."""
    if prefix and value.startswith(prefix) and len(value) - len(prefix) >= 16:
        return f"{prefix}…{value[-4:]}"
    if len(value) >= 16:
        return f"…{value[-4:]}"
    return f"…, {len(value)} chars"


def _lowered(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: keep positions
        low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    return low


def has_candidates(text: str) -> bool:
    """False when ``text`` cannot hold anything this module reports (the fast path)."""
    return bool(_FORMAT_HINT.search(text) or _KEYWORD_HINT.search(text[::-1])
                or " is " in text and _PROSE_HINT.search(text))


def scan_text(text: str, code_ranges=()) -> list[Finding]:
    """Every credential in ``text`` (a whole note), by line.

    ``code_ranges`` are the note's non-prose line ranges (:attr:`Note.code_ranges`): a
    finding inside a code block marked as an example ("Example", "e.g.", "示例",
    "пример" on its fence or the lines just above) is not reported.
    """
    starts = _candidate_line_starts(text)
    if not starts:
        return []
    out: list[Finding] = []
    lineno, pos = 1, 0
    lines: list[str] | None = None
    for start in sorted(starts):
        lineno += text.count("\n", pos, start)
        pos = start
        end = text.find("\n", start)
        line = text[start:end if end != -1 else len(text)].rstrip("\r")
        found = scan_line(line, lineno, text, end)
        if "|" in line and line.lstrip().startswith("|"):
            if lines is None:
                lines = text.replace("\r\n", "\n").split("\n")
            found += _table_column(lines, lineno)
            if not found:  # (a row whose label the keyword path read needs no second look)
                found += _table_row(line, lineno)
        out.extend(found)
    if out and code_ranges:
        if lines is None:
            lines = text.replace("\r\n", "\n").split("\n")
        verdicts: dict[tuple[int, int], bool] = {}  # one look per code block
        headings: list[str] | None = None
        kept = []
        for f in out:
            value = lines[f.line - 1][f.column - 1:f.column - 1 + f.length]
            if (_STRICT.get(f.kind) and not f.label or f.label and f.kind != "password") \
                    and not _example_value(value):
                # a well-formed token, or a labelled key that looks generated (not typed for
                # a document), is live, example or not: "config examples" are pasted configs
                kept.append(f)
                continue
            if headings is None and any(start <= f.line <= stop for start, stop in code_ranges):
                headings = _section_headings(lines, code_ranges)
            if not _in_example(f.line, code_ranges, lines, verdicts, headings):
                kept.append(f)
        out = kept
    return _dedupe(out)


def _candidate_line_starts(text: str) -> set[int]:
    # each line is looked up once, however many hints it holds (a hostile line of
    # "sk-sk-sk-…" must stay linear)
    starts: set[int] = set()
    line_end = -1
    for m in _FORMAT_HINT.finditer(text):
        at = m.start()
        if at < line_end:
            continue
        starts.add(text.rfind("\n", 0, at) + 1)
        line_end = text.find("\n", at)
        if line_end == -1:
            break
    # (every prose hint starts with " is ": a note without one needs the pattern not compiled)
    for m in _PROSE_HINT.finditer(text) if " is " in text else ():
        starts.add(text.rfind("\n", 0, m.start()) + 1)
    last = len(text) - 1
    line_start = len(text) + 1
    for m in _KEYWORD_HINT.finditer(text[::-1]):
        keyword_at = last - (m.end() - 1)  # hints come last line first
        if keyword_at >= line_start:
            continue
        line_start = text.rfind("\n", 0, keyword_at) + 1
        starts.add(line_start)
    return starts


def scan_line(line: str, lineno: int = 1, text: str | None = None,
              end: int = -1) -> list[Finding]:
    """Credentials in one line. ``text`` and ``end`` (where the line ends in it) let a
    private-key header look at the line after it."""
    out: list[Finding] = []
    if "base64," in line:  # an embedded image is random-looking by nature
        line = _DATA_URI.sub(lambda m: " " * len(m.group(0)), line)
    spans: list[tuple[int, int]] = []
    done = -1
    run_checked = -1  # up to here the current run of token characters was tried from its start
    for hint in _FORMAT_HINT.finditer(line):
        h = hint.start()
        if h < done:
            continue
        if len(out) >= _MAX_PER_LINE:
            return out
        m = None
        if not (0 <= run_checked <= h and _ID_RUN.fullmatch(line, run_checked, h)):
            # a new token: try it from its start once (later hints inside it do not)
            at = h
            while at > 0 and line[at - 1] in _ID_CHARS and h - at < 256:
                at -= 1
            if at != h:
                m = _regex("format").match(line, at)
                # the underscores of Markdown emphasis (_ghp_…_) lead the run, not the token
                skip = at
                while m is None and skip < at + 2 and skip < h and line[skip] == "_":
                    skip += 1
                    m = _regex("format").match(line, skip)
        else:  # the same run: only what follows the part already tried
            at = max(run_checked, done)
        # a hyphen or a dot ends a word, not a run: a token may start after one
        # ([[missing-ghp_…]], ghp_…-ghp_…)
        cut = at
        while m is None and cut < h:
            if line[cut] in "-.":
                m = _regex("format").match(line, cut + 1)
            cut += 1
        run_checked = h
        if m is None:
            m = _regex("format").match(line, h)
        if m is None and line[h] == ":":  # a Telegram token inside a longer word: bot123:AA…
            start = h
            while start > 0 and line[start - 1].isdigit() and h - start <= 10:
                start -= 1
            if start != h:
                m = _regex("format").match(line, start)
        if m is None:
            continue
        done = m.end()
        finding = _format_finding(m, line, lineno, text, end)
        glued = _glued_end(line, m)
        if glued != done and finding is not None and finding.column == m.start() + 1 \
                and finding.kind != "private key":  # (one finding: both masked as one)
            done = glued
            finding = Finding(lineno, m.start() + 1, finding.kind,
                              mask(line[m.start():glued], _FORMATS[int(m.lastgroup[1:])][3]),
                              "", glued - m.start())
        if finding is None and m.lastgroup == _JWT_GROUP:
            continue  # dotted, but no token: a keyword before it may still label a value
        spans.append((m.start(), m.end()))
        if finding is not None:
            out.append(finding)
    if not _KEYWORD_MAYBE.search(line) and " is " not in line:
        return out
    low = _lowered(line)
    last = len(line) - 1
    positions = [last - (hint.end() - 1) for hint in _KEYWORD_HINT.finditer(low[::-1])]
    if " is " in low:
        positions += _prose_positions(low, positions)
    for at in positions:
        if len(out) >= _MAX_PER_LINE:
            break
        m = _regex("key").match(line, at)
        if m is None:
            continue
        vstart = m.start("v")
        if any(a <= vstart < b for a, b in spans):
            continue
        key_start = at
        while key_start > 0 and line[key_start - 1] in _ID_CHARS:
            key_start -= 1
        key = line[key_start:m.end("tail")]
        raw = m.group("v")
        value = raw.rstrip(_TRAILING)
        kind, label = _kind_of(key)
        if kind is None or _not_a_label(line, key_start, key):
            continue
        if not _plausible(value, kind, line, direct=not m.group("label").strip(" \t*_`\"']")) \
                and not _set_for_a_command(line, key_start, key, m, value):
            continue
        if _EXAMPLE.search(line):
            continue  # "password: P@ssw0rd (example from the docs)"
        out.append(Finding(lineno, vstart + 1, kind, mask(value), label, len(value)))
        spans.append((vstart, vstart + len(raw)))
    return out


# `GOG_KEYRING_PASSWORD="…" gog calendar list`: a variable set for one command. Its name
# ends in a credential word (not a mere *_KEY: SORT_KEY=name make), `=` joins it to its value,
# and a command word follows: the value is what the command uses, whatever it looks like.
_ENV_FOR_COMMAND = lazy_re(r"[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|_PASS|_PWD|TOKEN|SECRET"
                           r"|API_?KEY|SECRET_?KEY|ACCESS_?KEY|PRIVATE_?KEY)")
_COMMAND_AFTER = lazy_re(r"[\"']?[ \t]+(?:[A-Za-z_][A-Za-z0-9_]*=\S*[ \t]+)*[A-Za-z.~/][\w.~/\-]*")
# what still marks a made-up value in that form: a variable, angle brackets, xxx, your-…
_COMMAND_PLACEHOLDER = lazy_re(r"^\$|\$\{|\$\(|<|>|x{3,}|\*{3,}|•{3,}|…|\.{3}|\{\{|%\("
                               r"|your|example|placeholder|changeme|change_me|redacted|dummy|fake"
                               r"|replace|insert|^none$|^null$", re.IGNORECASE)


def _set_for_a_command(line: str, key_start: int, key: str, m, value: str) -> bool:
    """Is ``key=value`` a variable set before a command (``X_PASSWORD="…" cmd``) with a
    value that is no placeholder? Such a value is reported even when it is a word."""
    if not _ENV_FOR_COMMAND.fullmatch(key) or len(value) < 6:
        return False
    if key_start > 0 and line[key_start - 1] not in " \t`(;":
        return False
    if line[:key_start].rstrip().endswith(("export", "Environment=", "set", "ENV")):
        return False  # an export or a unit's Environment= is no command line: _plausible decides
    between = line[m.end("tail"):m.start("v")]
    if between.strip("\"'") != "=":
        return False
    end = m.start("v") + len(value)
    if not _COMMAND_AFTER.match(line, end):
        return False
    return not (_COMMAND_PLACEHOLDER.search(value) or _ENV_NAME.match(value)
                or _PATH_OR_URL.search(value) or value.isdigit())


def _prose_positions(low: str, taken: list[int]) -> list[int]:
    """Where a keyword that a prose " is " follows starts in a lower-cased line."""
    out = []
    seen = set(taken)
    for hint in _PROSE_HINT.finditer(low):
        for word in _PROSE_WORDS:
            at = hint.start() - len(word)
            if at >= 0 and at not in seen and low.startswith(word, at):
                seen.add(at)
                out.append(at)
    return out


# Words after a keyword that name something else than the credential: secret_number,
# token_count, password_policy, api_key_env, PublicKeyToken (public by design).
_NOT_SECRET_TAILS = tuple(
    "number num count len length size limit max min type name field hint policy prompt label "
    "file path env var ref url uri ttl timeout expiry expire budget usage header param".split())


def _not_a_label(line: str, key_start: int, key: str) -> bool:
    """A keyword in a name that does not label a credential's value."""
    low = key.lower()
    if "public" in low or "pubkey" in low:
        return True  # .NET PublicKeyToken, public_key: published on purpose
    if key_start > 0 and line[key_start - 1] in "?&" and low in ("token", "t", "tok"):
        return True  # a URL's ?token= (CTF and share links in write-ups)
    return low.strip("*_`\"'[] \t").rstrip("s").endswith(_NOT_SECRET_TAILS)


_TYPED_PREFIX = {"GitHub token": lazy_re(r"github_pat_|gh._"),
                 "Slack token": lazy_re(r"xox.-"), "Stripe secret key": lazy_re(r".k_live_"),
                 "AWS access key": lazy_re(r"A...")}
_ID_RUN = lazy_re(r"[A-Za-z0-9_.\-]*")
_JWT_GROUP = f"k{[f[0] for f in _FORMATS].index('JSON Web Token')}"
_SK_VARIANT = [f[2] for f in _FORMATS].index(r"sk-[a-z]{2,12}-[A-Za-z0-9_\-]{32,}")


def _random_body(body: str) -> bool:
    """Letters of both cases and digits, not words joined by separators: a generated key."""
    return (any(c.isdigit() for c in body) and any(c.islower() for c in body)
            and any(c.isupper() for c in body) and not _WORDY.match(body))
_MAX_PER_LINE = 64  # a line holding more is reported by its first 64
_KEYWORD_MAYBE = lazy_re(r"[:=：|是为—–]")


def _glued_end(line: str, m) -> int:
    """Where the token ``m`` ends, or the token glued to it ends: one whose start ``m``'s
    characters took (``xai-…_xai-…``: the first's ``[A-Za-z0-9_]`` takes the second's
    ``_xai``, and the second, no longer found at a boundary, would be shown whole). A few
    tries at each end, so a hostile line stays linear."""
    end = m.end()
    while end < len(line) and (line[end] in _ID_CHARS or line[end] == ":"):
        for at in range(max(m.start() + 1, end - _LONGEST_PREFIX), end):
            glued = _regex("glued").match(line, at)
            if glued is not None and glued.end() > end:
                end = glued.end()
                break
        else:
            break
    return end


def _format_finding(m, line: str, lineno: int, text: str | None, end: int) -> Finding | None:
    i = int(m.lastgroup[1:])
    kind, _, _, prefix = _FORMATS[i]
    value = m.group(0)
    if kind == "private key":
        if not _pem_body_follows(line, m.end(), text, end):
            return None
        return Finding(lineno, m.start() + 1, kind, "-----BEGIN …PRIVATE KEY-----", "",
                       m.end() - m.start())
    if kind == "password in a URL":
        value = m.group("pw")
        if not _plausible(value, "password", line):
            return None
        return Finding(lineno, m.start("pw") + 1, kind, mask(value), "", len(value))
    if not prefix and kind in _TYPED_PREFIX:  # ghp_, xoxb-, sk_live_, AKIA: public type marks
        prefix = _TYPED_PREFIX[kind].match(value).group(0)
    if _fake_token(value, prefix):
        return None  # nor is it a keyword's value: its span is taken
    if i == _SK_VARIANT and not _random_body(value.split("-", 2)[2]):
        return None  # hyphenated words after sk-: sk-learn-compatible-estimator-…
    if kind == "JSON Web Token" and not _jwt_header(value):
        return None
    return Finding(lineno, m.start() + 1, kind, mask(value, prefix), "", len(value))


_SPELLINGS = sorted(((w.replace(" ", sep), w) for w in _GROUP_OF for sep in (" ", "_", "", "-")),
                   key=lambda pair: -len(pair[1]))


def _kind_of(key: str) -> tuple[str | None, str]:
    """The kind a key names (the longest keyword in it wins: "secret key" over "secret")."""
    low = key.lower()
    for spelling, word in _SPELLINGS:
        if spelling in low:
            return _GROUP_OF[word], key.strip("*_`\"'[] \t")
    return None, ""


def _plausible(value: str, kind: str, line: str, direct: bool = True) -> bool:
    """Does a value after a credential keyword look like a live credential?"""
    if kind == "password":
        if len(value) < 6:
            return False
    elif len(value) < 16:
        return False
    if len(value) > 512 or not value.isascii():
        return False  # too long, or words of a language: "已改，见密码管理器"
    if _DATE.match(value):
        return False
    if _regex("placeholder").search(value) or _PATH_OR_URL.search(value) or _ENV_NAME.match(value):
        return False
    if value.isdigit():
        return False
    if "(" in value and _CALL.search(value):
        return False  # code: secret_number = random.randint(1, 100), PASSWORD('…')
    if _WORDY.match(value) and not (kind != "password" and _HEX.match(value)):
        return False  # words, numbers, identifiers: "claude-3-5-sonnet", "db.main"
    if _HEX.match(value) and (_HASH_CONTEXT.search(line) or (not direct and len(value) == 40)):
        return False  # a commit or content hash
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() for c in value)
    if kind == "password":
        return letters and (digits or symbols) or entropy(value) >= 3.0
    return (letters and digits) and entropy(value) >= 3.0


def _fake_token(value: str, prefix: str) -> bool:
    """A value in a known format that is a placeholder or a test value."""
    body = value[len(prefix):] if prefix and value.startswith(prefix) else value
    body = body.split(":AA", 1)[-1]  # a Telegram bot's id is public; its secret follows
    if re.search(r"(?i)x{4,}|(.)\1{5,}|example|your|dummy|fake|test|sample|placeholder|redacted|"
                 r"123456|234567|abcdef|qwerty", body):
        return True
    return len(body) >= 20 and entropy(body) < 3.0


def _jwt_header(value: str) -> bool:
    import base64

    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (ValueError, TypeError):
        return False
    return decoded.lstrip().startswith(b"{") and b'"' in decoded


def _pem_body_follows(line: str, after: int, text: str | None, end: int) -> bool:
    rest = line[after:].strip()
    if len(rest) >= 40 and re.fullmatch(r"[A-Za-z0-9+/=\s\\n]+", rest):
        return True
    if text is None or end == -1:
        return False
    nxt_end = text.find("\n", end + 1)
    nxt = text[end + 1:nxt_end if nxt_end != -1 else len(text)].strip().lstrip(">").strip()
    if nxt.lower().startswith(("proc-type", "dek-info")):
        return True
    return len(nxt) >= 40 and re.fullmatch(r"[A-Za-z0-9+/=]+", nxt) is not None \
        and entropy(nxt) >= 3.0


def _table_column(lines: list[str], lineno: int) -> list[Finding]:
    """A table whose header names a credential column (``| Exchange | API Key |``):
    the cells of that column in the rows below."""
    if lineno >= len(lines) or not re.match(r"^\s*\|?\s*:?-{2,}", lines[lineno]):
        return []
    header = _cells(lines[lineno - 1])
    columns = []
    for i, (_, cell) in enumerate(header):
        kind, label = _kind_of(cell)
        bare = re.sub(r"[*_`\s]", "", cell.lower())
        if kind and len(bare) <= len(label) + 2:  # the cell is the label, not a sentence
            columns.append((i, kind, label))
    out: list[Finding] = []
    if not columns:
        return out
    for n in range(lineno + 1, len(lines)):
        row = lines[n]
        if not row.lstrip().startswith("|"):
            break
        cells = _cells(row)
        for i, kind, label in columns:
            if i >= len(cells):
                continue
            col, cell = cells[i]
            value = cell.strip().strip("`*_\"'").strip()
            if not value or " " in value:
                continue
            if _regex("format").search(value):
                continue  # reported as its format
            if _plausible(value, kind, row):
                out.append(Finding(n + 1, col + row[col:].index(value) + 1, kind, mask(value),
                                   label, len(value)))
    return out


def _cells(row: str) -> list[tuple[int, str]]:
    out = []
    pos = row.find("|") + 1 if row.lstrip().startswith("|") else 0
    while pos <= len(row):
        nxt = row.find("|", pos)
        if nxt == -1:
            cell = row[pos:]
            if cell.strip():
                out.append((pos, cell))
            break
        out.append((pos, row[pos:nxt]))
        pos = nxt + 1
    return out


def _in_example(line: int, code_ranges, lines: list[str], verdicts: dict,
                headings: list[str] | None = None) -> bool:
    """Is ``line`` inside a code block whose fence, one of the three lines above it, or the
    heading of its section says it is an example?"""
    for start, end in code_ranges:
        if start <= line <= end:
            key = (start, end)
            if key not in verdicts:
                verdicts[key] = any(_EXAMPLE.search(ln) for ln in lines[max(0, start - 4):start]) \
                    or bool(headings and _EXAMPLE.search(headings[start - 1]))
            return verdicts[key]
        if start > line:
            break
    return False


# The strict token formats (a public prefix and a fixed alphabet and length): an example
# block does not excuse one unless its value looks made up.
_STRICT = {kind: kind not in ("private key", "password in a URL") for kind, *_ in _FORMATS}
_ASCENDING = lazy_re(r"(?:abc|bcd|cde|def|efg|fgh|ghi|hij|ijk|jkl|klm|lmn|mno|nop|opq|pqr|qrs"
                        r"|rst|stu|tuv|uvw|vwx|wxy|xyz|012|123|234|345|456|567|678|789)",
                        re.IGNORECASE)


_ALTERNATING = lazy_re(r"(?:[A-Za-z]\d)+[A-Za-z]?|(?:\d[A-Za-z])+\d?")


def _example_value(value: str) -> bool:
    """A token in a known format that looks written by hand for a document: a run of one
    character, counting (``abc…``, ``123…``) or too few distinct characters."""
    if not value or _fake_token(value, ""):
        return True
    body = value.split("-", 1)[-1].split("_", 1)[-1] if len(value) > 12 else value
    if len(_ASCENDING.findall(body)) >= 2:
        return True
    if _ALTERNATING.fullmatch(body) and len(_ASCENDING.findall(re.sub(r"\d", "", body))) >= 2:
        return True  # letters counting between digits: a1b2c3d4e5…
    return len(set(body)) <= 10 or entropy(body) < 3.5


def _section_headings(lines: list[str], code_ranges) -> list[str]:
    """For each line (0-based), the text of the nearest ATX heading above it outside code."""
    out: list[str] = []
    current = ""
    ranges = iter(code_ranges)
    block = next(ranges, None)
    for i, line in enumerate(lines, 1):
        while block is not None and block[1] < i:
            block = next(ranges, None)
        inside = block is not None and block[0] <= i <= block[1]
        out.append(current)
        if not inside and line.startswith("#"):
            stripped = line.lstrip("#")
            if len(line) - len(stripped) <= 6 and (not stripped or stripped[0] in " \t"):
                current = stripped
    return out


def _table_row(row: str, lineno: int) -> list[Finding]:
    """A row whose label cell says more than the keyword (``| Binance API key (spot) |
    main | 9f8e… |``): the value may stand one to three cells later."""
    out: list[Finding] = []
    if _EXAMPLE.search(row):
        return out
    cells = _cells(row)
    keyword = _regex("keyword")
    for i, (_, cell) in enumerate(cells):
        if len(out) >= _MAX_PER_LINE:
            break
        if len(cell) > 120 or not keyword.search(cell):
            continue
        kind, label = _kind_of(cell)
        if kind is None or len(cell.split()) > 6 or _not_a_label(cell, 0, label):
            continue
        for col, later in cells[i + 1:i + 4]:
            value = later.strip().strip("`*_\"'").strip()
            if not value or " " in value or len(value) > 512 or _regex("format").search(value):
                continue
            if _plausible(value, kind, later):
                out.append(Finding(lineno, row.index(value, col) + 1, kind, mask(value),
                                   label, len(value)))
                break
    return out


def _dedupe(found: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in sorted(found, key=lambda f: (f.line, f.column)):
        if (f.line, f.column) in seen:
            continue
        seen.add((f.line, f.column))
        out.append(f)
    return out


FACT = "secrets"  # the per-note fact the loader's workers, the rule and the audit share


def scan_note(note) -> list[tuple]:
    """A parsed note's credentials as plain data (a cacheable fact); example code blocks
    are skipped."""
    return [f.to_plain() for f in scan_text(note.text, note.code_ranges)]


def secrets_of(vault, note) -> list[Finding]:
    """A note's credentials, scanned once per content (kept in the cache beside the note)."""
    return [Finding(*plain) for plain in
            vault.fact(note.path, FACT, lambda: scan_note(note), epoch=DETECTOR_VERSION)]


def first_secret(text: str) -> Finding | None:
    """The first credential in ``text``, or None: what writers refuse."""
    found = scan_text(text)
    return found[0] if found else None


def credentials_in(snippet: str, start_line: int, chunk: str | None = None) -> list[dict]:
    """``[{"line", "kind", "masked"}]`` for each credential in a snippet (file line numbers;
    ``chunk`` is the text the snippet was cut from, starting at ``start_line``)."""
    if not has_candidates(snippet):
        return []
    first = start_line
    if chunk is not None:
        at = chunk.replace("\r\n", "\n").find(snippet)
        if at > 0:
            first += chunk.replace("\r\n", "\n").count("\n", 0, at)
    return [{"line": first + f.line - 1, "kind": f.kind, "masked": f.masked}
            for f in scan_text(snippet)]


REFUSAL_ADVICE = ("keep credentials in the runtime's config or environment, never in memory; "
                  "--allow-secret writes it anyway")
