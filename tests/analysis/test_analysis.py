"""The shared analysis layer, tested on its own: imports, distributed context, rank guards,
data flow. Rules only combine these answers."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.analysis import build_facts
from ddplint.analysis.loaders import SamplerKind
from ddplint.analysis.model import ModuleModel
from rule_snippets import PLAIN_DATA_MODULE, write_files


def facts_of(source: str):
    return build_facts(cst.parse_module(textwrap.dedent(source).lstrip("\n")))


def first_call(facts, name):
    return next(site for site in facts.calls if site.name == name)


# -- qualified names through every import form ----------------------------------------------------
@pytest.mark.parametrize(
    "source,call",
    [
        ("import torch\ntorch.nn.DataParallel(m)", "torch.nn.DataParallel"),
        ("import torch.nn as nn\nnn.DataParallel(m)", "torch.nn.DataParallel"),
        ("import torch.nn.parallel\ntorch.nn.parallel.DataParallel(m)", "torch.nn.DataParallel"),
        ("from torch.nn.parallel import DataParallel as DP\nDP(m)", "torch.nn.DataParallel"),
        ("from torch.nn.parallel.data_parallel import DataParallel\nDataParallel(m)", "torch.nn.DataParallel"),
        ("import torch.utils.data as tud\ntud.DataLoader(d)", "torch.utils.data.DataLoader"),
        ("from torch.utils import data\ndata.DataLoader(d)", "torch.utils.data.DataLoader"),
        ("from torch.utils.data.dataloader import DataLoader\nDataLoader(d)", "torch.utils.data.DataLoader"),
        ("import torch\ntorch.utils.data.distributed.DistributedSampler(d)", "torch.utils.data.DistributedSampler"),
        (
            "from torch.nn.parallel import DistributedDataParallel as Net\nNet(m)",
            "torch.nn.parallel.DistributedDataParallel",
        ),
        ("from torch import distributed as dist\ndist.init_process_group('gloo')", "torch.distributed.init_process_group"),
        ("import torch.distributed\ntorch.distributed.init_process_group()", "torch.distributed.init_process_group"),
        ("from torch.utils.data import *\nDataLoader(d)", "torch.utils.data.DataLoader"),
        ("import torch.nn as nn\nDP = nn.DataParallel\nDP(m)", "torch.nn.DataParallel"),
        ("import pytorch_lightning as pl\npl.Trainer()", "lightning.pytorch.Trainer"),
    ],
)
def test_qualified_names(source, call):
    facts = facts_of(source)
    assert call in facts.qualified_names(facts.calls[-1].node.func)


def test_unrelated_names_do_not_resolve_to_torch():
    facts = facts_of("from mylib import DataParallel\nDataParallel(m)\nDistributedDataParallel(m)")
    assert facts.qualified_names(facts.calls[0].node.func) == {"mylib.DataParallel"}
    assert "torch.nn.DataParallel" not in facts.qualified_names(facts.calls[1].node.func)


def test_try_except_import_binds_both_names():
    facts = facts_of(
        """
        try:
            from apex.parallel import DistributedDataParallel as DDP
        except ImportError:
            from torch.nn.parallel import DistributedDataParallel as DDP
        DDP(model)
        """
    )
    names = facts.qualified_names(facts.calls[-1].node.func)
    assert {"apex.parallel.DistributedDataParallel", "torch.nn.parallel.DistributedDataParallel"} <= names


# -- distributed context ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source",
    [
        "import torch.distributed as dist\ndist.init_process_group('nccl')",
        "from torch.nn.parallel import DistributedDataParallel\nm = DistributedDataParallel(m)",
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nm = FSDP(m)",
        "import torch.multiprocessing as mp\nmp.spawn(worker, nprocs=4)",
        "import os\nlocal_rank = int(os.environ['LOCAL_RANK'])",
        "import os\nrank = os.environ.get('RANK', 0)",
        "import os\nws = int(os.getenv('WORLD_SIZE', '1'))",
        "import os\nif 'LOCAL_RANK' in os.environ:\n    pass",
    ],
)
def test_distributed_scripts_are_recognised(source):
    assert ModuleModel(facts_of(source)).distributed


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nmodel = torch.nn.Linear(2, 2).cuda()",
        "import os\npath = os.environ['DATA_DIR']",
        "print('LOCAL_RANK')",
        "from torch.nn import DataParallel\nmodel = DataParallel(model)",
    ],
)
def test_single_process_scripts_are_not_distributed(source):
    assert not ModuleModel(facts_of(source)).distributed


# -- rank-0 guards ---------------------------------------------------------------------------------
def guard_verdicts(source: str) -> list[bool]:
    facts = facts_of(source)
    model = ModuleModel(facts)
    return [model.ranks.is_rank_zero_guard(b.test, b.context.scope) for b in facts.branches if isinstance(b.node, cst.If)]


@pytest.mark.parametrize(
    "condition",
    [
        "rank == 0",
        "0 == rank",
        "args.local_rank in (-1, 0)",
        "args.local_rank in [-1, 0]",
        "dist.get_rank() == 0",
        "torch.distributed.get_rank() == 0",
        "int(os.environ['RANK']) == 0",
        "not rank",
        "is_main_process()",
        "utils.is_main_process()",
        "accelerator.is_main_process",
        "accelerator.is_local_main_process",
        "trainer.is_global_zero",
        "self.trainer.is_global_zero",
        "args.rank % ngpus_per_node == 0",
        "not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0",
        "args.distributed and global_rank == 0",
        "training_args.should_save and trainer.is_world_process_zero()",
    ],
)
def test_rank_zero_guards(condition):
    assert guard_verdicts(f"if {condition}:\n    pass") == [True]


@pytest.mark.parametrize(
    "condition",
    [
        "rank != 0",
        "args.local_rank not in (-1, 0)",
        "rank > 0",
        "not is_main_process()",
        "world_size > 1",
        "epoch == 0",
        "step % 100 == 0",
        "args.distributed",
    ],
)
def test_not_rank_zero_guards(condition):
    assert guard_verdicts(f"if {condition}:\n    pass") == [False]


def test_guard_flag_assigned_from_rank_comparison():
    verdicts = guard_verdicts(
        """
        import os
        ddp_rank = int(os.environ["RANK"])
        master_process = ddp_rank == 0
        if master_process:
            pass
        """
    )
    assert verdicts == [True]


def test_rank_taint_through_assignment():
    verdicts = guard_verdicts(
        """
        import torch.distributed as dist
        me = dist.get_rank()
        if me == 0:
            pass
        """
    )
    assert verdicts == [True]


# -- data flow ---------------------------------------------------------------------------------------
def test_sampler_reaches_loader_through_helper_and_conditional():
    facts = facts_of(
        """
        import torch.utils.data as tud

        def make_sampler(ds, distributed):
            return tud.DistributedSampler(ds) if distributed else None

        sampler = make_sampler(train_set, True)
        loader = tud.DataLoader(train_set, sampler=sampler)
        """
    )
    model = ModuleModel(facts)
    (sampler,) = model.data.samplers
    assert [loader.site.node for loader in sampler.loaders] == [model.data.loaders[0].site.node]


def test_epoch_loop_found_through_helper_call():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader, DistributedSampler

        def run_epoch(model, data):
            for batch in data:
                model(batch).sum().backward()

        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        for epoch in range(3):
            run_epoch(model, loader)
        """
    )
    model = ModuleModel(facts)
    (loader,) = model.data.loaders
    iterations = model.data.iterations(loader)
    assert iterations and all(i.epoch_loop is not None for i in iterations)
    assert {i.epoch_loop.node.target.value for i in iterations} == {"epoch"}
    assert model.data.is_training_loader(loader)


