"""DDP005 all-ranks-one-device."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ddplint.analysis.facts import CallSite
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import int_value, keyword_arg
from ddplint.analysis.torch_api import DISTRIBUTED_DATA_PARALLEL as DDP
from ddplint.analysis.torch_api import PROCESS_GROUP_STARTERS, SPAWNERS
from ddplint.diagnostics import one_line
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed:
        return
    devices = model.devices
    if devices.one_gpu_per_process:
        return  # CUDA_VISIBLE_DEVICES=<local rank> or set_device(0): each process's GPU is cuda:0
    current, gpu0_reported = [], False
    for placement in devices.placements:
        if _on_one_path_only(model, placement.site):
            continue
        if placement.kind == "gpu0":
            gpu0_reported = True
            yield RULE.finding(
                placement.site.node,
                f"{placement.detail} puts every rank on GPU 0: use the rank's own GPU (LOCAL_RANK)",
                why=f"{placement.detail} names GPU 0 in a distributed script: every rank runs this line, "
                f"so all of them put their model or data on the same GPU, which runs out of memory "
                f"or time-slices N processes while the other GPUs idle (NCCL then fails with "
                f"'Duplicate GPU detected'); use torch.device('cuda', local_rank) with local_rank "
                f"from the LOCAL_RANK environment variable",
            )
        else:
            current.append(placement)
    if not devices.starts_process_group:
        pass
    elif devices.sets_device_per_rank:
        yield from _device_set_too_late(model)
    elif not (current := _left_to_this_file(model, current)):
        if not gpu0_reported:  # a hard-coded GPU 0 is the file's first device problem
            yield from _device_never_current(model)
    else:
        first, more = current[0], len(current) - 1
        others = f" (and {more} more placement{'s' if more > 1 else ''} like it)" if more else ""
        yield RULE.finding(
            first.site.node,
            f"{first.detail} puts every rank on GPU 0: the script never calls torch.cuda.set_device()",
            why=f"{first.detail} means the current CUDA device, which is GPU 0 in every process until "
            f"torch.cuda.set_device(local_rank) is called, and this script never calls it{others}: "
            f"every rank lands on GPU 0 while the other GPUs idle; call "
            f"torch.cuda.set_device(local_rank) right after init_process_group (or place with "
            f"f'cuda:{{local_rank}}')",
        )
    flag = devices.local_rank_flag_defaulting_to_zero
    if flag is not None:
        yield RULE.finding(
            flag,
            "--local_rank defaults to 0 and is the only source of the rank's GPU: under torchrun every rank uses GPU 0",
            why="the rank's GPU comes from the --local_rank option, which only the old "
            "torch.distributed.launch passed (since torch 2.0 it passes --local-rank); torchrun "
            "sets the LOCAL_RANK environment variable instead, so every rank keeps the default 0 "
            "and all of them work on GPU 0; take the default from the environment: "
            "default=int(os.environ.get('LOCAL_RANK', 0))",
        )
    shared = devices.worker_device_from_shared_option
    if shared is not None:
        use, option = shared
        yield RULE.finding(
            use.node,
            f"every spawned worker picks its GPU from args.{option}, the same value (default 0) in all of them",
            why=f"mp.spawn hands each worker the same arguments and only the worker's index differs: "
            f"args.{option} comes from a command-line option with default 0 that the worker never "
            f"replaces, so every worker chooses the same GPU and all of them pile onto it; use the "
            f"index mp.spawn passes first (args.{option} = index, or torch.cuda.set_device(index))",
        )
    for site in facts.calls_named(*DDP):
        if _on_one_path_only(model, site):
            continue
        detail = _gpu0_device_ids(site)
        if detail is not None:
            yield RULE.finding(
                site.node,
                f"DistributedDataParallel({detail}) puts every rank's replica on GPU 0",
                why=f"DistributedDataParallel({detail}) pins every rank's replica to GPU 0: the ranks "
                f"collide on one device (NCCL: 'Duplicate GPU detected') while the other GPUs idle; "
                f"pass device_ids=[local_rank], output_device=local_rank",
            )


def _device_never_current(model: ModuleModel) -> Iterator[Finding]:
    """The script starts the process group and places nothing on the current device, but nothing
    makes the rank's GPU current either: what runs on the current device without naming one
    (NCCL's barrier, `torch.cuda.synchronize()`, memory queries, CUDA events and streams,
    extensions) runs on GPU 0 in every rank. Reported once: where the rank's device is computed
    (the place to make it current), else where the group starts.

    A program (a `__main__` block, a group started at module level) shows all its own CUDA work:
    it is reported only when some of it uses the current device. A helper module hands its
    device to code it does not see, so a rank device there is reported by itself; a helper that
    only starts the group is not (its importer may choose the device after calling it)."""
    facts = model.facts
    devices = model.devices
    if not devices.group_may_run_on_gpus:
        return
    work = next((site for site in devices.current_device_work if not _on_one_path_only(model, site)), None)
    program = model.where.is_program
    if program and work is None:
        return  # every CUDA call of the program names its device: nothing is left to the current one
    uses = _acts_on_gpu0(model, work) if work else "every rank's implicit CUDA work runs on GPU 0"
    for device in devices.rank_devices:
        if _context_on_one_path_only(model, device.node, device.context):
            continue
        if not program and devices.callers_choose_device_for(device.context):
            continue
        text = one_line(facts.module.code_for_node(device.node), 32)
        yield RULE.finding(
            device.node,
            f"{text} is never made current: {uses}",
            why=f"{text} places what is moved to it on the rank's GPU, but the current CUDA device "
            f"stays GPU 0 in every process: NCCL's barrier, torch.cuda.synchronize(), memory "
            f"queries, CUDA events and streams, a DataLoader's memory pinning, and extensions that "
            f"use the current device all act on GPU 0 (the wrong GPU synchronised or measured, "
            f"contexts and caches piled on GPU 0, a barrier that may hang); call "
            f"torch.cuda.set_device() with this device right after computing it",
        )
        return
    after_start = devices.current_work_after_group_start
    if after_start is not None and not _on_one_path_only(model, after_start):
        uses = _acts_on_gpu0(model, after_start)  # no caller can set the device between the two
    elif not program and not devices.callers_leave_device_unset:
        return  # a set-up helper: the program that imports it may choose the device after it returns
    for site in devices.gpu_group_starts:
        if _on_one_path_only(model, site):
            continue
        yield RULE.finding(
            site.node,
            f"NCCL starts but no rank sets its CUDA device: {uses}",
            why="nothing in this script calls torch.cuda.set_device(local_rank), so the current "
            "CUDA device is GPU 0 in every process: what does not name a device (NCCL's barrier, "
            "torch.cuda.synchronize(), memory queries, a DataLoader's memory pinning, `.cuda()`) "
            "acts there in every rank; call "
            "torch.cuda.set_device(local_rank) before init_process_group (or pass "
            "device_id=torch.device('cuda', local_rank))",
        )
        return


def _device_set_too_late(model: ModuleModel) -> Iterator[Finding]:
    """Work on the current device that every rank runs before the statement that makes its own
    device current (analysis/devices.py, device_made_current_late). Reported where the group
    starts (the place for the set_device), else at the work."""
    facts = model.facts
    devices = model.devices
    if not devices.group_may_run_on_gpus:
        return
    late = next((pair for pair in devices.device_made_current_late if not _on_one_path_only(model, pair[0])), None)
    if late is None:
        return
    work, setter = late
    starts = [
        site
        for site in facts.calls_named(*PROCESS_GROUP_STARTERS)
        if site.node is not None and SPAWNERS.isdisjoint(facts.qualified_names(site.node.func))
        and not _on_one_path_only(model, site)
    ]
    at = starts[0] if starts else work
    done = one_line(facts.module.code_for_node(setter.node.func), 32)
    uses = one_line(facts.module.code_for_node(work.node), 40)
    yield RULE.finding(
        at.node,
        f"{uses} runs on GPU 0 in every rank: the rank's device is made current only later, by {done}()",
        why=f"{uses} uses the current CUDA device, and every rank runs it before {done}() makes "
        f"the rank's own GPU current: until then the current device is GPU 0 in every process, so "
        f"each rank builds a context and caches on GPU 0 (an NCCL barrier there may hang or pair "
        f"the wrong GPUs); make the device current first, right after (or before) the process "
        f"group starts: torch.cuda.set_device(local_rank)",
    )


def _acts_on_gpu0(model: ModuleModel, work: CallSite) -> str:
    facts = model.facts
    callee = one_line(facts.module.code_for_node(work.node.func), 22)
    elsewhere = model.devices.work_in_project(work)
    if elsewhere is not None:  # a project function or class doing it in its own module
        return f"{callee}() works on the current device ({elsewhere}), GPU 0 in every rank"
    if keyword_arg(work.node, "pin_memory") is not None:  # a pinning DataLoader
        return f"{callee}(pin_memory=True) pins memory through GPU 0 in every rank"
    return f"{callee}() acts on GPU 0 in every rank"


def _context_on_one_path_only(model: ModuleModel, node, context) -> bool:
    """`_on_one_path_only` for a value rather than a call."""
    ranks = model.ranks
    return (
        ranks.runs_on_one_rank_only(context)
        or ranks.after_other_ranks_left(context)
        or not model.where.in_a_rank(context)
        or model.where.value_on_single_process_path(node)
    )


def _left_to_this_file(model: ModuleModel, placements: list) -> list:
    """The current-device placements whose device no caller chooses: a set-up function's callers
    in the project may make the device current before calling it. Asked only of a file that
    starts the group and never sets a device, since the answer reads the project's modules."""
    devices, facts = model.devices, model.facts
    return [p for p in placements if not devices.callers_choose_device(facts.function_of(p.site.context.scope))]


