-- Headless check of ddplint lsp in Neovim: opens $DDPLINT_FILE, waits for the DDP001 diagnostic,
-- applies its quick fix and waits for it to go (DDP002 then appears: the new sampler has no
-- set_epoch; that one stays). The server is started by the
-- docs/editors.md snippet in $DDPLINT_SNIPPET when this Neovim has the API it uses; Neovim 0.7
-- (Debian 12) has neither vim.lsp.start nor vim.lsp.config, so there the same command is started
-- with 0.7's vim.lsp.start_client instead (and the output says so). A snippet that raises, or
-- starts no client named ddplint, fails the check.
-- Run: DDPLINT_FILE=train.py DDPLINT_SNIPPET=snippet.lua nvim --headless -u NONE -c "luafile editors/neovim/check.lua"
-- (editors/get_editors.sh installs Neovim 0.10 and 0.11; tests/test_editor_neovim.py runs both.)
local function say(text)
  io.stdout:write(text .. "\n")
end

local function finish(code)
  io.stdout:flush()
  vim.cmd((code == 0 and "qa!" or "cq!"))
end

local function ddplint_diagnostics(buf, only)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    if code and (only == nil or code == only) then
      table.insert(found, { code = code, severity = d.severity, line = d.lnum + 1 })
    end
  end
  return found
end

vim.cmd("filetype on")
local snippet = os.getenv("DDPLINT_SNIPPET")
local major_minor = vim.version().major * 100 + vim.version().minor
if snippet and ((major_minor >= 11 and vim.lsp.config) or (major_minor < 11 and vim.lsp.start)) then
  say("starting the server with the snippet " .. snippet)
  local loaded, problem = pcall(dofile, snippet)
  if not loaded then
    say("FAIL: the snippet raised: " .. tostring(problem))
    finish(1)
  end
else
  say(("Neovim %d.%d lacks the snippet's API: starting `ddplint lsp` with vim.lsp.start_client"):format(
    vim.version().major, vim.version().minor))
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "python",
    callback = function(args)
      local id = vim.lsp.start_client({ name = "ddplint", cmd = { "ddplint", "lsp" }, root_dir = vim.fn.getcwd() })
      vim.lsp.buf_attach_client(args.buf, id)
    end,
  })
end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("DDPLINT_FILE")))
local buf = vim.api.nvim_get_current_buf()
if not vim.wait(60000, function() return #ddplint_diagnostics(buf, "DDP001") > 0 end, 100) then
  say("FAIL: no diagnostic within 60 s")
  finish(1)
end
local first = ddplint_diagnostics(buf, "DDP001")[1]
-- 0.10 renamed get_active_clients to get_clients (and 0.12 drops the old name).
local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ bufnr = buf, name = "ddplint" })
if #clients ~= 1 then
  say(("FAIL: %d clients named ddplint attached to the buffer"):format(#clients))
  finish(1)
end
local encoding = clients[1].offset_encoding
say(("client: %s, root %s, %s positions"):format(clients[1].name, clients[1].config.root_dir, encoding))
say(("diagnostic: %s on line %d, severity %s"):format(first.code, first.line, vim.diagnostic.severity[first.severity]))

local params = vim.lsp.util.make_range_params(0, encoding)
params.range = { start = { line = first.line - 1, character = 0 }, ["end"] = { line = first.line - 1, character = 200 } }
params.context = { diagnostics = {} }
local fix
for _, response in pairs(vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 20000) or {}) do
  for _, action in ipairs(response.result or {}) do
    if not fix and action.title:find(first.code .. ":", 1, true) and action.edit then
      fix = action
    end
  end
end
if not fix then
  say("FAIL: no quick fix offered")
  finish(1)
end
say("quick fix: " .. fix.title)
vim.lsp.util.apply_workspace_edit(fix.edit, encoding)
if not vim.wait(60000, function() return #ddplint_diagnostics(buf, "DDP001") == 0 end, 100) then
  say("FAIL: the diagnostic stayed after the fix: " .. vim.inspect(ddplint_diagnostics(buf)))
  finish(1)
end
for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
  if line:find("loader = DataLoader(", 1, true) then
    say("fixed line: " .. vim.trim(line))
  end
end
say("left: " .. vim.inspect(ddplint_diagnostics(buf)):gsub("%s+", " "))
say("PASS")
finish(0)