def test_set_epoch_on_loader_sampler_reaches_sampler():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader, DistributedSampler
        loader = DataLoader(ds, sampler=DistributedSampler(ds))
        for epoch in range(3):
            loader.sampler.set_epoch(epoch)
        """
    )
    model = ModuleModel(facts)
    assert model.data.set_epoch_reaches(model.data.samplers[0])


def test_set_epoch_on_a_different_sampler_does_not_count():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader, DistributedSampler
        train_sampler = DistributedSampler(train_set)
        other_sampler = DistributedSampler(other_set)
        train_loader = DataLoader(train_set, sampler=train_sampler)
        other_loader = DataLoader(other_set, sampler=other_sampler)
        for epoch in range(3):
            other_sampler.set_epoch(epoch)
        """
    )
    model = ModuleModel(facts)
    by_name = {s.site.node.args[0].value.value: s for s in model.data.samplers}
    assert not model.data.set_epoch_reaches(by_name["train_set"])
    assert model.data.set_epoch_reaches(by_name["other_set"])


def test_loop_over_samplers_list_reaches_each():
    facts = facts_of(
        """
        from torch.utils.data import DistributedSampler
        a = DistributedSampler(x)
        b = DistributedSampler(y)
        for epoch in range(3):
            for s in [a, b]:
                s.set_epoch(epoch)
        """
    )
    model = ModuleModel(facts)
    assert all(model.data.set_epoch_reaches(s) for s in model.data.samplers)


