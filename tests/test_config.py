"""[tool.ddplint] / ddplint.toml: discovery, every key, CLI layering, and one-line errors."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from ddplint.cli import main
from ddplint.config import ConfigError, Resolver, find_config, load_settings
from ddplint.rules import select_rules

# One finding each: DDP003 everywhere, DDP001 only where distributed.
DATA_PARALLEL = "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"
NO_SAMPLER = (
    "import torch.distributed as dist\n"
    "from torch.utils.data import DataLoader\n"
    "dist.init_process_group('gloo')\n"
    "train_loader = DataLoader(train_set, batch_size=32, shuffle=True)\n"
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    write(tmp_path / "train.py", DATA_PARALLEL + NO_SAMPLER)
    write(tmp_path / "tests" / "test_train.py", DATA_PARALLEL)
    write(tmp_path / "legacy" / "old.py", DATA_PARALLEL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes(capsys) -> list[tuple[str, str]]:
    out = capsys.readouterr().out
    return sorted((line.split(":")[0], line.split()[1]) for line in out.splitlines())


# -- discovery ----------------------------------------------------------------------------------
def test_find_config_walks_up_and_skips_pyprojects_without_the_table(tmp_path: Path):
    write(tmp_path / "pyproject.toml", "[tool.ddplint]\nignore = ['DDP003']\n")
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    deep = tmp_path / "pkg" / "sub" / "train.py"
    write(deep, "x = 1\n")
    assert find_config(deep) == tmp_path / "pyproject.toml"
    assert find_config(deep.parent) == tmp_path / "pyproject.toml"


def test_ddplint_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path):
    write(tmp_path / "pyproject.toml", "[tool.ddplint]\nignore = ['DDP003']\n")
    write(tmp_path / "ddplint.toml", "ignore = ['DDP001']\n")
    assert find_config(tmp_path) == tmp_path / "ddplint.toml"
    assert load_settings(tmp_path).ignore == ("DDP001",)


def test_no_config_means_defaults(tmp_path: Path):
    settings = load_settings(tmp_path)
    assert settings.path is None
    assert settings.rules() == select_rules()
    assert {"DDP001", "DDP002", "DDP003", "DDP004"} <= {r.code for r in settings.rules()}


def test_settings_are_read_again_when_the_file_changes(tmp_path: Path):
    config = write(tmp_path / "ddplint.toml", "ignore = ['DDP003']\n")
    assert load_settings(tmp_path).ignore == ("DDP003",)
    assert load_settings(tmp_path) is load_settings(tmp_path)  # cached while unchanged
    config.write_text("ignore = ['DDP001', 'DDP002']\n")
    stat = config.stat()
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
    assert load_settings(tmp_path).ignore == ("DDP001", "DDP002")


# -- keys -----------------------------------------------------------------------------------------
def test_ignore_in_pyproject(project: Path, capsys):
    write(project / "pyproject.toml", "[tool.ddplint]\nignore = ['DDP003']\n")
    assert main(["."]) == 1
    assert codes(capsys) == [("train.py", "DDP001")]


def test_select_replaces_and_extend_select_adds(project: Path, capsys):
    write(project / "ddplint.toml", "select = ['DDP001']\n")
    main(["."])
    assert codes(capsys) == [("train.py", "DDP001")]
    write(project / "ddplint.toml", "select = ['DDP001']\nextend-select = ['DDP003']\n")
    main(["train.py"])
    assert codes(capsys) == [("train.py", "DDP001"), ("train.py", "DDP003")]


def test_per_file_ignores(project: Path, capsys):
    write(
        project / "pyproject.toml",
        """
        [tool.ddplint.per-file-ignores]
        "tests/*" = ["DDP003"]
        "train.py" = ["DDP00"]
        """,
    )
    assert main(["."]) == 1
    assert codes(capsys) == [("legacy/old.py", "DDP003")]


def test_exclude_and_extend_exclude(project: Path, capsys):
    write(project / "ddplint.toml", "extend-exclude = ['legacy', 'tests/']\n")
    main(["."])
    assert {path for path, _ in codes(capsys)} == {"train.py"}
    # `exclude` replaces the defaults: a directory named `build` is then checked.
    write(project / "build" / "gen.py", DATA_PARALLEL)
    write(project / "ddplint.toml", "exclude = ['legacy']\n")
    main(["."])
    assert {path for path, _ in codes(capsys)} == {"build/gen.py", "tests/test_train.py", "train.py"}


def test_explicit_files_are_checked_unless_force_exclude(project: Path, capsys):
    write(project / "ddplint.toml", "extend-exclude = ['legacy']\n")
    assert main(["legacy/old.py"]) == 1
    assert codes(capsys) == [("legacy/old.py", "DDP003")]
    assert main(["--force-exclude", "legacy/old.py"]) == 0


def test_nested_config_applies_to_its_own_files(project: Path, capsys):
    write(project / "ddplint.toml", "ignore = ['DDP001']\n")
    write(project / "tests" / "ddplint.toml", "ignore = ['DDP003']\n")
    main(["."])
    assert codes(capsys) == [("legacy/old.py", "DDP003"), ("train.py", "DDP003")]


# -- the command line on top ------------------------------------------------------------------------
def test_cli_select_overrides_configured_select_and_ignore(project: Path, capsys):
    write(project / "ddplint.toml", "ignore = ['DDP003']\n")
    assert main(["--select", "DDP003", "train.py"]) == 1
    assert codes(capsys) == [("train.py", "DDP003")]


def test_cli_ignore_adds_to_configured_ignore(project: Path, capsys):
    write(project / "ddplint.toml", "ignore = ['DDP003']\n")
    assert main(["--ignore", "DDP001", "train.py"]) == 0


def test_cli_extend_exclude_and_isolated_and_config(project: Path, capsys):
    write(project / "ddplint.toml", "ignore = ['DDP001', 'DDP003']\n")
    assert main(["."]) == 0
    capsys.readouterr()
    assert main(["--isolated", "--extend-exclude", "tests,legacy", "."]) == 1
    assert codes(capsys) == [("train.py", "DDP001"), ("train.py", "DDP003")]
    other = write(project / "configs" / "strict.toml", "select = ['DDP003']\n")
    assert main(["--config", str(other), "train.py"]) == 1
    assert codes(capsys) == [("train.py", "DDP003")]


def test_resolver_gives_rules_per_file(project: Path):
    write(project / "pyproject.toml", '[tool.ddplint]\nper-file-ignores = { "tests/*" = ["DDP003"] }\n')
    resolver = Resolver()
    assert "DDP003" in [r.code for r in resolver.rules_for(str(project / "train.py"))]
    assert "DDP003" not in [r.code for r in resolver.rules_for(str(project / "tests" / "test_train.py"))]
    assert resolver.is_excluded(project / ".venv")
    assert not resolver.is_excluded(project / "tests")


# -- errors: exit 2, one line naming file, key and problem ---------------------------------------------
@pytest.mark.parametrize(
    "config, expected",
    [
        ("[tool.ddplint]\nselect = 'DDP001'\n", ["pyproject.toml", "'select'", "expected a list of strings"]),
        ("[tool.ddplint]\nselct = ['DDP001']\n", ["pyproject.toml", "unknown key 'selct'"]),
        ("[tool.ddplint]\nignore = ['DDP999']\n", ["pyproject.toml", "'ignore'", "unknown rule selector 'DDP999'"]),
        ("[tool.ddplint]\nignore = [\n", ["pyproject.toml", "invalid TOML"]),
        ("[tool.ddplint]\nper-file-ignores = ['x']\n", ["pyproject.toml", "'per-file-ignores'"]),
        ('[tool.ddplint.per-file-ignores]\n"a.py" = "DDP001"\n', ["pyproject.toml", "per-file-ignores.'a.py'"]),
    ],
)
def test_bad_config_is_one_line_and_exit_2(project: Path, capsys, config: str, expected: list[str]):
    (project / "pyproject.toml").write_text(config)
    assert main(["."]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    for fragment in expected:
        assert fragment in err


def test_config_error_names_the_file(tmp_path: Path):
    bad = write(tmp_path / "ddplint.toml", "extend-select = [1]\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert str(info.value).startswith(str(bad))
    assert "'extend-select'" in str(info.value)


def test_missing_config_file_given_on_the_command_line(project: Path, capsys):
    assert main(["--config", "nope.toml", "."]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_results_cache_follows_configuration_changes(project: Path, capsys):
    """Cached results are keyed by each file's rules, so editing the configuration takes effect."""
    cache = ["--cache-dir", str(project / "cache")]
    assert main([*cache, "train.py"]) == 1
    assert codes(capsys) == [("train.py", "DDP001"), ("train.py", "DDP003")]
    write(project / "ddplint.toml", "[per-file-ignores]\n'train.py' = ['DDP003']\n")
    main([*cache, "train.py"])
    assert codes(capsys) == [("train.py", "DDP001")]
    assert any((project / "cache").rglob("*.json"))  # the cache was really in use
