"""DDP008 load-without-map-location."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.caller_values import arm_untaken_in_ranks, method_never_called, parameter_none_in_ranks
from ddplint.analysis.checkpoints import (
    loaded_into_lr_scheduler,
    loaded_names,
    loads_numpy_arrays,
    maps_to_cpu,
    saved_without_tensors,
    saves_cpu_tensors,
    saves_of,
)
from ddplint.analysis.coordination import lightning_module_on_many_gpus
from ddplint.analysis.distributed import is_script
from ddplint.analysis.facts import CallSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.project import top_level_entries
from ddplint.analysis.syntax import (
    argument,
    double_star_args,
    has_star_args,
    is_none,
    is_true,
    keyword_arg,
    positional_args,
)
from ddplint.analysis.torch_api import ACCELERATOR, CUDA_AVAILABLE, TORCH_LOAD, TORCH_SAVE
from ddplint.edits import set_keyword_argument
from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    for site in facts.calls_named(TORCH_LOAD):
        onto_gpu_zero = _maps_onto_gpu_zero(model, site)
        if not onto_gpu_zero and _places_its_tensors(model, site):
            continue
        if not _runs_in_ranks(model, site):
            continue  # neither this file nor a distributed caller in another module runs it in ranks
        if model.ranks.call_runs_on_one_rank_only(site):
            continue  # one rank restores onto its own device (rank 0 on GPU 0) and shares it
        if not model.where.call_in_a_rank(site):
            continue  # the launching process (e.g. after mp.spawn returned), the single-process path
        if model.data.reads_a_data_file(site):
            continue  # a preprocessing cache (`train_features.pt`): saved from CPU tensors
        if loads_numpy_arrays(model, site):
            continue  # `torch.from_numpy(loaded[k])`: NumPy arrays load on no device
        if _other_arm_maps(model, site):
            continue  # `if args.gpu is None: load(p) else: load(p, map_location=loc)`: deliberate
        if _own_rank_file(model, site) or _saved_from_cpu(model, site) or _never_called(facts, site):
            continue
        if not model.distributed and (function := facts.function_of(site.context.scope)) is not None and method_never_called(model, function):
            continue  # a helper class the ranks build, whose `load_model()` nothing in the project calls
        if saved_without_tensors(model, site) or loaded_into_lr_scheduler(model, site):
            continue  # the project writes that file only from an LR scheduler's state: no tensor
        if _reloads_its_own_state(facts, site):
            continue  # the caller names the file, one per rank or not: this file cannot tell
        if arm_untaken_in_ranks(model, site):
            continue  # `if trt_file is not None:` that no caller enters in a rank
        yield RULE.finding(
            site.node,
            onto_gpu_zero or "torch.load without map_location: every rank loads the tensors onto the GPU they were saved from",
            why="torch.load without map_location restores every tensor onto the device it was saved "
            "from: a checkpoint saved by rank 0 goes to cuda:0 on every rank, so each process "
            "allocates (and keeps a CUDA context) on GPU 0, which runs out of memory or slows down "
            "while the other GPUs idle (a map_location of cuda:0, or of the current device before "
            "set_device makes the rank's own GPU current, does the same); pass map_location='cpu' (then load_state_dict) or "
            "map_location=f'cuda:{local_rank}'",
            fix=_map_location_fix(site.node),
        )


def _maps_onto_gpu_zero(model: ModuleModel, site: CallSite) -> Optional[str]:
    """The message when the map_location given puts every rank's tensors on GPU 0: it names
    it (`"cuda:0"`, `torch.device("cuda", 0)`), or it names the current device (`"cuda"`) and
    the load runs before the statement that makes the rank's device current, when the current
    device is still GPU 0. Not where each process sees only its own GPU (CUDA_VISIBLE_DEVICES
    per rank, `set_device(0)`): there cuda:0 is the rank's GPU."""
    location = argument(site.node, "map_location", 1)
    if location is None or model.devices.one_gpu_per_process:
        return None
    named = model.devices.device_named(site, location)
    if named == "gpu0":
        return "torch.load(map_location=cuda:0): every rank loads the tensors onto GPU 0"
    if named == "current" and model.devices.made_current_only_after(site):
        return (
            "torch.load maps to the current device before this rank's device is made current: "
            "every rank loads the tensors onto GPU 0"
        )
    return None