@pytest.mark.parametrize(
    "kwargs_source,has_sampler",
    [
        ("kw = {'batch_size': 8}", False),
        ("kw = dict(batch_size=8)", False),
        ("kw = {'batch_size': 8, 'sampler': s}", True),
        ("kw = {'batch_size': 8}\nkw['sampler'] = s", True),
        ("kw = {'batch_size': 8}\nkw.update(sampler=s)", True),
        ("kw = {'batch_size': 8}\nkw.update(other)", True),  # unknown: assume it is there
        ("kw = get_kwargs()", True),
    ],
)
def test_sampler_in_kwargs_dict(kwargs_source, has_sampler):
    facts = facts_of(f"from torch.utils.data import DataLoader\n{kwargs_source}\nloader = DataLoader(ds, **kw)")
    model = ModuleModel(facts)
    assert (model.data.loaders[0].sampler is SamplerKind.PRESENT) is has_sampler


@pytest.mark.parametrize(
    "call,state",
    [
        ("DataLoader(ds, batch_size=4)", "absent"),
        ("DataLoader(ds, 4, False, None)", "absent"),
        ("DataLoader(ds, 4, False, s)", "present"),
        ("DataLoader(ds, sampler=None)", "absent"),
        ("DataLoader(ds, batch_sampler=bs)", "present"),
        ("DataLoader(ds, sampler=RandomSampler(ds))", "whole-dataset"),
        ("DataLoader(ds, *args)", "present"),
    ],
)
def test_sampler_argument_forms(call, state):
    facts = facts_of(f"from torch.utils.data import DataLoader, RandomSampler\nloader = {call}")
    model = ModuleModel(facts)
    assert model.data.loaders[0].sampler is SamplerKind(state)


def test_loader_training_evidence():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader
        val_loader = DataLoader(val_set, batch_size=64)
        loader = DataLoader(data, batch_size=64)
        for x, y in loader:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
        """
    )
    model = ModuleModel(facts)
    val, trained = model.data.loaders
    assert not model.data.is_training_loader(val)
    assert model.data.is_training_loader(trained)


def test_parameter_default_is_not_trusted_when_nobody_in_the_file_calls():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader

        def build_train_loader(dataset, sampler=None):
            return DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)
        """
    )
    model = ModuleModel(facts)
    assert model.data.loaders[0].sampler is SamplerKind.PRESENT  # unknown: a caller elsewhere may pass one


def test_parameter_default_used_by_a_call_that_omits_it():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader

        def build_train_loader(dataset, sampler=None):
            return DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)

        loader = build_train_loader(train_set)
        """
    )
    model = ModuleModel(facts)
    assert model.data.loaders[0].sampler is SamplerKind.ABSENT


def test_distributed_tokens_cover_every_distributed_signal():
    """The engine's byte screen must never skip a file the analysis would call distributed."""
    from ddplint.analysis.torch_api import DISTRIBUTED_ENTRY_POINTS, DISTRIBUTED_TOKENS, LAUNCHER_ENV_VARS

    def screened_in(text: str) -> bool:
        return any(token in text.encode() for token in DISTRIBUTED_TOKENS)

    for qualified in DISTRIBUTED_ENTRY_POINTS:
        # the name as a file would spell it after `from module import name`
        assert screened_in(qualified.split(".")[-1]) or screened_in(qualified), qualified
    for variable in LAUNCHER_ENV_VARS:
        assert screened_in(variable), variable
    assert screened_in("torch.distributed")


def test_star_import_does_not_claim_names_the_file_defines():
    facts = facts_of(
        """
        from torch.utils.data import *

        class DataLoader:
            pass

        DataLoader(items)
        """
    )
    assert "torch.utils.data.DataLoader" not in facts.qualified_names(facts.calls[-1].node.func)


@pytest.mark.parametrize(
    "assignment,is_rank",
    [
        ("rank = dist.get_rank() if dist.is_initialized() else 0", True),
        ("global_rank = node_rank * gpus_per_node + local_rank", True),
        ("rank, world = dist.get_rank(), dist.get_world_size()", True),
        ("rank = args.lora_rank", False),
        ("rank = config.low_rank_dim", False),
        ("r = int(os.environ['LOCAL_RANK'])", True),
    ],
)
def test_rank_variables_are_judged_by_what_they_hold(assignment, is_rank):
    name = assignment.split("=")[0].split(",")[0].strip()
    verdicts = guard_verdicts(f"import os\nimport torch.distributed as dist\n{assignment}\nif {name} == 0:\n    pass")
    assert verdicts == [is_rank]


