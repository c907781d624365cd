"""Latency of `ddplint lsp`: from a `didChange` of a 1,000-line training script to the
`publishDiagnostics` for that version, over stdio, as an editor sees it.

    python benchmarks/lsp_latency.py [--runs 30] [--debounce-ms 50 0]

For each debounce setting it starts a fresh server, opens the script, then `--runs` times edits
code, typing one digit into the learning rate `lr=0.05` and deleting it again (so the file
keeps its size and its one finding), and waits for that version's diagnostics. It prints the median and
p90 of those waits, the server's own analysis time (from its log lines), and an in-process
breakdown of one analysis by engine phase: where the time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
BASE_SCRIPT = REPO / "examples" / "ddp002_missing_set_epoch_buggy.py"


def training_script(lines: int = 1000) -> str:
    """The DDP002 example padded with model blocks and metrics up to `lines` lines: a long but
    ordinary distributed training script with one finding (the epoch loop without set_epoch)."""
    head, _, tail = BASE_SCRIPT.read_text().partition("def main():")
    tail = "def main():" + tail
    blocks: list[str] = []
    index = 0
    while _count(head, blocks, tail) < lines:
        blocks.append(_block(index))
        index += 1
    return head + "".join(blocks) + tail  # within one block (19 lines) of `lines`; main() prints the count


def _count(head: str, blocks: list[str], tail: str) -> int:
    return (head + "".join(blocks) + tail).count("\n")


def _block(i: int) -> str:
    return f'''
class Block{i}(nn.Module):
    """Residual MLP block {i}."""

    def __init__(self, width=64, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, width * 4)
        self.fc2 = nn.Linear(width * 4, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(torch.relu(self.fc1(self.norm(x))))
        return x + self.drop(h)


def metric_{i}(pred, target, eps=1e-8):
    err = (pred - target).abs()
    return {{"mae": err.mean().item(), "rel": (err / (target.abs() + eps)).mean().item()}}

'''


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def measure(text: str, runs: int, debounce_ms: float) -> tuple[list[float], list[float]]:
    """(client-side latencies, server-side analysis times), both in ms."""
    client = LanguageClient("lsp-latency-benchmark", "1")
    published: dict[int, float] = {}
    analysis_ms: list[float] = []
    new_version = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams):
        published[params.version] = time.perf_counter()
        new_version.set()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams):
        match = re.search(r"analysed .* in (\d+) ms", params.message)
        if match:
            analysis_ms.append(float(match.group(1)))

    await client.start_io(sys.executable, "-m", "ddplint", "lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options={"debounceMs": debounce_ms}
        )
    )
    client.initialized(types.InitializedParams())
    uri = "file:///benchmark/train_1000_lines.py"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    await _wait_for(published, new_version, 1)
    analysis_ms.clear()
    row = next(i for i, line in enumerate(text.split("\n")) if "lr=0.05" in line)
    end = text.split("\n")[row].index("lr=0.05") + len("lr=0.05")
    latencies = []
    for version in range(2, runs + 2):
        typed = version % 2 == 0  # add a digit, then remove it again
        at = types.Position(line=row, character=end)
        after = types.Position(line=row, character=end + 1)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=at, end=at if typed else after), text="1" if typed else ""
        )
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
        await _wait_for(published, new_version, version)
        latencies.append((published[version] - sent) * 1000)
        await asyncio.sleep(0.2)  # an editor's user pauses: measure single edits, not a queue
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return latencies, analysis_ms


async def _wait_for(published: dict, event: asyncio.Event, version: int) -> None:
    while version not in published:
        event.clear()
        await asyncio.wait_for(event.wait(), 120)


def engine_breakdown(text: str) -> list[tuple[str, float]]:
    """One analysis of `text` in process, phase by phase (ms, best of 3): what the server's time is made of."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from ddplint.analysis import build_facts
    from ddplint.rules import select_rules

    data = text.encode()

    def best(step):
        times = []
        for _ in range(3):
            started = time.perf_counter()
            result = step()
            times.append((time.perf_counter() - started) * 1000)
        return min(times), result

    phases = []
    ms, _ = best(lambda: compile(data, "t.py", "exec", 0x400, dont_inherit=True))
    phases.append(("CPython screen (compile to AST)", ms))
    ms, module = best(lambda: cst.parse_module(data))
    phases.append(("libcst.parse_module", ms))
    ms, facts = best(lambda: build_facts(module, text))
    phases.append(("build_facts (ModuleFacts pass)", ms))
    # Rules share lazily derived facts (loaders, ranks, ...): time them all together on fresh
    # facts each time, or the first rule pays for the others and the rest look free.
    rules_ms = []
    for _ in range(3):
        fresh = build_facts(module, text)
        started = time.perf_counter()
        for rule in select_rules():
            list(rule.check(fresh))
        rules_ms.append((time.perf_counter() - started) * 1000)
    phases.append((f"the {len(select_rules())} default rules, fresh facts", min(rules_ms)))
    ms, _ = best(lambda: MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    phases.append(("PositionProvider (locating findings)", ms))
    return phases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--debounce-ms", type=float, nargs="+", default=[50.0, 0.0])
    args = parser.parse_args(argv)
    text = training_script(args.lines)
    print(f"script: {text.count(chr(10))} lines, {len(text.encode())} bytes; {args.runs} edits per setting")
    for debounce in args.debounce_ms:
        latencies, analysis = asyncio.run(measure(text, args.runs, debounce))
        print(
            f"debounce {debounce:g} ms: didChange -> publishDiagnostics median {statistics.median(latencies):.0f} ms, "
            f"p90 {percentile(latencies, 0.9):.0f} ms (min {min(latencies):.0f}, max {max(latencies):.0f}); "
            f"server-side analysis median {statistics.median(analysis):.0f} ms"
        )
    print("one analysis in process, by phase (best of 3):")
    for name, ms in engine_breakdown(text):
        print(f"  {name:40s} {ms:7.1f} ms")
    try:
        import os

        print(f"load average at the end: {os.getloadavg()[0]:.2f} (2-core machine)")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
