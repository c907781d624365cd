"""Notebooks: code cells checked as one program, IPython syntax skipped, findings by cell and line,
fixes written back into the one cell they touch with every other byte of the file unchanged."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from ddplint.api import lint_document
from ddplint.cli import main
from ddplint.notebook import NotebookError, read_notebook
from ddplint.rules import select_rules

CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n", "on all GPUs ✓"]},
    {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [],
        "source": [
            "%matplotlib inline\n",
            "!pip install torch\n",
            "import torch.distributed as dist\n",
            "from torch.utils.data import DataLoader, DistributedSampler\n",
        ],
    },
    {
        "cell_type": "code",
        "execution_count": 2,
        "metadata": {"tags": ["setup"]},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ready ✓\n"]}],
        "source": [
            'dist.init_process_group("gloo")\n',
            "sampler = DistributedSampler(train_set)\n",
            "loader = DataLoader(train_set, batch_size=32, sampler=sampler)",
        ],
    },
    {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {},
        "outputs": [{"data": {"text/plain": ["0.25"]}, "execution_count": 3, "metadata": {}, "output_type": "execute_result"}],
        "source": ["%%time\n", "for epoch in range(10):\n", "    for x, y in loader:\n", "        train_step(x, y)\n"],
    },
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["%%bash\n", "echo $((1 +\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "model.eval?\n"},
]
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.11.0"},
}


def notebook_text(cells=CELLS, indent=1) -> str:
    """Serialised the way Jupyter (nbformat) writes notebooks."""
    document = {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.ipynb").write_text(notebook_text(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_program_skips_ipython_lines_and_foreign_cell_magics():
    program = read_notebook(notebook_text()).program
    compile(program, "nb", "exec")  # parses: no magic or shell line reaches Python
    assert "\n%matplotlib" not in program and "\n!pip" not in program
    assert "import torch.distributed as dist" in program


def test_findings_are_located_by_cell_and_line(project: Path, capsys):
    assert main(["train.ipynb"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("train.ipynb:cell 3:2:1: DDP002 [*] ")
    _ = main(["--output-format", "json", "train.ipynb"])
    (item,) = json.loads(capsys.readouterr().out)
    assert item["cell"] == 3 and item["location"] == {"row": 2, "column": 1}
    # The fix is in cell coordinates too: before line 3 of cell 3.
    assert item["fix"]["edits"] == [
        {"content": "    sampler.set_epoch(epoch)\n", "location": {"row": 3, "column": 1}, "end_location": {"row": 3, "column": 1}}
    ]


def test_full_format_shows_the_cell_line(project: Path, capsys):
    main(["--output-format", "full", "train.ipynb"])
    assert "2 | for epoch in range(10):" in capsys.readouterr().out


def test_directories_include_notebooks(project: Path, capsys):
    (project / ".ipynb_checkpoints").mkdir()
    (project / ".ipynb_checkpoints" / "train-checkpoint.ipynb").write_text(notebook_text(), encoding="utf-8")
    assert main(["."]) == 1
    out = capsys.readouterr().out
    assert out.count("DDP002") == 1 and out.startswith("train.ipynb:cell 3:")


def _changed_json_strings(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines of the file that differ, each decoded as the JSON string it holds."""
    removed, added = [], []
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    old_lines, new_lines = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += [json.loads(line.strip().rstrip(",")) for line in old_lines[i1:i2]]
            added += [json.loads(line.strip().rstrip(",")) for line in new_lines[j1:j2]]
    return removed, added


def test_fix_round_trip_changes_only_the_fixed_cell(project: Path, capsys):
    before = (project / "train.ipynb").read_text(encoding="utf-8")
    assert main(["--fix", "train.ipynb"]) == 0
    after = (project / "train.ipynb").read_text(encoding="utf-8")
    removed, added = _changed_json_strings(before, after)
    assert removed == [] and added == ["    sampler.set_epoch(epoch)\n"]  # one new source line, nothing else
    document = json.loads(after)
    assert document["cells"][3]["source"][:3] == ["%%time\n", "for epoch in range(10):\n", "    sampler.set_epoch(epoch)\n"]
    for index in (0, 1, 2, 4, 5):
        assert document["cells"][index] == CELLS[index]
    assert document["cells"][3]["outputs"] == CELLS[3]["outputs"]
    assert main(["train.ipynb"]) == 0  # fixed
    capsys.readouterr()
    assert main(["--fix", "train.ipynb"]) == 0  # and fixing again changes nothing
    assert (project / "train.ipynb").read_text(encoding="utf-8") == after


def test_unsafe_fix_spanning_cells_writes_both(tmp_path: Path, monkeypatch, capsys):
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import torch.distributed as dist\n", "from torch.utils.data import DataLoader"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ['dist.init_process_group("gloo")\n', "train_loader = DataLoader(ds, batch_size=8, shuffle=True)\n"]},
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook_text(cells), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--fix", "--unsafe-fixes", "nb.ipynb"]) == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["cells"][0]["source"] == [
        "import torch.distributed as dist\n",
        "from torch.utils.data import DataLoader\n",
        "from torch.utils.data import DistributedSampler",  # the cell still ends without a newline
    ]
    assert document["cells"][1]["source"][1] == (
        "train_loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds, shuffle=True))\n"
    )


