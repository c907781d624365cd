"""Runs inside every rank: `python -m ddplint.verify.probe SCRIPT [ARGS ...]`.

It instruments torch from inside the process (DataLoader construction and iteration, the
torch.distributed collectives, DataParallel / DistributedDataParallel construction,
torch.cuda.set_device), then runs SCRIPT as `__main__` with runpy; the script file is never
edited. Every observation is appended to the rank's telemetry file at once (see telemetry.py).

How a rank stops, always with `os._exit` after the last record is written:
- at the start of batch `max_steps + 1` (the step budget): the previous step's collectives have
  completed on every rank, so all ranks stop at the same point and none is left waiting;
- when the script returns, exits or raises.
`os._exit` skips interpreter shutdown on purpose: torch 2.13 + gloo sometimes aborts a rank
there ("terminate called without an active exception") after all the work is done, and nothing
at shutdown can add to the evidence.

Each loader iteration (an "epoch") is cut short after `epoch_steps` batches so that a few epoch
boundaries fall inside the step budget (that is where a missing set_epoch shows).
"""

from __future__ import annotations

# Every standard module the probe uses is imported here, before the script's folder goes first on
# sys.path: a file there named like one of them is the script's business, never the probe's.
import faulthandler
import functools
import os
import runpy
import signal
import socket
import sys
import threading
import time
import traceback
import weakref
from datetime import timedelta
from pathlib import Path

_STARTED = time.time()  # before torch is imported: the rank's start, as the script would see it

from ddplint.verify.emulation import ENV_CPU_GPUS, own_gpu, set_local_rank  # noqa: E402 (imports no torch)
from ddplint.verify.spawn import (  # noqa: E402
    ENV_SPAWNER,
    SPAWNER_NAME,
    install_spawner_hooks,
    worker_main,
    worker_name,
)
from ddplint.verify.telemetry import (  # noqa: E402 (the start time is taken first on purpose)
    ENV_COLLECT_UNTIL,
    ENV_DIR,
    ENV_EPOCH_STEPS,
    ENV_MAX_STEPS,
    ENV_NODE_RANK,
    ENV_PASSTHROUGH,
    STORE_PREFIX,
    TelemetryWriter,
    rank_file,
    rank_log,
    stack_file,
)


