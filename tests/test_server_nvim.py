"""`vaultkit server` in a real editor: headless Neovim's built-in LSP client (0.7's
`vim.lsp.start_client` and `vim.lsp.buf_attach_client`, as docs/editors.md sets it up)
opens a note, edits it without saving, and sees the finding come and go; hover and a code
action answer. CI installs Neovim (`.ci/run`); the test is skipped only without it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

NVIM = shutil.which("nvim")

ALICE = "---\ntype: person\n---\n# Alice\n\nWorks with [[bob#Work]].\n"
BOB = "---\ntype: person\n---\n# Bob\n\n## Work\n\nBuilds things.\n"

SCRIPT = r"""
local out = {}
local function done()
  local f = io.open(vim.env.VK_OUT, "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end
local ok, err = pcall(function()
  local client = vim.lsp.start_client({
    name = "vaultkit",
    cmd = { vim.env.VK_PYTHON, "-m", "vaultkit", "server", "--stdio" },
    root_dir = vim.env.VK_FOLDER,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.VK_NOTE))
  local buf = vim.api.nvim_get_current_buf()
  -- an unsaved edit before the client attaches: didOpen carries it
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "And [[nowhere]]." })
  vim.lsp.buf_attach_client(buf, client)
  local function names()
    local got = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(got, d.code .. " " .. (d.user_data and d.user_data.lsp and
        d.user_data.lsp.data and d.user_data.lsp.data.rule or "?"))
    end
    return got
  end
  out.arrived = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  out.first = names()
  local line = vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1]
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
                   position = { line = 5, character = string.find(line, "bob") } }
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 30000)
  for _, r in pairs(hover or {}) do
    if r.result then out.hover = r.result.contents.value end
  end
  -- as vim.lsp.buf.code_action() sends them: the line's diagnostics in the LSP's shape
  local diags = vim.lsp.diagnostic.get_line_diagnostics(buf, 6)
  local actions = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = diags[1].range, context = { diagnostics = diags } }, 30000)
  out.actions = {}
  for _, r in pairs(actions or {}) do
    for _, a in ipairs(r.result or {}) do table.insert(out.actions, a.title) end
  end
  -- the fix, typed: the last line removed, still unsaved
  vim.api.nvim_buf_set_lines(buf, -2, -1, false, {})
  out.gone = vim.wait(60000, function() return #vim.diagnostic.get(buf) == 0 end, 50)
  out.modified = vim.bo[buf].modified
  vim.lsp.stop_client(client)
  out.stopped = vim.wait(20000, function() return vim.lsp.get_client_by_id(client) == nil end, 50)
end)
if not ok then out.error = tostring(err) end
done()
"""


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed and could not be "
                    "(CI installs it: .ci/run's apt-get line)")
def test_neovim_sees_findings_of_its_unsaved_buffer(make_vault, tmp_path):
    root = make_vault({"memory/people/alice.md": ALICE, "memory/people/bob.md": BOB})
    script = tmp_path / "drive.lua"
    script.write_text(SCRIPT, encoding="utf-8")
    result = tmp_path / "out.json"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VK_PYTHON": sys.executable,
           "VK_FOLDER": str(tmp_path), "VK_NOTE": str(root / "memory/people/alice.md"),
           "VK_OUT": str(result), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.run([NVIM, "--headless", "--clean", "-u", "NONE", "-c",
                           f"luafile {script}"], env=env, capture_output=True, timeout=240,
                          cwd=tmp_path)
    assert result.exists(), proc.stderr.decode(errors="replace")
    out = json.loads(result.read_text(encoding="utf-8"))
    assert "error" not in out, out["error"]
    assert out["arrived"] is True
    assert any(name.endswith(" broken-link") for name in out["first"])
    assert "`[[bob#Work]]` → `memory/people/bob.md`" in out["hover"]
    assert any(t.startswith("Accept this broken-link finding") for t in out["actions"]), out
    assert out["gone"] is True and out["modified"] is True and out["stopped"] is True
    assert (root / "memory/people/alice.md").read_text(encoding="utf-8") == ALICE
