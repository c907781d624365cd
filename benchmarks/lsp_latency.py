"""Latency of `ddplint lsp` next to `ruff server`, in the same run: from a `didChange` of a
1,500-line training script to the `publishDiagnostics` for that version, over stdio, as an editor
sees it.

    python benchmarks/lsp_latency.py [--runs 30] [--debounce-ms 50 0] [--lines 1500] [--workspace]

The script comes from benchmarks/train_script.py (generated, the shape of a research `train.py`).
For each server it opens the script, then `--runs` times changes one number somewhere in the file
(the learning rate in `main()`, an argument default in the parser, a constant in
`train_one_epoch`, a model width: each edit a value not seen before, so no result can come from a
memo of an earlier text), and waits for that version's diagnostics. Then it types
`print(f'epoch {e` into `train_one_epoch` one character at a time and checks that every
half-typed state still publishes the findings of the unchanged statements. It prints medians
and p90s, the server's own analysis time, and an in-process breakdown of one analysis by phase.

With `--workspace` the script is a file on disk, `project/train.py` of the generated 1,000-file
repository of repo_scale.py's pre-commit case (pyproject.toml at its root), opened by its path:
the server then builds and keeps that project's model, as in an editor with the workspace open,
and the time from `didOpen` to the first diagnostics is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_script import training_script

REPO = Path(__file__).resolve().parents[1]
HALF_TYPED = "print(f'epoch {e"
# (text in the script, how to write the number that changes) for the edits, round robin.
EDIT_SITES = (("lr=0.05, momentum", "lr=0.0{n}, momentum"), ("default=False", "default={n}"),
              ("num_updates += 1", "num_updates += {n}"), ("kernel_size=3", "kernel_size={n}"))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class Session:
    """One language server process and the diagnostics it publishes."""

    def __init__(self, command: list[str], init_options: dict, env: Optional[dict] = None, uri: str = "file:///benchmark/train.py"):
        self.command = command
        self.init_options = init_options
        self.env = env
        self.client = LanguageClient("lsp-latency-benchmark", "1")
        self.published: dict[int, tuple[float, list]] = {}
        self.analysis_ms: list[float] = []
        self.event = asyncio.Event()
        self.uri = uri
        self.first_ms = 0.0  # didOpen -> the first diagnostics

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams):
            if params.version is not None:
                self.published[params.version] = (time.perf_counter(), params.diagnostics)
                self.event.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams):
            match = re.search(r"analysed .* in (\d+) ms", params.message)
            if match:
                self.analysis_ms.append(float(match.group(1)))

    async def start(self, text: str) -> list:
        # `python -m` puts the working directory first on sys.path: run in the checkout measured.
        cwd = self.env.get("PYTHONPATH") if self.env else None
        await self.client.start_io(*self.command, env=self.env, cwd=cwd)
        await self.client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options=self.init_options)
        )
        self.client.initialized(types.InitializedParams())
        opened = time.perf_counter()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)
            )
        )
        found = await self.wait(1)
        self.first_ms = (self.published[1][0] - opened) * 1000
        return found

    async def change(self, version: int, text: str) -> tuple[float, list]:
        """Send the whole new text; (ms until its diagnostics, the diagnostics)."""
        sent = time.perf_counter()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        diagnostics = await self.wait(version)
        return (self.published[version][0] - sent) * 1000, diagnostics

    async def wait(self, version: int) -> list:
        while version not in self.published:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), 120)
        return self.published[version][1]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


class RawSession:
    """The same over plain JSON-RPC, for servers whose replies pygls's types refuse (ruff's
    notebook selector). Requests from the server get an empty answer."""

    def __init__(self, command: list[str], init_options: dict, uri: str = "file:///benchmark/train.py"):
        self.command, self.init_options = command, init_options
        self.published: dict[int, tuple[float, list]] = {}
        self.analysis_ms: list[float] = []
        self.event = asyncio.Event()
        self.uri = uri
        self.first_ms = 0.0
        self._next_id = 0
        self._replies: dict[int, asyncio.Future] = {}

    async def start(self, text: str) -> list:
        self.process = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        self.reader = asyncio.ensure_future(self._read())
        await self._request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {},
                                           "initializationOptions": self.init_options})
        self._notify("initialized", {})
        opened = time.perf_counter()
        self._notify("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}})
        found = await self.wait(1)
        self.first_ms = (self.published[1][0] - opened) * 1000
        return found

    async def change(self, version: int, text: str) -> tuple[float, list]:
        sent = time.perf_counter()
        self._notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": version},
                                                "contentChanges": [{"text": text}]})
        diagnostics = await self.wait(version)
        return (self.published[version][0] - sent) * 1000, diagnostics

    async def wait(self, version: int) -> list:
        return await Session.wait(self, version)

    async def stop(self) -> None:
        await self._request("shutdown", None)
        self._notify("exit", None)
        await asyncio.wait_for(self.process.wait(), 30)
        self.reader.cancel()

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _notify(self, method: str, params) -> None:
        self._send({"method": method, "params": params})

    async def _request(self, method: str, params):
        self._next_id += 1
        future = self._replies[self._next_id] = asyncio.get_running_loop().create_future()
        self._send({"id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, 120)

    async def _read(self) -> None:
        while True:
            length = 0
            while True:
                line = await self.process.stdout.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line in (b"\r\n", b"\n"):
                    break
            message = json.loads(await self.process.stdout.readexactly(length))
            if "id" in message and "method" in message:  # a request from the server
                self._send({"id": message["id"], "result": None})
            elif "id" in message:
                future = self._replies.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message.get("result"))
            elif message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                if params.get("version") is not None:
                    self.published[params["version"]] = (time.perf_counter(), [_Found(d) for d in params["diagnostics"]])
                    self.event.set()


class _Found:
    """A raw diagnostic with the two fields the checks read."""

    def __init__(self, raw: dict):
        self.code = raw.get("code")
        self.range = types.Range(types.Position(**raw["range"]["start"]), types.Position(**raw["range"]["end"]))


def edited_texts(text: str, runs: int) -> list[str]:
    out = []
    for run in range(runs):
        old, new = EDIT_SITES[run % len(EDIT_SITES)]
        out.append(text.replace(old, new.format(n=run + 2), 1))
    return out


def half_typed_texts(text: str) -> tuple[int, list[str]]:
    """(0-based row of the new line, the text after each keystroke)."""
    lines = text.split("\n")
    row = next(i for i, line in enumerate(lines) if "num_updates += 1" in line)
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    return row, ["\n".join(lines[:row] + [indent + HALF_TYPED[:n]] + lines[row:]) for n in range(1, len(HALF_TYPED) + 1)]


async def measure(command: list[str], init_options: dict, text: str, runs: int, check_half_typed: bool,
                  env: Optional[dict] = None, uri: str = "file:///benchmark/train.py") -> dict:
    session = Session(command, init_options, env, uri) if check_half_typed else RawSession(command, init_options, uri)
    baseline = await session.start(text)
    session.analysis_ms.clear()
    latencies = []
    version = 1
    for edited in edited_texts(text, runs):
        version += 1
        ms, _ = await session.change(version, edited)
        latencies.append(ms)
        await asyncio.sleep(0.2)  # an editor's user pauses: measure single edits, not a queue
    # Back to the original, then type the half line.
    version += 1
    await session.change(version, text)
    row, states = half_typed_texts(text)
    expected = sorted((d.code, d.range.start.line + (d.range.start.line >= row)) for d in baseline)
    half_ms, kept = [], 0
    for state in states:
        version += 1
        ms, diagnostics = await session.change(version, state)
        half_ms.append(ms)
        findings = sorted((d.code, d.range.start.line) for d in diagnostics if d.code != "DDP000")
        kept += (findings == expected) if check_half_typed else 0
        await asyncio.sleep(0.05)
    await session.stop()
    return {"latencies": latencies, "analysis": list(session.analysis_ms), "half_ms": half_ms,
            "half_kept": kept, "half_states": len(states), "findings": len(baseline), "first_ms": session.first_ms}


def workspace_with(text: str, folder: Path) -> str:
    """The URI of `text` written as project/train.py of repo_scale.py's generated 1,000-file
    repository, made in `folder`."""
    from repo_scale import _generated_repository

    _generated_repository(folder)
    script = folder / "project" / "train.py"
    script.write_text(text)
    return script.as_uri()


def engine_breakdown(text: str) -> list[tuple[str, float]]:
    """One analysis of `text` in process, phase by phase (ms, best of 3), fresh and after an edit
    with the server's statement parser: what the server's time is made of."""
    import libcst as cst

    from ddplint.analysis import build_facts
    from ddplint.analysis.model import ModuleModel
    from ddplint.engine import lint_source
    from ddplint.lsp.incremental import StatementParser
    from ddplint.positions import positions_of
    from ddplint.rules import select_rules

    data = text.encode()
    rules = select_rules()

    def best(step, prepare=lambda: None):
        times, result = [], None
        for _ in range(3):
            prepare()
            started = time.perf_counter()
            result = step()
            times.append((time.perf_counter() - started) * 1000)
        return min(times), result

    phases = []
    ms, _ = best(lambda: compile(data, "t.py", "exec", dont_inherit=True))
    phases.append(("CPython screen (compile)", ms))
    ms, module = best(lambda: cst.parse_module(data))
    phases.append(("libcst.parse_module, whole file", ms))
    parser = StatementParser()
    parser.parse(data)
    edits = iter(edited_texts(text, 100))
    ms, _ = best(lambda: parser.parse(next(edits).encode()))
    phases.append(("statement parser after an edit (lsp/incremental.py)", ms))
    ms, facts = best(lambda: build_facts(module, text))
    phases.append(("build_facts (ModuleFacts pass), whole module", ms))
    reuse_parser = StatementParser()
    reuse_edits = iter(edited_texts(text, 100))
    first = next(reuse_edits)
    build_facts(reuse_parser.parse(first.encode()), first, reuse=reuse_parser.statement_facts)
    pending: list = []

    def parse_next():
        edited = next(reuse_edits)
        pending.append((reuse_parser.parse(edited.encode()), edited))

    ms, _ = best(lambda: build_facts(*pending[-1], reuse=reuse_parser.statement_facts), parse_next)
    phases.append(("build_facts after an edit (statement records reused)", ms))
    # Rules share lazily derived facts (loaders, ranks, ...): time them all together on fresh
    # facts each time, or the first rule pays for the others and the rest look free.
    fresh = []
    ms, findings = best(lambda: [f for rule in rules for f in rule.check(fresh[-1])],
                        lambda: fresh.append(ModuleModel(build_facts(module, text))))
    phases.append((f"the {len(rules)} default rules, fresh facts", ms))
    anchors = [f.node for f in findings]
    ms, _ = best(lambda: positions_of(module, anchors))
    phases.append(("positions of the findings, whole module", ms))
    ms, _ = best(lambda: lint_source(text, "t.py", rules))
    phases.append(("lint_source, fresh", ms))
    ms, _ = best(lambda: lint_source(next(edits), "t.py", rules, parser=parser))
    phases.append(("lint_source after an edit, statement parser", ms))
    # Last: the worker freezes the heap it keeps (lsp/worker.py), in this process too from here on.
    from ddplint.lsp.worker import run_engine_by_codes

    codes = [rule.code for rule in rules]
    for _ in range(3):
        run_engine_by_codes(next(edits), "t.py", codes)
    ms, _ = best(lambda: run_engine_by_codes(next(edits), "t.py", codes))
    phases.append(("after an edit in the worker (its parser, heap frozen)", ms))
    return phases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--debounce-ms", type=float, nargs="+", default=[50.0, 0.0])
    parser.add_argument("--no-ruff", action="store_true", help="do not measure ruff server")
    parser.add_argument("--workspace", action="store_true",
                        help="open the script as a file of a generated 1,000-file project (see the module's docstring)")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also measure the server of another ddplint checkout (e.g. before a change), in the same run")
    args = parser.parse_args(argv)
    text = training_script(args.lines)
    print(f"script: {text.count(chr(10))} lines, {len(text.encode())} bytes; {args.runs} edits per server")
    here = {**os.environ, "PYTHONPATH": str(REPO)}
    servers = [(f"ddplint lsp, debounce {d:g} ms", [sys.executable, "-m", "ddplint", "lsp"], {"debounceMs": d}, True, here)
               for d in args.debounce_ms]
    if args.compare:
        other = {**os.environ, "PYTHONPATH": str(args.compare.resolve())}
        servers += [(f"ddplint lsp from {args.compare}, debounce {d:g} ms", [sys.executable, "-m", "ddplint", "lsp"],
                     {"debounceMs": d}, True, other) for d in args.debounce_ms]
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not args.no_ruff and Path(ruff).exists():
        servers.append(("ruff server (--select ALL)", [ruff, "server"], {"settings": {"lint": {"select": ["ALL"]}}}, False, None))
    scratch = tempfile.TemporaryDirectory(prefix="lsp-latency-") if args.workspace else None
    uri = workspace_with(text, Path(scratch.name)) if scratch else "file:///benchmark/train.py"
    if scratch:
        print(f"opened as {uri} (1,000-file workspace)")
    for name, command, options, ours, env in servers:
        result = asyncio.run(measure(command, options, text, args.runs, ours, env, uri))
        lat = result["latencies"]
        line = (f"{name}: didChange -> publishDiagnostics median {statistics.median(lat):.0f} ms, "
                f"p90 {percentile(lat, 0.9):.0f} ms (min {min(lat):.0f}, max {max(lat):.0f}); "
                f"first diagnostics {result['first_ms']:.0f} ms after didOpen; "
                f"half-typed states median {statistics.median(result['half_ms']):.0f} ms")
        if result["analysis"]:
            line += f"; server-side analysis median {statistics.median(result['analysis']):.0f} ms"
        if ours:
            line += (f"; {result['half_kept']}/{result['half_states']} half-typed states published the "
                     f"{result['findings']} unchanged findings")
        print(line, flush=True)
    print("one analysis in process, by phase (best of 3):")
    for name, ms in engine_breakdown(text):
        print(f"  {name:56s} {ms:7.1f} ms")
    try:
        print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