def _load_torch_api():
    """The one table of torch knowledge (analysis/torch_api.py) gives the collectives to wrap. It
    imports nothing, but its package's __init__ imports libcst, which a rank has no use for: the
    file is loaded on its own."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "analysis", "torch_api.py")
    spec = importlib.util.spec_from_file_location("_ddplint_torch_api", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COLLECTIVES = _load_torch_api().PROBED_COLLECTIVES
EVALUATION_CUT_FACTOR = 8
MAX_INDICES_PER_EPOCH = 4096  # enough to measure overlap between ranks, small enough to write
TRACEBACK_CHARS = 4000
FINGERPRINTED_STEPS = 4  # optimizer steps after which the DDP models' parameters are fingerprinted
MAX_FINGERPRINTED_PARAMS = 1024
MAX_WRITES_RECORDED = 512  # files opened for writing before the first batch, per rank
TEMPFILE_MODULE = os.sep + "tempfile.py"


class Probe:
    def __init__(self, writer: TelemetryWriter, script: str, max_steps: int, epoch_steps: int, name: str = ""):
        self.writer = writer
        self.script = os.path.realpath(script)
        self.max_steps = max_steps
        self.epoch_steps = epoch_steps
        self.pid = os.getpid()
        # Its files' stem in the run directory: rank-N, or worker-PID for a spawned worker whose
        # rank is not known yet (spawn.py), or the spawner's.
        self.name = name
        self.steps = 0
        self.backward_calls = 0  # tells training loaders from evaluation ones
        self._loaders = 0
        self._local = threading.local()  # collectives nest (broadcast_object_list -> broadcast)
        self.logical = None  # the emulation's logical GPUs (verify --cpu), else None
        # The step budget counts training batches only: a batch is credited when the next request
        # to its loader finds that a backward pass ran since (or when the rank has not trained at
        # all). An evaluation pass that rank 0 runs alone thus does not move its budget, and all
        # ranks still stop at the same training batch.
        self.budget_used = 0
        self.last_bw: dict = {}  # loader id -> backward passes when its last batch was handed out
        self.evaluation_loaders: set = set()
        self.ddp_models: list = []  # weak references to the script's DistributedDataParallel models
        self.optimizer_steps = 0
        self.writes_recorded = 0  # files opened for writing before the first batch (DDP013)

    def credit_previous_batch(self, loader_id: int) -> None:
        previous = self.last_bw.pop(loader_id, None)
        if previous is None:
            return
        if self.backward_calls > previous or self.backward_calls == 0:
            self.budget_used += 1
        else:
            self.evaluation_loaders.add(loader_id)

    # -- workers the script starts itself (spawn.py) -----------------------------------------------
    def become_worker(self) -> None:
        """After a fork: the inherited probe becomes this process's, with files of its own."""
        directory = _run_directory()
        self.pid = os.getpid()
        self.name = worker_name(self.pid)
        self.steps = self.backward_calls = self.budget_used = 0
        self.last_bw, self.evaluation_loaders = {}, set()
        _redirect_output(directory / f"{self.name}.log")
        _dump_stacks_on_signal(directory / f"{self.name}.stack")
        self.writer = TelemetryWriter(directory / f"{self.name}.jsonl")
        _write_start(self.writer, None, 1, time.time(), self.script)

    def become_rank(self, rank: int) -> None:
        """A spawned worker's rank is known (its index, or the rank it passed to
        init_process_group): its files take the rank's names, which verify reads."""
        if not self.name.startswith("worker-"):
            return
        directory = _run_directory()
        for old, new in ((f"{self.name}.jsonl", rank_file(directory, rank)),
                         (f"{self.name}.log", rank_log(directory, rank)),
                         (f"{self.name}.stack", stack_file(directory, rank))):
            try:
                os.replace(directory / old, new)
            except OSError:
                pass
        self.name = f"rank-{rank}"
        self.writer.path = rank_file(directory, rank)
        set_local_rank(rank)
        self.writer.write("rank", rank=rank)

    def run_guarded(self, body) -> None:
        """Run the script's code (its __main__, or a worker's function) and stop the process as a
        rank stops: after its last record, with its exit code, never back into the caller."""
        try:
            body()
        except SystemExit as exc:
            self.stop("finished", _exit_code(exc))
        except BaseException as exc:  # the script's own failure: recorded, shown in the report
            self.stop_on(exc)
        self.stop("finished", 0)

    def stop_on(self, exc: BaseException) -> None:
        if type(exc).__name__ == "NotEmulatable":  # verify --cpu met GPU-only code: one line, no traceback
            self.stop("not-emulatable", 2, error=str(exc))
        text = _user_traceback(exc)
        missing = _missing_path(exc)
        if missing is not None:
            self.stop("exception", 1, error=f"{type(exc).__name__}: {exc}"[:500], traceback=text[-TRACEBACK_CHARS:],
                      missing_path=missing, site=_script_frame(exc, self.script))
        sys.stderr.write(text)
        self.stop("exception", 1, error=f"{type(exc).__name__}: {exc}"[:500], traceback=text[-TRACEBACK_CHARS:])

    def epoch_cut(self, loader_id: int) -> int:
        """Training passes end after epoch_steps batches (to reach epoch boundaries); an
        evaluation pass runs longer, so that the time others wait for it shows."""
        return self.epoch_steps * (EVALUATION_CUT_FACTOR if loader_id in self.evaluation_loaders else 1)

    # -- stopping ---------------------------------------------------------------------------
    def stop(self, reason: str, exit_code: int = 0, **details) -> None:
        for loader_id in list(self.last_bw):  # the last batch of each loader, if a backward followed it
            self.credit_previous_batch(loader_id)
        self.writer.write("end", reason=reason, exit_code=exit_code, steps=self.steps, bw=self.backward_calls,
                          trained=self.budget_used, **details)
        if os.environ.get(ENV_COLLECT_UNTIL):
            _safely(lambda: exchange_through_store(self.writer.path))
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed or replaced stream must not block the exit
                pass
        os._exit(exit_code)

    # -- where in the user's script ------------------------------------------------------------
    def call_site(self, outer_lines: bool = False) -> dict:
        """The innermost frame in the script itself (else the innermost outside torch and us);
        with outer_lines, also every line of the script on the way there (a collective reached
        through a helper is attributed to the line that called the helper too)."""
        frame = sys._getframe(2)
        site, fallback, lines = None, None, []
        while frame is not None:
            filename = frame.f_code.co_filename
            if os.path.realpath(filename) == self.script:
                if site is None:
                    site = {"file": filename, "line": frame.f_lineno}
                    if not outer_lines:
                        return site
                lines.append(frame.f_lineno)
            elif fallback is None and not _is_library(filename):
                fallback = {"file": filename, "line": frame.f_lineno}
            frame = frame.f_back
        site = site or fallback or {}
        if outer_lines and lines:
            site["lines"] = lines
        return site

    def is_user_file(self, filename: str) -> bool:
        """The script and the user's own modules (not torch, not installed packages, not us)."""
        if os.path.realpath(filename) == self.script:
            return True
        return not _is_library(filename) and "site-packages" not in filename

    # -- instrumentation --------------------------------------------------------------------------
    def install(self, emulated_gpus: int = 0) -> None:
        import torch

        if emulated_gpus:
            from ddplint.verify import emulation

            self.logical = emulation.install(emulated_gpus, os.path.dirname(self.writer.path), self.writer.write,
                                             lambda: self.call_site(), self.is_user_file)
        else:
            self._instrument_load(torch)
        self._instrument_data_loader(torch)
        self._instrument_backward(torch)
        self._instrument_distributed(torch)
        self._instrument_models(torch)
        self._instrument_devices(torch)
        self._instrument_optimizer_steps(torch)
        self._watch_file_writes()

    def _instrument_data_loader(self, torch) -> None:
        from torch.utils.data import dataloader as dl

        probe = self
        original_init = dl.DataLoader.__init__
        original_iter = dl.DataLoader.__iter__
        original_next = dl._BaseDataLoaderIter.__next__
        original_next_index = dl._BaseDataLoaderIter._next_index

        @functools.wraps(original_init)
        def __init__(loader, *args, **kwargs):
            try:
                original_init(loader, *args, **kwargs)
            except Exception as exc:  # e.g. DDP006's ValueError: recorded where the script built it
                message = f"{type(exc).__name__}: {exc}"[:300]
                _safely(lambda: probe.writer.write("loader_error", site=probe.call_site(), error=message))
                raise
            probe._loaders += 1
            loader._ddplint_id = probe._loaders
            loader._ddplint_epochs = 0
            _safely(lambda: probe.writer.write("loader", loader=loader._ddplint_id, site=probe.call_site(),
                                               **_describe_loader(loader)))

        @functools.wraps(original_iter)
        def __iter__(loader):
            iterator = original_iter(loader)
            loader_id = getattr(loader, "_ddplint_id", 0)
            epochs = getattr(loader, "_ddplint_epochs", 0)
            loader._ddplint_epochs = epochs + 1
            iterator._ddplint_loader = loader_id
            iterator._ddplint_count = 0
            iterator._ddplint_indices = []
            iterator._ddplint_drawn = 0
            iterator._ddplint_digest = bool(getattr(loader, "_dataset_kind", 0))  # an IterableDataset
            sampler = _sampler_of(loader)
            _safely(lambda: probe.writer.write("epoch", loader=loader_id, n=epochs, site=probe.call_site(),
                                               sampler_epoch=_plain_int(getattr(sampler, "epoch", None))))
            return iterator

        @functools.wraps(original_next)
        def __next__(iterator):
            loader_id = getattr(iterator, "_ddplint_loader", 0)
            probe.credit_previous_batch(loader_id)
            if probe.budget_used >= probe.max_steps:
                probe.stop("max-steps")
            if probe.epoch_steps and getattr(iterator, "_ddplint_count", 0) >= probe.epoch_cut(loader_id):
                raise StopIteration  # end this epoch early: the next epoch boundary is what we need
            began, clock = time.time(), time.perf_counter()
            batch = original_next(iterator)
            waited = time.perf_counter() - clock
            probe.steps += 1
            probe.last_bw[loader_id] = probe.backward_calls
            iterator._ddplint_count = getattr(iterator, "_ddplint_count", 0) + 1
            drawn = getattr(iterator, "_ddplint_indices", None)
            if drawn:
                iterator._ddplint_indices = []
            if getattr(iterator, "_ddplint_digest", False) and iterator._ddplint_drawn < MAX_INDICES_PER_EPOCH:
                digests = _safe_digests(torch, batch)  # no indices to compare: compare the contents
                iterator._ddplint_drawn += len(digests)
                probe.writer.write("batch", t=began, loader=loader_id, step=probe.steps, wait=waited,
                                   bw=probe.backward_calls, train=probe.budget_used, indices=[], digests=digests,
                                   cuda_device=_current_cuda_device(torch) if probe.steps == 1 else None)
            elif probe.steps == 1:  # the first batch also says which CUDA device is current
                probe.writer.write("batch", t=began, loader=loader_id, step=1, wait=waited, bw=probe.backward_calls,
                                   train=0, indices=drawn or [], cuda_device=_current_cuda_device(torch))
            else:
                probe.writer.write_batch(began, loader_id, probe.steps, waited, probe.backward_calls,
                                        probe.budget_used, drawn or ())
            return batch

        @functools.wraps(original_next_index)
        def _next_index(iterator):
            index = original_next_index(iterator)
            drawn = getattr(iterator, "_ddplint_indices", None)
            if drawn is not None and iterator._ddplint_drawn < MAX_INDICES_PER_EPOCH:
                values = [i for i in (index if isinstance(index, (list, tuple)) else [index]) if isinstance(i, int)]
                drawn.extend(values)
                iterator._ddplint_drawn += len(values)
            return index

        dl.DataLoader.__init__ = __init__
        dl.DataLoader.__iter__ = __iter__
        dl._BaseDataLoaderIter.__next__ = __next__
        dl._BaseDataLoaderIter._next_index = _next_index

    def _instrument_backward(self, torch) -> None:
        """Count backward passes (Tensor.backward goes through torch.autograd.backward): a loader
        whose batches are followed by one trains; one that never is only evaluates."""
        probe = self
        original = torch.autograd.backward

        @functools.wraps(original)
        def backward(*args, **kwargs):
            probe.backward_calls += 1
            return original(*args, **kwargs)

        torch.autograd.backward = backward

    def _instrument_distributed(self, torch) -> None:
        import torch.distributed as dist

        if not dist.is_available():
            return
        from torch.distributed import distributed_c10d as c10d

        for name in COLLECTIVES:
            original = getattr(c10d, name, None)
            if original is None:
                continue
            wrapped = self._timed_collective(name, original)
            setattr(c10d, name, wrapped)
            if getattr(dist, name, None) is original:
                setattr(dist, name, wrapped)
        original_init = c10d.init_process_group
        probe = self

        @functools.wraps(original_init)
        def init_process_group(*args, **kwargs):
            result = original_init(*args, **kwargs)
            _safely(lambda: probe.become_rank(dist.get_rank()))  # a multiprocessing worker's rank
            _safely(lambda: probe.writer.write("init", backend=str(dist.get_backend()),
                                               world_size=dist.get_world_size(), rank=dist.get_rank()))
            return result

        c10d.init_process_group = init_process_group
        if getattr(dist, "init_process_group", None) is original_init:
            dist.init_process_group = init_process_group

    def _timed_collective(self, name, original):
        probe = self

        @functools.wraps(original)
        def collective(*args, **kwargs):
            if getattr(probe._local, "inside", False):
                return original(*args, **kwargs)  # nested call of an outer collective: timed there
            probe._local.inside = True
            _safely(lambda: probe.writer.write("coll_begin", op=name, site=probe.call_site(outer_lines=True),
                                               size=_collective_size(args, kwargs)))
            clock = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                probe._local.inside = False
                probe.writer.write("coll_end", op=name, dur=time.perf_counter() - clock)

        return collective

    def _instrument_models(self, torch) -> None:
        probe = self
        data_parallel = torch.nn.DataParallel
        original_dp_init = data_parallel.__init__

        @functools.wraps(original_dp_init)
        def dp_init(model, *args, **kwargs):
            original_dp_init(model, *args, **kwargs)
            # Without GPUs DataParallel sets neither device_ids nor output_device.
            _safely(lambda: probe.writer.write(
                "dp", device_ids=[str(d) for d in (getattr(model, "_ddplint_logical_ids", None)
                                                   or getattr(model, "device_ids", None) or [])],
                output_device=_optional_str(getattr(model, "output_device", None)),
                param_devices=_param_devices(model.module), site=probe.call_site(),
            ))

        data_parallel.__init__ = dp_init

        from torch.nn.parallel import DistributedDataParallel

        original_ddp_init = DistributedDataParallel.__init__

        @functools.wraps(original_ddp_init)
        def ddp_init(model, *args, **kwargs):
            original_ddp_init(model, *args, **kwargs)
            device_ids = getattr(model, "_ddplint_logical_ids", None) or getattr(model, "device_ids", None)
            _safely(lambda: probe._time_gradient_buckets(model, original_register))
            _safely(lambda: probe.ddp_models.append(weakref.ref(model)))
            _safely(lambda: probe.writer.write(
                "ddp", device_ids=None if device_ids is None else [str(d) for d in device_ids],
                param_devices=_param_devices(model.module), site=probe.call_site(),
                timed_buckets=getattr(model, "_ddplint_hook", None) is not None,
            ))

        original_register = DistributedDataParallel.register_comm_hook

        @functools.wraps(original_register)
        def register_comm_hook(model, state, hook):
            if getattr(model, "_ddplint_hook", None) is None:
                return original_register(model, state, hook)
            model._ddplint_hook = (state, hook)  # the script's own hook, timed by ours

        DistributedDataParallel.__init__ = ddp_init
        DistributedDataParallel.register_comm_hook = register_comm_hook

    def _time_gradient_buckets(self, model, register) -> None:
        """DDP's gradient all-reduce runs in C++ during backward(): a communication hook (verify's
        runs only) times each bucket from its launch to the completion of its future. It calls
        the script's own hook when the script registers one (register_comm_hook is redirected to
        it), torch's default all-reduce otherwise."""
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        probe = self
        model._ddplint_hook = (model.process_group, default_hooks.allreduce_hook)

        def timed(_, bucket):
            state, hook = model._ddplint_hook
            began, clock = time.time(), time.perf_counter()
            backward = probe.backward_calls  # the backward pass this bucket's all-reduce belongs to
            # Its all_reduce is DDP's, not the script's: not recorded as a Python collective (not
            # part of the sequences DDP007 compares, nor of the collective counts).
            outer, probe._local.inside = getattr(probe._local, "inside", False), True
            try:
                future = hook(state, bucket)
            finally:
                probe._local.inside = outer

            def done(finished):
                _safely(lambda: probe.writer.write("bucket", t=began, dur=time.perf_counter() - clock,
                                                   index=bucket.index(), numel=bucket.buffer().numel(),
                                                   bw=backward))
                return finished.value()

            return future.then(done)

        register(model, None, timed)

    def _instrument_optimizer_steps(self, torch) -> None:
        """Every optimizer step, through torch's global post-step hook (nothing of the optimizer is
        replaced): how many backward passes fed it (DDP015), and, for the first few, a fingerprint
        of each DDP model's parameters, which DDP keeps equal on every rank (DDP016)."""
        from torch.optim.optimizer import register_optimizer_step_post_hook

        probe = self

        def after_step(optimizer, args, kwargs):
            probe.optimizer_steps += 1
            fingerprints = None
            if probe.optimizer_steps <= FINGERPRINTED_STEPS:
                fingerprints = _parameter_fingerprints(torch, probe.ddp_models)
            _safely(lambda: probe.writer.write("opt_step", n=probe.optimizer_steps, bw=probe.backward_calls,
                                               params=fingerprints))

        register_optimizer_step_post_hook(lambda *a: _safely(lambda: after_step(*a)))

    def _watch_file_writes(self) -> None:
        """Files this rank opens for writing before its first batch (a dataset's download and
        extraction, DDP013), seen through Python's audit hook: the script's calls are not
        wrapped, and the hook returns at once for every other event and after the first batch.
        An audit hook cannot be removed, so it checks that it still runs in the rank itself
        (a DataLoader worker forked from it inherits it)."""
        probe = self
        own = os.environ.get(ENV_DIR)  # verify's run directory: its own files
        skipped = tuple(filter(None, (own and os.path.abspath(own) + os.sep, "/proc/", "/dev/", "/sys/")))
        local = threading.local()

        def hook(event, args):
            if event != "open" or probe.steps or probe.writes_recorded >= MAX_WRITES_RECORDED:
                return
            if os.getpid() != probe.pid or getattr(local, "inside", False) or not _opens_for_writing(args):
                return
            if sys._getframe(1).f_code.co_filename.endswith(TEMPFILE_MODULE):
                return  # a private temporary file (torch makes some on import), not the script's data
            path = args[0]
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str) or path.endswith((".pyc", ".pyc.tmp")) or "__pycache__" in path:
                return
            local.inside = True
            try:
                path = os.path.abspath(path)
                if not path.startswith(skipped):
                    probe.writes_recorded += 1
                    probe.writer.write("write", path=path, site=probe.call_site(outer_lines=True))
            except Exception:  # recording never raises into the script
                pass
            finally:
                local.inside = False

        sys.addaudithook(hook)

    def _instrument_load(self, torch) -> None:
        """On real devices: where torch.load put the tensors, against the rank's own device (DDP008)."""
        probe = self
        original = torch.load

        @functools.wraps(original)
        def load(*args, **kwargs):
            result = original(*args, **kwargs)
            _safely(lambda: probe.writer.write(
                "load", devices=sorted(_tensor_devices(torch, result)), own=own_gpu(_device_count(torch)),
                map_location=None if _map_location(args, kwargs) is None else "given", site=probe.call_site()))
            return result

        torch.load = load

    def _instrument_devices(self, torch) -> None:
        if self.logical is not None:
            return  # the emulation records set_device itself
        probe = self
        original = torch.cuda.set_device

        @functools.wraps(original)
        def set_device(device):
            original(device)
            _safely(lambda: probe.writer.write("device", device=str(device)))

        torch.cuda.set_device = set_device


