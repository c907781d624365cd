"""Checking files: one (`lint_document`, `lint_file`) or many (`run_checks`: the process pool).

`run_checks()` takes discovery's list and yields each file's findings in that order: results
cache lookups first, then the files left to analyse, here or in a pool of worker processes
(largest file first; files of LARGE_FILE_BYTES one at a time, of ALONE_FILE_BYTES alone),
with the collector tuned for libcst's trees, freed memory handed back, and the module summaries
each worker computes shared with the others through a run-private directory (removed however the
run ends). `project_index()` builds the project model whose large trees the pool's lock guards.
Below this layer the engine knows only Python source (`engine.lint_source`); notebooks and the
`# noqa` judgement sit here, above it.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, Optional, Sequence, Union

from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.project import ProjectIndex, SharedSummaries
from ddplint.cache import FileStamp, ResultCache, content_hash
from ddplint.diagnostics import Diagnostic, InternalError, error_diagnostic
from ddplint.discovery import Listings, project_modules
from ddplint.rules import UNUSED_NOQA_CODE, load_rules
from ddplint.source import SourceEncodingError, decode_source, read_file, reason_of

if TYPE_CHECKING:
    from ddplint.rules.base import Rule

# The engine (and through it the rules' checks, the analysis and libcst: ~0.2 s) is imported where
# a file is analysed, never at the top: a run whose files are all cached never needs it. So are
# the notebook format and the pool's temporary folders (tempfile, shutil).


def project_index(checked: Sequence[str], listings: Optional[Listings] = None) -> Optional[ProjectIndex]:
    """The project model for a run that checks these files (None: a lone module, nothing to
    follow). `listings`: the folders discovery listed for the run, so the tree is read once."""
    modules = project_modules(checked, listings)
    return ProjectIndex(modules, _parses_safely, _holding_tree) if len(set(modules)) > 1 else None


def lint_file(
    path: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
    check_noqa: bool = False,
    options: AnalysisOptions = NO_OPTIONS,
) -> list[Diagnostic]:
    data, problem = _read(path)
    if problem is not None:
        return [problem]
    return lint_document(data, path, rules, errors, project, check_noqa, options)


def lint_document(
    data: bytes | str,
    filename: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
    check_noqa: bool = False,
    options: AnalysisOptions = NO_OPTIONS,
) -> list[Diagnostic]:
    """A file's contents, Python or notebook by its name (stdin goes through here too).
    `check_noqa`: also judge its `# noqa` comments (DDP090, ddplint/noqa.py); `options`: what the
    file's configuration declares (config.Settings.options)."""
    if filename.endswith(".ipynb"):
        from ddplint.notebook import lint_notebook

        return lint_notebook(data, filename, lambda program: lint_python(program, filename, rules, errors, project, check_noqa, options))
    return lint_python(data, filename, rules, errors, project, check_noqa, options)


def lint_python(
    source: bytes | str,
    filename: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]],
    project: Optional[ProjectIndex],
    check_noqa: bool,
    options: AnalysisOptions = NO_OPTIONS,
) -> list[Diagnostic]:
    """The engine's findings, and with `check_noqa` those about the file's `# noqa` comments."""
    from ddplint.engine import lint_source

    found = lint_source(source, filename, rules, errors, project, options=options)
    if not check_noqa:
        return found
    from ddplint.noqa import unused_noqa

    text = source if isinstance(source, str) else _decoded(source, filename)
    if text is None:
        return found  # undecodable: the engine has reported it
    enabled = {rule.code for rule in rules}
    extra = unused_noqa(text, filename, enabled, lambda blanked: lint_source(blanked, filename, rules, None, project, options=options))
    return sorted([*found, *extra], key=lambda d: d.sort_key) if extra else found


def _decoded(data: bytes, filename: str) -> Optional[str]:
    try:
        return decode_source(data, filename)[0]
    except SourceEncodingError:
        return None


