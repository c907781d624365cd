"""`ddplint verify --cpu`: rehearse a script written for GPUs on CPU ranks, unchanged.

Runs inside every rank (imported by the probe only when the launcher asks for it). The rank sees
N logical CUDA devices (N = ranks per node): `torch.cuda.is_available()` is True,
`device_count()` is N, and every device request (`"cuda"`, `"cuda:i"`, `torch.device("cuda", i)`,
`.cuda(i)`, `.to(i)`, `set_device`, `DistributedDataParallel(device_ids=[i])`,
`init_process_group(device_id=...)`, `torch.load(map_location=...)`) is honoured on the CPU while
the logical device the rank asked for is recorded: that record is the evidence for DDP005 (two
ranks of a node on one GPU) and DDP008 (a checkpoint restored onto another rank's GPU).

How: a TorchFunctionMode rewrites device arguments of every torch call from a CUDA device to
the CPU (and `.cuda()` to a CPU copy); `nccl` becomes `gloo`; the CUDA-only calls a training
script makes (synchronize, streams, events, memory statistics, autocast, GradScaler, pinned
memory, NVTX) behave as on a machine with N GPUs and have no effect on the result.

What cannot be emulated (custom CUDA kernels, Triton, flash attention) stops the rank with
`NotEmulatable`, one line naming the call; the probe turns it into the run's `problem`.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import json
import os
import sys
import time
import types
from typing import Any, Callable, Optional

ENV_CPU_GPUS = "DDPLINT_VERIFY_CPU_GPUS"
# torch.save in one rank, torch.load in another: which logical device the saved tensors were on.
SAVES_FILE = "saved-devices.jsonl"
# Imported from the user's code, these only run on a GPU: a stub stands in and its first use stops.
GPU_ONLY_MODULES = {
    "triton": "Triton kernels",
    "flash_attn": "flash attention (flash_attn)",
    "flash_attn_interface": "flash attention 3 (flash_attn_interface)",
    "xformers": "xformers' CUDA kernels",
}
# What triton's module offers at definition time (no kernel runs until a launch).
TRITON_DECORATORS = ("jit", "autotune", "heuristics")


class NotEmulatable(BaseException):
    """Raised where a GPU-only call is made; a BaseException so that a script's `except Exception`
    does not swallow it."""


_local_rank: Optional[int] = None  # a rank the script spawned itself: its index (no LOCAL_RANK)


def set_local_rank(rank: int) -> None:
    """A worker the script started itself has no LOCAL_RANK: its rank on the node is its index.
    The environment is left as it is (a script may test it to tell torchrun from spawn)."""
    global _local_rank
    _local_rank = rank


def own_gpu(device_count: int) -> str:
    """The GPU a rank owns in the one-process-per-GPU layout: cuda:LOCAL_RANK when it sees several,
    cuda:0 when it sees one (its own, isolated by CUDA_VISIBLE_DEVICES), the CPU when none."""
    if device_count < 1:
        return "cpu"
    try:
        local_rank = _local_rank if _local_rank is not None else int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        local_rank = 0
    return f"cuda:{local_rank % device_count}" if device_count > 1 else "cuda:0"


class LogicalCuda:
    """The rank's view of N logical GPUs: the current device and what was asked for, where."""

    def __init__(self, count: int, record: Callable[..., None], call_site: Callable[[], dict]):
        self.count = count
        self.current = 0
        self.initialized = False
        self._record = record
        self._call_site = call_site
        self._seen: set = set()
        self.model_device: Optional[str] = None  # where the rank's model was placed, the logical name

    # -- device names ------------------------------------------------------------------------------
    def logical(self, spec) -> Optional[str]:
        """'cuda:i' for a CUDA device request (None, str, torch.device or int index), else None."""
        import torch

        if isinstance(spec, bool):
            return None
        if isinstance(spec, int):
            return self._checked(spec)
        if isinstance(spec, str):
            if not spec.startswith("cuda"):
                return None
            spec = torch.device(spec)
        if isinstance(spec, torch.device):
            if spec.type != "cuda":
                return None
            return self._checked(self.current if spec.index is None else spec.index)
        return None

    def _checked(self, index: int) -> str:
        if not 0 <= index < self.count:
            raise RuntimeError(f"CUDA error: invalid device ordinal (cuda:{index}; ddplint verify --cpu presents "
                               f"{self.count} logical GPUs, one per rank of the node)")
        self.initialized = True
        return f"cuda:{index}"

    def note(self, what: str, device: str) -> None:
        """Record a request once per (what, device): the first call site is the one shown."""
        if what == "model":
            self.model_device = device
        key = (what, device)
        if key in self._seen:
            return
        self._seen.add(key)
        self._record("cuda_request", what=what, device=device, site=self._call_site())


