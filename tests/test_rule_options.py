"""Rule options in `[tool.ddplint]`: a project's own rank-0 helpers (`rank-zero-functions`) and
loader factories that shard (`sharded-loader-factories`), declared once and honoured by the CLI
(with and without worker processes and the results cache) and the language server alike."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from ddplint.analysis.options import AnalysisOptions
from ddplint.cli import main
from ddplint.config import ConfigError, load_settings
from lsp_client import initialize, open_document, published, server_config

# A collective that only the coordinator reaches: a hang, once the project says who that is.
# `is_coordinator` holds none of the words the built-in guard recognition knows.
GUARDED_COLLECTIVE = """
import torch
import torch.distributed as dist
from utils import is_coordinator


def main():
    dist.init_process_group("nccl")
    total = torch.zeros(1)
    if is_coordinator():
        dist.all_reduce(total)


main()
"""

# A factory of this file building the loader every rank trains on, without a sampler.
FACTORY_HERE = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def build_sharded_loader(dataset):
    return DataLoader(dataset, batch_size=8, shuffle=True)


def main():
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    loader = build_sharded_loader(list(range(100)))
    for epoch in range(3):
        for batch in loader:
            model(batch).sum().backward()


main()
"""

FACTORY_MODULE = """
from torch.utils.data import DataLoader


def build_sharded_loader(dataset):
    return DataLoader(dataset, batch_size=8, shuffle=True)
"""

