"""The engine in a process of its own, so that no document can take the server down with it.

A thread would share the server's fate: a crash in native code (libcst's parser is Rust) would
kill the server, and a rule stuck in a loop would hold the only analysis thread forever, freezing
diagnostics for every document. A worker process can be killed and replaced: an analysis that
dies or runs past `timeout_s` costs that one result (logged), and the next analysis gets a fresh
worker. It also keeps the engine's CPU time off the server's GIL, so requests stay responsive.

"spawn", not "fork": the server has threads (pygls reads stdin on one) and forking a threaded
process can deadlock the child.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Optional, Sequence

from ddplint.lsp.analysis import PARSER, EngineOutcome, run_engine
from ddplint.rules import RULES_BY_CODE

DEFAULT_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 300.0  # importing libcst and ddplint, on a machine as busy as it gets


def _detach_stdout() -> None:
    """Worker start-up: stdout is the LSP channel, inherited from the server; anything printed
    there would corrupt the protocol, so point it at stderr."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr


def _ready() -> bool:
    return True


def run_engine_by_codes(text: str, filename: str, codes: Sequence[str]) -> EngineOutcome:
    """`run_engine` with the rules named by code: codes cross the process boundary, rules are
    looked up again on the other side."""
    outcome = run_engine(text, filename, tuple(RULES_BY_CODE[code] for code in codes))
    statement_facts = PARSER.statement_facts
    if statement_facts is not None:
        statement_facts.detach()  # the module just analysed is garbage now: let it go
    _tidy_heap()
    return outcome


# Analyses between two collections of everything, frozen objects included: a safety net, the
# kept records let go of what they held (StatementFacts.detach / release) before it is frozen.
FULL_COLLECTION_EVERY = 200
_tidied = 0


def _tidy_heap() -> None:
    """After each analysis (worker side): collect what it left behind, and freeze what survives.

    The worker keeps the parsed statements of its documents and their facts between analyses,
    hundreds of thousands of long-lived objects; left in the collector's generations, every full
    collection during an analysis walks them all again (a fifth of an analysis after an edit).
    Frozen, they are skipped, and this collection itself only walks what the last analysis made
    (a few ms). Frozen objects that later become cyclic garbage would not be collected: the kept
    statement records break their own cycles when they are dropped, and let go of the analysed
    module before this runs; every FULL_COLLECTION_EVERY analyses everything is collected once
    more all the same (a pause of ~0.1-0.5 s, growing with the statements kept). Counted, not
    measured: `gc.get_freeze_count()` walks every frozen object."""
    global _tidied
    _tidied += 1
    if _tidied % FULL_COLLECTION_EVERY == 1:  # the first analysis too: nothing is frozen yet
        gc.unfreeze()
    gc.collect()
    gc.freeze()


class AnalysisWorker:
    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.timeout_s = timeout_s
        self._pool: Optional[ProcessPoolExecutor] = None
        self._starting: Optional[Future] = None  # a new process importing the engine
        # One analysis at a time, queued here rather than in the pool: the timeout must count an
        # analysis's own run, not the time it waited behind others (a configuration change
        # re-analyses every open document at once). Created on first use, inside the loop.
        self._turn: Optional[asyncio.Lock] = None

    def start(self) -> None:
        """Start the process and import the engine now, not on the first keystroke."""
        self._current_pool()

    async def analyse(self, text: str, filename: str, codes: Sequence[str]) -> EngineOutcome:
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            return await self._analyse_now(text, filename, codes)

    async def _analyse_now(self, text: str, filename: str, codes: Sequence[str]) -> EngineOutcome:
        started = time.perf_counter()
        try:
            pool = self._current_pool()
            if self._starting is not None:
                # A new process imports the engine first (seconds on a busy machine): that is
                # not the analysis's time, so it does not count against the timeout.
                await asyncio.wait_for(asyncio.wrap_future(self._starting), STARTUP_TIMEOUT_S)
                self._starting = None
                started = time.perf_counter()
            future = asyncio.wrap_future(pool.submit(run_engine_by_codes, text, filename, tuple(codes)))
            return await asyncio.wait_for(future, self.timeout_s)
        except asyncio.TimeoutError:
            stuck_at_start = self._starting is not None
            self._replace()
            if stuck_at_start:
                return _failed(f"the analysis process did not start within {STARTUP_TIMEOUT_S:g} s", started)
            return _failed(f"the analysis took longer than {self.timeout_s:g} s and was stopped", started)
        except BrokenProcessPool:
            self._replace()
            return _failed("the analysis process died (a crash in native code?); a new one takes over", started)

    def close(self) -> None:
        self._replace()

    def _current_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_detach_stdout
            )
            self._starting = self._pool.submit(_ready)
        return self._pool

    def _replace(self) -> None:
        """Kill the worker (it may be stuck) and forget it; the next analysis starts a new one."""
        pool, self._pool, self._starting = self._pool, None, None
        if pool is None:
            return
        # The executor has no public way to stop a task that is running: kill its process.
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)


def _failed(reason: str, started: float) -> EngineOutcome:
    return EngineOutcome((), (), reason, time.perf_counter() - started)