# -- the torch function mode: device arguments -------------------------------------------------------
def _device_mode(cuda: LogicalCuda):
    import torch
    from torch.overrides import TorchFunctionMode

    cpu = torch.device("cpu")

    class CpuForCuda(TorchFunctionMode):
        """Every torch call with a CUDA device argument runs on the CPU; `.cuda()` and `.to(cuda)`
        return a new tensor, as they would on a GPU."""

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if name == "cuda" and args:
                target = args[1] if len(args) > 1 else kwargs.get("device")
                cuda.note("tensor", cuda.logical(target if target is not None else "cuda"))
                return args[0].clone() if isinstance(args[0], torch.Tensor) else args[0]
            if name == "cpu" and args and isinstance(args[0], torch.Tensor):
                return _on_purpose_cpu(args[0].clone())  # a copy, as from a GPU
            if name == "to" and len(args) > 1:
                device = cuda.logical(args[1])
                if device is not None:
                    cuda.note("tensor", device)
                    args = (args[0], cpu, *args[2:])
                    kwargs["copy"] = True
                elif _names_cpu(args[1]) and isinstance(args[0], torch.Tensor):
                    return _on_purpose_cpu(func(*args, **dict(kwargs, copy=True)))
            if name == "_parse_to" and args and cuda.logical(args[0]) is not None:
                args = (cpu, *args[1:])  # Module.to(device): the module's own wrapper noted it
            if name == "pin_memory" and args:
                return args[0]
            if "device" in kwargs:
                device = cuda.logical(kwargs["device"])
                if device is not None:
                    cuda.note("tensor", device)
                    kwargs["device"] = cpu
                    if name == "to":
                        kwargs["copy"] = True
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            return func(*args, **kwargs)

    return CpuForCuda()


def _names_cpu(spec) -> bool:
    return str(spec) == "cpu"


def _on_purpose_cpu(tensor):
    """Mark a tensor the script brought to the CPU itself (`.cpu()`, `.to("cpu")`): saved, it
    comes back on the CPU, not on the saving rank's GPU."""
    try:
        tensor._ddplint_cpu = True
    except (AttributeError, RuntimeError):
        pass
    return tensor


def _all_on_purpose_cpu(obj, limit: int = 64) -> bool:
    """True when every tensor found in a saved object (dicts, lists, tuples) was brought to the CPU
    by the script; False when any was not, or none was found."""
    import torch

    todo, seen = [obj], 0
    while todo and seen < limit:
        item = todo.pop()
        if isinstance(item, torch.Tensor):
            if not getattr(item, "_ddplint_cpu", False):
                return False
            seen += 1
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return seen > 0


# -- torch.cuda as on a machine with N GPUs ------------------------------------------------------------
class _Stream:
    def __init__(self, *args, **kwargs):
        pass

    def synchronize(self):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        return event or _Event()

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Event:
    """Timing events measure wall-clock time on the CPU (no GPU speed is implied)."""

    def __init__(self, *args, **kwargs):
        self._at = None

    def record(self, stream=None):
        self._at = time.perf_counter()

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def elapsed_time(self, end):
        return 1000.0 * ((end._at or 0.0) - (self._at or 0.0))


class _DeviceProperties:
    def __init__(self, index: int):
        self.name = f"ddplint logical GPU {index} (CPU rehearsal)"
        self.total_memory = 80 * 1024 ** 3
        self.major, self.minor = 8, 0
        self.multi_processor_count = 108
        self.is_integrated = False
        self.is_multi_gpu_board = False


