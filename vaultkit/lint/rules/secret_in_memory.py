from vaultkit.lint.rule import Rule
# (imported here, not in check: an import statement run per note cost ~2 µs a note)
from vaultkit.vault.secretscan import Finding, scan_note


class SecretInMemory(Rule):
    """
    ## What it does
    Reports a credential written into a note: an API key, token, password, private key or
    secret, with its kind and a masked form (`sk-ant-…Q3xz`), never the value itself.

    Two kinds of evidence count. **Known formats**: Telegram bot tokens (also inside a
    Bot API URL), Anthropic (`sk-ant-…`), OpenRouter (`sk-or-v1-…`), OpenAI (`sk-proj-…`)
    and other `sk-` provider keys, NVIDIA (`nvapi-…`), GitHub (`ghp_…`, `github_pat_…`), Google OAuth client secrets
    (`GOCSPX-…`) and API keys (`AIza…`), JSON Web Tokens, AWS access keys, Slack, Stripe,
    Hugging Face and Groq tokens, PEM private-key blocks and passwords inside URLs
    (`postgres://user:…@host`). **Keyword-anchored values**: a value after a label such as
    `password`, `api key`, `token`, `secret`, `client secret`, `Authorization: Bearer`,
    `密码`, `口令`, `密钥`, `令牌`, `пароль`, `токен`, `ключ API` — in a Markdown table
    (`| **API Key** | `…` |`, or a table whose header names the column), an assignment
    (`export X_API_KEY="…"`, `Environment=DB_PASSWORD=…`), JSON or YAML (`"api_key": "…"`),
    a header (`-H "X-MBX-APIKEY: …"`) or a bullet (`- 用户: root | 密码: …`). Such a value
    must look like a credential: long enough, mixed letters and digits (or symbols, for a
    password), not a word, number, path, URL, model name or identifier — except a variable
    set for one command (`GOG_KEYRING_PASSWORD="…" gog calendar list`), whose value is
    reported even when it is a word, unless it is a placeholder (`"$PW"`, `<your-password>`).
    A provider's `sk-<name>-` variant (`sk-kimi-…`) counts when what follows looks
    generated. Two tokens joined by a hyphen are two findings; two glued so that the first's characters take the
    second's start (`xai-…_xai-…`) are one, masked whole.

    Not reported: placeholders and test values (`sk-xxx`, `<YOUR_KEY>`, `${OPENAI_API_KEY}`,
    `****`, `AKIA…EXAMPLE`, `changeme`, `test1234`), references to where a secret is kept
    (`env:BOT_TOKEN`, `~/.config/bot.token`, `1Password`), a made-up value inside a code
    block marked as an example (`Example`, `e.g.`, `示例`, `пример` on its fence line, the
    three lines above it or its section's heading; a random-looking key or token there is
    reported: "config examples" held live keys) and a labelled value on a line that calls
    itself an example (`password: P@ssw0rd (example)`), values in words of a language
    (`密码：已改`), dates, UUIDs, git SHAs and hashes that no credential label precedes, and `data:…;base64,`
    images. A reviewed false positive is accepted with
    `<!-- vaultkit-disable-next-line secret-in-memory -->` above the line.

    Each note is scanned once per content; the result is cached with the note, so the commit
    hook scans only the files that changed.

    Backup copies are read too: the profile's `secret_scan_folders` (`backups/` in the
    `openclaw` profile) are folders every other rule skips (`skip_folders`: whole-workspace
    copies whose journals collide on name with the real ones), but a copy of memory holds
    the credentials memory held and is pushed with it, so this rule scans their Markdown
    files (not `venv/`, also skipped: vendored packages' example keys are not the owner's).
    A change there makes the next check run every rule again.

    A credential OpenClaw's dreaming promoted into `MEMORY.md` (in a `## Promoted From
    Short-Term Memory (DATE)` section) is reported the same way, at error severity, and the
    message names the promotion that wrote it (docs/dreaming.md).

    ## Why is this bad?
    Memory is pushed to a remote every night and read into every session. In 7 of 13 public
    OpenClaw workspaces live-looking credentials sat in Markdown notes on a public remote.
    A credential belongs in the runtime's config or environment; once committed it must be
    rotated, because history keeps it (`vaultkit audit` lists the commits, see its `secrets`
    check).

    ## Example
    ```markdown
    - Alerts bot: 7412398560:AAF… (the whole token)
    ```

    ```
    MEMORY.md:3:16: VK701 secret-in-memory error: Telegram bot token (…x9Qa) in memory; remove it, rotate it, keep it in the runtime's config or environment
    ```
    """

    name = "secret-in-memory"
    code = "VK701"
    reads_set_aside = True  # backups/: never notes, still pushed
    severity = "error"

    def check(self, note, ctx):
        if ctx.has_note(note.path):
            found = ctx.secrets(note)  # (a fact cached with the note)
        else:  # a file of backups/: no note, so nothing cached with it
            found = [] if note.error else [Finding(*t) for t in scan_note(note)]
        blocks = []
        if found and "Promoted From Short-Term Memory" in note.text:
            from vaultkit.vault.promoted import promoted_blocks

            blocks = promoted_blocks(note.lines)  # (dreaming wrote it there: say so)
        for finding in found:
            block = next((b for b in blocks if b.line <= finding.line <= b.end), None)
            where = (f" (promoted by '{block.heading}' (line {block.line}), OpenClaw "
                     "dreaming's nightly promotion)" if block else "")
            yield self.diag(note.path, finding.line, finding.column,
                            f"{finding.describe()} in memory{where}; remove it, rotate it, "
                            "keep it in the runtime's config or environment")

RULE = SecretInMemory