TRAIN_WITH_PROJECT_FACTORY = """
import torch
import torch.distributed as dist

from data import build_sharded_loader


def main():
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    loader = build_sharded_loader(list(range(100)))
    for epoch in range(3):
        for batch in loader:
            model(batch).sum().backward()


main()
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def configure(directory: Path, body: str = "") -> Path:
    return write(directory / "pyproject.toml", f"[project]\nname = 'demo'\n\n[tool.ddplint]\n{body}")


def findings(capsys, *args: str) -> list[tuple[str, str]]:
    """(file name, code) of each finding of `ddplint --no-cache ARGS`, which must have run."""
    status = main(["--no-cache", *args])
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    return sorted((Path(line.split(":")[0]).name, line.split()[1]) for line in out.splitlines() if ": DDP" in line)


# -- rank-zero-functions ------------------------------------------------------------------------
@pytest.mark.parametrize("declared", ['"is_coordinator"', '"utils.is_coordinator"'])
def test_a_collective_under_a_declared_guard_is_flagged(tmp_path: Path, capsys, declared: str):
    configure(tmp_path, f"rank-zero-functions = [{declared}]\n")
    write(tmp_path / "train.py", GUARDED_COLLECTIVE)
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP007")]


def test_a_declared_helper_whose_name_mentions_a_rank_is_a_guard_too(tmp_path: Path, capsys):
    # `comm.is_main_rank()` is no rank value and no known rank-0 name: undeclared, it is not a guard.
    text = GUARDED_COLLECTIVE.replace("from utils import is_coordinator", "import comm")
    write(tmp_path / "train.py", text.replace("if is_coordinator():", "if comm.is_main_rank():"))
    configure(tmp_path)
    assert findings(capsys, str(tmp_path)) == []
    configure(tmp_path, 'rank-zero-functions = ["comm.is_main_rank"]\n')
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP007")]


@pytest.mark.parametrize(
    "body",
    [
        "",  # undeclared: the analysis cannot know what is_coordinator() means
        'rank-zero-functions = ["other.is_coordinator"]\n',  # another module's function
        'rank-zero-functions = ["coordinator"]\n',  # whole names only, not a part of one
    ],
)
def test_a_collective_under_an_undeclared_guard_is_left_alone(tmp_path: Path, capsys, body: str):
    configure(tmp_path, body)
    write(tmp_path / "train.py", GUARDED_COLLECTIVE)
    assert findings(capsys, str(tmp_path)) == []


def test_the_negated_declared_guard_is_everyone_else(tmp_path: Path, capsys):
    # `if not is_coordinator(): ... else: all_reduce` is rank 0's branch too.
    configure(tmp_path, 'rank-zero-functions = ["is_coordinator"]\n')
    text = GUARDED_COLLECTIVE.replace(
        "    if is_coordinator():\n        dist.all_reduce(total)\n",
        "    if not is_coordinator():\n        pass\n    else:\n        dist.all_reduce(total)\n",
    )
    assert "else:" in text
    write(tmp_path / "train.py", text)
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP007")]


# -- sharded-loader-factories -------------------------------------------------------------------
def test_a_loader_from_a_factory_of_the_file_is_flagged_unless_declared(tmp_path: Path, capsys):
    write(tmp_path / "train.py", FACTORY_HERE)
    configure(tmp_path)
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP001")]
    configure(tmp_path, 'sharded-loader-factories = ["build_sharded_loader"]\n')
    assert findings(capsys, str(tmp_path)) == []


def test_a_loader_from_a_factory_of_another_module_is_flagged_unless_declared(tmp_path: Path, capsys):
    write(tmp_path / "data.py", FACTORY_MODULE)
    write(tmp_path / "train.py", TRAIN_WITH_PROJECT_FACTORY)
    configure(tmp_path)
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP001")]
    configure(tmp_path, 'sharded-loader-factories = ["data.build_sharded_loader"]\n')
    assert findings(capsys, str(tmp_path)) == []
    assert findings(capsys, str(tmp_path / "train.py")) == []  # checked alone: the same answer


def test_a_factory_of_another_name_does_not_silence(tmp_path: Path, capsys):
    write(tmp_path / "data.py", FACTORY_MODULE)
    write(tmp_path / "train.py", TRAIN_WITH_PROJECT_FACTORY)
    configure(tmp_path, 'sharded-loader-factories = ["data.build_eval_loader"]\n')
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP001")]


# -- each file with its own configuration -------------------------------------------------------
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_options_do_not_leak_between_files_of_different_configurations(tmp_path: Path, capsys, jobs: str):
    declared, plain = tmp_path / "declared", tmp_path / "plain"
    configure(declared, 'rank-zero-functions = ["is_coordinator"]\nsharded-loader-factories = ["build_sharded_loader"]\n')
    configure(plain, "")
    for directory in (declared, plain):
        write(directory / "guarded.py", GUARDED_COLLECTIVE)
        write(directory / "factory.py", FACTORY_HERE)
    assert main(["--no-cache", "--jobs", jobs, str(declared), str(plain)]) == 1
    out = capsys.readouterr().out
    found = sorted((Path(line.split(":")[0]).parent.name, Path(line.split(":")[0]).name, line.split()[1])
                   for line in out.splitlines() if ": DDP" in line)
    assert found == [("declared", "guarded.py", "DDP007"), ("plain", "factory.py", "DDP001")]


# -- validation ---------------------------------------------------------------------------------
def test_options_are_read_into_the_settings(tmp_path: Path):
    configure(tmp_path, 'rank-zero-functions = ["utils.is_master"]\nsharded-loader-factories = ["data.build"]\n')
    assert load_settings(tmp_path).options == AnalysisOptions(("utils.is_master",), ("data.build",))
    configure(tmp_path, "")
    assert load_settings(tmp_path).options == AnalysisOptions()


@pytest.mark.parametrize(
    "body, problem",
    [
        ('rank-zero-functions = "utils.is_master"\n', "'rank-zero-functions': expected a list of strings, got str"),
        ("sharded-loader-factories = [1]\n", "'sharded-loader-factories': expected a list of strings, got list"),
        ('rank-zero-functions = ["utils.is master"]\n', "'rank-zero-functions': 'utils.is master' is not a function name"),
        ('sharded-loader-factories = ["data."]\n', "'sharded-loader-factories': 'data.' is not a function name"),
        ('sharded-loader-factories = ["utils.is_master()"]\n', "'utils.is_master()' is not a function name"),
        ('rank-zero-function = ["is_master"]\n', "unknown key 'rank-zero-function'"),
    ],
)
def test_a_bad_option_is_one_line_naming_the_file_and_the_key(tmp_path: Path, capsys, body: str, problem: str):
    config = configure(tmp_path, body)
    write(tmp_path / "train.py", GUARDED_COLLECTIVE)
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path)
    assert str(raised.value).startswith(f"{config}: ") and problem in str(raised.value)
    assert main(["--no-cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err and "Traceback" not in err


def test_the_readme_example_loads(tmp_path: Path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", readme, flags=re.S) if "rank-zero-functions" in b]
    write(tmp_path / "pyproject.toml", block)
    options = load_settings(tmp_path).options
    assert options.rank_zero_functions == ("utils.is_coordinator", "am_i_leader")
    assert options.sharded_loader_factories == ("data.build_sharded_loader",)


def test_ddplint_toml_holds_the_options_at_the_top_level(tmp_path: Path, capsys):
    write(tmp_path / "ddplint.toml", 'rank-zero-functions = ["is_coordinator"]\n')
    write(tmp_path / "train.py", GUARDED_COLLECTIVE)
    assert findings(capsys, str(tmp_path)) == [("train.py", "DDP007")]


# -- the results cache --------------------------------------------------------------------------
def test_changing_an_option_invalidates_the_cached_results(tmp_path: Path, capsys):
    project, cache = tmp_path / "project", tmp_path / "cache"
    write(project / "train.py", GUARDED_COLLECTIVE)
    write(project / "factory.py", FACTORY_HERE)

    def cached_run() -> list[str]:
        assert main(["--cache-dir", str(cache), str(project)]) in (0, 1)
        return sorted(f"{Path(line.split(':')[0]).name} {line.split()[1]}" for line in capsys.readouterr().out.splitlines())

    configure(project, "")
    assert cached_run() == ["factory.py DDP001"]
    assert cached_run() == ["factory.py DDP001"]  # from the cache
    configure(project, 'rank-zero-functions = ["is_coordinator"]\n')
    assert cached_run() == ["factory.py DDP001", "train.py DDP007"]
    configure(project, 'rank-zero-functions = ["is_coordinator"]\nsharded-loader-factories = ["build_sharded_loader"]\n')
    assert cached_run() == ["train.py DDP007"]
    configure(project, "")
    assert cached_run() == ["factory.py DDP001"]


def test_no_options_keep_the_cache_key_of_before():
    # A project without options keeps its cached results across this change.
    assert AnalysisOptions().cache_key() == ""
    assert AnalysisOptions(("a",), ()).cache_key() != AnalysisOptions((), ("a",)).cache_key()


# -- the language server ------------------------------------------------------------------------
@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow  # starts a language server
@pytest.mark.asyncio(loop_scope="module")
async def test_the_language_server_gives_the_cli_s_answer(client: LanguageClient, tmp_path: Path, capsys):
    configure(tmp_path, 'rank-zero-functions = ["is_coordinator"]\nsharded-loader-factories = ["build_sharded_loader"]\n')
    guarded = write(tmp_path / "guarded.py", GUARDED_COLLECTIVE)
    factory = write(tmp_path / "factory.py", FACTORY_HERE)
    from_cli = findings(capsys, str(tmp_path))
    assert from_cli == [("guarded.py", "DDP007")]
    from_server = []
    for path in (guarded, factory):
        open_document(client, path.as_uri(), path.read_text())
        params = await published(client, path.as_uri(), version=1)
        from_server += [(path.name, str(d.code)) for d in params.diagnostics]
    assert sorted(from_server) == from_cli