def test_a_loop_that_only_looks_at_batches_is_not_training():
    facts = facts_of(
        """
        from torch.utils.data import DataLoader
        train_loader = DataLoader(ds, batch_size=4, shuffle=True)
        for i, batch in enumerate(train_loader):
            if i >= 2:
                break
            print(batch["input_ids"].shape, batch["input_ids"].max().item())
        """
    )
    model = ModuleModel(facts)
    assert not model.data.is_training_loader(model.data.loaders[0])


# -- issue 7: shared facts the new rules read -------------------------------------------------------
def test_rank_zero_arm_of_a_conditional_expression_runs_on_one_rank():
    facts = facts_of(
        """
        import torch, torch.distributed as dist
        rank = dist.get_rank()
        obj = [torch.load("a.pt") if rank == 0 else None]
        other = torch.load("b.pt") if rank != 0 else None
        """
    )
    model = ModuleModel(facts)
    first, second = [site for site in facts.calls if site.name == "load"]
    assert model.ranks.call_runs_on_one_rank_only(first)
    assert not model.ranks.call_runs_on_one_rank_only(second)


@pytest.mark.parametrize(
    "source,is_data",
    [
        ("torch.load('cache/tokenized_train.pt')", True),
        ("torch.load('val_tensors.pt')", True),
        ("torch.load('best_model.pt')", False),
        ("torch.load(args.resume)", False),
        ("torch.load(path)", False),
        ("torch.load('train_state.pt')", False),
    ],
)
def test_loaded_file_named_as_data(source, is_data):
    facts = facts_of("import torch\n" + source)
    model = ModuleModel(facts)
    assert model.data.reads_a_data_file(first_call(facts, "load")) is is_data


def test_torch_load_inside_a_dataset_class_reads_data():
    facts = facts_of(
        """
        import torch
        from torch.utils.data import Dataset
        class Shards(Dataset):
            def __getitem__(self, i):
                return torch.load(self.files[i])
        """
    )
    model = ModuleModel(facts)
    assert model.data.reads_a_data_file(first_call(facts, "load"))


@pytest.mark.parametrize(
    "line,kind",
    [
        ("model.cuda()", "current"),
        ("model.to('cuda')", "current"),
        ("torch.device('cuda')", "current"),
        ("model.cuda(0)", "gpu0"),
        ("model.to(0)", "gpu0"),
        ("torch.device('cuda', 0)", "gpu0"),
        ("torch.zeros(3, device='cuda:0')", "gpu0"),
        ("dev = 'cuda:0'\nmodel.to(dev)", "gpu0"),
        ("model.to(local_rank)", None),
        ("model.cuda(args.gpu)", None),
        ("torch.device('cuda', local_rank)", None),
        ("model.to(f'cuda:{local_rank}')", None),
        ("model.to('cpu')", None),
        ("x.to(torch.float16)", None),
    ],
)
def test_device_placements(line, kind):
    facts = facts_of("import torch\n" + line)
    model = ModuleModel(facts)
    kinds = [p.kind for p in model.devices.placements]
    assert kinds == ([kind] if kind else [])


@pytest.mark.parametrize(
    "source,sets",
    [
        ("import torch\ntorch.cuda.set_device(r)", True),
        ("import torch.distributed as dist\ndist.init_process_group('nccl', device_id=d)", True),
        ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = str(r)", True),
        ("from accelerate import Accelerator", True),
        ("import torch.distributed as dist\ndist.init_process_group('nccl')", False),
    ],
)
def test_device_chosen_per_rank(source, sets):
    assert ModuleModel(facts_of(source)).devices.sets_device_per_rank is sets


@pytest.mark.parametrize(
    "expr,differs",
    [("int(time.time())", True), ("os.getpid()", True), ("t", True), ("args.seed", False), ("42", False)],
)
def test_values_that_differ_between_processes(expr, differs):
    facts = facts_of(f"import os, time\nt = time.time_ns()\nx = {expr}")
    model = ModuleModel(facts)
    value = facts.module_scope.bindings["x"][0].value
    assert model.ranks.depends_on_clock(value, facts.module_scope) is differs


def test_collectives_direct_through_helpers_and_accelerator():
    facts = facts_of(
        """
        import numpy as np
        import torch.distributed as dist
        def sync(t):
            dist.all_reduce(t)
        dist.barrier()
        sync(x)
        accelerator.wait_for_everyone()
        np.broadcast(a, b)
        dist.send(t, dst=1)
        """
    )
    model = ModuleModel(facts)
    reached = {site.name: model.ranks.collective_reached(site) for site in facts.calls}
    reached = {name: None if reach is None else str(reach) for name, reach in reached.items()}
    assert reached["barrier"] == "barrier"
    assert reached["sync"] == "all_reduce in sync()"
    assert reached["wait_for_everyone"] == "wait_for_everyone"
    assert reached["broadcast"] is None and reached["send"] is None