def exchange_through_store(own_file) -> None:
    """Multi-node without a shared directory: the telemetry travels through the c10d store that
    torchrun's rendezvous set up for the workers (MASTER_ADDR:MASTER_PORT). Ranks off node 0 push
    their whole file; local rank 0 of node 0 waits (until the launcher's deadline) for every
    remote rank's file and writes it next to its own, where node 0's verify reads them."""
    import torch.distributed as dist

    deadline = float(os.environ[ENV_COLLECT_UNTIL])
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                          timeout=timedelta(seconds=max(deadline - time.time(), 1.0)))
    node_rank, rank = _int_env(ENV_NODE_RANK, 0), _int_env("RANK", 0)
    if node_rank != 0:
        with open(own_file, "rb") as handle:
            store.set(f"{STORE_PREFIX}rank/{rank}", handle.read())
        store.add(f"{STORE_PREFIX}pushed", 1)
        return
    if _int_env("LOCAL_RANK", 0) != 0:
        return
    remote = _int_env("WORLD_SIZE", 1) - _int_env("LOCAL_WORLD_SIZE", 1)
    while store.add(f"{STORE_PREFIX}pushed", 0) < remote and time.time() < deadline:
        time.sleep(0.2)
    directory = os.path.dirname(own_file)
    for other in range(_int_env("WORLD_SIZE", 1)):
        key = f"{STORE_PREFIX}rank/{other}"
        if store.check([key]):
            with open(rank_file(directory, other), "wb") as handle:
                handle.write(store.get(key))


