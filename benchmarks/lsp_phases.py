"""CPU and wall time of one language-server analysis after an edit, phase by phase.

    python benchmarks/lsp_phases.py [--runs 12] [--lines 1500] [--workspace]

Runs `engine.lint_source` in process with the server's statement parser over the edits of
`lsp_latency.py` (one number changed somewhere in the 1,500-line script of `train_script.py`),
timing the engine's own steps and each rule through wrappers, and prints medians. CPU time is
given next to wall time: on a shared machine wall time mostly measures the other jobs. Rules
share lazily derived facts (loaders, ranks, flow): each is charged to the first rule that asks.
Run it from another checkout (PYTHONPATH) to compare; it only uses what both have. With
`--workspace` the script is `project/train.py` of lsp_latency.py's generated 1,000-file workspace,
and each analysis gets that project's model as the server's worker keeps it (`project` row).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import edited_texts
from train_script import training_script

import ddplint.engine as engine
from ddplint.lsp.incremental import StatementParser
from ddplint.rules import select_rules

# The engine's steps, by the names a checkout has (older ones screened in two steps).
STEPS = ("candidates_by_bytes", "candidates_by_names", "rules_to_run", "build_facts", "_locate")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--workspace", action="store_true", help="analyse the script as a file of a 1,000-file project")
    args = parser.parse_args(argv)
    times: dict[str, list[tuple[float, float]]] = {}

    def timed(name, function):
        def wrapper(*positional, **keywords):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*positional, **keywords)
            finally:
                times.setdefault(name, []).append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
        return wrapper

    for step in STEPS:
        if hasattr(engine, step):
            setattr(engine, step, timed(step, getattr(engine, step)))
    statements = StatementParser()
    if hasattr(statements, "screen"):  # the compile screen by statement (an older checkout compiles the whole text)
        statements.screen = timed("compile screen (statement parser)", statements.screen)  # type: ignore[method-assign]
    else:
        engine.compile_screen = timed("compile_screen", engine.compile_screen)
    statements.parse = timed("parse (statement parser)", statements.parse)  # type: ignore[method-assign]
    rules = [dataclasses.replace(rule, check=timed(f"  {rule.code}", lambda facts, check=rule.check: list(check(facts))))
             for rule in select_rules()]
    text = training_script(args.lines)
    edits = edited_texts(text, args.runs + 4)
    filename, project_for = "train.py", lambda: None
    if args.workspace:
        import tempfile

        from lsp_latency import workspace_with

        from ddplint.lsp.analysis import PROJECTS

        scratch = tempfile.TemporaryDirectory(prefix="lsp-phases-")
        filename = workspace_with(text, Path(scratch.name))[len("file://"):]
        project_for = timed("project (the worker's, kept)", lambda: PROJECTS.for_document(filename))

    def analyse(source: str) -> None:
        engine.lint_source(source, filename, rules, project=project_for(), parser=statements)

    for warm_up in [text, *edits[:3]]:
        analyse(warm_up)
    times.clear()
    whole = timed("one analysis after an edit, all", analyse)
    for edited in edits[3 : 3 + args.runs]:
        whole(edited)
    rule_rows = [name for name in times if name.startswith("  ")]
    times["the rules, all"] = [
        (sum(times[name][run][0] for name in rule_rows), sum(times[name][run][1] for name in rule_rows))
        for run in range(args.runs)
    ]
    print(f"{'phase':34s} {'wall ms':>9s} {'CPU ms':>9s}   (medians of {args.runs} edits)")
    for name, values in times.items():
        print(f"{name:34s} {statistics.median(v[0] for v in values):9.1f} {statistics.median(v[1] for v in values):9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
