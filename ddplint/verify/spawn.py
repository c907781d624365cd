"""Scripts that start their own ranks: `torch.multiprocessing.spawn` / `start_processes`, and
`multiprocessing.Process` workers that call `init_process_group` themselves.

verify runs such a script once, as `python SCRIPT` would, in the "spawner" (the probe in spawner
mode, no torchrun), with the probe and, under --cpu, the emulation installed: the script sizes its
world with `torch.cuda.device_count()` there. In the spawner, three hooks follow the workers:

- multiprocessing's spawn start method builds each new interpreter's command line; ours starts the
  interpreter with `worker_main`, which installs the probe (and the emulation) *before*
  multiprocessing imports the script as `__mp_main__` in it, so that module-level code such as
  `torch.cuda.is_available()` already sees the rehearsal. It is the launch environment that only
  verify's runs have (no sitecustomize, no workspace file is involved): the worker's probe reads
  its settings from the DDPLINT_VERIFY_* variables it inherits.
- torch's `start_processes` (which `spawn` calls) hands each worker a wrapped function that knows
  the worker's index: that index is the rank (its telemetry becomes `rank-<index>.jsonl`).
- `multiprocessing.Process.start` wraps the target of any other worker: its rank is the one it
  passes to `init_process_group` (until then its files are `worker-<pid>.*`, which verify does not
  read as a rank).

A worker's function runs under the probe's guard: its exception, its exit and the step budget end
the worker as they end a torchrun rank (`os._exit` after the last record).

Imported in the spawner and in every worker; imports only the standard library at module level.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Optional

# Set by the launcher: run the script as its own launcher (no torchrun), the probe in spawner mode.
ENV_SPAWNER = "DDPLINT_VERIFY_SPAWNER"
# Set by the spawner for its workers: the script they belong to (its call sites are the user's).
ENV_SCRIPT = "DDPLINT_VERIFY_SCRIPT"
SPAWNER_NAME = "spawner"  # spawner.jsonl / the spawner's own records (the spawn calls it made)

# The probe of this process (the spawner's, or a worker's once set up). A forked worker inherits
# the spawner's and turns it into its own (`Probe.become_worker`).
CURRENT: Optional[Any] = None
_inside_start_processes = False
# The spawner's pid: a forked rank inherits the hooks, but the processes it starts itself
# (DataLoader workers) are not ranks.
_spawner_pid: Optional[int] = None


def worker_name(pid: int) -> str:
    """A worker's files before its rank is known."""
    return f"worker-{pid}"


# -- in the spawner --------------------------------------------------------------------------------
def install_spawner_hooks(probe, script: str) -> None:
    global CURRENT, _spawner_pid
    CURRENT, _spawner_pid = probe, os.getpid()
    os.environ[ENV_SCRIPT] = os.path.abspath(script)
    _hook_command_line()
    _hook_torch_start_processes(probe)
    _hook_process_start()


def _hook_command_line() -> None:
    from multiprocessing import spawn, util

    def get_command_line(**kwds):
        if getattr(sys, "frozen", False) or os.getpid() != _spawner_pid:
            return original(**kwds)
        # The isolated start's first step (sweep.py): `-c` puts the current directory first on
        # sys.path; it goes before ddplint's own imports. multiprocessing then sets the spawner's path.
        program = ("import sys; sys.path[:1] == [''] and sys.path.pop(0); "
                   f"from ddplint.verify.probe import spawned_interpreter_main; spawned_interpreter_main({kwds!r})")
        return [spawn.get_executable(), *util._args_from_interpreter_flags(), "-c", program, "--multiprocessing-fork"]

    original = spawn.get_command_line
    spawn.get_command_line = get_command_line


def _hook_torch_start_processes(probe) -> None:
    try:
        import torch.multiprocessing as torch_mp
    except ImportError:
        return
    module: Any = sys.modules.get("torch.multiprocessing.spawn")
    original = getattr(module, "start_processes", None)
    if original is None:
        return

    @functools.wraps(original)
    def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
        global _inside_start_processes
        if os.getpid() != _spawner_pid:  # a rank's own workers: not ranks of the run
            return original(fn, args, nprocs, join, daemon, start_method)
        probe.writer.write("spawn", nprocs=nprocs, start_method=start_method, site=probe.call_site(),
                           cuda_devices=_device_count())
        _inside_start_processes = True
        try:
            return original(functools.partial(spawned_rank, fn), args, nprocs, join, daemon, start_method)
        finally:
            _inside_start_processes = False

    module.start_processes = start_processes  # what torch.multiprocessing.spawn calls
    torch_mp.start_processes = start_processes


def _device_count() -> int:
    import torch

    try:
        return torch.cuda.device_count()
    except Exception:
        return 0


def _hook_process_start() -> None:
    from multiprocessing import process

    original = process.BaseProcess.start

    @functools.wraps(original)
    def start(self):
        target = getattr(self, "_target", None)
        if os.getpid() == _spawner_pid and not _inside_start_processes and target is not None \
                and getattr(target, "func", None) is not process_worker:
            self._target = functools.partial(process_worker, target)
        return original(self)

    process.BaseProcess.start = start  # type: ignore[method-assign]


# -- in a worker -----------------------------------------------------------------------------------
# probe.start_worker_probe, handed over by the probe module (it imports this module; importing it
# back would be a cycle): makes a new interpreter's probe before the script is imported there.
_start_worker_probe: Optional[Callable[[str], Any]] = None


def worker_main(kwds: dict, start_worker_probe: Callable[[str], Any]) -> None:
    """A new interpreter started by the spawner: the probe first, then multiprocessing's own start
    (which imports the script as __mp_main__ and runs the worker)."""
    global _start_worker_probe
    _start_worker_probe = start_worker_probe
    _set_up_worker()
    from multiprocessing import spawn

    spawn.spawn_main(**kwds)


def _set_up_worker():
    """This process's probe as a worker: a new one in a new interpreter, the inherited one turned
    into this process's own after a fork."""
    global CURRENT
    if CURRENT is not None and CURRENT.pid == os.getpid():
        return CURRENT
    if CURRENT is not None:
        CURRENT.become_worker()
    else:
        assert _start_worker_probe is not None, "a spawned interpreter starts in probe.spawned_interpreter_main"
        CURRENT = _start_worker_probe(os.environ.get(ENV_SCRIPT, ""))
    return CURRENT


def spawned_rank(fn, index: int, *args):
    """torch's worker function, called as fn(index, *args): the index is the rank."""
    probe = _set_up_worker()
    probe.become_rank(index)
    probe.run_guarded(lambda: fn(index, *args))


def process_worker(target, *args, **kwargs):
    """A multiprocessing.Process target: its rank comes from its init_process_group."""
    probe = _set_up_worker()
    probe.run_guarded(lambda: target(*args, **kwargs))