def _safely(record) -> None:
    """Recording must never break the script it observes."""
    try:
        record()
    except Exception:
        pass


def _collective_size(args, kwargs):
    """The shape of the collective's first tensor (or list length for object collectives): sizes
    help tell which collective one rank issued and the others did not."""
    for value in list(args) + list(kwargs.values()):
        shape = getattr(value, "shape", None)
        if shape is not None:
            return list(shape)
        if isinstance(value, list):
            inner = next((getattr(v, "shape", None) for v in value if getattr(v, "shape", None) is not None), None)
            return [len(value), *(list(inner) if inner is not None else [])]
    return None


def _opens_for_writing(args) -> bool:
    """The audit event "open" gives (path, mode, flags): mode is open()'s string, or None for
    os.open, whose flags then tell."""
    mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))


def _parameter_fingerprints(torch, models: list) -> list:
    """Per live DDP model, the sum of each parameter (float64, at most MAX_FINGERPRINTED_PARAMS):
    equal on every rank while DDP keeps the replicas in step; one sync per model."""
    fingerprints = []
    with torch.no_grad():
        for ref in models:
            model = ref()
            if model is None:
                continue
            params = list(model.module.parameters())[:MAX_FINGERPRINTED_PARAMS]
            if params:
                sums = [p.detach().to(torch.float64).sum() for p in params]
                try:
                    values = torch.stack(sums).cpu().tolist()  # one copy to the host
                except RuntimeError:  # parameters on several devices
                    values = [s.item() for s in sums]
                fingerprints.append([float(v) for v in values])
    return fingerprints


