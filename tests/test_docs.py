"""The configuration, workflow and hook snippets the docs show are ones that actually work."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ddplint.config import load_settings

ROOT = Path(__file__).resolve().parent.parent


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_configuration_example_loads(tmp_path: Path):
    (toml,) = [block for block in _blocks(ROOT / "README.md", "toml") if "[tool.ddplint]" in block and "select" in block]
    (tmp_path / "pyproject.toml").write_text(toml)
    settings = load_settings(tmp_path)
    assert [rule.code for rule in settings.rules()] == ["DDP001", "DDP002", "DDP005"]
    assert settings.is_excluded(tmp_path / "scripts" / "legacy" / "x.py")
    assert settings.rules_for(tmp_path / "scripts" / "single_gpu_train.py") == ()


def test_ci_workflow_uploads_sarif():
    (workflow,) = [block for block in _blocks(ROOT / "docs" / "ci.md", "yaml") if "jobs:" in block]
    document = yaml.safe_load(workflow)
    assert document["permissions"]["security-events"] == "write"
    steps = document["jobs"]["ddplint"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert any("--output-format sarif" in run and "> ddplint.sarif" in run for run in runs)
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "ddplint.sarif"


def test_readme_pre_commit_snippet_names_real_hooks():
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (snippet,) = [block for block in _blocks(ROOT / "README.md", "yaml") if "repos:" in block]
    named = set(re.findall(r"id: ([\w-]+)", snippet))
    assert named == hooks == {"ddplint", "ddplint-fix"}