def _read(path: str) -> tuple[bytes, Optional[Diagnostic]]:
    try:
        return read_file(path), None
    except OSError as exc:  # unreadable, deleted during the run, a link loop or a broken link, not a regular file
        return b"", error_diagnostic(path, f"cannot read: {reason_of(exc)}")


def run_checks(
    found: Sequence[tuple[str, Optional[str]]],
    default_codes: Sequence[str],
    codes_for: Optional[Callable[[str], Sequence[str]]],
    options_for: Optional[Callable[[str], AnalysisOptions]],
    cache: Optional[ResultCache],
    project: Optional[ProjectIndex],
    jobs: Optional[int],
    errors: Optional[list[InternalError]],
) -> Iterator[Diagnostic]:
    """Each file's diagnostics, in the order of `found` (discovery's (path, problem) pairs), for
    api.lint_paths once the project index is set up: arguments as lint_paths' (`default_codes`:
    the codes of `rules`, or of the default selection)."""
    slots: list[_Slot] = []  # per file, in order: its diagnostics, or a _Job still to run
    for path, problem in found:
        if problem is not None:
            slots.append([error_diagnostic(path, problem)])
            continue
        codes = tuple(default_codes if codes_for is None else codes_for(path))
        options = NO_OPTIONS if options_for is None else options_for(path)
        rules_key = ",".join(codes) + options.cache_key()
        stamp = FileStamp.of(path)
        known = cache.by_stamp(path, stamp, rules_key, project) if cache is not None else None
        if known is not None:
            slots.append(known)
            continue
        expected = cache.known_hash(path, rules_key, project) if cache is not None else None
        slots.append(_Job(len(slots), path, codes, rules_key, stamp, expected, cache is not None, options))
    with _fewer_collections():
        for slot, outcome in _run(slots, jobs, project):
            if isinstance(slot, list):
                yield from slot
                continue
            assert outcome is not None  # _run gives every job its outcome
            diagnostics = outcome.diagnostics
            if outcome.unchanged and cache is not None:
                cached = cache.by_content(slot.path, outcome.digest, slot.stamp, slot.rules_key, project)
                # None: the entry went stale meanwhile (a project file changed): check the file here
                if cached is None:
                    cached = lint_file(
                        slot.path, load_rules(slot.codes), errors, project, UNUSED_NOQA_CODE in slot.codes, slot.options
                    )
                diagnostics = cached
            elif cache is not None and outcome.digest and not outcome.errors:
                cache.store(slot.path, outcome.digest, slot.stamp, slot.rules_key, diagnostics, outcome.import_words, project)
            if errors is not None:
                errors.extend(outcome.errors)
            yield from diagnostics