def test_diff_on_a_notebook_writes_nothing(project: Path, capsys):
    before = (project / "train.ipynb").read_bytes()
    assert main(["--diff", "train.ipynb"]) == 1
    assert '+    "    sampler.set_epoch(epoch)\\n",' in capsys.readouterr().out
    assert (project / "train.ipynb").read_bytes() == before


def test_notebook_in_an_unusual_layout_is_reported_not_reformatted(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "odd.ipynb"
    text = notebook_text().replace('\n "nbformat": 4', '\n "nbformat":    4')  # no json.dumps writes this
    path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--fix", "odd.ipynb"]) == 1
    out = capsys.readouterr().out
    assert "odd.ipynb:1:1: DDP000 cannot write fixes back without reformatting" in out
    assert "DDP002" in out
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    "content, problem",
    [
        ("{not json", "invalid JSON"),
        ('{"cells": 3}', "no list of cells"),
        ('{"cells": [], "metadata": {"language_info": {"name": "R"}}}', "not a Python notebook"),
    ],
)
def test_bad_notebook_is_one_line_and_others_are_checked(tmp_path: Path, monkeypatch, capsys, content, problem):
    (tmp_path / "a_bad.ipynb").write_text(content)
    (tmp_path / "b.py").write_text("import torch.nn as nn\nnn.DataParallel(m)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["."]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("a_bad.ipynb:1:1: DDP000 ") and problem in lines[0]
    assert lines[1].startswith("b.py:2:1: DDP003")


def test_syntax_error_in_a_cell_points_at_the_cell():
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["import torch\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import torch.nn as nn\n", "nn.DataParallel(\n"]},
    ]
    (diagnostic,) = lint_document(notebook_text(cells), "nb.ipynb", select_rules())
    assert diagnostic.code == "DDP000" and diagnostic.cell == 2


def test_a_top_level_await_in_a_cell_is_not_a_syntax_error():
    """Jupyter runs a cell's top-level `await`; the same line in a .py file is CPython's error.
    The cell still gets the rules' findings."""
    awaiting = ["import torch.nn as nn\n", "result = await fetch()\n", "model = nn.DataParallel(net)\n"]
    cells = [_code_cell(*awaiting)]
    (diagnostic,) = lint_document(notebook_text(cells), "nb.ipynb", select_rules())
    assert (diagnostic.code, diagnostic.cell) == ("DDP003", 1)
    as_script = lint_document("".join(awaiting), "train.py", select_rules())
    assert [(d.code, d.location.row) for d in as_script if d.code == "DDP000"] == [("DDP000", 2)]
    assert "await" in as_script[0].message


def test_read_notebook_rejects_non_notebooks():
    with pytest.raises(NotebookError):
        read_notebook(b"\xff\xfe")


def _code_cell(*lines: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": list(lines)}


def test_only_lines_where_a_statement_starts_are_ipython_syntax():
    cells = [
        _code_cell(
            "x = (a\n", "     % b)\n",  # a modulo continuation, not a magic
            'doc = """\n', "!important\n", '"""\n',  # inside a string
            "y = a  # really?\n",  # a comment ending in ?
            "model.forward?\n", "    %time f()\n",  # help and an indented magic
        )
    ]
    program = read_notebook(notebook_text(cells)).program
    compile(program, "nb", "exec")
    assert "     % b)\n" in program and "\n!important\n" in program and "y = a  # really?\n" in program
    assert "\nmodel.forward?" not in program and "\n    %time f()" not in program


def test_shell_escapes_continued_by_backslash_and_assigned_escapes_are_ipython():
    cells = [
        _code_cell(
            "!python train.py --lr 3e-4 \\\n", "    --epochs 3 \\\n", "    --out runs/\n",  # one shell command
            "files = !ls data/\n", "timing = %timeit -o f()\n",  # output of an escape, assigned
            "total = a \\\n", "    % b\n",  # Python: a modulo after a backslash continuation
            "ok = x != y\n",  # Python: a comparison, not an escape
            "ls /content/checkpoints/\n", "cd ..\n",  # automagic: IPython's shell aliases without `!`
            "ls = sorted(names)\n", "time.sleep(1)\n",  # Python that starts with an alias's name
        )
    ]
    program = read_notebook(notebook_text(cells)).program
    compile(program, "nb", "exec")
    assert "\nls = sorted(names)\n" in program and "\ntime.sleep(1)\n" in program
    for ipython in ("    --epochs 3", "    --out runs/", "files = !ls", "timing = %timeit", "ls /content", "cd .."):
        assert "\n" + ipython not in program
    assert "    % b\n" in program and "ok = x != y\n" in program


@pytest.mark.parametrize("metadata", [[], "python", None, {"language_info": "python"}])
def test_odd_metadata_is_not_a_crash(metadata):
    text = json.dumps({"cells": [_code_cell("import torch.nn as nn\n", "nn.DataParallel(m)\n")], "metadata": metadata})
    (diagnostic,) = lint_document(text, "nb.ipynb", select_rules())
    assert diagnostic.code == "DDP003" and diagnostic.cell == 1


def test_cached_notebook_results_keep_their_cell(project: Path, capsys):
    cache = ["--cache-dir", str(project / "cache")]
    main([*cache, "train.ipynb"])
    first = capsys.readouterr().out
    main([*cache, "train.ipynb"])
    assert capsys.readouterr().out == first and first.startswith("train.ipynb:cell 3:2:1: DDP002")
    assert any((project / "cache").rglob("*.json"))