def _map_location(args, kwargs):
    return kwargs.get("map_location", args[1] if len(args) > 1 else None)


def _tensor_devices(torch, obj, limit: int = 64) -> set:
    """Devices of the tensors inside a loaded object (dicts, lists, tuples), the first `limit` seen."""
    devices, todo, seen = set(), [obj], 0
    while todo and seen < limit:
        item = todo.pop()
        if isinstance(item, torch.Tensor):
            devices.add(str(item.device))
            seen += 1
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return devices


_DIGEST_WIDTH = 4096
_WEIGHTS: list = []


def _digest_weights(torch):
    """Fixed weights, the same in every rank (seeded), made once per rank."""
    if not _WEIGHTS:
        generator = torch.Generator().manual_seed(1234)
        _WEIGHTS.append(torch.rand(_DIGEST_WIDTH, 2, generator=generator, dtype=torch.float64))
    return _WEIGHTS[0]


def _safe_digests(torch, batch) -> list:
    try:
        return _digests(torch, batch)
    except Exception:
        return []


def _digests(torch, batch) -> list:
    """One short digest per item of the batch (row of dim 0), from all its tensors: two weighted
    sums in float64 with fixed weights, so identical items on two ranks give identical digests,
    without numpy and at the cost of one small matrix product per batch."""
    leaves, todo = [], [batch]
    while todo:
        item = todo.pop(0)
        if isinstance(item, torch.Tensor) and item.dim() >= 1:
            leaves.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    if not leaves:
        return []
    rows = leaves[0].shape[0]
    weights = _digest_weights(torch)
    total = torch.zeros(rows, 2, dtype=torch.float64)
    for leaf in leaves:
        if leaf.shape[0] != rows:
            continue
        flat = leaf.detach().reshape(rows, -1)[:, :_DIGEST_WIDTH].to(torch.float64)
        total += flat @ weights[:flat.shape[1]]
    return [f"{a:.15g}/{b:.15g}" for a, b in total.tolist()]