# The collector's thresholds during a run. libcst builds hundreds of thousands of nodes per file,
# and with the default (700, 10, 10) collections that find almost nothing (the trees are freed by
# reference counting) took ~a fifth of a cold run's CPU over torch, in every worker. The cycles a
# file's facts leave are collected with the memory handed back (`_return_freed_memory`).
COLLECTION_THRESHOLDS = (50_000, 20, 100)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Rarer collections while files are checked, and what is alive when the run starts (the
    analysis code, the project index) frozen: no collection walks it again, in this process or
    in the workers forked from it. The caller's collector is back when the run ends, however it
    ends."""
    before = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0  # a caller's own frozen heap is left as it is
    if freezing:
        gc.freeze()
    gc.set_threshold(*COLLECTION_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if freezing:
            gc.unfreeze()


@dataclass(frozen=True)
class _Job:
    """One file to check in a worker process (plain data: it crosses a process boundary)."""

    index: int
    path: str
    codes: tuple[str, ...]
    rules_key: str
    stamp: Optional[FileStamp]
    expected_hash: Optional[str]  # the cached content hash: equal means "unchanged, skip"
    want_hash: bool
    options: AnalysisOptions = NO_OPTIONS  # its configuration's declarations (tuples of strings)


@dataclass(frozen=True)
class _Outcome:
    diagnostics: list[Diagnostic]
    errors: list[InternalError]
    digest: str = ""
    unchanged: bool = False
    import_words: tuple[str, ...] = ()  # module names its imports mention: what its result may depend on


# A file's place in the run's output: its diagnostics already known, or the job that finds them.
_Slot = Union[list[Diagnostic], _Job]

# The project index of the run, for worker processes (set before they start, so fork shares it).
_PROJECT: Optional[ProjectIndex] = None
# The pool's lock around every large tree (a large file checked, a large module summarised): one
# at a time across workers. None outside a pool.
_LARGE_TREES: Optional[ContextManager[object]] = None


def _set_worker(
    project: Optional[ProjectIndex],
    large_trees: Optional[ContextManager[object]] = None,
    shared_summaries: Optional[str] = None,
) -> None:
    """`shared_summaries`: the run's directory where workers leave the module summaries they
    compute for each other (a pool's worker gets it; its copy of the index reads from there)."""
    global _PROJECT, _LARGE_TREES
    _PROJECT, _LARGE_TREES = project, large_trees
    if project is not None and shared_summaries is not None:
        project.share_summaries(SharedSummaries(shared_summaries))


def _holding_tree(size: int) -> ContextManager[object]:
    """What to hold while a tree of `size` bytes of source is in memory."""
    return _LARGE_TREES if _LARGE_TREES is not None and size >= LARGE_FILE_BYTES else nullcontext()


def _dependency_words(path: str, data: bytes) -> tuple[str, ...]:
    """The module names a file's result depends on: those its imports mention or reach
    (`ProjectIndex.dependency_words`), and, for a helper judged by the modules that call it
    (DDP008), every module of the project."""
    if _PROJECT is None:
        return ()
    return tuple(sorted(set(_PROJECT.dependency_words(path, data)) | set(_PROJECT.caller_words(path))))


def _check_job(job: _Job) -> tuple[int, _Outcome]:
    data, problem = _read(job.path)
    if problem is not None:
        return job.index, _Outcome([problem], [])
    digest = content_hash(data) if job.want_hash else ""
    if digest and digest == job.expected_hash:
        return job.index, _Outcome([], [], digest, unchanged=True)
    errors: list[InternalError] = []
    with _holding_tree(len(data)):
        diagnostics = lint_document(
            data, job.path, load_rules(job.codes), errors, _PROJECT, UNUSED_NOQA_CODE in job.codes, job.options
        )
    # What the results cache keys the result on: worked out only where there is a cache to store
    # it in (`want_hash`); a run without one has no use for it (~2 % of one over torch).
    import_words = _dependency_words(job.path, data) if job.want_hash else ()
    if _PROJECT is not None:
        _PROJECT.forget_module_models()
    _return_freed_memory()
    return job.index, _Outcome(diagnostics, errors, digest, import_words=import_words)


def _check_jobs(jobs: Sequence[_Job]) -> list[tuple[int, _Outcome]]:
    return [_check_job(job) for job in jobs]


# Without --jobs, one worker per this much source to check (up to one per core): a pool costs
# ~0.05 s of CPU to start and two processes running at once each work ~14 % slower here (shared
# caches; the work itself is not repeated: workers share module summaries), so one or two small
# files are checked here. Pre-commit's five training files (215 kB):
# two workers cost 2 % more CPU than one and saved a quarter of the wall time (benchmarks/README.md).
BYTES_PER_WORKER = 64_000
# libcst's tree of a file costs 300 - 700 bytes per byte of source (a 530 kB file: 330 MB). Files
# this large are analysed one at a time, all by the same worker, and a worker that needs the
# summary of a module this large waits until no other large tree is in memory.
LARGE_FILE_BYTES = 200_000
# A file this large is analysed alone: it waits until the pool's other work is done and then
# one worker checks it while the others idle. Its tree alone is 120 - 280 MB, and beside it the
# other workers' trees took the run past 500 MB; a core idle for the time of one file costs less
# (issue 23, option (c)). Files between LARGE_FILE_BYTES and this share the large-file task.
ALONE_FILE_BYTES = 400_000
# A worker whose resident memory grew this much while checking a file (its tree, the summaries of
# the modules it imports) hands the freed memory back to the system (10 - 30 ms), so that it does
# not stay at the peak of the largest file it has seen.
TRIM_AFTER_GROWTH = 32 * 2**20


def _run(
    slots: list[_Slot], jobs: Optional[int], project: Optional[ProjectIndex]
) -> Iterator[tuple[_Slot, Optional[_Outcome]]]:
    """Each slot with its outcome, in slot order. Jobs go to a process pool largest file first (a
    big file started last would leave one core busy alone at the end); results are held back
    until every earlier slot has been yielded, so output order never depends on timing."""
    pending = [slot for slot in slots if isinstance(slot, _Job)]
    workers = min(jobs or _workers_for(pending), len(pending))
    if workers <= 1:
        _set_worker(project)
        try:
            for slot in slots:
                yield slot, (_check_job(slot)[1] if isinstance(slot, _Job) else None)
        finally:
            _set_worker(None)
        return
    _load_checks(pending)
    done: dict[int, _Outcome] = {}
    with _shared_directory(project) as shared, _stopped_cleanly(shared) as running, _pool(workers, project, shared) as pool:
        running.append(pool)
        finished = False
        try:
            results = _pool_results(pool, pending, workers)
            for index, slot in enumerate(slots):
                if not isinstance(slot, _Job):
                    yield slot, None
                    continue
                while index not in done:
                    done.update(next(results))
                yield slot, done.pop(index)
            finished = True
        finally:
            # Workers leave by themselves when the work is done (close: no signal involved;
            # Pool.terminate's SIGTERM after a complete run was seen to hang the join). On an error
            # or an early stop, the pool's exit terminates them, waiting a bounded time
            # (`_terminate`). (Not SIGKILL here: the pool's own thread would start new workers,
            # and a worker killed holding the task queue's lock leaves terminate waiting for it.)
            if finished:
                pool.close()
                pool.join()


def _pool_results(pool, jobs: Sequence[_Job], workers: int) -> Iterator[list[tuple[int, _Outcome]]]:
    """The outcomes of `jobs` as the pool delivers them: first those the workers check side by
    side, then each file to be analysed alone, handed to one worker once every other task is done."""
    together, alone = _split_alone(jobs)
    if together:
        yield from pool.imap_unordered(_check_jobs, _tasks(together, workers))
    for job in alone:
        yield pool.apply(_check_jobs, ((job,),))


def _split_alone(jobs: Sequence[_Job]) -> tuple[list[_Job], list[_Job]]:
    """(the jobs workers check side by side, those each analysed alone: ALONE_FILE_BYTES or more,
    largest first)."""
    alone = sorted((job for job in jobs if _size(job) >= ALONE_FILE_BYTES), key=_size, reverse=True)
    return [job for job in jobs if _size(job) < ALONE_FILE_BYTES], alone


def _size(job: _Job) -> int:
    return job.stamp.size if job.stamp else 0


def _workers_for(jobs: Sequence[_Job]) -> int:
    return max(1, min(available_cores(), -(-sum(_size(job) for job in jobs) // BYTES_PER_WORKER)))


def _tasks(jobs: Sequence[_Job], workers: int) -> list[tuple[_Job, ...]]:
    """The pool's tasks, largest first: every large file in one task (one worker takes them one
    after the other while the others check the rest), then the other files a few at a time
    (small chunks balance the load; a few files per message keeps the pipe traffic low)."""
    ordered = sorted(jobs, key=_size, reverse=True)
    large = tuple(job for job in ordered if _size(job) >= LARGE_FILE_BYTES)
    rest = ordered[len(large):]
    chunk = max(1, min(16, len(rest) // (workers * 16)))
    return ([large] if large else []) + [tuple(rest[i : i + chunk]) for i in range(0, len(rest), chunk)]


_resident_after_trim = 0


def _return_freed_memory() -> None:
    """Give the memory of a file's tree back to the system, with the reference cycles its facts
    left (collections are rare during a run: `_fewer_collections`). glibc keeps freed memory for
    reuse: without this a worker stays at the peak of its largest file for the rest of the run."""
    global _resident_after_trim
    if _resident_bytes() - _resident_after_trim < TRIM_AFTER_GROWTH:
        return
    # Most of this collection's cost is freeing the file's tree, which the reference cycles of
    # its facts hold. Freezing what survives it (so the next one does not walk the run's kept
    # objects again) was measured over torch: 6.3 -> 5.3 CPU-s with --jobs 1, nothing
    # measurable in a cold pool run: not kept (benchmarks/README.md, third session).
    gc.collect()
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc (macOS, Windows, musl): nothing to do
        pass
    _resident_after_trim = _resident_bytes()


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 elsewhere, where nothing is trimmed)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _load_checks(jobs: Sequence[_Job]) -> None:
    """The engine and the rules the jobs need, imported before the workers are forked: they
    share them instead of each importing libcst again (~0.2 s of CPU per worker)."""
    import ddplint.engine  # noqa: F401

    load_rules({code for job in jobs for code in job.codes})


def _parses_safely(data: bytes, filename: str) -> bool:
    from ddplint.engine import parses_safely

    return parses_safely(data, filename)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (containers, taskset)
    except AttributeError:
        return os.cpu_count() or 1


@contextmanager
def _pool(workers: int, project: Optional[ProjectIndex], shared_summaries: Optional[str] = None) -> Iterator:
    # fork starts workers in milliseconds with the analysis already imported; elsewhere (macOS,
    # Windows) the platform's safe default. Workers summarise project modules on demand, each
    # module once for all of them (`shared_summaries`).
    import multiprocessing

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    pool = context.Pool(
        workers, initializer=_start_worker, initargs=(os.getpid(), project, context.RLock(), shared_summaries)
    )
    try:
        yield pool
    finally:
        _terminate(pool)


# How long an ending run waits for Pool.terminate. A worker stopped while it writes a result
# holds the result queue's lock for good, and terminate then waits for that lock forever
# (CPython issue 96995, seen here once under load after a worker's error). By then every worker
# has been sent SIGTERM; what is left waiting is one of the pool's own threads.
TERMINATE_WAIT_SECONDS = 10.0


def _terminate(pool) -> None:
    """Pool.terminate, given at most TERMINATE_WAIT_SECONDS: a run that ends on an error or an
    early stop ends, with its workers stopped, rather than hanging in the pool's clean-up."""
    import threading

    stopper = threading.Thread(target=pool.terminate, name="ddplint-pool-terminate", daemon=True)
    stopper.start()
    stopper.join(TERMINATE_WAIT_SECONDS)


def _start_worker(
    parent: int, project: Optional[ProjectIndex], large_trees: ContextManager[object], shared_summaries: Optional[str]
) -> None:
    _die_with(parent)
    _default_stops()
    _set_worker(project, large_trees, shared_summaries)


# prctl's request: "send me this signal when the process that started me ends" (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """A worker ends with the run's process, however that ends. Killed outright (SIGKILL), the
    run cannot stop its workers, and they would wait for work forever, or print tracebacks
    about a broken pipe into the user's terminal when they next have a result (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the run ended before the request was made
        os._exit(1)


# The signals that stop a run cleanly (SIGHUP does not exist on Windows).
STOPPING_SIGNALS = ("SIGTERM", "SIGHUP")


class _CleanStop:
    """The handler `_stopped_cleanly` installs: stops the pools in `running`, removes the shared
    directory, and ends the process by the signal."""

    def __init__(self, running: list, shared_summaries: Optional[str]) -> None:
        import shutil  # here, not in the handler: no import while a signal interrupts the run

        self.owner, self.running, self.shared_summaries = os.getpid(), running, shared_summaries
        self._remove_tree = shutil.rmtree

    def __call__(self, signum: int, frame: object) -> None:
        import signal

        if os.getpid() == self.owner:  # not a worker forked before it could reset the handler
            _stop_workers(self.running)
            if self.shared_summaries is not None:
                self._remove_tree(self.shared_summaries, ignore_errors=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


@contextmanager
def _stopped_cleanly(shared_summaries: Optional[str]) -> Iterator[list]:
    """SIGTERM and SIGHUP (a CI job's timeout, a closed terminal) stop the workers of the pools
    the caller puts in the list this yields and remove the run's directory, then end the process
    by the signal as it would have ended; SIGINT needs nothing (KeyboardInterrupt leaves through
    the with-blocks). Only signals left at their default (not a caller's handler, not nohup's
    "ignore"), and only in the main thread, the one where handlers run. Installed before the pool
    starts, so that no signal falls between its workers' start and the handler; the workers put
    the default back (`_default_stops`)."""
    import signal
    import threading

    running: list = []
    if threading.current_thread() is not threading.main_thread():
        yield running
        return
    handler = _CleanStop(running, shared_summaries)
    handled = [getattr(signal, name) for name in STOPPING_SIGNALS if hasattr(signal, name)]
    handled = [number for number in handled if signal.getsignal(number) == signal.SIG_DFL]
    for number in handled:
        signal.signal(number, handler)
    try:
        yield running
    finally:
        for number in handled:
            signal.signal(number, signal.SIG_DFL)


def _default_stops() -> None:
    """In a worker: the default back for the signals whose handler it inherited from
    `_stopped_cleanly` (a Python handler would wait for a long native parse to end; the pool
    stops its workers with SIGTERM)."""
    import signal

    for name in STOPPING_SIGNALS:
        number = getattr(signal, name, None)
        if number is not None and isinstance(signal.getsignal(number), _CleanStop):
            signal.signal(number, signal.SIG_DFL)


def _stop_workers(pools: Sequence[object]) -> None:
    """Kills the pools' worker processes and waits until they are gone: one still running could
    write into the shared directory while it is being removed."""
    import signal

    workers = [worker for pool in pools for worker in getattr(pool, "_pool", ())]
    for worker in workers:
        try:
            os.kill(worker.pid, signal.SIGKILL)
        except (OSError, TypeError):  # gone already, or never started (no pid)
            pass
    for worker in workers:
        try:
            os.waitpid(worker.pid, 0)
        except (OSError, TypeError):  # reaped by the pool's own thread meanwhile
            pass


@contextmanager
def _shared_directory(project: Optional[ProjectIndex]) -> Iterator[Optional[str]]:
    """A directory private to this run where the pool's workers leave the module summaries they
    compute for each other (two workers parsing the same module was ~15 % of a cold run's CPU
    over torch). Removed when the run ends, however it ends (SIGTERM and SIGHUP: `_stopped_cleanly`;
    SIGKILL: the next run with a pool removes it); the pool, entered after it, has stopped its
    workers by then. Named after this process (ddplint/leftovers.py)."""
    if project is None:
        yield None
        return
    import shutil
    import tempfile

    from ddplint.leftovers import owned_name

    _remove_left_shared_directories()
    try:
        directory: Optional[str] = tempfile.mkdtemp(prefix=owned_name(SHARED_DIRECTORY_PREFIX))
    except OSError:  # no writable temporary directory: each worker summarises on its own
        directory = None
    if directory is None:
        yield None
        return
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


SHARED_DIRECTORY_PREFIX = "ddplint-summaries-"


def _remove_left_shared_directories() -> None:
    """The shared-summary directories of runs that were killed outright: only this user's, only
    folders (never a link someone put there), only those whose process has ended."""
    import shutil
    import tempfile

    from ddplint.leftovers import left_by_dead_process

    try:
        with os.scandir(tempfile.gettempdir()) as entries:
            left = [entry for entry in entries if left_by_dead_process(entry.name, SHARED_DIRECTORY_PREFIX)]
        for entry in left:
            if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid():
                shutil.rmtree(entry.path, ignore_errors=True)
    except OSError:
        pass


__all__ = [
    "ALONE_FILE_BYTES", "BYTES_PER_WORKER", "COLLECTION_THRESHOLDS", "LARGE_FILE_BYTES", "available_cores",
    "lint_document", "lint_file", "lint_python", "project_index", "run_checks",
]
