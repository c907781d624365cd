"""The engine in a process of its own, so that no document can take the server down with it.

A thread would share the server's fate: a crash in native code (libcst's parser is Rust) would
kill the server, and a rule stuck in a loop would hold the only analysis thread forever, freezing
diagnostics for every document. A worker process can be killed and replaced: an analysis that
dies or runs past `timeout_s` costs that one result (logged), and the next analysis gets a fresh
worker. It also keeps the engine's CPU time off the server's GIL, so requests stay responsive.

A plain subprocess with two pipes, not multiprocessing: multiprocessing's "spawn" starts its
interpreters in the server's current folder (the project, where editors start the server) with
that folder first on `sys.path`, so a project file named `pickle.py` or `signal.py` would run in
them, and a SIGKILL to the server left the worker and multiprocessing's resource tracker behind
for good. This process runs isolated from the workspace (`ddplint.isolation`), starts outside
it, and dies with the server however the server ends. Not "fork" either: the server has threads
(pygls reads stdin on one) and forking a threaded process can deadlock the child.
"""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import signal
import subprocess
import sys
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional, Sequence

from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.isolation import NEUTRAL_FOLDER, die_with_parent, isolated_command
from ddplint.lsp.analysis import PARSER, EngineOutcome, run_engine
from ddplint.rules import RULES_BY_CODE

DEFAULT_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 300.0  # importing libcst and ddplint, on a machine as busy as it gets
KILL_WAIT_S = 5.0  # a killed process is reaped within this (it has no say in it)


def _detach_stdout() -> None:
    """Worker start-up: stdout carries the replies to the server; anything printed there (a rule's
    stray print, a library's warning) would corrupt them, so point it at stderr."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr


def run_engine_by_codes(
    text: str, filename: str, codes: Sequence[str], options: AnalysisOptions = NO_OPTIONS
) -> EngineOutcome:
    """`analyse_by_codes`, then `tidy_after_analysis`: one analysis as the worker runs it (the
    worker itself replies in between)."""
    outcome = analyse_by_codes(text, filename, codes, options)
    tidy_after_analysis()
    return outcome


def analyse_by_codes(
    text: str, filename: str, codes: Sequence[str], options: AnalysisOptions = NO_OPTIONS
) -> EngineOutcome:
    """`run_engine` with the rules named by code: codes (and the configuration's analysis
    options, tuples of strings) cross the process boundary, rules are looked up again on the
    other side."""
    return run_engine(text, filename, tuple(RULES_BY_CODE[code] for code in codes), options)


def tidy_after_analysis() -> None:
    """What the worker does once an analysis is answered: let go of the module just analysed
    and tidy the heap (`_tidy_heap`)."""
    statement_facts = PARSER.statement_facts
    if statement_facts is not None:
        statement_facts.detach()  # the module just analysed is garbage now: let it go
    _tidy_heap()


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
        self._process: Optional[_Process] = None
        self._starting: Optional[Future] = None  # a new process importing the engine
        # Reads and writes on the pipes block: they run on this one thread, in order, never on
        # the event loop. One analysis at a time, queued here rather than in the process: the
        # timeout must count an analysis's own run, not the time it waited behind others (a
        # configuration change re-analyses every open document at once). Created on first use,
        # inside the loop.
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ddplint-analysis-io")
        self._turn: Optional[asyncio.Lock] = None

    @property
    def pid(self) -> Optional[int]:
        """The analysis process's id, if one is running."""
        return self._process.popen.pid if self._process is not None else None

    def start(self) -> None:
        """Start the process and import the engine now, not on the first keystroke (a process
        that cannot start is reported by the first analysis, which tries again)."""
        try:
            self._current_process()
        except _ProcessDied:
            pass

    async def analyse(
        self, text: str, filename: str, codes: Sequence[str], options: AnalysisOptions = NO_OPTIONS
    ) -> EngineOutcome:
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            return await self._analyse_now(text, filename, codes, options)

    async def _analyse_now(self, text: str, filename: str, codes: Sequence[str], options: AnalysisOptions) -> EngineOutcome:
        started = time.perf_counter()
        try:
            process = self._current_process()
            if self._starting is not None:
                # A new process imports the engine first (seconds on a busy machine): that is
                # not the analysis's time, so it does not count against the timeout.
                await asyncio.wait_for(asyncio.wrap_future(self._starting), STARTUP_TIMEOUT_S)
                self._starting = None
                started = time.perf_counter()
            request = (text, filename, tuple(codes), options)
            reply = await asyncio.wait_for(asyncio.wrap_future(self._io.submit(process.exchange, request)), self.timeout_s)
        except asyncio.TimeoutError:
            stuck_at_start = self._starting is not None
            self._replace()
            if stuck_at_start:
                return _failed(f"the analysis process did not start within {STARTUP_TIMEOUT_S:g} s", started)
            return _failed(f"the analysis took longer than {self.timeout_s:g} s and was stopped", started)
        except _ProcessDied as exc:
            self._replace()
            return _failed(str(exc) or "the analysis process died (a crash in native code?); a new one takes over", started)
        status, payload = reply
        if status == _RAISED:  # the worker's own code raised, outside the engine's safety net
            return _failed(f"the analysis raised:\n{payload}", started)
        return payload

    def close(self) -> None:
        """Stop the process (waiting for it to end: nothing is left running)."""
        self._replace()

    def _current_process(self) -> _Process:
        if self._process is None:
            # Started from the thread that runs the server (the event loop's): Linux ties the
            # process's death signal to the thread that started it, and that one lives as long
            # as the server.
            self._process = _Process()
            self._starting = self._io.submit(self._process.wait_ready)
        return self._process

    def _replace(self) -> None:
        """Kill the worker (it may be stuck) and forget it; the next analysis starts a new one."""
        process, self._process, self._starting = self._process, None, None
        if process is not None:
            process.kill()
            try:
                self._io.submit(process.close_pipes)  # after any read still waiting on them
            except RuntimeError:  # the interpreter is on its way out: it closes them itself
                pass