def _map_location_fix(call: cst.Call) -> Optional[FindingFix]:
    """Pass `map_location="cpu"`: always valid, and `load_state_dict` then copies onto each rank's
    own device. Unsafe: code that used the loaded tensors directly on the GPU now gets CPU ones."""
    positional = positional_args(call)
    if keyword_arg(call, "map_location") is None and len(positional) > 1:  # torch.load(f, None)
        edit: Optional[NodeEdit] = NodeEdit('"cpu"', positional[1].value)
    else:  # map_location=None is replaced, a missing one appended
        edit = set_keyword_argument(call, "map_location", '"cpu"')
    if edit is None:
        return None
    return FindingFix('Pass `map_location="cpu"` to torch.load', (edit,), "unsafe")


def _other_arm_maps(model: ModuleModel, site: CallSite) -> bool:
    """The other arm of an `if` around the call loads with a map_location of a device: the
    author chose the device per case, and this arm is the one-process-for-all-GPUs case. An
    other arm mapping to the CPU is the fallback of a run without GPUs (`if args.cpu:`,
    `if "cuda" not in device:`), which makes this arm the GPU run every rank takes."""
    facts = model.facts
    for branch_node, in_body in site.context.branches:
        branch = next((b for b in facts.branches if b.node is branch_node), None)
        if branch is None or _gpu_arm(facts, branch_node, in_body):
            continue
        for other in facts.calls_in_arm(branch, not in_body):
            if TORCH_LOAD not in facts.qualified_names(other.node.func) or not _places_its_tensors(model, other):
                continue
            if not maps_to_cpu(model, argument(other.node, "map_location", 1), other):
                return True  # a device of its own: a per-case choice
    return False


def _runs_in_ranks(model: ModuleModel, site: CallSite) -> bool:
    """The file is distributed, or a distributed module of the project runs the load in its
    ranks, or a framework starts one process per GPU for the file's code (a LightningModule, a
    module driven by an Accelerate `Accelerator`)."""
    facts = model.facts
    return bool(
        model.distributed
        or _rank_callers(facts, site)
        or lightning_module_on_many_gpus(facts, site)
        or _builds_a_gpu_accelerator(facts)
    )


def _builds_a_gpu_accelerator(facts: ModuleFacts) -> bool:
    """The module builds an Accelerate `Accelerator` (a trainer class that takes its processes
    from it): `accelerate launch` runs the module's code in every process it starts, one per GPU,
    though the module has no torch.distributed code of its own. Not `Accelerator(cpu=True)`."""
    for call in facts.calls:
        if ACCELERATOR.isdisjoint(facts.qualified_names(call.node.func)):
            continue
        on_cpu = keyword_arg(call.node, "cpu")
        if on_cpu is None or not is_true(on_cpu.value):
            return True
    return False


def _rank_callers(facts: ModuleFacts, site: CallSite) -> list[str]:
    """In a module with no distributed code of its own (a `load_checkpoint` helper), where
    another module of the project calls the top-level function holding the load (or one of this
    file's top-level functions that reaches it) from code every rank runs, or builds there the
    top-level class whose method holds or reaches it (a `Checkpointer` each rank makes to resume
    with), directly or through one module with no distributed code in between (the `Trainer` of
    trainer.py that the training script builds in each rank, whose method calls the helper):
    the helper then runs in every rank too."""
    if facts.project is None or is_script(facts):
        return []
    entries = top_level_entries(facts, lambda call: call is site)
    return facts.project.rank_callers_through_a_module(facts, entries) if entries else []


def _gpu_arm(facts: ModuleFacts, branch: cst.CSTNode, in_body: bool) -> bool:
    """The arm runs when CUDA is there (`if torch.cuda.is_available():` / its `else:` under a
    `not`): the other arm's map_location is the fallback for a machine without a GPU, not a
    choice of device per rank, and this arm is the one every rank of a GPU run takes."""
    return _arm_runs_with_cuda(facts, branch, in_body) is True