def test_forward_through_wrapped_model_needs_a_syncing_wrapper():
    source = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = torch.nn.BatchNorm1d(4)
        model = DDP(net)
        plain = DDP(other, broadcast_buffers=False)
        model(x)
        model.module(x)
        plain(x)
        """
    text = textwrap.dedent(source).lstrip("\n")
    facts = build_facts(cst.parse_module(text), text)
    model = ModuleModel(facts)
    forwards = [site for site in facts.calls if model.ranks.is_wrapped_model_forward(site)]
    assert [cst.Module([]).code_for_node(site.node) for site in forwards] == ["model(x)"]


@pytest.mark.parametrize(
    "body,expected",
    [
        ("validate(model, val_loader)", "validate(...)"),
        ("run_evaluation(model, loader)", "run_evaluation(...)"),
        ("model.eval()", None),
        ("build_val_loader(cfg)", None),
        ("log_eval_metrics(writer, m)", None),
        ("my_eval(model)", "my_eval(...)"),
        ("fit_more(model)", None),
    ],
)
def test_evaluation_pass(body, expected):
    facts = facts_of(
        f"""
        import torch
        def my_eval(model):
            with torch.no_grad():
                for x in loader:
                    model(x)
        def fit_more(model):
            model.eval()
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
        if rank == 0:
            {body}
        """
    )
    model = ModuleModel(facts)
    branch = facts.branches[-1]
    assert model.data.evaluation_pass(facts.calls_in_arm(branch, True), []) == expected


@pytest.mark.parametrize(
    "iter_body,unsplit",
    [
        ("yield from self.items", True),
        # split among one rank's loader workers only: every rank still reads the whole stream
        ("info = get_worker_info()\nyield from self.items[info.id::info.num_workers]", True),
        ("yield from self.items[self.rank::self.world_size]", False),
        ("yield from self.items[int(os.environ['RANK'])::2]", False),
    ],
)
def test_iterable_dataset_splits_its_stream(iter_body, unsplit):
    body = textwrap.indent(iter_body, "        ")
    source = (
        "import os\nfrom torch.utils.data import DataLoader, IterableDataset, get_worker_info\n"
        "class Stream(IterableDataset):\n    def __iter__(self):\n" + body + "\n"
        "loader = DataLoader(Stream(), batch_size=4)\n"
    )
    facts = build_facts(cst.parse_module(source))
    model = ModuleModel(facts)
    assert (model.data.unsplit_stream(model.data.loaders[0]) == "Stream") is unsplit


# -- cross-module flow (analysis/project.py) ---------------------------------------------------------
def test_project_summaries_and_dependencies(tmp_path):
    from ddplint.analysis.project import ProjectIndex
    from ddplint.engine import parses_safely

    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/dist.py": "import torch\nimport torch.distributed as dist\ndef setup(r):\n    dist.init_process_group('nccl')\n    torch.cuda.set_device(r)\ndef other():\n    pass\n",
            "pkg/data.py": PLAIN_DATA_MODULE
            + """
    from torch.utils.data import IterableDataset

    class Stream(IterableDataset):
        def __iter__(self):
            yield 1
    """,
            "pkg/train.py": "from .dist import setup\nfrom . import data\nimport os\n",
        },
    )
    files = [str(p) for p in tmp_path.rglob("*.py")]
    index = ProjectIndex(files, parses_safely)
    train = str(tmp_path / "pkg" / "train.py")
    assert index.dependencies(train) == sorted([str(tmp_path / "pkg" / "data.py"), str(tmp_path / "pkg" / "dist.py")])
    summary = index.summary(str(tmp_path / "pkg" / "dist.py"))
    assert summary.process_group_starters == {"setup"} and summary.device_setters == {"setup"}
    data_summary = index.summary(str(tmp_path / "pkg" / "data.py"))
    assert data_summary.loader_factories["build_loader"].sampler is SamplerKind.ABSENT
    assert data_summary.loader_factories["build_loader"].dataset_parameter == 0
    assert data_summary.iterable_classes == {"Stream": False}
    assert index.resolve(train, ".dist.setup") == (str(tmp_path / "pkg" / "dist.py"), "setup")
    assert index.resolve(train, "os.path") is None