class _ProcessDied(Exception):
    """The analysis process ended (killed, crashed) or broke the protocol."""


_READY, _DONE, _RAISED = "ready", "done", "raised"


class _Process:
    """The analysis process and the two pipes to it: requests (pickled `(text, filename, codes, options)`)
    on its stdin, replies (pickled `(status, payload)`) on its stdout. It runs isolated from the
    workspace (ddplint.isolation) and dies with the server, even when the server is killed."""

    def __init__(self) -> None:
        command = isolated_command(ENTRY, "serve", str(os.getpid()))
        try:
            self.popen = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=NEUTRAL_FOLDER, close_fds=True
            )
        except OSError as exc:  # no interpreter at sys.executable, no processes left, ...
            raise _ProcessDied(f"cannot start the analysis process: {exc}") from exc
        assert self.popen.stdin is not None and self.popen.stdout is not None  # both asked for
        self.requests, self.replies = self.popen.stdin, self.popen.stdout

    def wait_ready(self) -> None:
        if self._receive()[0] != _READY:
            raise _ProcessDied()

    def exchange(self, request: tuple) -> tuple:
        try:
            _send(self.requests, request)
        except (OSError, ValueError) as exc:  # a broken pipe: it is gone
            raise _ProcessDied() from exc
        return self._receive()

    def _receive(self) -> tuple:
        try:
            reply = pickle.load(self.replies)
        except Exception as exc:  # EOF, a cut or garbled reply: the process died mid-way
            raise _ProcessDied() from exc
        if not (isinstance(reply, tuple) and len(reply) == 2):
            raise _ProcessDied()
        return reply

    def kill(self) -> None:
        try:
            self.popen.kill()
            self.popen.wait(timeout=KILL_WAIT_S)
        except (OSError, subprocess.TimeoutExpired):  # gone already, or the kernel is slow to reap
            pass

    def close_pipes(self) -> None:
        for pipe in (self.requests, self.replies):
            try:
                pipe.close()
            except OSError:
                pass


def _send(pipe, message) -> None:
    pipe.write(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))  # whole, or not at all
    pipe.flush()


# -- the analysis process's side -----------------------------------------------------------------
# The module whose `serve` the analysis process runs (a test swaps in one that breaks a rule first).
ENTRY = __name__


def serve() -> None:
    """The analysis process (`sys.argv[1]`: the server's pid): answer requests until the server
    closes the pipe or goes away."""
    die_with_parent(int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal: the server decides
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    _detach_stdout()
    requests = sys.stdin.buffer
    _send(replies, (_READY, None))
    while True:
        try:
            text, filename, codes, options = pickle.load(requests)
        except EOFError:
            return  # the server closed the pipe: it is done, or gone
        try:
            reply = (_DONE, analyse_by_codes(text, filename, codes, options))
            message = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception:
            message = pickle.dumps((_RAISED, traceback.format_exc()), pickle.HIGHEST_PROTOCOL)
        replies.write(message)
        replies.flush()
        # After the reply, not before: the editor shows the findings while the heap is tidied
        # (a collection of what the analysis made, ~5 ms; every FULL_COLLECTION_EVERY analyses
        # one of everything, 0.1-0.5 s), and the next request waits for it only if it comes sooner.
        try:
            tidy_after_analysis()
        except Exception:  # a bug there must not end the worker: say so where the server logs it
            traceback.print_exc()


def _failed(reason: str, started: float) -> EngineOutcome:
    return EngineOutcome((), (), reason, time.perf_counter() - started)
