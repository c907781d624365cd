"""The analysis process answers before it tidies its heap (lsp/worker.py `serve`): the editor's
findings never wait for the collection that follows each analysis. The tidy is held back here
until the test lets it go, so the answer can only arrive first if it is sent first."""

from __future__ import annotations

import asyncio

import pytest

from ddplint.lsp import worker
from ddplint.rules import select_codes

pytestmark = pytest.mark.slow  # starts the analysis process (imports libcst)

SCRIPT = "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\nmodel = torch.nn.DataParallel(model)\n"


def test_the_answer_comes_before_the_heap_is_tidied(tmp_path, monkeypatch):
    release = tmp_path / "release"
    monkeypatch.setenv("DDPLINT_TEST_TIDY_RELEASE", str(release))
    monkeypatch.setattr(worker, "ENTRY", "lsp_held_tidy_worker")
    analysis = worker.AnalysisWorker(timeout_s=120)

    async def session():
        first = await asyncio.wait_for(analysis.analyse(SCRIPT, "train.py", select_codes()), 300)
        assert not (tmp_path / "release.tidied").exists()  # answered while the tidy still waits
        release.touch()
        second = await asyncio.wait_for(analysis.analyse(SCRIPT + "\n", "train.py", select_codes()), 300)
        return first, second

    try:
        first, second = asyncio.run(session())
    finally:
        analysis.close()
    assert first.crash is None and second.crash is None
    assert [d.code for d in first.diagnostics] == [d.code for d in second.diagnostics] == ["DDP003"]
    assert (tmp_path / "release.tidied").read_text().startswith("x")  # the first analysis's tidy ran, once released
