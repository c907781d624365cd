#!/usr/bin/env bash
# Helix with docs/editors.md's languages.toml ($DDPLINT_SNIPPET) on $DDPLINT_FILE, typed at as a
# person would (tmux: Helix has no headless mode): waits for DDP001 in the diagnostics picker
# (space d), applies its quick fix from the code-action menu (x selects the line, space a), saves,
# and waits for DDP001 to leave the picker. Prints each step, then PASS; exits 1 on the first
# step that does not happen within its time.
# Usage: DDPLINT_FILE=train.py DDPLINT_SNIPPET=languages.toml editors/helix/check.sh HX
set -euo pipefail

HX=$(realpath "$1")
FILE=$(realpath "$DDPLINT_FILE")
CONFIG=$(mktemp -d)
SOCKET="ddplint-helix-check-$$"  # a tmux server of its own: no other session is touched
mkdir -p "$CONFIG/helix" && cp "$DDPLINT_SNIPPET" "$CONFIG/helix/languages.toml"
tmux_() { tmux -L "$SOCKET" "$@"; }
trap 'tmux_ kill-server 2>/dev/null || true; rm -rf "$CONFIG"' EXIT

screen() { tmux_ capture-pane -p -t check; }
keys() { tmux_ send-keys -t check "$@"; sleep 0.3; }
fail() { echo "FAIL: $1"; echo "--- screen:"; screen; exit 1; }

# Runs "$@" once a second until it succeeds, for at most $1 seconds.
within() {
  local end=$((SECONDS + $1)); shift
  while ((SECONDS < end)); do "$@" && return 0; sleep 1; done
  return 1
}

# The diagnostics picker as shown (space d), closed again before returning.
picker() { keys Space d; sleep 0.5; screen; keys Escape; }
ddp001_row() { grep -oE "(WARN|ERROR|INFO|HINT) +DDP001 [^│]*" | sed 's/ *$//'; }
ddp001_shown() { picker | ddp001_row | grep -q .; }
# Gone only from a picker that did open (its header is on screen), so a missed key cannot pass.
ddp001_gone() { local shown; shown=$(picker); grep -q "severity" <<<"$shown" && ! ddp001_row <<<"$shown" | grep -q .; }
fix_offered() { screen | grep -q "DDP001: Pass"; }
saved() { grep -q "sampler=DistributedSampler(" "$FILE"; }

cd "$(dirname "$FILE")"
tmux_ new-session -d -s check -x 200 -y 50 \
  "env XDG_CONFIG_HOME='$CONFIG' '$HX' '$FILE'; sleep 5"
echo "$("$HX" --version)"

within 60 ddp001_shown || fail "no DDP001 in the diagnostics picker within 60 s"
echo "diagnostic: $(picker | ddp001_row | tr -s ' ')"

line=$(grep -n "DataLoader(" "$FILE" | grep DDP001 | head -n 1 | cut -d: -f1)
keys "${line}G" && keys x && keys Space a
within 20 fix_offered || fail "no DDP001 quick fix in the code-action menu"
# The menu lists the fix first; check so, since Enter applies the highlighted entry.
menu=$(screen | grep -o "DDP001: [^│]*" | head -n 2 | sed 's/ *$//')
echo "code actions: $(echo "$menu" | paste -sd '|' -)"
case "$menu" in "DDP001: Pass"*) ;; *) fail "the quick fix is not the first entry" ;; esac
keys Enter && keys Escape && keys ":w" && keys Enter
within 20 saved || fail "the quick fix was not applied and saved"
echo "fixed line: $(grep "sampler=DistributedSampler(" "$FILE" | head -n 1 | sed 's/^ *//')"
within 60 ddp001_gone || fail "DDP001 stayed after the fix"
keys ":q!" && keys Enter
echo "PASS"