def _optional_str(value):
    return None if value is None else str(value)


def _plain_int(value):
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _is_library(filename: str) -> bool:
    return (
        filename.startswith("<")
        or f"{os.sep}torch{os.sep}" in filename
        or f"{os.sep}ddplint{os.sep}verify{os.sep}" in filename
        or f"{os.sep}runpy.py" in filename
    )


def _sampler_of(loader):
    """The sampler that decides which indices this rank reads (inside a batch sampler if any)."""
    batch_sampler = getattr(loader, "batch_sampler", None)
    inner = getattr(batch_sampler, "sampler", None)
    if batch_sampler is not None and not _is_default_batch_sampler(batch_sampler):
        return inner if inner is not None else batch_sampler
    return getattr(loader, "sampler", None)


def _is_default_batch_sampler(batch_sampler) -> bool:
    return type(batch_sampler).__name__ == "BatchSampler" and type(batch_sampler).__module__.startswith("torch.")


def _safe_len(obj):
    try:
        return len(obj)
    except Exception:  # IterableDatasets, samplers without __len__
        return None


def _describe_loader(loader) -> dict:
    from torch.utils.data import IterableDataset

    sampler = _sampler_of(loader)
    dataset = loader.dataset
    kind = type(sampler).__name__ if sampler is not None else None
    shuffle = getattr(sampler, "shuffle", None)
    if shuffle is None and kind is not None:
        shuffle = kind == "RandomSampler"
    return {
        "dataset": type(dataset).__name__,
        "dataset_len": _safe_len(dataset),
        "iterable": isinstance(dataset, IterableDataset),
        "sampler": kind,
        "sampler_len": _safe_len(sampler) if sampler is not None else None,
        "shuffle": shuffle,
        "num_replicas": getattr(sampler, "num_replicas", None),
        "sampler_rank": getattr(sampler, "rank", None),
        "batch_size": getattr(loader, "batch_size", None),
        "num_workers": getattr(loader, "num_workers", 0),
        "seed": _plain_int(getattr(sampler, "seed", None)),
    }


