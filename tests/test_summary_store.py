"""Module summaries kept across runs in the results cache folder (cache.SummaryFolder, injected
into ProjectIndex by lint_paths): a later run summarises only the modules that changed, and an
entry that is stale, damaged, from another version or planted is never used."""

from __future__ import annotations

import dataclasses
import enum
import json
import shutil
import typing
from pathlib import Path

import pytest

import ddplint.analysis.summaries as summaries_module
from case_files import copy_case_files
from ddplint.analysis.summaries import ModuleSummary, outline_from_json, outline_to_json, summary_from_json, summary_to_json
from ddplint.api import lint_paths
from ddplint.cache import SUMMARY_FOLDER_NAME, ResultCache
from ddplint.rules import select_rules
from loader_project import TRAINING_SCRIPT, write_project

REPOSITORY = Path(__file__).resolve().parent.parent


# -- the codec -----------------------------------------------------------------------------------
def _sample(hint, seed: int):
    """A value of type `hint` that differs from its type's default (empty, None, False, 0)."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        return _sample(next(a for a in arguments if a is not type(None)), seed)
    if hint is bool:
        return True
    if hint is int:
        return seed + 1
    if hint is str:
        return f"value{seed}"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return list(hint)[-1]
    if dataclasses.is_dataclass(hint):
        hints = summaries_module._hints(hint)
        return hint(**{f.name: _sample(hints[f.name], seed + i) for i, f in enumerate(dataclasses.fields(hint))})
    if origin in (set, frozenset):
        return origin({_sample(arguments[0], seed), _sample(arguments[0], seed + 7)})
    if origin is dict:
        return {_sample(arguments[0], seed): _sample(arguments[1], seed + 1)}
    if origin is tuple:
        return tuple(_sample(kind, seed + i) for i, kind in enumerate(arguments))
    raise AssertionError(f"the test has no sample for {hint!r}: teach it (and the codec) the type")


def test_every_field_of_a_summary_is_kept():
    """Every field, also one added later, non-default and read back equal: a field the codec
    dropped or could not write fails here."""
    summary = _sample(ModuleSummary, 0)
    for item in dataclasses.fields(ModuleSummary):
        assert getattr(summary, item.name) != getattr(ModuleSummary(), item.name), item.name
    stored = json.loads(json.dumps(summary_to_json(summary)))
    assert summary_from_json(stored) == (summary,)
    assert summary_from_json(summary_to_json(None)) == (None,)


@pytest.mark.parametrize("outline", [(False, None), (True, None), (True, frozenset()), (True, frozenset({"a", "b"}))])
def test_outlines_are_kept(outline):
    assert outline_from_json(json.loads(json.dumps(outline_to_json(outline)))) == outline


@pytest.mark.parametrize("damage", [
    None, [], {"summary": 3}, {"summary": {}}, {"summary": None, "more": 1},
    {"summary": {**summary_to_json(ModuleSummary())["summary"], "device_setters": [1]}},
    {"summary": {**summary_to_json(ModuleSummary())["summary"], "epoch_setters": {"f": ["x", True]}}},
    {"summary": {**summary_to_json(ModuleSummary())["summary"], "extra": []}},
])
def test_anything_else_is_a_miss(damage):
    assert summary_from_json(damage) is None


# -- across runs ---------------------------------------------------------------------------------
@pytest.fixture
def counted(monkeypatch):
    """How many times a module is summarised (with libcst) in this process."""
    calls: list[str] = []
    original = summaries_module.summary_of

    def counting(data: bytes, path: str):
        calls.append(Path(path).name)
        return original(data, path)

    monkeypatch.setattr(summaries_module, "summary_of", counting)
    return calls


def _run(root: Path, cache_dir: Path, settings: str = "s", use_cache: bool = True) -> list[tuple]:
    cache = ResultCache(cache_dir, settings) if use_cache else None
    found = [(Path(d.filename).name, d.location.row, d.code, d.message)
             for d in lint_paths([str(root)], select_rules(), [], jobs=1, cache=cache)]
    if cache is not None:
        cache.save()
    return found


@pytest.fixture
def project(tmp_path):
    root = write_project(tmp_path / "project", {"train.py": TRAINING_SCRIPT})
    (root / "pyproject.toml").write_text("")
    return root


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob(f"*/{SUMMARY_FOLDER_NAME}/*.json"))


def test_a_later_run_reads_the_summary_and_a_changed_module_is_summarised_again(project, tmp_path, counted):
    cache_dir = tmp_path / "cache"
    first = _run(project, cache_dir)
    assert [code for _, _, code, _ in first] == ["DDP001"] and counted == ["data.py"]
    # Other settings: no result is cached for them, the module's summary is.
    assert _run(project, cache_dir, "other") == first and counted == ["data.py"]
    data = project / "data.py"
    data.write_text(data.read_text().replace(
        "from torch.utils.data import DataLoader",
        "from torch.utils.data import DataLoader, DistributedSampler",
    ).replace("shuffle=True", "sampler=DistributedSampler(dataset)"))
    changed = [code for _, _, code, _ in _run(project, cache_dir, "third")]
    assert changed == ["DDP002"] and counted == ["data.py", "data.py"]  # it now shards, unseeded


def _rewrite_entries(cache_dir: Path, change) -> None:
    for entry in _entries(cache_dir):
        content = json.loads(entry.read_text())
        change(content)
        entry.write_text(json.dumps(content))


def _hide_the_loader(content: dict) -> None:
    """A summary saying data.py offers nothing (a planted entry would hide the finding)."""
    if content["kind"].startswith("summary"):
        content["value"] = summary_to_json(summaries_module.ModuleSummary())


@pytest.mark.parametrize("tamper", [
    lambda c: (_hide_the_loader(c), c.update(version="0.0.0-other")),
    lambda c: (_hide_the_loader(c), c.update(format=99)),
    lambda c: (_hide_the_loader(c), c.update(owner="0" * 32)),
    lambda c: (_hide_the_loader(c), c.update(content="0" * 32)),
    lambda c: (_hide_the_loader(c), c.update(kind="summary other.py")),
    lambda c: c.update(value={"summary": {"loader_factories": 3}}),
    lambda c: c.update(value=[True, [1]]),
], ids=["other-version", "other-format", "not-this-folder", "other-content", "other-file", "damaged", "wrong-types"])
def test_an_entry_not_made_for_this_module_here_is_never_used(project, tmp_path, counted, tamper):
    cache_dir = tmp_path / "cache"
    first = _run(project, cache_dir)
    _rewrite_entries(cache_dir, tamper)
    assert _run(project, cache_dir, "other") == first
    assert counted == ["data.py", "data.py"]


def test_the_untampered_entry_is_what_decides(project, tmp_path, counted):
    """The control for the test above: the same rewrite, keeping the fields, is used."""
    cache_dir = tmp_path / "cache"
    _run(project, cache_dir)
    _rewrite_entries(cache_dir, _hide_the_loader)
    assert _run(project, cache_dir, "other") == [] and counted == ["data.py"]


def test_unreadable_entries_are_misses(project, tmp_path, counted):
    cache_dir = tmp_path / "cache"
    first = _run(project, cache_dir)
    for entry in _entries(cache_dir):
        entry.write_bytes(b"\xff{not json")
    assert _run(project, cache_dir, "other") == first and counted == ["data.py", "data.py"]
    for entry in _entries(cache_dir):  # and rewritten whole
        assert json.loads(entry.read_text())["format"] == 1


def test_a_cache_folder_copied_elsewhere_brings_no_summary(project, tmp_path, counted):
    cache_dir = tmp_path / "cache"
    _run(project, cache_dir)
    _rewrite_entries(cache_dir, _hide_the_loader)
    copy = tmp_path / "copy"
    shutil.copytree(cache_dir, copy)
    assert [code for _, _, code, _ in _run(project, copy, "other")] == ["DDP001"]


def test_a_link_in_place_of_the_summary_folder_is_not_followed(project, tmp_path, counted):
    cache_dir = tmp_path / "cache"
    first = _run(project, cache_dir)
    [folder] = {entry.parent for entry in _entries(cache_dir)}
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    _rewrite_entries_in(elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)
    assert _run(project, cache_dir, "other") == first and counted == ["data.py", "data.py"]


def _rewrite_entries_in(folder: Path) -> None:
    for entry in folder.glob("*.json"):
        content = json.loads(entry.read_text())
        _hide_the_loader(content)
        entry.write_text(json.dumps(content))


def test_no_cache_keeps_no_summary(project, tmp_path, counted):
    cache_dir = tmp_path / "cache"
    _run(project, cache_dir, use_cache=False)
    _run(project, cache_dir, use_cache=False)
    assert not cache_dir.exists() and counted == ["data.py", "data.py"]


# -- equivalence ---------------------------------------------------------------------------------
@pytest.mark.slow  # three runs over the corpus and the examples
def test_findings_are_the_same_without_the_store_cold_and_warm(tmp_path, counted):
    root = tmp_path / "project"
    copy_case_files(root)
    shutil.copytree(REPOSITORY / "examples", root / "examples")
    # The case files import helpers it does not hold: a project whose do, for summaries to read.
    write_project(root / "loaders", {"train.py": TRAINING_SCRIPT})
    (root / "pyproject.toml").write_text("")
    cache_dir = tmp_path / "cache"
    without = _run(root, cache_dir, use_cache=False)
    summarised = len(counted)
    cold = _run(root, cache_dir, "cold")
    warm = _run(root, cache_dir, "warm")  # no results for these settings: every file checked again
    assert summarised > 0 and len(counted) == 2 * summarised, counted  # warm: every summary from the store
    assert cold == without and warm == without


# -- the language server -------------------------------------------------------------------------
def test_the_language_server_reads_what_a_cli_run_kept(project, counted, monkeypatch):
    from ddplint.engine import lint_source
    from ddplint.lsp.analysis import _Projects

    monkeypatch.delenv("DDPLINT_CACHE_DIR", raising=False)
    _run(project, project / ".ddplint_cache")  # `ddplint .` in the project: the default folder
    train = project / "train.py"
    index = _Projects().for_document(str(train))
    found = lint_source(train.read_text(), str(train), select_rules(), [], index)
    assert [d.code for d in found] == ["DDP001"] and counted == ["data.py"]  # the CLI's summary, not a parse


def test_the_language_server_makes_no_cache_folder(project, counted, monkeypatch):
    from ddplint.engine import lint_source
    from ddplint.lsp.analysis import _Projects

    monkeypatch.delenv("DDPLINT_CACHE_DIR", raising=False)
    train = project / "train.py"
    found = lint_source(train.read_text(), str(train), select_rules(), [], _Projects().for_document(str(train)))
    assert [d.code for d in found] == ["DDP001"] and counted == ["data.py"]
    assert not (project / ".ddplint_cache").exists()