def _arm_runs_with_cuda(facts: ModuleFacts, branch: cst.CSTNode, in_body: bool) -> Optional[bool]:
    """For an arm of a test of `torch.cuda.is_available()` (also under a `not`): whether it runs
    when CUDA is there. None for an arm of any other test."""
    test = getattr(branch, "test", None)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, in_body = test.expression, not in_body
    if not isinstance(test, cst.Call) or CUDA_AVAILABLE not in facts.qualified_names(test.func):
        return None
    return in_body


def _own_rank_file(model: ModuleModel, site: CallSite) -> bool:
    """`torch.load(f"queue{rank}.pth")`: each rank reads back the file it saved itself, from its
    own GPU, onto its own GPU."""
    path = argument(site.node, "f", 0)
    return path is not None and model.ranks.depends_on_rank(path, site.context.scope)


def _reloads_its_own_state(facts: ModuleFacts, site: CallSite) -> bool:
    """A method loading from a path its caller passes, in a class whose own method saves the
    object's state (`torch.save(self.state_dict(), filename)`) to a path its caller passes: the
    object reads back what it wrote itself, and which file each rank uses (its own, or one
    shared) is decided by a caller this file cannot see."""
    function = facts.function_of(site.context.scope)
    path = argument(site.node, "f", 0)
    if function is None or function.class_name is None:
        return False
    if not isinstance(path, cst.Name) or path.value not in function.params:
        return False
    for save in facts.calls_named(TORCH_SAVE):
        saver = facts.function_of(save.context.scope)
        if saver is None or saver.class_name != function.class_name:
            continue
        saved, where = argument(save.node, "obj", 0), argument(save.node, "f", 1)
        if isinstance(where, cst.Name) and where.value in saver.params and _own_state(saved):
            return True
    return False


