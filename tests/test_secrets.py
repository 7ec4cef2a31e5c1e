"""Credentials in memory: the detector, the secret-in-memory rule, and `log`'s refusal.

The fixtures under ``fixtures/secrets/`` hold made-up values in real formats, one note
per kind and form (English, Chinese, Russian); ``clean/`` holds placeholders and
look-alikes that must give nothing. Test ids name fixtures, never values.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vaultkit.cli import main
from vaultkit.vault.outbound import clean
from vaultkit.vault.parse import parse_note
from vaultkit.vault.secretscan import mask, scan_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "secrets"

# fixture -> [(line, kind, label)]
EXPECTED = {
    "telegram-table.md": [(5, "Telegram bot token", ""), (6, "Telegram bot token", "")],
    "anthropic-json.md": [(8, "Anthropic API key", "")],
    "openrouter-export.md": [(6, "OpenRouter API key", "")],
    "openai-bullet.md": [(3, "OpenAI API key", "")],
    "dashscope-systemd.md": [(6, "sk- API key", "")],
    "nvidia-prose.md": [(3, "NVIDIA API key", "")],
    "github-handoff.md": [(3, "GitHub token", "")],
    "google-oauth.md": [(7, "Google OAuth client secret", "")],
    "jwt-transcript.md": [(4, "JSON Web Token", "")],
    "pem-key.md": [(3, "private key", "")],
    "exchange-column.md": [(5, "API key", "API Key"), (6, "API key", "API Key")],
    "exchange-label.md": [(5, "API key", "API Key"), (6, "API key", "Secret Key")],
    "curl-header.md": [(3, "API key", "X-MBX-APIKEY")],
    "bearer-header.md": [(3, "token", "Authorization")],
    "keyring-assignments.md": [(3, "password", "KEYRING_PASSWORD"),
                               (4, "password", "SMTP_PASSWORD")],
    "aws-keys.md": [(3, "AWS access key", ""), (4, "API key", "aws_secret_access_key")],
    "url-password.md": [(3, "password in a URL", "")],
    "zh-server.md": [(4, "password", "密码"), (5, "password", "密码"), (6, "secret", "密钥"),
                     (7, "token", "令牌")],
    "ru-server.md": [(3, "password", "Пароль"), (4, "API key", "API-ключ"),
                     (5, "token", "токен")],
    # a live token in a "config example" (a heading, a fence's lead-in, a label saying so)
    "example-config.md": [(8, "sk- API key", ""), (11, "GitLab token", ""),
                          (13, "xAI API key", "")],
    "service-formats.md": [(3, "npm token", ""), (4, "SendGrid API key", ""),
                           (5, "Azure storage account key", ""), (6, "Slack webhook URL", ""),
                           (7, "password in a URL", "")],
    "wide-table.md": [(5, "API key", "Binance API key (spot, main account)")],
    "oauth-tokens.md": [(5, "token", "access_token"), (6, "token", "refresh_token")],
    "prose.md": [(3, "password", "password"), (4, "API key", "api key"), (5, "password", "密码"),
                 (6, "password", "Пароль")],
}


def _scan(path: Path):
    note = parse_note(path.name, path.read_bytes())
    return scan_text(note.text, note.code_ranges)


def _long_words(line: str) -> list[str]:
    """Runs of 8+ credential-ish characters: any of them in output would leak a value."""
    return [w for w in re.findall(r"[A-Za-z0-9_#!$\-]{8,}", line) if any(c.isdigit() for c in w)]


def test_every_leak_fixture_is_listed():
    assert sorted(p.name for p in (FIXTURES / "leaks").glob("*.md")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_leak_reported_with_kind_and_line(name):
    found = _scan(FIXTURES / "leaks" / name)
    assert [(f.line, f.kind, f.label) for f in found] == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_masked_form_never_holds_the_value(name):
    path = FIXTURES / "leaks" / name
    lines = path.read_text(encoding="utf-8").split("\n")
    for f in _scan(path):
        assert f.column >= 1
        for word in _long_words(lines[f.line - 1]):
            assert word not in f.describe()
        assert "…" in f.masked


@pytest.mark.parametrize("name", ["placeholders.md", "lookalikes.md", "code-identifiers.md"])
def test_placeholders_and_lookalikes_give_nothing(name):
    assert _scan(FIXTURES / "clean" / name) == []


@pytest.mark.parametrize("text", [
    "- token: sk-ant-api03-" + "x" * 90,
    "api_key = 'YOUR_API_KEY_HERE_1234567890'",
    "password: <password>",
    "OPENAI_API_KEY=sk-proj-EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE12",
    "- The password policy: 12 characters minimum",
    "- 密码：至少12位",
    "| Password | Where |",
    "- Rotated the token: yes",
    "secret_ref: vault:kv/data/bot#token",
    "- api key is in ~/.config/moonshot/key",
    "Bearer tokens expire after 3600 seconds: refresh them",
    "- Token: 1.2M used today",
    "- API key: stored in `.env` (OPENAI_API_KEY)",
    "api_key_env: OPENAI_API_KEY",
    "Authorization: Bearer ${TOKEN}",
    "Secret: [[secrets-policy]]",
    "token expires: 2026-03-01T10:00:00Z",
    "| Model | Max tokens |\n|---|---|\n| gpt-4o-2024-08-06 | 128000 |\n"
    "| claude-sonnet-4-5 | 200k |",
    "| Secret | Where it lives |\n|---|---|\n| DB_PASSWORD | systemd unit |\n| bot token | env |",
    "- Token URL: https://oauth2.googleapis.com/token",
    "- 令牌: 已存入 keyring",
    "- 密码：已改，见密码管理器",
    "- пароль: сменён 2026-02-14",
    "- The API key for Moonshot: MOONSHOT_API_KEY in the gateway env",
    "- password: P@ssw0rd (example from the docs)",
    "### 14:30 — API key — rotated",
    "secret_number = random.randint(1, 100)",
    "- token_budget = 120000_tokens_per_day_v2",
    'Culture=neutral, PublicKeyToken=b77a5c561934e089',
    "- the solve: GET /flag?token=4f9a2c7e1b3d5f8a0c6e&user=guest",
    "- The password is correct now, and the api key is rotated.",
    # a token's shape inside an identifier is part of that identifier, underscores or not
    "CACHE_ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2_v2 = 1",
    "x___AKIA" + "Q3ZP7RXM2NV4KD6W",
], ids=lambda text: f"len{len(text)}")
def test_more_non_secrets(text):
    assert scan_text(text) == []


# Kinds detect-secrets (Yelp) also knows: an independent check that the fixtures hold real
# formats and that vaultkit's table reads them as the library does.
ORACLE = {"Telegram bot token": "Telegram Bot Token", "GitHub token": "GitHub Token",
          "JSON Web Token": "JSON Web Token", "private key": "Private Key",
          "AWS access key": "AWS Access Key"}


def test_known_formats_agree_with_detect_secrets():
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    checked = 0
    with default_settings():
        for name, items in EXPECTED.items():
            lines = (FIXTURES / "leaks" / name).read_text(encoding="utf-8").split("\n")
            ours = {(line, kind) for line, kind, _ in items}
            for number, text in enumerate(lines, 1):
                theirs = {s.type for s in scan_line(text)} & set(ORACLE.values())
                for kind, their_type in ORACLE.items():
                    assert ((number, kind) in ours) == (their_type in theirs), (name, number)
                    checked += (number, kind) in ours
    assert checked == 6  # 2 Telegram, GitHub, JWT, PEM, AWS


def test_the_format_prefilter_finds_every_literal_prefix():
    from vaultkit.vault.secretscan import _FORMAT_HINT, _FORMATS

    for kind, literals, _, _ in _FORMATS:
        for literal in literals:
            if literal == "T3BlbkFJ":  # inside a key that starts with sk-
                continue
            probe = f"x {literal}"
            assert _FORMAT_HINT.search(probe + "Zq9"), (kind, literal)
    assert _FORMAT_HINT.search("plain prose: skip - the_end at 14:30.") is None


@pytest.mark.parametrize("text, kind, column", [
    ("curl https://api.telegram.org/bot5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O/getMe",
     "Telegram bot token", 34),
    ('{"role": "tool", "content": "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"}',
     "Google OAuth client secret", 30),
    ("- Vault login: `hunter2!x` is the root password", None, None),
    ("PGPASSWORD=Kq8vT2#pLm9 psql -h db", "password", 12),
    # Markdown emphasis with underscores stands apart from the token it wraps
    ("Rotated _ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2_ today", "GitHub token", 10),
    ("- __AKIA" + "Q3ZP7RXM2NV4KD6W__ is live", "AWS access key", 5),
    ("See [[missing-ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2]].", "GitHub token", 15),
    ("- [[nowhere-AKIA" + "Q3ZP7RXM2NV4KD6W]]", "AWS access key", 13),
    ("Kept as ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2-old.txt", "GitHub token", 9),
], ids=["bot-api-url", "transcript-json", "password-before-label", "pgpassword-env",
        "italic-token", "bold-token", "hyphen-before-in-a-link", "hyphen-before-aws",
        "hyphen-after"])
def test_more_forms(text, kind, column):
    found = scan_text(text)
    assert [(f.kind, f.column) for f in found] == ([(kind, column)] if kind else [])


def test_tokens_joined_by_a_hyphen_are_each_found():
    token = "ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2"
    found = scan_text(f"{token}-{token}.{token}")
    assert [(f.kind, f.column) for f in found] == [("GitHub token", 1), ("GitHub token", 42),
                                                  ("GitHub token", 83)]


def test_a_token_glued_to_another_is_masked_with_it():
    """A token whose characters take the start of the next (an xAI key's ``_`` and letters
    take ``_xai`` of the ``xai-`` after it): the next was shown whole. Both are one span."""
    xai = "xai-" + "q6T8HB1einblr2X2Bx3FSwf65pkq5HJVnnNa3GBmJdrqa7CSPamjLtxkuC6CK4kvO1e4N"
    ghp = "ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2"
    for text in (f"{xai}_{xai}", f"{xai}_{ghp}", f"{xai}_sk-ant-api03-{'b7Y' * 14}",
                 f"k={xai}_{xai}_{xai} then"):
        found = scan_text(text)
        assert found and found[0].column in (1, 3), text
        shown = clean(text)
        bodies = [xai[4:], ghp[4:], "b7Y" * 14]
        assert not any(body[i:i + 8] in shown for body in bodies
                       for i in range(len(body) - 8)), shown
        assert clean(shown) == shown
    # tokens apart, or joined by a hyphen, are each found as before
    assert [f.length for f in scan_text(f"{xai} {xai}")] == [len(xai)] * 2
    assert [f.length for f in scan_text(f"{ghp}-{ghp}")] == [len(ghp)] * 2


def test_masks():
    assert mask("sk-ant-api03-" + "a1B2" * 20 + "Q3xz", "sk-ant-") == "sk-ant-…Q3xz"
    assert mask("hunter2!x") == "…, 9 chars"  # nothing of a short value
    assert mask("6p4rWLHlKPW7mu3kG4Wd") == "…G4Wd"


def test_example_block_only_when_marked():
    value = "Wq8#vT2pLm9x"
    fenced = f"# Setup\n\n```bash\nexport DB_PASSWORD={value}\n```\n"
    example = f"# Setup\n\nExample:\n\n```bash\nexport DB_PASSWORD={value}\n```\n"
    for text, expected in ((fenced, 1), (example, 0)):
        note = parse_note("x.md", text.encode())
        assert len(scan_text(note.text, note.code_ranges)) == expected


def test_an_example_block_does_not_excuse_a_well_formed_token():
    """Live keys sat in "config examples": only a made-up looking token is excused there."""
    live = "sk-or-v1-" + "4c2e8a0f6b1d3e5a7c9e1f3a5b7d9c1e3f5a7b9c1d3e5f7a9b1c3d5e7f9a1b3c"
    made_up = "sk-or-v1-" + "0123456789abcdef" * 4
    for key, expected in ((live, 1), (made_up, 0)):
        for marker in ("Example:", "## 配置示例", "e.g. the gateway's environment"):
            text = f"# Setup\n\n{marker}\n\n```bash\nexport OPENROUTER_API_KEY={key}\n```\n"
            note = parse_note("x.md", text.encode())
            assert len(scan_text(note.text, note.code_ranges)) == expected


# -- the rule -----------------------------------------------------------------------------

def _vault_with_leaks(make_vault):
    files = {"AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n"}
    for sub in ("leaks", "clean"):
        for p in (FIXTURES / sub).glob("*.md"):
            files[f"memory/semantic/{sub}/{p.name}"] = p.read_text(encoding="utf-8")
    return make_vault(files)


def _check(capsys, root, *extra):
    code = main(["check", str(root), "--select", "secret-in-memory", "--format", "json",
                 *extra])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_rule_reports_every_fixture_as_an_error(make_vault, capsys):
    root = _vault_with_leaks(make_vault)
    code, diags, _ = _check(capsys, root)
    assert code == 1
    got = sorted((d["path"].rsplit("/", 1)[-1], d["line"]) for d in diags)
    want = sorted((name, line) for name, items in EXPECTED.items() for line, _, _ in items)
    assert got == want
    assert {d["code"] for d in diags} == {"VK701"}
    assert {d["severity"] for d in diags} == {"error"}
    by_file = {(d["path"].rsplit("/", 1)[-1], d["line"]): d["message"] for d in diags}
    assert by_file[("zh-server.md", 4)].startswith("password after '密码' (…, 10 chars) in memory")
    assert "runtime's config or environment" in by_file[("telegram-table.md", 5)]
    for p in (FIXTURES / "leaks").glob("*.md"):
        for line in p.read_text(encoding="utf-8").split("\n"):
            for word in _long_words(line):
                if len(word) >= 16:
                    assert word not in json.dumps(diags, ensure_ascii=False)


def test_suppression_comment_accepts_a_reviewed_line(make_vault, capsys):
    line = "- client_secret: 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"
    root = make_vault({"memory/semantic/a.md": f"# A\n\n{line}\n",
                       "memory/semantic/b.md": "# B\n\n<!-- vaultkit-disable-next-line "
                                               f"secret-in-memory -->\n{line}\n"})
    code, diags, _ = _check(capsys, root)
    assert [(d["path"], d["line"]) for d in diags] == [("memory/semantic/a.md", 3)]


def test_an_edited_note_is_scanned_again(make_vault, capsys):
    root = make_vault({"memory/semantic/a.md": "# A\n\n- plain text\n"})
    assert _check(capsys, root)[1] == []
    path = root / "memory/semantic/a.md"
    path.write_text("# A\n\n- plain text\n- GH_TOKEN=ghp_4r9jH8apqCjW9zsOeNHy7oQ1VdUFNwkl6m8h\n")
    import os

    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    diags = _check(capsys, root)[1]
    assert [(d["line"], d["message"].split(" (")[0]) for d in diags] == [(4, "GitHub token")]


# -- log --------------------------------------------------------------------------------

def _log(capsys, root, *argv):
    code = main(["log", *argv, "--date", "2026-02-15", "--time", "10:00", "--root", str(root)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("fixture", ["telegram-table.md", "zh-server.md", "ru-server.md",
                                     "anthropic-json.md"])
def test_log_refuses_an_entry_with_a_credential_and_writes_nothing(make_vault, capsys, fixture):
    root = make_vault({"memory/2026-02-15.md": "# 2026-02-15\n"})
    before = (root / "memory/2026-02-15.md").read_bytes()
    text = (FIXTURES / "leaks" / fixture).read_text(encoding="utf-8")
    code, out, err = _log(capsys, root, "-t", "Set-up notes", text)
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    kind = EXPECTED[fixture][0][1]
    assert f"holds a {kind}" in err
    assert "runtime's config or environment" in err and "nothing written" in err
    for word in _long_words(text):
        if len(word) >= 12:
            assert word not in err
    assert (root / "memory/2026-02-15.md").read_bytes() == before


def test_log_refuses_a_credential_in_the_title_and_creates_no_file(make_vault, capsys):
    root = make_vault({})
    key = "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"
    code, _, err = _log(capsys, root, "-t", f"router key {key}", "- set up the router")
    assert code == 1 and "OpenRouter API key" in err
    assert not (root / "memory/2026-02-15.md").exists()


def test_log_json_refusal_is_json_too(make_vault, capsys):
    root = make_vault({})
    text = "Key\n- GH_TOKEN=ghp_4r9jH8apqCjW9zsOeNHy7oQ1VdUFNwkl6m8h"
    code, out, err = _log(capsys, root, "--json", text)
    assert code == 1
    data = json.loads(out)
    assert data["refused"] is True and data["kind"] == "GitHub token"
    assert data["masked"] == "ghp_…6m8h" and "6m8h" in data["error"]
    assert "4r9jH8" not in out + err
    assert not (root / "memory/2026-02-15.md").exists()


def test_log_allow_secret_writes_it(make_vault, capsys):
    root = make_vault({})
    text = "Bot set up\n- token 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O\n- tested\n- done"
    code, _, _ = _log(capsys, root, "--allow-secret", text)
    assert code == 0
    assert "5145683452:AA" in (root / "memory/2026-02-15.md").read_text()


def test_log_accepts_placeholders(make_vault, capsys):
    root = make_vault({})
    code, _, err = _log(capsys, root, "Keys moved\n- OPENAI_API_KEY=sk-xxx in the gateway env\n"
                                      "- password: **** (in 1Password)\n- nothing in memory")
    assert code == 0, err


def test_append_entry_refuses_for_every_caller(make_vault):
    from vaultkit.vault.profile import load_settings
    from vaultkit.memory.journal import SecretRefused, append_entry

    root = make_vault({})
    with pytest.raises(SecretRefused) as info:
        append_entry(root, load_settings(root), text="- 密码: j82f#JWuIL\n- a\n- b", title="x",
                     date="2026-02-15", time="10:00")
    assert info.value.finding.kind == "password"
    assert not (root / "memory/2026-02-15.md").exists()


# -- audit: the working tree and git history --------------------------------------------

TOKEN_LINE = "- alerts bot: 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"


def _git(root, *args):
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _history_vault(make_vault):
    """A repository where the key was committed three commits ago and removed since."""
    root = make_vault({"AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n",
                       "memory/2026-02-13.md": "# 2026-02-13\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: first")
    journal = root / "memory/2026-02-14.md"
    journal.write_text(f"# 2026-02-14\n\n### 10:00 — Alerts\n{TOKEN_LINE}\n- wired to cron\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: alerts")
    leaked = _git(root, "rev-parse", "HEAD")
    journal.write_text("# 2026-02-14\n\n### 10:00 — Alerts\n- bot wired to cron\n")
    _git(root, "commit", "-qam", "backup: token removed")
    (root / "MEMORY.md").write_text("# Memory\n\n- Alerts go to the ops chat.\n")
    _git(root, "commit", "-qam", "backup: memory")
    # a journal moved to the archive is not a new leak
    _git(root, "mv", "memory/2026-02-13.md", "memory/archive-2026-02-13.md")
    _git(root, "commit", "-qm", "backup: archive")
    return root, leaked


def _audit_secrets(root):
    from vaultkit.audit import CHECK_IDS, run_audit
    from vaultkit.vault.loader import load_vault

    skip = set(CHECK_IDS) - {"secrets"}
    (check,) = run_audit(load_vault(root, use_cache=False), skip=skip)
    return check


def test_audit_names_the_commit_that_added_a_key_three_commits_ago(make_vault):
    root, leaked = _history_vault(make_vault)
    check = _audit_secrets(root)
    assert check.status == "fail"
    assert f"commit {leaked[:7]}" in check.found
    assert "memory/2026-02-14.md:4 Telegram bot token (…7U4O)" in check.found
    assert '"backup: alerts"' in check.found
    assert "in the notes" not in check.found  # the tree no longer holds it
    assert "5 commits changing Markdown files, reachable from a branch, scanned" in check.found
    assert [d["commit"] for d in check.details] == [leaked]
    for step in ("rotate", "git-filter-repo", "BFG", "force-push"):
        assert step in check.hint
    assert "AAbeuEchs" not in check.found + check.hint + json.dumps(check.details)


def test_audit_cli_prints_the_commit_and_never_the_value(make_vault, capsys):
    root, leaked = _history_vault(make_vault)
    code = main(["audit", str(root), "--skip", "git-backup,pre-commit", "--symbols", "never"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"commit {leaked[:12]} (" in out
    assert "AAbeuEchs" not in out and "5145683452" not in out


def test_audit_passes_a_clean_history_and_reports_the_tree(make_vault):
    root = make_vault({"AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: first")
    check = _audit_secrets(root)
    assert check.status == "pass", check
    assert ("1 commit changing Markdown files, reachable from a branch, scanned: none added"
            in check.found)
    (root / "MEMORY.md").write_text(f"# Memory\n\n{TOKEN_LINE}\n")
    check = _audit_secrets(root)
    assert check.status == "fail"
    assert "1 credential in the notes: MEMORY.md:3 Telegram bot token" in check.found
    assert not any(d.get("commit") for d in check.details)


def test_audit_accepts_a_reviewed_line_in_history_too(make_vault):
    root = make_vault({"MEMORY.md": f"# Memory\n\n<!-- vaultkit-disable-next-line "
                                    f"secret-in-memory -->\n{TOKEN_LINE}\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: first")
    assert _audit_secrets(root).status == "pass"


def test_audit_without_git_scans_the_tree(make_vault):
    root = make_vault({"MEMORY.md": "# Memory\n"})
    check = _audit_secrets(root)
    assert check.status == "pass" and "not a git repository" in check.found


# -- search and get: served as stored, marked -------------------------------------------

def _memory_vault(make_vault):
    return make_vault({
        "MEMORY.md": "# Memory\n\n- Alerts bot wired to the ops chat.\n",
        "memory/2026-02-14.md": f"# 2026-02-14\n\n### 10:00 — Alerts bot\n\n{TOKEN_LINE}\n"
                                "- cron sends the alerts digest\n",
        "memory/2026-02-15.md": "# 2026-02-15\n\n### 09:00 — Alerts digest\n\n"
                                "- the alerts digest went out on time\n",
    })


def test_search_json_masks_and_marks_a_snippet_holding_a_credential(make_vault, capsys):
    root = _memory_vault(make_vault)
    assert main(["search", "alerts", "digest", "--json", "--root", str(root),
                 "--min-score", "0"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    by_path = {r["path"]: r for r in results}
    leak = by_path["memory/2026-02-14.md"]
    assert "5145683452:AA" not in leak["snippet"] and "…7U4O" in leak["snippet"]  # masked
    assert leak["holdsCredential"] is True
    assert leak["credentials"] == [{"line": 5, "kind": "Telegram bot token", "masked": "…7U4O"}]
    clean = by_path["memory/2026-02-15.md"]
    assert "holdsCredential" not in clean and "credentials" not in clean


def test_search_text_marks_the_line(make_vault, capsys):
    root = _memory_vault(make_vault)
    main(["search", "alerts", "bot", "--root", str(root), "--min-score", "0"])
    out = capsys.readouterr().out
    assert "! line 5 holds a credential: Telegram bot token (…7U4O)" in out


@pytest.mark.parametrize("query", ["ghp", "AKIA"])
def test_search_for_a_tokens_prefix_never_cuts_the_token_with_its_mark(make_vault, capsys,
                                                                         query):
    """The matched word is marked (**ghp**): inside a token the mark cut it where the output
    boundary no longer knew it, and the token was printed whole."""
    gh, aws = "ghp_" + "R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2", "AKIA" + "Q3ZP7RXM2NV4KD6W"
    root = make_vault({"memory/2026-02-14.md": f"# 2026-02-14\n\n### 10:00 — Keys\n\n"
                       f"- pasted {gh} and {aws} here, then the ghp and AKIA notes\n"})
    main(["search", query, "--root", str(root), "--min-score", "0"])
    out = capsys.readouterr().out
    assert gh[4:] not in out and aws[4:] not in out and "ghp_…8Ue2" in out, out
    assert out.count(f"**{query}**") == 1  # the same word outside a token is marked


def test_get_masks_and_marks_the_excerpt(make_vault, capsys):
    root = _memory_vault(make_vault)
    assert main(["get", "memory/2026-02-14.md", "--json", "--root", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["holdsCredential"] is True
    assert data["credentials"][0]["line"] == 5
    assert main(["get", "memory/2026-02-14.md", "--from", "6", "--json", "--root",
                 str(root)]) == 0
    assert "holdsCredential" not in json.loads(capsys.readouterr().out)
    assert main(["get", "memory/2026-02-14.md", "--root", str(root)]) == 0
    captured = capsys.readouterr()
    assert TOKEN_LINE not in captured.out and "- alerts bot: …7U4O" in captured.out
    assert "memory/2026-02-14.md:5 holds a credential: Telegram bot token (…7U4O)" in captured.err


HOSTILE_UNITS = ["sk-", ".eyJ", "123456789:AA", "ghp_", "token: ", "password=x1y2z3w4 ",
                 "| api key | ", "a_" * 50 + "secret=", "password is ",
                 "| Binance api key x | a | b | ", "SG.", "AccountKey=",
                 "https://hooks.slack.com/services/", "redis://:",
                 "xai-" + "a1" * 20 + "_", "xoxb-" + "1" * 10 + "-ghp", "xai-" + "a" * 38]


# (ids by position: a test name never shows a credential-shaped string)
@pytest.mark.parametrize("unit", HOSTILE_UNITS, ids=[f"unit{i}" for i in range(len(HOSTILE_UNITS))])
def test_hostile_lines_stay_linear(unit):
    """One 200 KB line of repeated prefixes: every hint must not rescan the line (this was
    quadratic: minutes). The bound is generous; linear work takes well under a second."""
    import time

    line = unit * (200_000 // len(unit))
    started = time.process_time()
    found = scan_text(line + "\n" + line)
    assert time.process_time() - started < 10
    assert len(found) <= 2 * 64  # at most 64 per line


def test_audit_accepts_what_the_baseline_accepts(make_vault, capsys):
    root = make_vault({"MEMORY.md": f"# Memory\n\n{TOKEN_LINE}\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "backup: first")
    assert _audit_secrets(root).status == "fail"
    main(["check", str(root), "--select", "secret-in-memory", "--write-baseline"])
    capsys.readouterr()
    baseline = (root / "vaultkit-baseline.json").read_text()
    assert "VK701" in baseline and "AAbeuEchs" not in baseline  # only the masked form
    assert _audit_secrets(root).status == "pass"


def test_no_cache_file_holds_a_credential_as_written(make_vault, capsys):
    """The files under .vaultkit/ (the notes' records compressed with a dictionary sampled
    from them, the resolver's tables, the results, the search index) never hold a
    credential as written: the dictionary and the index's text are stored masked, and the
    index still says which lines held one."""
    token = "ghp_" + "Zq8Lm2Xv7Rt4Nw1Kc9Bd5Yp3Hs6Jf0Ga2Ue7"
    notes = {f"memory/topics/t{i}.md": f"# T{i}\n\n- see [[{token}]] and [[t{i + 1}]]\n"
             for i in range(40)}
    root = make_vault({"MEMORY.md": "# Memory\n\n- topics\n", **notes})
    assert main(["check", str(root)]) == 1
    out = capsys.readouterr().out
    assert token not in out and "ghp_…2Ue7" in out
    assert main(["search", "see", "--json", "--root", str(root), "--min-score", "0"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert hits and all(h["holdsCredential"] and h["credentials"][0]["kind"] == "GitHub token"
                        for h in hits)
    files = [p for p in (root / ".vaultkit").rglob("*") if p.is_file()]
    assert any(p.name.startswith("store-") for p in files)
    assert any(p.name == "search.sqlite" for p in files)
    assert [p.name for p in files if token[4:20].encode() in p.read_bytes()] == []


def test_a_code_block_of_many_keys_is_judged_once():
    """20,000 keys in one code block: the example check looks at the block once, not once
    per finding (that was quadratic in the note's size)."""
    import time

    block = "GH_TOKEN=ghp_4r9jH8apqCjW9zsOeNHy7oQ1VdUFNwkl6m8h\n" * 20_000
    note = parse_note("a.md", f"# Keys\n\n```\n{block}```\n".encode())
    started = time.process_time()
    found = scan_text(note.text, note.code_ranges)
    assert time.process_time() - started < 10
    assert len(found) == 20_000
    labelled = "DB_PASSWORD=Kq8vT2#pLm9\n" * 20_000
    example = parse_note("b.md", f"# Keys\n\nExample:\n\n```\n{labelled}```\n".encode())
    started = time.process_time()
    assert scan_text(example.text, example.code_ranges) == []
    assert time.process_time() - started < 10


# -- forms real workspaces held that the detector missed (precision round 3) ---------------
# Values are built from pieces so that no credential-looking string sits in the repository.

_PW = "sun" + "flower"  # a word: the password a keyring was really unlocked with
_GEN = "Tq8Rv3" + "NwZ7Lp" + "2Xc9Vb4Mn6"  # a generated key


@pytest.mark.parametrize("line,reported", [
    (f'GOG_KEYRING_PASSWORD="{_PW}" gog calendar list', True),
    (f"- run `GOG_KEYRING_PASSWORD={_PW} gog gmail search 'is:unread'`", True),
    (f"A=1 GOG_KEYRING_PASSWORD='{_PW}-blue' gog auth", True),
    (f"DEPLOY_TOKEN={_PW}99 ./deploy.sh", True),
    ('GOG_KEYRING_PASSWORD="$GOG_PW" gog calendar list', False),  # a variable
    ("GOG_KEYRING_PASSWORD=${GOG_PW} gog calendar list", False),
    ("GOG_KEYRING_PASSWORD=<your-password> gog calendar list", False),
    ("GH_TOKEN=YOUR_TOKEN gh pr list", False),
    ("DB_PASSWORD=changeme ./run.sh", False),
    (f"SORT_KEY={_PW} make", False),  # a *_KEY that names no credential
    (f"GOG_KEYRING_PASSWORD={_PW}", False),  # no command after it: a word is not enough
    (f"export GOG_KEYRING_PASSWORD={_PW}", False),
    (f'GOG_KEYRING_PASSWORD="{_PW}" && gog calendar list', False),
], ids=[f"form{i}" for i in range(13)])
def test_a_password_set_before_a_command(line, reported):
    found = scan_text(line + "\n")
    assert bool(found) == reported
    for f in found:
        assert (f.kind, f.label) in {("password", "GOG_KEYRING_PASSWORD"),
                                     ("token", "DEPLOY_TOKEN")}
        assert _PW not in f.masked


@pytest.mark.parametrize("prefix", ["sk-None-", "sk-kimi-", "sk-cp-"])
def test_a_providers_sk_variant_is_a_key(prefix):
    key = prefix + _GEN + "Hs5Jq" + "Wc2Ud7"
    found = scan_text(f"- key: {key}\n")
    assert [(f.kind, f.masked) for f in found] == [
        ("OpenAI API key" if prefix == "sk-None-" else "sk- API key", "sk-…2Ud7")]


def test_hyphenated_words_after_sk_are_no_key():
    assert scan_text("use sk-learn-compatible-estimators-for-regression-tasks here\n") == []


@pytest.mark.parametrize("marker", ["## Config example", "## 配置示例", "Example:"])
def test_a_generated_key_in_a_config_example_is_live(marker):
    text = (f"# Gateway\n\n{marker}\n\n```yaml\napi_key: {_GEN}\n"
            "token: sk-xxxx\napi_key: <your-key>\napi_key: YOUR_API_KEY\n"
            "secret: a1b2c3d4e5f6g7h8i9j0\n```\n")
    note = parse_note("x.md", text.encode())
    found = scan_text(note.text, note.code_ranges)
    assert [(f.line, f.kind, f.masked) for f in found] == [(6, "API key", "…4Mn6")]


def test_missed_forms_are_reported_and_never_printed(make_vault, capsys):
    key = "sk-kimi-" + _GEN + "Hs5Jq" + "Wc2Ud7"
    root = make_vault({"AGENTS.md": "# Agents\n", "TOOLS.md": (
        f"# Tools\n\n- calendar: `GOG_KEYRING_PASSWORD=\"{_PW}\" gog calendar list`\n"
        f"- model key {key}\n\n## Config example\n\n```json\n{{\"apiKey\": \"{_GEN}\"}}\n```\n")})
    for fmt in ("text", "json", "github", "sarif"):
        assert main(["check", str(root), "--no-cache", "--select", "secret-in-memory",
                     "--format", fmt]) == 1
        out = capsys.readouterr().out
        for core in (_PW, _GEN, key[8:20]):
            assert core not in out
    assert main(["check", str(root), "--no-cache", "--select", "secret-in-memory"]) == 1
    out = capsys.readouterr().out
    assert "TOOLS.md:3:" in out and "TOOLS.md:4:" in out and "TOOLS.md:9:" in out


# -- backup copies: never notes, still scanned --------------------------------------------

def _backup_vault(make_vault):
    from vault_files import age_files

    key = "sk-kimi-" + _GEN + "Hs5Jq" + "Wc2Ud7"
    root = make_vault({
        "AGENTS.md": "# Agents\n", "MEMORY.md": "# Memory\n",
        "memory/2026-03-01.md": "# 2026-03-01\n\n- deployed\n",
        "backups/2026-03-01/MEMORY.md": f"# Memory\n\n- model key {key}\n",
        # a copy's journal: its broken link and its name colliding with the real one are no
        # finding; a reviewed line stays accepted in a copy too
        "backups/2026-03-01/memory/2026-03-01.md":
            f"# 2026-03-01\n\n[[gone]]\n<!-- vaultkit-disable-next-line secret-in-memory -->\n"
            f"- reviewed {key}\n",
        # vendored packages stay unread: their README's keys are not the owner's
        "venv/lib/pkg/README.md": f"key {key}\n"})
    age_files(root)
    return root, key


def test_a_backup_copy_of_memory_is_scanned_for_credentials_only(make_vault, capsys):
    from test_rules_support import findings

    root, key = _backup_vault(make_vault)
    # every rule runs: only the credential rule reads the copies
    assert [f for f in findings(root) if f[0] != "index-stale"] == [
        ("secret-in-memory", "backups/2026-03-01/MEMORY.md", 3)]
    copy = str(root / "backups/2026-03-01/MEMORY.md")
    # a cold run, a warm one, and the copy named alone (as the commit hook names it)
    for args in ([str(root), "--no-cache"], [str(root)], ["--root", str(root), copy]):
        assert main(["check", *args]) == 1
        out = capsys.readouterr().out
        assert "backups/2026-03-01/MEMORY.md:3:13: VK701" in out and key[8:20] not in out
        assert "(1 error, 0 warnings" in out


def test_a_change_in_a_backup_copy_is_seen_by_the_cached_run(make_vault, capsys):
    from test_results_cache import _write_aged

    root, key = _backup_vault(make_vault)
    copy = root / "backups/2026-03-01/MEMORY.md"

    def both():
        main(["check", str(root), "--format", "json", "--select", "secret-in-memory"])
        cached = capsys.readouterr().out
        main(["check", str(root), "--format", "json", "--select", "secret-in-memory",
              "--no-cache"])
        assert capsys.readouterr().out == cached
        return json.loads(cached)

    assert len(both()) == 1
    _write_aged(copy, "# Memory\n\n- rotated\n")
    assert both() == []
    _write_aged(root / "backups/2026-03-02.md", f"# copy\n\n- {key}\n")
    assert [d["path"] for d in both()] == ["backups/2026-03-02.md"]
    # a change to a note keeps the copies' findings (no copy changed)
    _write_aged(root / "memory/2026-03-01.md", "# 2026-03-01\n\n- deployed twice\n")
    assert [d["path"] for d in both()] == ["backups/2026-03-02.md"]


def test_secret_scan_folders_must_be_skipped_folders(make_vault, capsys, tmp_path):
    profile = (Path(__file__).resolve().parent.parent / "rules" / "openclaw.yaml").read_text()
    bad = tmp_path / "mine.yaml"
    bad.write_text(profile.replace("secret_scan_folders: [backups]",
                                   "secret_scan_folders: [notes]"))
    root = make_vault({"MEMORY.md": "# Memory\n"})
    assert main(["check", str(root), "--profile", str(bad), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "secret_scan_folders" in err and "'notes' is not one of skip_folders" in err
    assert err.count("\n") == 1