def _distinct(value):
    """A function object of its own for each name: torch._dynamo keeps a rule per torch.cuda
    object and refuses one object under two names."""
    if isinstance(value, type):
        return value

    def replacement(*args, **kwargs):
        return value(*args, **kwargs)

    return replacement


def _install_torch_cuda(torch, cuda: LogicalCuda) -> None:
    tc = torch.cuda

    def index_of(device=None) -> int:
        name = cuda.logical(device if device is not None else "cuda") or "cuda:0"
        return int(name.split(":")[1])

    def set_device(device):
        name = cuda.logical(device)
        if name is None:
            raise ValueError(f"Expected a cuda device, but got: {device}")
        cuda.current = int(name.split(":")[1])
        cuda.note("set_device", name)

    class device:  # torch.cuda.device(i): a context that switches the current device
        def __init__(self, index):
            self.index = index
            self.previous = None

        def __enter__(self):
            self.previous = cuda.current
            if self.index is not None and self.index != -1:
                set_device(self.index)

        def __exit__(self, *exc):
            cuda.current = self.previous
            return False

    zero = lambda *args, **kwargs: 0  # noqa: E731 - memory statistics of a device that holds nothing
    nothing = lambda *args, **kwargs: None  # noqa: E731
    replacements = {
        "is_available": lambda: True,
        "device_count": lambda: cuda.count,
        "current_device": lambda: cuda.current,
        "set_device": set_device,
        "device": device,
        "is_initialized": lambda: cuda.initialized,
        "init": nothing,
        "synchronize": nothing,
        "empty_cache": nothing,
        "ipc_collect": nothing,
        "reset_peak_memory_stats": nothing,
        "reset_max_memory_allocated": nothing,
        "reset_accumulated_memory_stats": nothing,
        "memory_allocated": zero,
        "max_memory_allocated": zero,
        "memory_reserved": zero,
        "max_memory_reserved": zero,
        "memory_cached": zero,
        "max_memory_cached": zero,
        "memory_stats": lambda *a, **k: {},
        "memory_summary": lambda *a, **k: "ddplint verify --cpu: no GPU memory is used",
        "mem_get_info": lambda *a, **k: (80 * 1024 ** 3, 80 * 1024 ** 3),
        "set_per_process_memory_fraction": nothing,
        "get_device_name": lambda d=None: _DeviceProperties(index_of(d)).name,
        "get_device_properties": lambda d=None: _DeviceProperties(index_of(d)),
        "get_device_capability": lambda d=None: (8, 0),
        "is_bf16_supported": lambda *a, **k: True,
        "Stream": _Stream,
        "Event": _Event,
        "stream": lambda s=None: _Stream(),
        "current_stream": lambda d=None: _Stream(),
        "default_stream": lambda d=None: _Stream(),
        "get_rng_state": lambda device="cuda": torch.get_rng_state(),
        "get_rng_state_all": lambda: [torch.get_rng_state() for _ in range(cuda.count)],
        "set_rng_state": nothing,
        "set_rng_state_all": nothing,
        "initial_seed": lambda: torch.initial_seed(),
        "manual_seed": nothing,
        "manual_seed_all": nothing,
        "seed": nothing,
        "seed_all": nothing,
    }
    for name, value in replacements.items():
        setattr(tc, name, _distinct(value))
    nvtx = getattr(tc, "nvtx", None)
    if nvtx is not None:
        nvtx.range_push = _distinct(zero)
        nvtx.range_pop = _distinct(zero)
        nvtx.mark = _distinct(nothing)

        class _Range:
            def __init__(self, *a, **k):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def __call__(self, fn):
                return fn

        nvtx.range = _Range
    _install_amp(torch)
    _install_compile(torch)


def _install_compile(torch) -> None:
    """torch.compile returns the model (or function) as it is: compiling only changes speed, which a
    CPU rehearsal does not measure, and GPU kernels would not compile here anyway."""

    def compile(model=None, *args, **kwargs):
        if model is None:
            return lambda fn: fn  # used as @torch.compile(mode=...)
        return model

    torch.compile = compile