def _param_devices(module, limit: int = 8) -> list:
    devices = []
    for parameter in module.parameters():
        name = str(parameter.device)
        if name not in devices:
            devices.append(name)
            if len(devices) >= limit:
                break
    return devices


def _device_count(torch) -> int:
    try:
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


def _current_cuda_device(torch):
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return f"cuda:{torch.cuda.current_device()}"
    except Exception:
        pass
    return None


def _int_env(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _redirect_output(path) -> None:
    """The rank's stdout and stderr go to its log file: the report shows its tail on a crash, and
    N ranks printing over the report would make it unreadable."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def main(argv: list) -> None:
    if not argv:
        print("usage: python -m ddplint.verify.probe SCRIPT [ARGS ...]", file=sys.stderr)
        os._exit(2)
    script, script_args = argv[0], argv[1:]
    directory = _run_directory()
    if os.environ.get(ENV_SPAWNER):
        # The script starts its ranks itself: this process is its main process, not a rank.
        probe = _open_probe(directory, script, SPAWNER_NAME, rank=None, redirect=False)
        install_spawner_hooks(probe, script)
    else:
        rank = _int_env("RANK", 0)
        probe = _open_probe(directory, script, f"rank-{rank}", rank=rank,
                            redirect=not os.environ.get(ENV_PASSTHROUGH))
    _run_script(probe, script, script_args)


def spawned_interpreter_main(kwds: dict) -> None:
    """What a new interpreter the script's spawner started runs first (spawn.py builds its command
    line): this module's probe set up, then multiprocessing's own start."""
    worker_main(kwds, start_worker_probe)


def start_worker_probe(script: str) -> "Probe":
    """A new interpreter the script's main process started (spawn.py): instrumented before the
    script is imported in it; its rank comes later."""
    name = worker_name(os.getpid())
    return _open_probe(_run_directory(), script, name, rank=None, redirect=not os.environ.get(ENV_PASSTHROUGH))


def _run_directory() -> Path:
    return Path(os.environ.get(ENV_DIR) or os.getcwd())


def _open_probe(directory: Path, script: str, name: str, rank, redirect: bool) -> "Probe":
    if redirect:
        _redirect_output(directory / f"{name}.log")
    # Before the start record: the launcher signals the pids it reads there, and SIGUSR1 without a
    # handler would end the rank.
    _dump_stacks_on_signal(directory / f"{name}.stack")
    writer = TelemetryWriter(directory / f"{name}.jsonl")
    _write_start(writer, rank, _int_env("WORLD_SIZE", 1) if rank is not None else 1, _STARTED, script)
    probe = Probe(writer, script, _int_env(ENV_MAX_STEPS, 20), _int_env(ENV_EPOCH_STEPS, 5), name=name)
    try:
        probe.install(_int_env(ENV_CPU_GPUS, 0))
    except Exception as exc:  # torch missing or changed beyond recognition: say so, run nothing
        probe.stop("exception", 1, error=f"probe could not instrument torch: {type(exc).__name__}: {exc}")
    return probe


def _write_start(writer: TelemetryWriter, rank, world_size: int, started: float, script: str) -> None:
    writer.write(
        "start", t=started, rank=rank, local_rank=_int_env("LOCAL_RANK", 0),
        world_size=world_size, node_rank=_int_env(ENV_NODE_RANK, _int_env("GROUP_RANK", 0)),
        host=socket.gethostname(), pid=os.getpid(), pgid=os.getpgid(0), script=script,
        emulated_gpus=_int_env(ENV_CPU_GPUS, 0) or None,
    )


def _dump_stacks_on_signal(path) -> None:
    """At the timeout the launcher sends SIGUSR1: every thread's Python stack goes to the rank's
    stack file (faulthandler writes it from its signal handler, even while the rank is blocked
    inside a collective in C++). DDP007's hang evidence is where each rank stood."""
    try:
        handle = open(path, "w")
        faulthandler.register(signal.SIGUSR1, file=handle, all_threads=True)
        _KEEP_OPEN.append(handle)
    except (OSError, AttributeError, ValueError, RuntimeError):
        pass