def _own_state(node: Optional[cst.BaseExpression]) -> bool:
    """`self.state_dict()` or `super().state_dict()`: the state of the object itself."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return False
    if node.func.attr.value != "state_dict":
        return False
    owner = node.func.value
    if isinstance(owner, cst.Name):
        return owner.value == "self"
    return isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super"


def _saved_from_cpu(model: ModuleModel, site: CallSite) -> bool:
    """The file is written in this file from CPU tensors under the same file name
    (`torch.save(x.cpu(), ".../trainfeat.pth")`), or written only from CPU tensors by the
    project's other modules (`net.cpu()` before `torch.save(net.state_dict(), ".../model_final.pth")`
    in train.py): it loads onto the CPU."""
    facts = model.facts
    names = loaded_names(model, site)
    if not names:
        return False
    own = saves_of(model, names)
    if own:
        return any(saves_cpu_tensors(model, save, site.node) for save in own)
    return facts.project is not None and facts.project.saved_only_from_cpu(names)


def _never_called(facts: ModuleFacts, site: CallSite) -> bool:
    """In a script (a file with a `__main__` block), a top-level function nothing calls: dead
    code, or an entry point of another tool, not something every rank runs."""
    function = facts.function_of(site.context.scope)
    return function is not None and is_script(facts) and facts.never_called(function)


def _places_its_tensors(model: ModuleModel, site: CallSite) -> bool:
    """map_location is passed (keyword or second positional), or may be, through `*args` /
    `**kwargs` the tool does not resolve; one that is None on the GPU run does not count, nor
    does a parameter handed on that every caller in the project leaves at None."""
    call = site.node
    if has_star_args(call) or double_star_args(call):
        return True
    location = argument(call, "map_location", 1)
    if location is None or is_none(location):
        return False
    if parameter_none_in_ranks(model, site, location):
        return False  # `map_location=map_location` that every caller leaves at None
    return not _none_on_the_gpu_run(model, site, location)


def _none_on_the_gpu_run(model: ModuleModel, site: CallSite, location: cst.BaseExpression) -> bool:
    """`map_location=torch.device("cpu") if args.cpu else None`: the CPU is only the fallback of a
    run without GPUs, and the GPU run passes None, as if nothing were passed. Unless the None
    arm is the single-process one (`"cpu" if args.distributed else None`). Also through a
    variable left at None unless CUDA is missing (`_cpu_only_without_cuda`)."""
    if isinstance(location, cst.Name):
        return _cpu_only_without_cuda(model, site, location)
    if not isinstance(location, cst.IfExp):
        return False
    if is_none(location.body) and maps_to_cpu(model, location.orelse, site):
        none_when_true = True
    elif is_none(location.orelse) and maps_to_cpu(model, location.body, site):
        none_when_true = False
    else:
        return False
    polarity = model.ranks.distributed_polarity(location.test, site.context.scope)
    return polarity is None or polarity == none_when_true


def _cpu_only_without_cuda(model: ModuleModel, site: CallSite, location: cst.Name) -> bool:
    """`map_location = None` then `if not torch.cuda.is_available(): map_location = "cpu"`: every
    value of the variable that reaches the load is None, or the CPU set only in an arm that runs
    without CUDA; the GPU run, which every rank takes, passes None."""
    facts = model.facts
    bindings = model.flow.bindings_for(location, site.context.scope, site.context.branches)
    if not bindings or any(binding.kind != "assign" or binding.value is None for binding in bindings):
        return False
    values_on_the_gpu_run = []
    for binding in bindings:
        assert binding.value is not None
        without_cuda = any(_arm_runs_with_cuda(facts, node, in_body) is False for node, in_body in binding.arms)
        if without_cuda and maps_to_cpu(model, binding.value, site):
            continue  # the fallback of a machine without a GPU
        values_on_the_gpu_run.append(binding.value)
    return bool(values_on_the_gpu_run) and all(is_none(value) for value in values_on_the_gpu_run)


RULE = Rule(
    code="DDP008",
    name="load-without-map-location",
    summary="torch.load without map_location in a distributed script: every rank loads onto GPU 0.",
    what="""
        Flags `torch.load(...)` in a distributed script when it gets no `map_location` (neither as a
        keyword nor as the second positional argument, or `map_location=None`). A module with no
        distributed code of its own (a `load_checkpoint()` / `resume_checkpoint()` helper) is
        judged by its callers: its load is flagged when a distributed module of the project calls
        the function holding it (or a top-level function of the helper's module that reaches it,
        also through a package `__init__` that re-exports it) from code every rank runs, or
        builds there the helper's class whose method holds or reaches the load (a checkpointer
        every rank makes to resume with), or calls a method on that class (a classmethod such as
        `Net.from_pretrained(path)`); also through one or two modules in a row that have no
        distributed code of their own (the `Trainer` class of trainer.py, which the training
        script builds in each rank, resumes through `load_training_state()` of
        training_state.py; train.py -> engine.py -> runner.py -> the helper). So is
        a load in a method of a `LightningModule` (its `__init__`, a hook such as
        `on_fit_start`): Lightning's Trainer takes every GPU by default (`devices="auto"`), one
        process each, and each process builds the module and runs its hooks; unless every
        Trainer the file builds is pinned to one device (`devices=1`, `gpus=[0]`,
        `accelerator="cpu"`). So is a load in a module that builds an Accelerate `Accelerator`
        (a trainer class taking its processes from it, with no torch.distributed code of its
        own): `accelerate launch` runs the module's code in every process, one per GPU; unless
        the Accelerator is CPU-only (`Accelerator(cpu=True)`). A load beside a CPU fallback is
        flagged too: the CUDA
        arm of `if torch.cuda.is_available():`, or any arm whose other arm maps to the CPU
        (`if args.cpu: torch.load(p, map_location="cpu") else: torch.load(p)`), and a
        `map_location=torch.device("cpu") if args.cpu else None`: the GPU run, which every rank
        takes, passes nothing; also through a variable left at None unless CUDA is missing
        (`map_location = None` then `if not torch.cuda.is_available(): map_location = "cpu"`).
        So does `torch.load(path, map_location=map_location)` in a
        helper whose `map_location` defaults to None when every call of the helper in the
        project leaves it at None (analysis/caller_values.py). A map_location that is given but
        still puts every rank on GPU 0 is flagged too: one naming it (`map_location="cuda:0"`,
        `torch.device("cuda", 0)`, also through a variable), and the current device
        (`map_location="cuda"`) asked for before the statement of the same function that makes
        the rank's own GPU current (`torch.cuda.set_device(local_rank)` on a later line): until
        then the current device is GPU 0 in every rank.
    """,
    why="""
        `torch.load` puts every tensor back on the device it was saved from. Checkpoints are
        usually saved by rank 0, from `cuda:0`, so without `map_location` every rank materialises
        the whole checkpoint on GPU 0: GPU 0 needs world_size times the checkpoint's memory (often
        an out-of-memory error at resume time), every rank creates a CUDA context on GPU 0, and the
        copies then move to the right GPU one by one.
    """,
    fix="""
        `torch.load(path, map_location="cpu")` and then `model.load_state_dict(...)` (which copies
        into the parameters wherever they live), or map straight to this rank's GPU:
        `map_location=f"cuda:{local_rank}"` / `map_location=device`.
    """,
    silent="""
        - Scripts that are not distributed (no torch.distributed code, no distributed caller,
          no LightningModule, no Accelerate `Accelerator` other than a CPU-only one).
        - A map_location variable with a value other than None on the GPU run
          (`loc = f"cuda:{rank}"` then `if not torch.cuda.is_available(): loc = "cpu"`), or one
          left at None only on a test other than CUDA's presence (a user's choice).
        - `map_location="cuda"` after the rank's device is made current (or in a file that
          never makes one current: the order is not shown), and `"cuda:0"` where each process
          sees only its own GPU (`CUDA_VISIBLE_DEVICES` set per rank, `set_device(0)`).
        - Loads under a rank-0 guard (one rank restores onto its own GPU) and on the single-process
          path (`else:` of `if args.distributed:`).
        - Loads in code that runs in one process rather than in the ranks (analysis/where.py):
          the launching process before or after `mp.spawn(...)` (the function that spawns the workers, what only
          it calls, the `__init__` of a class only it builds); the arm beside a spawn or beside a
          call of the file's distributed entry point (`if n == 1: work(0, args) else:
          mp.spawn(work, ...)`, `if multi: main_distributed() else: main()`); code after `assert
          local_rank == -1`; test classes (`*Test`, torch's `MultiProcessTestCase` /
          `DistributedTestBase`, `unittest.TestCase`) and, in a script, classes nothing builds.
        - Files named as data rather than model state (`torch.load("cache/train_features.pt")`):
          preprocessing caches hold CPU tensors.
        - A load beside one mapped to a device of its own (`if args.gpu is None: torch.load(p)
          else: torch.load(p, map_location=f"cuda:{args.gpu}")`): the device is chosen per case.
        - Files of NumPy arrays: the loaded value, or an element of it, goes to
          `torch.from_numpy` in the same function.
        - Calls with `*args` / `**kwargs`, which may carry a map_location.
        - Per-rank files (`torch.load(f"queue{rank}.pth")`): each rank reads back what it saved
          from its own GPU, onto its own GPU.
        - Files this script writes from CPU tensors under the same name
          (`torch.save(features.cpu(), ".../trainfeat.pth")` ... `torch.load(".../trainfeat.pth")`,
          the name also read through the variable holding the path): CPU copies, tensors a factory
          makes without a `device` (`torch.zeros(n, 2)`), dicts of them, the state of a module
          moved by `net.cpu()` before the save, a comprehension of CPU copies
          (`{k: v.cpu() for k, v in net.state_dict().items()}`) (analysis/checkpoints.py); also files of plain
          Python values, which hold no tensor at all (an index `{"model": f"{name}.pt",
          "epoch": epoch}` with `epoch: int`, also filled item by item after `index = {}`).
        - Files that the modules importing this one (the training script that calls the evaluation
          helper after training) write only from CPU tensors under that name (`net.cpu()` then
          `torch.save(net.state_dict(), ".../model_final.pth")`).
        - A helper module whose functions no distributed module calls on every rank, and whose
          classes no distributed module builds on every rank (only the single-process tools,
          only under a rank-0 guard, or nobody).
        - Loads in a top-level function of a script (a file with a `__main__` block) that nothing
          in the file calls or names.
        - Test code (pytest / unittest files): not a training script.
        - A LightningModule in a file whose every Lightning Trainer takes one device
          (`devices=1`, `gpus=1`, `accelerator="cpu"`), and its `prepare_data` hook, which
          Lightning runs on one process.
        - A method loading from a path its caller passes, in a class whose own method saves the
          object's state (`torch.save(self.state_dict(), filename)`) to a path its caller
          passes: the object reads back what it wrote, and the caller picks the file name (one
          per rank in sharded optimizers).
        - In a module with no distributed code of its own, a load in a method of a plain class
          (no base class, so no framework calls it back) that nothing in the project calls or
          names (the ranks build a `RunLog` whose `load_model()` is never used). A distributed
          module's public method is still judged: a library's users call it.
        - A load whose result goes straight into a learning-rate scheduler
          (`scheduler.load_state_dict(torch.load(p))`, the scheduler built by
          `torch.optim.lr_scheduler` or a Hugging Face schedule factory): no tensor in it.
        - A load in an arm that needs a parameter to be set (`if trt_file is not None:`,
          `if trt_file:`) when no call of the function in the project hands that parameter a
          value a rank can have: every caller leaves it at its None default, passes None, or
          passes a value it only makes on the single-process path (`if args.trt: assert not
          distributed; trt_file = ...`), or runs in no rank itself (analysis/caller_values.py).
          For a test of the flag's truth (`if re_train:`) a False default or a False passed
          counts the same. A constructor's callers are the calls of its class
          (`EmbeddingNet(128)`; `super(EmbeddingNet, self)` is no other use of the name).
          The callers are every call of that name in the project, whatever object it goes
          through; nothing is concluded when one passes `*args` / `**kwargs`, the name is used
          other than in a call (a callback), or the project never calls it.
        - A file whose name a function of the load's module makes (`root / sched_file(ctx)`)
          and that every `torch.save` of the project writing under a name from that function
          fills with the state of a torch LR scheduler (`sched.state_dict()`, the scheduler
          built from its class, declared by `typing.cast` or by the parameter's annotation,
          here or by every caller that hands it in): step counts and rates, no tensor.
    """,
    blind_spots="""
        - Whether the file really holds CUDA tensors is only known when this file, or a module
          importing it, saves it under a literal name; a checkpoint saved from CPU tensors by an
          unrelated module (or a released pretrained file) is flagged although it loads to CPU.
        - A helper is followed to its callers by import and direct call (or the building of
          its class, or a method called on it) only, through at most two modules with no
          distributed code in between: a
          load reached through a registry (`BACKBONE_REGISTRY.get(name)(cfg)`, a backbone whose
          pretrained weights load when a config names it), a table of hooks
          (`DEFAULT_LOAD_HOOKS[type](obj, path)`), a callback object the user hands the
          project's trainer (`Trainer(callbacks=[CheckpointCallback(...)])`), or a chain of three
          plain modules (script -> app.py -> engine.py -> runner.py -> the helper) is missed. A
          rank-0-only load is left alone by design (rank 0 restores onto its own GPU), even
          where the fix maps it for CPU-only machines.
        - A helper's class built on every rank counts all its methods as run there, also one
          that only rank 0 calls, in the same module or through an object it holds.
        - What a file holds is known from a save under a literal name, or under a name a
          function of the load's module makes, and only the state of a torch LR scheduler counts
          as holding no tensor: an optimizer's step counters, a dict of Python numbers saved by
          hand, or a scheduler whose kind the callers do not show (built by a project factory
          function) are flagged like a model checkpoint. Plain Python values count as no tensor
          only when written in the code or taken from a parameter annotated `int`, `float`,
          `str` or `bool`; one read from an object (`trainer.epoch`) is not known.
        - A caller's values are followed into an `if p is not None:` / `if p:` on a parameter
          only: a test of anything else (`if p.endswith(".trt")`, `if cfg.trt:`) is taken as
          possibly true in a rank. Callers are found by the function's name, so a method with a
          common name (`load`, `run`) called elsewhere with a value a rank can have keeps the
          load flagged, and a function handed on as a callback, or called by no module of the
          project (a library's public API), is taken as called with anything.
        - Data files are taken for preprocessing caches of CPU tensors; one the preprocessing
          wrote from GPU features is missed (a dataset's `__getitem__` reading per-sample files
          into which the preprocessing saved features a GPU model computed).
        - Readers other than `torch.load` (mmcv's `load_checkpoint` / `_load_checkpoint`) are not
          looked into. A map_location handed through (`torch.load(p,
          map_location=map_location)`) is followed one call back only: a helper whose parameter
          defaults to None counts as not passing one when every call of it in the project leaves
          it at None; a helper nobody in the project calls, or one whose callers hand on a
          parameter of their own (`_load_checkpoint(path, map_location)` called with the
          caller's `map_location`), counts as passing one.
        - The results cache keys such a helper on the project's modules as they were: a module
          added later that starts calling it is seen after the helper itself changes (or with
          `--no-cache`).
        - In such a save/load pair, a caller (in another module) that hands every rank the
          same file name rank 0 saved is missed: the caller is not followed.
        - The launching process is the function that calls `mp.spawn` / `start_processes` in
          this file; a project helper that spawns for it (`launch(main)`) is not followed, so a
          load after such a launch is still taken for a rank's.
        - `torch.load` wrapped in a helper of another library (`load_state_dict_from_url`,
          `torch.hub`) is not looked into.
        - A LightningModule's loads are flagged unless its own file pins every Trainer to one
          device: a project that builds its Trainer elsewhere with `devices=1` (or a
          configuration that always says one device) is flagged although it runs one process.
          Lightning's own reader (`load_from_checkpoint`, which maps to the module's device)
          is not a `torch.load` and is not judged.
        - A map_location of the current device (`"cuda"`) is judged by the order of the load and
          the statement making the rank's device current in the same function (or the file's
          callers of it); a device made current in another module, or never in the file, leaves
          it silent.
        - A module building an `Accelerator` counts all its code as run in every process,
          also a load in a function only a single-process tool of the same module calls, and
          one where the Accelerator is built but the run is started with one process.
          An Accelerator built in another module (the trainer holding one it is handed) does
          not make this module's loads run in every process.
        - A map_location variable is followed through its assignments in the load's function
          only, and the CPU counts as a fallback only when assigned in an arm of a test of
          `torch.cuda.is_available()` (a `device.type == "cpu"` test is not read).
        - A helper reached only through a component registry (a model class a config names,
          whose `from_config` builds its sub-modules through the helper) has no caller the
          analysis can see, in any module.
    """,
    triggers=(b"load",),
    distributed_only=True,
    judged_by_callers=(TORCH_LOAD,),  # a helper module's loads are judged by its distributed callers (_rank_callers)
    check=check,
    invalid=(
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        checkpoint = torch.load(args.resume)  # <- DDP008
        model.load_state_dict(checkpoint["model"])
        """,
        """
        import torch
        import torch.distributed as dist

        def resume(model, path):
            state = torch.load(path, weights_only=True)  # <- DDP008
            model.load_state_dict(state)

        dist.init_process_group("nccl")
        resume(model, "last.pt")
        """,
    ),
    valid=(
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        other = torch.load(args.resume, f"cuda:{local_rank}")
        """,
        """
        # Single-process script: GPU 0 is the only GPU.
        import torch

        model.load_state_dict(torch.load("model.pt"))
        """,
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            state = torch.load("pretrained.pt")  # rank 0 restores onto its own GPU
        """,
    ),
)