def _on_one_path_only(model: ModuleModel, site: CallSite) -> bool:
    """On rank 0 alone, on the single-process path or in the launching process (before or after
    `mp.spawn`), GPU 0 is the right GPU: one process uses it."""
    return model.ranks.call_runs_on_one_rank_only(site) or not model.where.call_in_a_rank(site)


def _gpu0_device_ids(site: CallSite) -> str | None:
    ids = keyword_arg(site.node, "device_ids")
    if ids is not None and isinstance(ids.value, (cst.List, cst.Tuple)):
        elements = ids.value.elements
        if len(elements) == 1 and int_value(elements[0].value) == 0:
            return "device_ids=[0]"
    output = keyword_arg(site.node, "output_device")
    if output is not None and int_value(output.value) == 0:
        return "output_device=0"
    return None


RULE = Rule(
    code="DDP005",
    name="all-ranks-one-device",
    summary="Every rank places its model or data on GPU 0.",
    what="""
        In a distributed script, flags placements that name GPU 0 outright (`"cuda:0"`,
        `torch.device("cuda", 0)`, `.cuda(0)`, `.to(0)`, `device="cuda:0"`, also through a variable
        holding the string), `DistributedDataParallel(..., device_ids=[0])` / `output_device=0`,
        and, in a file that starts the process group itself (or through a project helper) but
        never chooses a device per rank, the first placement on the current CUDA device
        (`.cuda()`, `.to("cuda")`, `torch.device("cuda")`, `torch.set_default_device("cuda")`;
        `set_default_device("cuda:0")` names GPU 0). When there is no such placement,
        it reports once that the current device is never set: where the file computes the
        rank's GPU as a value (`torch.device("cuda", local_rank)`, `f"cuda:{local_rank}"`,
        `"cuda:%d" % rank`, `"cuda:{:d}".format(rank)`, `"cuda:" + str(rank)`), else at the NCCL
        `init_process_group` call. Current-device work includes `torch.cuda` calls given no
        device (`synchronize()`, memory queries, `Stream(priority=-1)`; a `torch.cuda.Event`,
        which records on the current device's stream, whatever its arguments) and a `DataLoader(...,
        pin_memory=True)`: its pinning thread adopts the current device. It also includes a call
        of a project function or class that does such work in its own module (a `Trainer` whose
        constructor builds a pinning DataLoader, a helper that calls `torch.cuda.synchronize()`
        or `.cuda()`, a constructor that moves the model to the `torch.device("cuda")` it keeps on
        the instance), when that module never makes a device current itself, and a call of a
        public method of such a class on an object the file builds from it (`trainer =
        Trainer(...)`, then `trainer.fit()` calling `.cuda()`). A placement on what a project
        function returns counts as one on the current device when that function returns it
        (`device = get_device()`, `get_device()` returning `torch.device("cuda" if
        torch.cuda.is_available() else "cpu")` in a module that never sets a device). Setting
        `CUDA_VISIBLE_DEVICES` to a literal list of several GPUs (`"0,1,2,3"`) does not give each
        process its own GPU: every rank still sees them all. A set-up helper module
        that starts the NCCL group is reported at the group start when the project's modules
        that call it on every rank never make a device current either, and so is a function or
        method that starts the NCCL group and then, later in the same run, works on the current
        device (itself, or through a function of the file it calls after the start: an engine's
        `init_distributed()` that loads weights through `torch.cuda.current_device()`): no
        caller can make the device current between the two. The arm of `if not
        dist.is_initialized():` that starts the group runs in every rank (not on the
        single-process path): work there before a late `set_device` is reported too. A device made current
        too late is reported at the group start: work on the current device (a bare NCCL
        `dist.barrier()`, `.cuda()`, `torch.cuda.synchronize()`, a pinning DataLoader, a project
        barrier helper, or a function of the file doing such work) that every rank runs, in
        program order, before the statement of the same function that makes the rank's device
        current (`torch.cuda.set_device`, `deepspeed.initialize`, `get_accelerator().set_device`,
        a project helper that sets it), with nothing setting it earlier in that function or in
        the file's code that calls it. It also flags a `--local_rank` option with `default=0` that is
        the script's only source of the rank's GPU (no LOCAL_RANK read in the file): torchrun
        never passes that option. That includes an option handed to a set-up helper of another
        project module whose parameter it makes the current device (`init_dist(args.local_rank)`
        where `init_dist` calls `torch.cuda.set_device(local_rank % torch.cuda.device_count())`),
        also a helper picked by name (`getattr(dist_utils, "init_dist_%s" % args.launcher)(...)`:
        any of the module's functions starting with `init_dist_` may run). In a worker the file starts with `mp.spawn`, a GPU chosen from
        any option with `default=0` (`torch.cuda.set_device(args.gpu)`) that the worker never
        replaces with its index is reported: every worker gets the same `args`.
    """,
    why="""
        Every rank runs the same code. A hard-coded GPU 0, or the current CUDA device that
        `torch.cuda.set_device` never moved off GPU 0, puts all N processes on the first GPU: its
        memory is shared N ways (out-of-memory errors), its compute is time-sliced, the other GPUs
        idle, and NCCL refuses the setup with "Duplicate GPU detected" as soon as DDP is built.
        Placing tensors on `cuda:<local_rank>` without `torch.cuda.set_device` leaves the
        current device at GPU 0: `dist.barrier()` (torch picks the current device for it and
        warns that this may hang), `torch.cuda.synchronize()`, memory queries, CUDA events and
        streams, and extensions that launch on the current device all act on GPU 0 in every
        rank, and each process piles a context and caches there.
    """,
    fix="""
        Read the local rank (`local_rank = int(os.environ["LOCAL_RANK"])` under torchrun, the
        first argument of an `mp.spawn` worker), call `torch.cuda.set_device(local_rank)` right
        after `init_process_group`, and place with `device = torch.device("cuda", local_rank)`;
        wrap with `DistributedDataParallel(model, device_ids=[local_rank])`. A script that keeps a
        `--local_rank` option for the old launcher takes its default from the environment:
        `default=int(os.environ.get("LOCAL_RANK", 0))`.
    """,
    silent="""
        - Devices that come from a rank: `f"cuda:{local_rank}"`, `.to(rank)`, `.cuda(args.gpu)`,
          `torch.device("cuda", local_rank)`.
        - Bare `"cuda"` / `.cuda()` when the file calls `torch.cuda.set_device(...)` (also one
          written without `import torch`, a forgotten import whose intent is plain) (or
          `with torch.cuda.device(...)`, `init_process_group(device_id=...)`), when it uses
          Accelerate, Lightning, DeepSpeed or the HF Trainer (they set the device when they start),
          and in helper modules that do not start the process group (the entry point sets it).
          Also in a top-level set-up function that does start it (a warm-up `all_reduce` of a
          `.cuda()` tensor) when a module of the project that calls it on every rank makes a
          device current (`torch.cuda.set_device(device_id)`, then `distributed_init(config)`).
        - Scripts that set `CUDA_VISIBLE_DEVICES` per process (each sees its GPU as `cuda:0`; any
          value but a literal list of several GPUs, a single literal GPU included), or
          call `torch.cuda.set_device(0)` with a literal 0: they declare one GPU per process (one
          GPU per machine, or a launcher that hides the others), where GPU 0 is right. Not in a
          worker the file starts with `mp.spawn`: those workers all see the machine's GPUs, so
          `set_device(0)` there is every rank on GPU 0 and its `cuda:0` placements are reported.
        - Placements under a rank-0 guard or on the single-process path, and non-distributed
          scripts.
        - Placements in code that runs in one process rather than in the ranks (analysis/where.py):
          the launching process before or after `mp.spawn(...)` (a model built and moved there
          before the workers move it to their own GPUs, a single-GPU baseline only the launcher
          calls, the `__init__` of a class only it builds); the arm beside a spawn or beside a
          call of the file's distributed entry point, so a spawned worker called directly as
          `work(0, args)` on the single-GPU path does not make its `.to(gpu)` a `.to(0)`; code
          after `assert local_rank == -1`; test classes (`*Test`, torch's
          `MultiProcessTestCase` / `DistributedTestBase`, `unittest.TestCase`) and, in a script,
          classes nothing builds.
        - The GPU-0 arm of a conditional expression on the run's mode (`"cuda:0" if local_rank ==
          -1 else f"cuda:{local_rank}"`): a launcher always sets the rank, so that arm is the run
          without one; and the `else:` of `if gpu is not None:` in a helper whose every None
          comes from such an arm (`pick_device(args.local_rank if distributed else None)`).
        - A device picked from a table by a computed key (`{0: "cuda:0", 1: "cuda:1"}[rank]`,
          `devices[local_rank]`): one of several devices, each rank its own.
        - A 0 that the distributed path replaces before the placement (`args.gpu = 0`, then
          `if args.distributed: args.gpu = args.local_rank`): it reaches the placement only on
          the single-process path (statements are read in program order).
        - Scripts that never start a process group (conversion, export, precompile tools that
          only use `torch.distributed.checkpoint`, or a group of one: literal `rank=0`, the
          "fake" backend) and test code.
        - Bare `"cuda"` / `.cuda()` in a file whose only process start is a project helper that
          spawns workers running that helper's own code (`launch_distributed(cfg)`): the file's
          own code stays in the one launcher process (a k-NN or retrieval step run after the
          workers are done). Handing the helper a function of the file (`launch(main, ...)`)
          makes that function run on every rank, and it is checked.
        - The never-set current device: in a program (a `__main__` block or a process group
          started at module level) whose CUDA work all names its device (`synchronize(device)`,
          `barrier(device_ids=[rank])`, placements on the rank's device, loaders that do not pin
          memory): nothing is left to the current device. In a helper module that only starts
          the group, when no module of the project is seen calling it on every rank (a
          library's entry point: its users may set the device) or when one of its callers sets
          the device, directly or through another project helper (or places on the current
          device itself: the finding is that caller's). Beside groups that are all `gloo`. In a
          file that already hard-codes GPU 0 (that finding comes first). A function that starts
          the group and works on the current device only before the start, or in another
          method (the caller may make the device current in between), or a top-level set-up
          function one of whose callers in the project makes a device current.
          Likewise a rank device computed in a top-level function of a helper module
          (`f"cuda:{local_rank}"` in `train()`, or in the `evaluate()` that `train()` calls)
          when the modules calling it on every rank make a device current first.
        - A spawned worker's `args.gpu` when the worker assigns it (`args.gpu = index`) or hands
          `args` to another call first (a set-up helper may fill it).
        - A `--local_rank` option whose default reads LOCAL_RANK, or a file that reads LOCAL_RANK
          anywhere (`args.local_rank = int(os.environ["LOCAL_RANK"])`), or one whose option
          chooses no device. Handed to a project helper: when the helper reads LOCAL_RANK itself,
          never makes its parameter the current device (it only logs it), or when another project
          call of the file sets the device by itself; a helper picked by name whose every
          candidate sets the device makes the device current for the file's `.cuda()` calls.
        - A device made current late, when the earlier current-device work names its device
          (`.cuda(local_rank)`, `.to(device)` with the rank's device, `barrier(device_ids=[rank])`),
          runs on one rank or on the single-process path only, or sits beside `gloo` groups
          only; when the function holding it is called (in this file) after the device was set,
          or after a call of a function of the file that sets it; when the file also makes a
          device current outside the work's function and the functions it calls (a
          `setup_distributed()` method the caller may run first); when `import deepspeed` or
          another framework is the only sign of a device being set (no call to compare with).
        - A call of a project function or class whose module makes a device current somewhere
          (or declares one GPU per process), whose work names a device handed in (`.to(device)`,
          `synchronize(device)`), or runs on one rank only: it is not the caller's current-device
          work.
        - Placements in methods of a class whose every object this file builds on one rank
          (`if rank == 0: agent = Agent()`): the methods run in that process, also when other
          ranks call them through RPC on the object's reference.
    """,
    blind_spots="""
        - A launcher that sets `CUDA_VISIBLE_DEVICES` per process (SLURM `--gpus-per-task=1`,
          submitit) makes `cuda:0` right; the tool cannot see the launcher, so such scripts are
          flagged unless they say so with `torch.cuda.set_device(0)`.
        - `torch.cuda.set_device(0)` on a machine with several GPUs per process group is the bug
          itself, and is taken for a one-GPU-per-process declaration instead, except in workers
          the file spawns.
        - A class built on one rank in this file but also built elsewhere (another module, a
          `getattr` / factory call) is still taken as living on that rank only.
        - A helper that returns its single-process device after an early `return` for the rank
          (`if gpu is not None: return ...` then `return torch.device("cuda")`) rather than in an
          `else:` is not followed: the bare `"cuda"` is still reported.
        - A late `set_device` is found only in the function that does the work (or calls a
          function of the file, or a project barrier helper, that does it): work in one
          function and the only `set_device` in another function called after it (or in
          another module) is not compared. Nor is a set whose order to the work cannot be
          told (another arm of an `if`/`try`, a loop around both): then it counts as before.
        - A program whose own CUDA work all names the rank's device (`model.to(rank)`,
          `device_ids=[rank]`) is not reported for a missing `set_device`, even though NCCL may
          still use GPU 0. Work in other modules counts only through a call of a top-level
          function or a class (its `__init__`) of that module, or of a public method on an object
          built in the file from such a class by one assignment (`trainer.fit()`; not an object
          handed in, built by a factory or stored on another object, nor a `_private` method),
          and a module is read for it only when it also builds a DataLoader or calls
          `synchronize()` / `current_device()` / `torch.device()` or another helper a summary
          records (a module whose only current-device work is `.cuda()` is not read). A device
          value from another module counts only as the return value of a top-level function:
          a module constant (`from config import DEVICE`, `DEVICE = "cuda"`) is not followed.
        - A device list picked by rank (`devices[rank]`, handed in by the caller) that is never
          made current, with no current-device work in sight, is not reported: the index is not
          known to be a GPU index.
        - A class method that starts the NCCL group and then works on the current device in the
          same run is reported even when its callers make the device current before calling it:
          callers are read only for top-level functions (and a top-level function that no module
          of the project is seen calling is reported the same way). Work in another method
          (`start()` then `load()`) is not compared with the start at all.
        - A class whose constructor starts the group and makes the device current (after its own
          current-device work) counts as neither for the modules that build it: its late
          `set_device` is reported in its own module, and a caller that should set the device
          before building it (the fix some projects choose) is not.
        - A device index read from a configuration object's field whose default is 0
          (`set_device(cfg.hardware.gpu_id)`, the local rank written to another field) is not
          followed into the class that declares it, and `set_device(0)` would be read as one GPU
          per process anyway.
        - A device made current after `init_process_group` and `new_group` with nothing touching
          the current device between them is not reported: torch creates NCCL communicators
          lazily, on the device of the first collective's tensors.
        - `torch.cuda.device(i)` called as a plain statement (not in a `with`) builds a context
          manager and changes nothing, yet counts as choosing the device.
        - Whether the device is set is read from the file and the project helpers it calls; the
          modules that import it are read only for a set-up helper that starts the NCCL group
          (its callers on every rank). A helper module that computes the rank's device is
          reported even when its importer sets the device later, and a module that computes the
          rank's device without starting the group (a trainer's device set-up) is not reported
          even when nothing in the project ever sets the device.
        - `import deepspeed` anywhere in a file counts as the device being set (DeepSpeed's
          engine sets it), also in a set-up helper that only calls `deepspeed.init_distributed`
          on one path and starts a plain NCCL group on the other.
        - A process that a rank starts itself (a `multiprocessing.Process` checkpoint or data
          worker) and that receives CUDA tensors without choosing a device is not recognised:
          its CUDA work is done by callbacks the file does not show.
        - An option other than `--local_rank` with `default=0` (`--gpu`) chosen as the device in
          a script that torchrun or srun starts is not reported (only in workers of `mp.spawn`):
          a launcher script may pass each process its own value (`--gpu $SLURM_LOCALID`).
        - A `--local_rank` option reaches the device only through assignments and attributes,
          and through a project helper's parameter that it passes to `torch.cuda.set_device`:
          handed to a function of the file (`main(args.local_rank)`), to a helper that only
          places on it (`.to(local_rank)`, `torch.device("cuda", local_rank)`), or inside the
          whole `args` (`init_dist(args)`), it is not followed.
        - A fix that belongs between statements (a `set_device` inserted into a loop of
          environment set-up, before a later `init_process_group`) is reported at the group
          start or the device, not where the call is missing.
        - `DistributedDataParallel` without `device_ids` is not flagged by itself: torch accepts
          it for a module already on this rank's GPU; a wrong placement is reported where it
          happens.
    """,
    # `barrier` and `set_device`: a bare barrier before the device is made current (through a
    # framework's `get_accelerator().set_device(i)` or `deepspeed.initialize`) needs no CUDA word.
    triggers=(b"cuda", b"device", b"device_ids", b'"cuda', b"'cuda", b".to(0", b'"nccl', b"'nccl", b"barrier", b"set_device"),
    distributed_only=True,
    # No `requires`: a literal 0 anywhere may flow into `.to(x)` / `.cuda(x)` / `torch.device(x)`
    # (analysis/devices.py follows values), and such a placement needs neither a rank word nor a
    # process-group start, so no second kind of word is necessary for a finding.
    check=check,
    invalid=(
        """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        device = torch.device("cuda:0")  # <- DDP005
        model = DDP(Net().to(device), device_ids=[0])  # <- DDP005
        """,
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        model = Net().cuda()  # <- DDP005
        for x, y in loader:
            loss = model(x.cuda()).sub(y.cuda()).pow(2).mean()
        """,
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        model.to("cuda:0")  # <- DDP005
        batch = batch.cuda(0)  # <- DDP005
        """,
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        device = torch.device("cuda", local_rank)  # <- DDP005
        model = Net().to(device)
        torch.cuda.synchronize()  # waits for GPU 0, not for this rank's GPU
        """,
    ),
    valid=(
        """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = DDP(Net().cuda(), device_ids=[local_rank])
        batch = batch.to(f"cuda:{local_rank}")
        """,
        """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            model = Net().to(rank)
            device = torch.device("cuda", rank)

        mp.spawn(worker, args=(4,), nprocs=4)
        """,
        """
        # Single GPU: cuda:0 is the only GPU.
        import torch

        model = Net().to("cuda:0")
        """,
        """
        # Accelerate picks the device per process.
        from accelerate import Accelerator
        import torch.distributed as dist

        accelerator = Accelerator()
        dist.barrier()
        model = Net().to("cuda")
        """,
    ),
)