_KEEP_OPEN: list = []


def _user_traceback(exc: BaseException) -> str:
    """The traceback as the user would see it from `python SCRIPT`: no probe or runpy frames."""
    summary = traceback.TracebackException.from_exception(exc)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if not _is_probe_frame(frame.filename)])
    return "".join(summary.format())


def _missing_path(exc: BaseException):
    """The path a FileNotFoundError names (a dataset that is not on this machine), if any."""
    if isinstance(exc, FileNotFoundError):
        return exc.filename or str(exc)  # a reader's own message (torchvision: "Couldn't find ... in DIR")
    return None


def _script_frame(exc: BaseException, script: str):
    """The innermost line of the script itself in the exception's traceback."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == script:
            found = {"file": frame.filename, "line": frame.lineno}
    return found


def _is_probe_frame(filename: str) -> bool:
    return os.path.realpath(filename) == os.path.realpath(__file__) or filename in ("<frozen runpy>",) \
        or filename.endswith(f"{os.sep}runpy.py")


def _run_script(probe: Probe, script: str, script_args: list) -> None:
    sys.argv = [script, *script_args]
    # As `python SCRIPT` would have it. Inserted, not replacing sys.path[0]: the isolated start
    # (sweep.py) has already taken the current directory out, and ddplint's own imports are done.
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    probe.run_guarded(lambda: runpy.run_path(script, run_name="__main__"))


if __name__ == "__main__":
    main(sys.argv[1:])
