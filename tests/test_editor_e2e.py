"""ddplint lsp in real editors, each until DDP001 is shown, quick-fixed and gone.

VS Code: editors/vscode/e2e/run.sh packages the extension, installs it into code-server and drives
Chromium; it installs from npm and apt (minutes on a fresh machine), so it runs only when asked:
`DDPLINT_E2E=1 python -m pytest tests/test_editor_e2e.py -m slow`. Neovim and Emacs (eglot) run
headless with the snippets of docs/editors.md, where those editors are installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "editors" / "vscode" / "e2e" / "run.sh"
TIMEOUT_S = 30 * 60  # the first run builds code-server's native modules
EDITOR_TIMEOUT_S = 180
BUGGY = ROOT / "examples" / "ddp001_missing_sampler_buggy.py"
EDITORS_DOC = (ROOT / "docs" / "editors.md").read_text()

pytestmark = pytest.mark.slow  # editors and language servers


def snippet(language: str, marker: str) -> str:
    """The docs/editors.md code block in `language` that contains `marker`."""
    [block] = [b for b in re.findall(rf"```{language}\n(.*?)```", EDITORS_DOC, flags=re.S) if marker in b]
    return block


def run_editor(command: list[str], snippet_text: str, tmp_path: Path) -> str:
    """Runs a headless editor check with `ddplint` on PATH; returns its output, asserting it passed."""
    train = tmp_path / "train.py"
    shutil.copy(BUGGY, train)
    snippet_file = tmp_path / "snippet"
    snippet_file.write_text(snippet_text)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "DDPLINT_FILE": str(train),
        "DDPLINT_SNIPPET": str(snippet_file),
    }
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=EDITOR_TIMEOUT_S)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "PASS" in output, output[-4000:]
    assert "fixed line: loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(" in output
    return output


def nvim_version() -> tuple[int, int]:
    first = subprocess.run(["nvim", "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    major, minor = re.match(r"NVIM v(\d+)\.(\d+)", first).groups()  # type: ignore[union-attr]
    return int(major), int(minor)


@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed (apt-get install neovim)")
def test_neovim_shows_ddp001_as_a_warning_and_its_quick_fix_removes_it(tmp_path):
    # The snippet for this Neovim; check.lua says so when this Neovim is too old for either (0.7).
    marker = "vim.lsp.config" if nvim_version() >= (0, 11) else "vim.lsp.start"
    output = run_editor(
        ["nvim", "--headless", "-u", "NONE", "-c", f"luafile {ROOT / 'editors' / 'neovim' / 'check.lua'}"],
        snippet("lua", marker), tmp_path,
    )
    assert "diagnostic: DDP001 on line 75, severity WARN" in output


@pytest.mark.skipif(shutil.which("emacs") is None, reason="Emacs is not installed (apt-get install emacs-nox)")
def test_emacs_eglot_with_the_documented_snippet_shows_and_fixes_ddp001(tmp_path):
    has_eglot = subprocess.run(
        ["emacs", "--batch", "--eval", "(kill-emacs (if (locate-library \"eglot\") 0 1))"],
        capture_output=True, timeout=60,
    )
    if has_eglot.returncode != 0:
        pytest.skip("eglot is missing: Emacs 29+ ships it; on Emacs 28 install elpa-eglot or eglot from GNU ELPA")
    output = run_editor(
        ["emacs", "--batch", "-l", str(ROOT / "editors" / "emacs" / "check.el")], snippet("elisp", "eglot"), tmp_path
    )
    # The message is the one-line finding, then its why a paragraph below (re.S: across those lines).
    assert re.search(r"diagnostic: ddplint \[DDP001\].*?\(eglot-warning\) on line 75", output, re.S)


@pytest.mark.skipif(
    os.environ.get("DDPLINT_E2E") != "1",
    reason="needs npm, apt and minutes: set DDPLINT_E2E=1 to run editors/vscode/e2e/run.sh",
)
def test_code_server_shows_ddp001_and_its_quick_fix_removes_it():
    # The ddplint under test is this interpreter's (the checkout's), not a fresh venv's.
    env = {**os.environ, "DDPLINT_PYTHON": sys.executable}
    done = subprocess.run(["bash", str(RUN)], env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert "DDP001 shows in the Problems panel" in output
    assert "PASS: DDP001 shown, fixed, gone" in output