def _install_amp(torch) -> None:
    """autocast for "cuda" is off on the CPU (float32 throughout: the verdicts rest on ordering,
    indices and devices, not on precision); GradScaler works on the CPU (fp32 gradients are finite,
    so scaling and unscaling leave the update as it is)."""
    base_autocast: Any = torch.amp.autocast

    class autocast(base_autocast):
        def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
            if str(device_type).startswith("cuda"):
                device_type, enabled = "cpu", False
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class cuda_autocast(autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    base_scaler: Any = torch.amp.GradScaler

    class GradScaler(base_scaler):
        def __init__(self, device="cuda", *args, **kwargs):
            super().__init__("cpu" if str(device).startswith("cuda") else device, *args, **kwargs)

    class CudaGradScaler(base_scaler):
        def __init__(self, *args, **kwargs):
            super().__init__("cpu", *args, **kwargs)

    torch.autocast = autocast
    torch.amp.autocast = autocast
    torch.cuda.amp.autocast = cuda_autocast
    torch.amp.GradScaler = GradScaler
    torch.cuda.amp.GradScaler = CudaGradScaler


# -- torch.distributed, DDP, DataLoader ----------------------------------------------------------------
def _install_distributed(torch, cuda: LogicalCuda) -> None:
    import torch.distributed as dist

    if not dist.is_available():
        return
    from torch.distributed import distributed_c10d as c10d

    original_init = c10d.init_process_group

    @functools.wraps(original_init)
    def init_process_group(*args, **kwargs):
        args = list(args)
        if args:
            args[0] = "gloo"
        else:
            kwargs["backend"] = "gloo"  # nccl (or the cuda:nccl default) becomes gloo
        device_id = kwargs.pop("device_id", None)
        if device_id is not None:
            name = cuda.logical(device_id)
            if name is not None:
                cuda.note("init_process_group", name)
        return original_init(*args, **kwargs)

    original_new_group = c10d.new_group

    @functools.wraps(original_new_group)
    def new_group(*args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = "gloo"
        kwargs.pop("device_id", None)
        return original_new_group(*args, **kwargs)

    original_barrier = c10d.barrier

    @functools.wraps(original_barrier)
    def barrier(*args, **kwargs):
        kwargs.pop("device_ids", None)  # a GPU hint for NCCL's barrier; gloo takes none
        return original_barrier(*args[:2], **kwargs)

    for module in (c10d, dist):
        module.init_process_group = init_process_group
        module.new_group = new_group
        module.barrier = barrier
    dist.is_nccl_available = lambda: True

    from torch.nn.parallel import DistributedDataParallel

    original_ddp_init = DistributedDataParallel.__init__

    @functools.wraps(original_ddp_init)
    def ddp_init(model, module, device_ids=None, output_device=None, *args, **kwargs):
        for device in device_ids or []:
            name = cuda.logical(device)
            if name is not None:
                cuda.note("ddp", name)
        model._ddplint_logical_ids = [cuda.logical(d) for d in (device_ids or [])]
        return original_ddp_init(model, module, None, None, *args, **kwargs)

    DistributedDataParallel.__init__ = ddp_init
    data_parallel = torch.nn.DataParallel
    original_dp_init = data_parallel.__init__

    @functools.wraps(original_dp_init)
    def dp_init(model, *args, **kwargs):
        original_dp_init(model, *args, **kwargs)
        # The logical GPUs it would scatter over are recorded; with no device ids left it calls the
        # module directly (what DataParallel does without GPUs), on the CPU.
        model._ddplint_logical_ids = [f"cuda:{i}" for i in model.device_ids or []]
        for device in model._ddplint_logical_ids:
            cuda.note("data_parallel", device)
        model.device_ids = []

    data_parallel.__init__ = dp_init
    # DDP refuses SyncBatchNorm in a CPU module; the emulation gives SyncBatchNorm a CPU forward.
    DistributedDataParallel._passing_sync_batchnorm_handle = lambda self, module: None

    from torch.utils.data import dataloader as dl

    original_loader_init = dl.DataLoader.__init__

    @functools.wraps(original_loader_init)
    def loader_init(loader, *args, **kwargs):
        kwargs.pop("pin_memory_device", None)
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False  # pinned host memory only matters for copies to a GPU
        return original_loader_init(loader, *args, **kwargs)

    dl.DataLoader.__init__ = loader_init


def _install_modules(torch, cuda: LogicalCuda) -> None:
    """Module.to / Module.cuda: the model's logical device (DDP005's and DDP008's evidence)."""
    module_class = torch.nn.Module
    original_to = module_class.to
    original_cuda = module_class.cuda

    @functools.wraps(original_to)
    def to(module, *args, **kwargs):
        name = cuda.logical(kwargs["device"] if "device" in kwargs else args[0] if args else None)
        if name is not None:
            cuda.note("model", name)
        return original_to(module, *args, **kwargs)

    @functools.wraps(original_cuda)
    def to_cuda(module, device=None):
        cuda.note("model", cuda.logical(device if device is not None else "cuda"))
        return original_cuda(module, device)

    module_class.to = to
    module_class.cuda = to_cuda


# -- SyncBatchNorm: its kernels exist for GPUs only ------------------------------------------------------
def _install_sync_batchnorm(torch) -> None:
    """SyncBatchNorm refuses CPU tensors (its statistics kernels are GPU-only). On the CPU the same
    arithmetic runs in Python: per-channel sums, sums of squares and counts are all-reduced over
    the process group (a differentiable all_reduce, so gradients flow through the global
    statistics as they do on GPUs), then the batch is normalised with the global mean and variance."""
    module_class = torch.nn.SyncBatchNorm
    original_forward = module_class.forward

    @functools.wraps(original_forward)
    def forward(module, input):
        import torch.distributed as dist

        if input.device.type != "cpu":
            return original_forward(module, input)
        group = module.process_group or (dist.group.WORLD if dist.is_available() and dist.is_initialized() else None)
        synchronise = module.training and group is not None and dist.get_world_size(group) > 1
        if not synchronise:
            return torch.nn.functional.batch_norm(
                input, module.running_mean, module.running_var, module.weight, module.bias,
                module.training or not module.track_running_stats, module.momentum or 0.0, module.eps)
        return _synchronised_batch_norm(torch, module, input, group)

    module_class.forward = forward


def _all_reduce_with_gradient(torch, tensor, group):
    """The sum of `tensor` over the group, differentiable: each rank's output depends on every
    rank's input, so the gradient reaching a rank's input is the sum of all ranks' output
    gradients (one more all_reduce in backward). torch's own differentiable collectives
    (torch.distributed.nn.functional) are deprecated; this needs only dist.all_reduce."""
    import torch.distributed as dist

    class AllReduceSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, local):
            total = local.clone()
            dist.all_reduce(total, group=group)
            return total

        @staticmethod
        def backward(ctx, grad_output):
            total = grad_output.contiguous().clone()
            dist.all_reduce(total, group=group)
            return total

    return AllReduceSum.apply(tensor)


def _synchronised_batch_norm(torch, module, input, group):
    channels = input.shape[1]
    dims = [0, *range(2, input.dim())]
    count = torch.tensor([input.numel() / channels], dtype=input.dtype)
    local = torch.cat([input.sum(dims), (input * input).sum(dims), count])
    total = _all_reduce_with_gradient(torch, local, group)
    n = total[-1]
    mean = total[:channels] / n
    var = total[channels:2 * channels] / n - mean * mean
    if module.track_running_stats and module.running_mean is not None:
        with torch.no_grad():
            momentum = module.momentum if module.momentum is not None else 0.1
            module.running_mean.mul_(1 - momentum).add_(momentum * mean.detach())
            unbiased = var.detach() * n / max(float(n) - 1.0, 1.0)
            module.running_var.mul_(1 - momentum).add_(momentum * unbiased)
            module.num_batches_tracked.add_(1)
    shape = [1, channels] + [1] * (input.dim() - 2)
    out = (input - mean.view(shape)) / torch.sqrt(var.view(shape) + module.eps)
    if module.affine:
        out = out * module.weight.view(shape) + module.bias.view(shape)
    return out


# -- torch.save / torch.load: on which logical device the tensors come back -----------------------------
def _install_serialization(torch, cuda: LogicalCuda, run_dir: str, record: Callable[..., None],
                           call_site: Callable[[], dict]) -> None:
    saves = os.path.join(run_dir, SAVES_FILE)
    original_save, original_load = torch.save, torch.load

    @functools.wraps(original_save)
    def save(obj, f, *args, **kwargs):
        result = original_save(obj, f, *args, **kwargs)
        if isinstance(f, (str, os.PathLike)):
            # The tensors are where the rank's model is, unless the script moved them to the CPU.
            device = "cpu" if _all_on_purpose_cpu(obj) else cuda.model_device or "cpu"
            line = json.dumps({"path": os.path.realpath(f), "device": device}) + "\n"
            try:
                with open(saves, "a") as handle:
                    handle.write(line)
            except OSError:
                pass
        return result

    def saved_device(f) -> Optional[str]:
        if not isinstance(f, (str, os.PathLike)):
            return None
        path, found = os.path.realpath(f), None
        try:
            with open(saves) as handle:
                for line in handle:
                    entry = json.loads(line)
                    if entry.get("path") == path:
                        found = entry.get("device")
        except (OSError, ValueError):
            return None
        return found

    @functools.wraps(original_load)
    def load(f, map_location=None, *args, **kwargs):
        restored: list = []
        unknown: list = []
        in_run = saved_device(f)

        def to_cpu(storage, location):
            # Saved in this run (or, unchanged, in an earlier one: provenance.py): the saving rank's
            # logical device. Otherwise the file's own tag, which says nothing when it is `cpu`:
            # a CPU rehearsal writes `cpu` whatever GPU the rank stood for.
            source = in_run or location
            if in_run is None and not str(location).startswith("cuda") and not _decides_alone(map_location):
                unknown.append(location)
            restored.append(_restored_device(cuda, source, map_location))
            return storage

        result = original_load(f, to_cpu, *args, **kwargs)
        devices = sorted({d for d in restored if d})
        record("load", devices=devices, own=own_gpu(cuda.count),
               map_location=None if map_location is None else type(map_location).__name__, site=call_site(),
               origin="unknown" if unknown else "known",
               file=os.fspath(f) if isinstance(f, (str, os.PathLike)) else None)
        return result

    torch.save = save
    torch.load = load


def _decides_alone(map_location) -> bool:
    """A map_location that puts every tensor in one place whatever it was saved from."""
    import torch

    return isinstance(map_location, (str, torch.device, int)) or callable(map_location)


def _restored_device(cuda: LogicalCuda, source: str, map_location) -> Optional[str]:
    """Where torch.load would put a storage saved on `source`, given the script's map_location."""
    import torch

    if map_location is None:
        return cuda.logical(source) if source.startswith("cuda") else "cpu"
    if isinstance(map_location, dict):
        target = map_location.get(source, source)
        return cuda.logical(target) or "cpu"
    if isinstance(map_location, (str, torch.device, int)):
        return cuda.logical(map_location) or "cpu"
    return None  # a function decides: the script chose where, nothing to say


# -- GPU-only code: stubs that stop the run at the first use --------------------------------------------
def _stop(what: str, call: str, site: dict) -> None:
    where = f" at {site.get('file')}:{site.get('line')}" if site else ""
    raise NotEmulatable(f"cannot rehearse on CPU: {call}{where} runs {what}, which needs a GPU "
                        f"(run `ddplint verify` without --cpu on a GPU machine)")


class _GpuOnlyStub(types.ModuleType):
    """Stands in for a GPU-only package: attributes are more stubs; a call stops the run."""

    def __init__(self, name: str, what: str, call_site: Callable[[], dict]):
        super().__init__(name)
        self.__path__ = []  # a package: `from flash_attn.x import y` works
        self._what, self._call_site = what, call_site

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _StubCallable(f"{self.__name__}.{attribute}", self._what, self._call_site)


class _StubCallable:
    def __init__(self, name: str, what: str, call_site: Callable[[], dict]):
        self._name, self._what, self._call_site = name, what, call_site

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _StubCallable(f"{self._name}.{attribute}", self._what, self._call_site)

    def __call__(self, *args, **kwargs):
        short = self._name.rsplit(".", 1)[-1]
        if self._name.startswith("triton.") and short in TRITON_DECORATORS:
            return _triton_decorator(self._name, self._what, self._call_site, args, kwargs)
        if self._name in ("triton.cdiv",):
            return -(-args[0] // args[1])
        if self._name in ("triton.next_power_of_2",):
            return 1 << max(int(args[0]) - 1, 0).bit_length()
        if self._name in ("triton.Config",):
            return self
        _stop(self._what, f"{self._name}()", self._call_site())

    def __getitem__(self, item):
        return self

    def __mro_entries__(self, bases):
        return (object,)


def _triton_decorator(name, what, call_site, args, kwargs):
    def kernel(fn):
        return _TritonKernel(getattr(fn, "__name__", "kernel"), what, call_site)

    if len(args) == 1 and callable(args[0]) and not kwargs:
        return kernel(args[0])
    return kernel


class _TritonKernel:
    def __init__(self, name: str, what: str, call_site: Callable[[], dict]):
        self._name, self._what, self._call_site = name, what, call_site

    def __getitem__(self, grid):
        return self._launch

    def _launch(self, *args, **kwargs):
        _stop(self._what, f"Triton kernel {self._name}[grid](...)", self._call_site())

    run = _launch


class _GpuOnlyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Only imports made by the user's code get a stub: torch's own probes (find_spec("triton"))
    keep seeing what is installed."""

    def __init__(self, is_user_frame: Callable[[str], bool], call_site: Callable[[], dict]):
        self._is_user_frame = is_user_frame
        self._call_site = call_site

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top not in GPU_ONLY_MODULES or not self._imported_by_user():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _imported_by_user(self) -> bool:
        frame: Optional[types.FrameType] = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith("<frozen") and "importlib" not in filename \
                    and not filename.endswith("emulation.py"):
                return self._is_user_frame(filename)
            frame = frame.f_back
        return False

    def create_module(self, spec):
        return _GpuOnlyStub(spec.name, GPU_ONLY_MODULES[spec.name.split(".")[0]], self._call_site)

    def exec_module(self, module):
        pass


def _install_cuda_graphs(torch, call_site: Callable[[], dict]) -> None:
    """CUDA graphs capture and replay GPU work: nothing on the CPU can stand in for them."""

    def refuse(name):
        def stop(*args, **kwargs):
            _stop("a CUDA graph", f"torch.cuda.{name}(...)", call_site())

        return stop

    for name in ("CUDAGraph", "graph", "make_graphed_callables", "graph_pool_handle"):
        setattr(torch.cuda, name, refuse(name))


def _install_cpp_extension(torch, call_site: Callable[[], dict]) -> None:
    try:
        from torch.utils import cpp_extension
    except Exception:
        return

    def refuse_cuda(name):
        original = getattr(cpp_extension, name, None)
        if original is None:
            return

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            sources = kwargs.get("sources", args[1] if len(args) > 1 and name == "load" else [])
            if isinstance(sources, str):
                sources = [sources]
            cuda_sources = kwargs.get("cuda_sources") or (args[2] if name == "load_inline" and len(args) > 2 else None)
            if cuda_sources or any(str(s).endswith((".cu", ".cuh")) for s in sources or []):
                _stop("a custom CUDA kernel", f"torch.utils.cpp_extension.{name}(...)", call_site())
            return original(*args, **kwargs)

        setattr(cpp_extension, name, wrapper)

    refuse_cuda("load")
    refuse_cuda("load_inline")


# -- entry point -----------------------------------------------------------------------------------------
def install(count: int, run_dir: str, record: Callable[..., None], call_site: Callable[[], dict],
            is_user_frame: Callable[[str], bool]) -> LogicalCuda:
    """Make this process look like one of a node with `count` GPUs; returns its logical view."""
    import torch

    cuda = LogicalCuda(count, record, call_site)
    _install_torch_cuda(torch, cuda)
    _install_distributed(torch, cuda)
    _install_modules(torch, cuda)
    _install_sync_batchnorm(torch)
    _install_serialization(torch, cuda, run_dir, record, call_site)
    _install_cpp_extension(torch, call_site)
    _install_cuda_graphs(torch, call_site)
    sys.meta_path.insert(0, _GpuOnlyFinder(is_user_frame, call_site))
    _device_mode(cuda).__enter__()  # for the rest of the process: pushed once, never popped
    return cuda
