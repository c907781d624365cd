"""The engine locates findings with positions_of (libcst's codegen, wanted nodes only). It must
give exactly PositionProvider's ranges: checked for every node of realistic files, so a libcst
release that changes its code generation fails here instead of moving findings."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from case_files import CASE_FILES
from ddplint.analysis.syntax import walk
from ddplint.positions import positions_of, targeted_positions

ROOT = Path(__file__).resolve().parent.parent
FILES = CASE_FILES[::6] + sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_ranges_as_position_provider_for_every_node(path):
    module = cst.parse_module(path.read_bytes())
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = walk(module)
    mine = targeted_positions(module, nodes)
    assert [node for node in nodes if mine[node] != reference[node]] == []


def test_crlf_tabs_and_continuations():
    source = "import torch.nn as nn\r\nif x:\r\n\tm = nn.DataParallel(\\\r\n\t\tm)  # é\r\n"
    module = cst.parse_module(source)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = walk(module)
    found = positions_of(module, nodes)
    assert all(found[node] == reference[node] for node in nodes)
