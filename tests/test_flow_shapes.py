"""Shapes of real code the shared analysis must get right (issue 11, flow side).

Each test is a small snippet in our own words: what a value is where it is used, in program
order; which scripts are distributed; the rule shapes that depend on both. Every shape is tested on
what must be flagged and on what must be left alone.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.analysis.facts import build_facts
from ddplint.engine import lint_source
from ddplint.rules import select_rules


def _facts(source: str):
    source = textwrap.dedent(source).lstrip("\n")
    module = cst.parse_module(source)
    return module, build_facts(module, source)


def values_at_use(source: str) -> list[str]:
    """The source expressions of the argument of the (first) `use(...)` call, as code."""
    module, facts = _facts(source)
    site = next(s for s in facts.calls if s.name == "use")
    found = facts.flow.sources(site.node.args[0].value, site.context.scope, site.context.branches)
    return sorted(module.code_for_node(s.node) if s.node is not None else "?" for s in found)


# -- records apart from analyses ------------------------------------------------------------------
def test_records_module_imports_nothing_else_of_ddplint():
    import ddplint.analysis.records as records

    with open(records.__file__, encoding="utf-8") as handle:
        tree = cst.parse_module(handle.read())
    imported = [
        cst.Module([]).code_for_node(node.module)
        for node in _walk(tree)
        if isinstance(node, cst.ImportFrom) and node.module is not None
    ]
    imported += [
        cst.Module([]).code_for_node(alias.name)
        for node in _walk(tree)
        if isinstance(node, cst.Import)
        for alias in node.names
    ]
    assert imported and not [name for name in imported if name.startswith("ddplint")]


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


# -- value tracking through containers ---------------------------------------------------------
def test_tuple_assignment_is_element_wise():
    assert values_at_use(
        """
        sampler, shuffle = DistributedSampler(data), False
        use(sampler)
        """
    ) == ["DistributedSampler(data)"]
    assert values_at_use(
        """
        sampler, shuffle = DistributedSampler(data), False
        use(shuffle)
        """
    ) == ["False"]


def test_returned_tuple_is_unpacked_at_the_call_site():
    snippet = """
        def make_loaders(ds):
            train = DataLoader(ds, shuffle=True)
            return train, ds, None

        first, second, third = make_loaders(data)
        use({name})
        """
    assert values_at_use(snippet.format(name="first")) == ["DataLoader(ds, shuffle=True)"]
    assert values_at_use(snippet.format(name="second")) == ["?"]  # `data`: bound nowhere in the file
    assert values_at_use(snippet.format(name="third")) == ["None"]


def test_returned_tuple_indexed_at_the_call_site():
    assert values_at_use(
        """
        def make_loaders():
            return DataLoader(a), DataLoader(b)

        pair = make_loaders()
        use(pair[1])
        """
    ) == ["DataLoader(b)"]


def test_dict_of_loaders_selects_the_named_entry():
    assert values_at_use(
        """
        loaders = {"train": DataLoader(a), "val": DataLoader(b)}
        use(loaders["train"])
        """
    ) == ["DataLoader(a)"]
    assert values_at_use(
        """
        loaders = dict(train=DataLoader(a), val=DataLoader(b))
        use(loaders["val"])
        """
    ) == ["DataLoader(b)"]


def test_dict_filled_item_by_item():
    assert values_at_use(
        """
        loaders = {}
        loaders["train"] = DataLoader(a)
        loaders["val"] = DataLoader(b)
        use(loaders["val"])
        """
    ) == ["DataLoader(b)"]


def test_unknown_key_may_be_any_entry_and_lists_index_by_position():
    assert values_at_use(
        """
        loaders = {"train": DataLoader(a), "val": DataLoader(b)}
        for split in splits:
            use(loaders[split])
        """
    ) == ["DataLoader(a)", "DataLoader(b)"]
    assert values_at_use(
        """
        loaders = [DataLoader(a), DataLoader(b)]
        use(loaders[-1])
        """
    ) == ["DataLoader(b)"]


def test_subscript_of_something_unknown_stays_itself():
    assert values_at_use("use(batch[0])") == ["batch[0]"]
    assert values_at_use(
        """
        def step(d):
            use(d["train"])
        """
    ) == ['d["train"]']
    assert values_at_use(
        """
        loaders = {**defaults, "train": DataLoader(a)}
        use(loaders["val"])
        """
    ) == ['loaders["val"]']


def test_argument_reaches_the_parameter_of_the_function_running_the_loop():
    assert values_at_use(
        """
        def run_epoch(model, loader=None):
            use(loader)

        def main():
            train_loader = DataLoader(data, shuffle=True)
            run_epoch(model, loader=train_loader)
        """
    ) == ["DataLoader(data, shuffle=True)"]


def test_argument_reaches_a_method_of_a_local_class_instance():
    assert values_at_use(
        """
        class Runner:
            def fit(self, loader, epochs):
                use(loader)

        def main():
            runner = Runner(model)
            runner.fit(DataLoader(data), 3)
        """
    ) == ["DataLoader(data)"]


def test_container_shapes_through_the_rules(lint):
    # The train loader travels in a dict into the function that runs the epoch: still unsharded.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        def one_epoch(loader):
            for batch in loader:
                step(batch)

        def main():
            dist.init_process_group("nccl")
            loaders = {"train": DataLoader(ds, shuffle=True), "val": DataLoader(vs)}
            for epoch in range(10):
                one_epoch(loaders["train"])
        """,
        ["DDP001"],
    ) == [(10, "DDP001")]
    # A sampler built in a tuple assignment, returned in a tuple, iterated per epoch without
    # set_epoch: the same order every epoch; with set_epoch on the unpacked sampler it is fine.
    unpacked = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def build(ds):
            sampler, shuffle = DistributedSampler(ds), False
            return DataLoader(ds, sampler=sampler, shuffle=shuffle), sampler, None

        def main():
            dist.init_process_group("nccl")
            loader, sampler, collate = build(ds)
            for epoch in range(10):
                {first}
                for batch in loader:
                    step(batch)
        """
    assert lint(unpacked.format(first="pass"), ["DDP002"]) == [(11, "DDP002")]
    assert lint(unpacked.format(first="sampler.set_epoch(epoch)"), ["DDP002"]) == []


# -- program order (reaching definitions) ----------------------------------------------------------
def test_a_later_assignment_does_not_reach_an_earlier_use():
    assert values_at_use(
        """
        def main():
            model = Net()
            use(model)
            model = DistributedDataParallel(model)
        """
    ) == ["Net()"]


def test_a_straight_line_reassignment_hides_the_earlier_value():
    assert values_at_use(
        """
        def main():
            model = Net()
            model = DistributedDataParallel(model)
            use(model)
        """
    ) == ["DistributedDataParallel(model)"]


def test_an_assignment_in_one_arm_does_not_hide_the_earlier_value():
    assert values_at_use(
        """
        def main(args):
            device = "cuda:0"
            if args.distributed:
                device = f"cuda:{args.local_rank}"
            use(device)
        """
    ) == ['"cuda:0"', 'f"cuda:{args.local_rank}"']


def test_loop_carries_a_later_assignment_to_the_next_iteration():
    assert values_at_use(
        """
        def main():
            state = None
            for step in range(10):
                use(state)
                state = compute(step)
        """
    ) == ["None", "compute(step)"]


def test_reassignment_at_the_top_of_a_loop_body_hides_the_rest():
    assert values_at_use(
        """
        def main():
            state = None
            for step in range(10):
                state = compute(step)
                use(state)
                state = other(step)
        """
    ) == ["compute(step)"]


def test_own_value_is_evaluated_before_the_assignment():
    assert values_at_use(
        """
        def main():
            loader = DataLoader(data)
            loader = use(loader)
        """
    ) == ["DataLoader(data)"]


def test_early_return_stops_an_assignment_from_reaching_later_uses():
    assert values_at_use(
        """
        def main(args):
            gpu = pick_gpu()
            if not args.distributed:
                gpu = 0
                return run_single(gpu)
            use(gpu)
        """
    ) == ["pick_gpu()"]


def test_raise_inside_try_does_not_leave_the_function():
    assert values_at_use(
        """
        def main():
            value = first()
            try:
                value = second()
                raise ValueError
            except ValueError:
                pass
            use(value)
        """
    ) == ["first()", "second()"]


def test_with_body_and_finally_always_run():
    assert values_at_use(
        """
        def main():
            model = Net()
            with context():
                model = DistributedDataParallel(model)
            use(model)
        """
    ) == ["DistributedDataParallel(model)"]
    assert values_at_use(
        """
        def main():
            model = Net()
            try:
                model = DistributedDataParallel(model)
            except RuntimeError:
                pass
            use(model)
        """
    ) == ["DistributedDataParallel(model)", "Net()"]


def test_attribute_targets_have_their_own_reaching_definitions():
    assert values_at_use(
        """
        def main(args):
            args.gpu = 0
            args.gpu = int(os.environ["LOCAL_RANK"])
            model.cuda(args.gpu)
            use(args.gpu)
        """
    ) == ['int(os.environ["LOCAL_RANK"])']


def test_module_statements_are_in_program_order_too():
    assert values_at_use(
        """
        model = Net()
        use(model)
        model = DistributedDataParallel(model)
        """
    ) == ["Net()"]


def test_forward_before_the_wrap_is_not_a_wrapped_forward(lint):
    snippet = """
        import torch.distributed as dist
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
            {before}
            model = DistributedDataParallel(model)
            {after}
            dist.barrier()
        """
    probe = "if rank == 0:\n                model(sample)"
    assert lint(snippet.format(before=probe, after="pass"), ["DDP007"]) == []
    assert lint(snippet.format(before="pass", after=probe), ["DDP007"]) == [(12, "DDP007")]


def test_gpu_zero_replaced_on_the_distributed_path_is_not_a_placement_on_gpu0(lint):
    silent = """
        import torch
        import torch.distributed as dist

        def main(args):
            args.gpu = 0
            if args.distributed:
                args.gpu = args.local_rank
                torch.cuda.set_device(args.gpu)
                dist.init_process_group("nccl")
            model = build().cuda(args.gpu)

            def resume():
                return torch.load(args.resume, map_location=lambda s, loc: s.cuda(args.gpu))
        """
    assert lint(silent, ["DDP005"]) == []
    flagged = """
        import torch
        import torch.distributed as dist

        def main(args):
            args.gpu = 0
            if args.verbose:
                args.gpu = args.local_rank
            dist.init_process_group("nccl")
            model = build().cuda(args.gpu)
        """
    assert lint(flagged, ["DDP005"]) == [(9, "DDP005")]
    # The zero written after the distributed branch reaches the placement on every path.
    flagged_after = """
        import torch
        import torch.distributed as dist

        def main(args):
            if args.distributed:
                args.gpu = args.local_rank
                dist.init_process_group("nccl")
            args.gpu = 0
            model = build().cuda(args.gpu)
        """
    assert lint(flagged_after, ["DDP005"]) == [(9, "DDP005")]


def test_closure_use_sees_what_was_assigned_before_its_definition():
    assert values_at_use(
        """
        def main():
            device = "cuda:0"
            device = pick()

            def inner():
                use(device)
            device = later()
        """
    ) == ["later()", "pick()"]


# -- an attribute is not a variable ----------------------------------------------------------------
def test_attribute_never_resolves_to_the_local_of_the_same_name(lint):
    source = """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def main(args):
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            seed = args.seed + rank
            torch.manual_seed(seed)
            sampler = DistributedSampler(ds, seed={seed})
            loader = DataLoader(ds, sampler=sampler)
        """
    assert lint(source.format(seed="args.seed"), ["DDP011"]) == []
    assert lint(source.format(seed="seed"), ["DDP011"]) == [(10, "DDP011")]


def test_value_walk_leaves_out_attribute_and_keyword_names():
    from ddplint.analysis.syntax import value_walk

    expression = cst.parse_expression("f(args.seed, seed=cfg.rank)")
    names = {node.value for node in value_walk(expression) if isinstance(node, cst.Name)}
    assert names == {"f", "args", "cfg"}


def test_no_attribute_of_the_corpus_resolves_to_a_bare_name():
    """Over every file of tests/corpus: the bindings an attribute chain is resolved to are
    always bindings of that very chain, never of its last identifier."""
    from pathlib import Path

    corpus = sorted((Path(__file__).parent / "corpus").rglob("*.py"))
    assert corpus
    checked = 0
    for path in corpus:
        source = path.read_text(encoding="utf-8")
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        facts = build_facts(module, source)
        from ddplint.analysis.syntax import dotted_name

        for site in facts.calls:
            for node in _walk(site.node):
                if not isinstance(node, cst.Attribute) or dotted_name(node) is None:
                    continue
                context = facts.context_of(node)
                if context is None:
                    continue
                for binding in facts.flow.bindings_for(node, context.scope, context.branches):
                    assert binding.key == dotted_name(node), (path.name, dotted_name(node), binding.key)
                checked += 1
    assert checked > 1000


# -- single-process code inside a distributed project ---------------------------------------------
def test_checkpoint_conversion_with_dcp_only_is_not_distributed(lint):
    conversion = """
        import torch
        import torch.distributed.checkpoint as dcp

        def main(path):
            state = {"model": build().state_dict()}
            dcp.load(state, checkpoint_id=path)
            model = build().to(torch.device("cuda:0"))
        """
    assert lint(conversion, ["DDP005"]) == []
    helper = """
        import torch
        import torch.distributed as dist

        def log_on_rank(msg):
            if dist.get_rank() == 0:
                print(msg)
            return torch.zeros(1).to("cuda:0")
        """
    assert lint(helper, ["DDP005"]) == [(7, "DDP005")]  # a helper run inside the job: still judged


def test_group_of_one_process_is_not_distributed(lint):
    for call in ('dist.init_process_group("fake", rank=0, world_size=8)', 'dist.init_process_group("gloo", rank=0, world_size=n)'):
        source = f"""
            import torch
            import torch.distributed as dist

            def main(n):
                {call}
                model = build().to("cuda:0")
            """
        assert lint(source, ["DDP005"]) == [], call
    assert lint(
        """
        import torch
        import torch.distributed as dist

        def main(n, rank):
            dist.init_process_group("nccl", rank=rank, world_size=n)
            model = build().to("cuda:0")
        """,
        ["DDP005"],
    ) == [(6, "DDP005")]


def test_single_process_guard_written_with_or(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main(args):
            if {test}:
                device = torch.device("cuda:0")
            else:
                torch.cuda.set_device(args.local_rank)
                device = torch.device("cuda", args.local_rank)
                dist.init_process_group("nccl")
            model = build().to(device)
        """
    assert lint(source.format(test="args.local_rank == -1 or args.no_cuda"), ["DDP005"]) == []
    assert lint(source.format(test="args.local_rank == -1 and args.no_cuda"), ["DDP005"]) == []
    assert lint(source.format(test="args.fast or args.no_cuda"), ["DDP005"]) == [(6, "DDP005")]


def test_test_code_is_not_a_training_script(lint):
    body = """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        {imports}

        def {name}(tmp_path):
            dist.init_process_group("gloo")
            loader = DataLoader(range(8), shuffle=True)
            for batch in loader:
                pass
            state = torch.load(tmp_path / "ckpt.pt")
        """
    assert lint(body.format(imports="import pytest", name="test_same_data_on_every_rank")) == []
    unittest_case = """
        import unittest
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        class LoaderCase(unittest.TestCase):
            def check_it(self):
                dist.init_process_group("gloo")
                for batch in DataLoader(range(8), shuffle=True):
                    pass
        """
    assert lint(unittest_case, ["DDP001"]) == []
    # A training script's own `test_*` function (no test framework imported) is still judged.
    assert lint(body.format(imports="", name="test_model"), ["DDP001", "DDP008"]) == [(8, "DDP001"), (11, "DDP008")]


# -- DDP003: DataParallel that runs a forward ------------------------------------------------------
def test_data_parallel_only_for_loading_a_prefixed_checkpoint(lint):
    loader_only = """
        import torch
        import torch.nn as nn

        def restore(path):
            net = nn.DataParallel(build())
            net.load_state_dict(torch.load(path, map_location="cpu"))
            net = net.module
            return net
        """
    assert lint(loader_only, ["DDP003"]) == []
    forward = """
        import torch.nn as nn

        def run(batches):
            net = nn.DataParallel(build())
            net.load_state_dict(state)
            return [net(x) for x in batches]
        """
    assert lint(forward, ["DDP003"]) == [(4, "DDP003")]
    handed_on = """
        import torch.nn as nn

        def main():
            net = nn.DataParallel(build())
            fit(net, loader)
        """
    assert lint(handed_on, ["DDP003"]) == [(4, "DDP003")]


def _messages(source: str, code: str) -> list[str]:
    """Each finding's message and its why, as `--output-format full` shows them."""
    return [f"{d.message}\n{d.explanation}" for d in lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", select_rules([code]))]


def test_data_parallel_over_one_gpu_or_as_the_fallback_of_a_ddp_path(lint):
    assert lint(
        """
        import torch.nn as nn

        class Metric:
            def __init__(self, gpu_ids=[0]):
                self.net = nn.DataParallel(build(), device_ids=gpu_ids)

        metric = Metric()
        """,
        ["DDP003"],
    ) == []
    fallback = """
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(args, n_gpu):
            if {test}:
                model = DDP(build(), device_ids=[args.local_rank])
            elif n_gpu > 1:
                model = nn.DataParallel(build())
            train(model)
        """
    # The fallback of a DDP path is reported too (issue 20's decision), saying what the DDP path needs.
    assert lint(fallback.format(test="args.local_rank != -1"), ["DDP003"]) == [(8, "DDP003")]
    assert lint(fallback.format(test="args.fancy"), ["DDP003"]) == [(8, "DDP003")]  # next to the DDP arm
    [message] = _messages(fallback.format(test="args.fancy"), "DDP003")
    assert "single-process fallback" in message and "`args.fancy` to be true" in message
    assert lint(
        """
        import torch.nn as nn

        def main(args, n_gpu):
            if n_gpu > 1:
                model = nn.DataParallel(build())
            train(model)
        """,
        ["DDP003"],
    ) == [(5, "DDP003")]


# -- DDP008: tensors restored onto another rank's GPU ---------------------------------------------
_LOADER_SCRIPT = """
    import os
    import torch
    import torch.distributed as dist

    def main(args):
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        {body}

    if __name__ == "__main__":
        main(parse())
    """


def test_load_of_a_per_rank_file_is_silent(lint):
    own = 'state = torch.load(os.path.join(args.out, f"queue{rank}.pth"))'
    shared = 'state = torch.load(os.path.join(args.out, "queue.pth"))'
    assert lint(_LOADER_SCRIPT.format(body=own), ["DDP008"]) == []
    assert lint(_LOADER_SCRIPT.format(body=shared), ["DDP008"]) == [(8, "DDP008")]


def test_load_of_a_file_saved_from_cpu_tensors_is_silent(lint):
    saved = """
    import os
    import torch
    import torch.distributed as dist

    def dump(features, folder):
        torch.save(features.{move}, os.path.join(folder, "trainfeat.pth"))

    def main(args):
        dist.init_process_group("nccl")
        dump(extract(), args.out)
        features = torch.load(os.path.join(args.out, "trainfeat.pth"))

    if __name__ == "__main__":
        main(parse())
    """
    assert lint(saved.format(move="cpu()"), ["DDP008"]) == []
    assert lint(saved.format(move="cuda()"), ["DDP008"]) == [(11, "DDP008")]


def test_load_in_a_function_nothing_calls_is_silent(lint):
    source = """
    import torch
    import torch.distributed as dist

    def old_resume(path):
        return torch.load(path)

    def main(args):
        dist.init_process_group("nccl")
        {call}

    if __name__ == "__main__":
        main(parse())
    """
    assert lint(source.format(call="pass"), ["DDP008"]) == []
    assert lint(source.format(call="state = old_resume(args.ckpt)"), ["DDP008"]) == [(5, "DDP008")]


# -- DDP005: devices chosen by rank through a table ----------------------------------------------
def test_device_picked_from_a_table_by_rank(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            local_rank = dist.get_rank() % 2
            devices = {table}
            model = build().to(devices[{key}])
        """
    assert lint(source.format(table='{0: "cuda:0", 1: "cuda:1"}', key="local_rank"), ["DDP005"]) == []
    assert lint(source.format(table='["cuda:0", "cuda:1"]', key="local_rank"), ["DDP005"]) == []
    assert lint(source.format(table='{"main": "cuda:0", "aux": "cuda:1"}', key='"main"'), ["DDP005"]) == [(8, "DDP005")]
    # A computed key picks one of several devices: not GPU 0 on every rank for sure.
    assert lint(source.format(table='["cuda:0", "cuda:1"]', key="mode"), ["DDP005"]) == []
    assert lint(source.format(table='["cuda:0"]', key="0"), ["DDP005"]) == [(8, "DDP005")]


# -- DDP007: collectives some ranks never reach ---------------------------------------------------
def test_collective_reached_under_the_opposite_condition_is_matched(lint):
    source = """
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            if rank == 0:
                prepare()
                dist.barrier()
            {other}
        """
    assert lint(source.format(other="else:\n                dist.barrier()"), ["DDP007"]) == []
    assert lint(source.format(other="if rank != 0:\n                dist.barrier()"), ["DDP007"]) == []
    assert lint(source.format(other="report()"), ["DDP007"]) == [(8, "DDP007")]


def test_an_accelerator_is_known_by_its_value_not_its_name(lint):
    source = """
        from accelerate import Accelerator
        from metrics import Tracker

        acc = {built}
        for batch in loader:
            acc.backward(model(batch))
        if acc.is_main_process:
            scores = acc.gather_for_metrics(predictions)
        """
    assert lint(source.format(built="Accelerator()"), ["DDP007"]) == [(8, "DDP007")]
    # a metrics object's own gather is no collective of the Accelerator
    assert lint(source.format(built="Tracker()"), ["DDP007"]) == []


LIGHTNING_MODULE = """
    import lightning.pytorch as pl

    class {name}({base}):
        def validation_step(self, batch, batch_idx):
            loss = self.loss(batch)
            if self.trainer.is_global_zero:
                {call}
    """


@pytest.mark.parametrize("call", ["self.log('val_loss', loss, sync_dist=True)", "self.all_gather(loss)"])
def test_a_lightning_module_collective_on_one_rank(lint, call):
    source = LIGHTNING_MODULE.format(name="Classifier", base="pl.LightningModule", call=call)
    assert lint(source, ["DDP007"]) == [(7, "DDP007")]


@pytest.mark.parametrize(
    "base, call",
    [
        ("pl.LightningModule", "self.log('val_loss', loss)"),  # no sync: a local log
        ("pl.LightningModule", "self.log('val_loss', loss, sync_dist=False)"),
        ("Recorder", "self.all_gather(loss)"),  # not a LightningModule: its own method
    ],
)
def test_lightning_logging_without_sync_and_other_classes_are_left_alone(lint, base, call):
    assert lint(LIGHTNING_MODULE.format(name="Classifier", base=base, call=call), ["DDP007"]) == []


ENGINE_SAVE = """
    import deepspeed
    import torch.distributed as dist

    def main(args, net):
        engine, optimizer, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
        for epoch in range(args.epochs):
            train_one_epoch(engine)
            {save}
    """


def test_deepspeed_save_checkpoint_on_rank_zero_only(lint):
    # DeepSpeed saves every rank's shard: all processes must call it
    on_one = ENGINE_SAVE.format(save="if dist.get_rank() == 0:\n                engine.save_checkpoint(args.out)")
    assert lint(on_one, ["DDP007"]) == [(9, "DDP007")]
    assert lint(ENGINE_SAVE.format(save="engine.save_checkpoint(args.out)"), ["DDP007"]) == []
    # a save_checkpoint of something else (a plain object of the script) is no collective
    other = on_one.replace("engine.save_checkpoint", "optimizer_log.save_checkpoint")
    assert lint(other, ["DDP007"]) == []


@pytest.mark.parametrize("wrapper, found", [("FSDP", [(9, "DDP007")]), ("DDP", [])])
def test_state_dict_on_rank_zero_is_a_collective_only_for_fsdp(lint, wrapper, found):
    # FSDP's state_dict() all-gathers the sharded parameters; DDP's only reads the local replica
    source = f"""
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        model = {wrapper}(Net())
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "model.pt")
        """
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "save, found",
    [
        ("if dist.get_rank() == 0:\n    dcp.save(state, checkpoint_id=path)", [(7, "DDP007")]),
        ("if dist.get_rank() == 0:\n    dcp.save(state, checkpoint_id=path, no_dist=True)", []),
        ("dcp.save(state, checkpoint_id=path)", []),
    ],
)
def test_distributed_checkpoint_save_is_a_collective_unless_told_otherwise(lint, save, found):
    source = "import torch.distributed as dist\nimport torch.distributed.checkpoint as dcp\n\n"
    source += 'dist.init_process_group("nccl")\nstate = {"model": model.state_dict()}\n' + save + "\n"
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "test, found",
    [
        ("rank == 0", [(5, "DDP007")]),
        ("not dist.is_initialized() or rank == 0", [(5, "DDP007")]),  # the single-process run, or rank 0
        ("args.local_rank == -1 or rank == 0", [(5, "DDP007")]),
        # every rank with --save_all, rank 0 alone without it: some ranks (issue 20)
        ("args.save_all or rank == 0", [(5, "DDP007")]),
        # rank 0 alone for legacy checkpoints, with nothing on the way that needs another kind
        ("not dist.is_initialized() or kind != 'legacy' or rank == 0", [(5, "DDP007")]),
    ],
)
def test_an_or_condition_is_one_ranks_only_when_each_side_is(lint, test, found):
    source = f"""
        import torch.distributed as dist
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        if {test}:
            dist.barrier()
        """
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "test, found",
    [
        ("args.rank % ngpus_per_node == 0", [(7, "DDP007")]),  # the first rank of each node
        ("step % ngpus_per_node == 0", []),  # not a rank: every rank takes the same steps
    ],
)
def test_the_first_rank_of_each_node_after_the_rank_is_rebuilt(lint, test, found):
    # the pytorch/examples launcher shape: the global rank is rebuilt from itself and the GPU index
    source = f"""
        import torch.distributed as dist
        def main_worker(gpu, ngpus_per_node, args):
            args.rank = args.rank * ngpus_per_node + gpu
            dist.init_process_group("nccl", world_size=args.world_size, rank=args.rank)
            for step in range(args.steps):
                if {test}:
                    dist.barrier()
        """
    assert lint(source, ["DDP007"]) == found


def test_collective_several_calls_deep_under_the_callees_own_rank_guard(lint):
    source = """
        import torch.distributed as dist

        def sync_logs(rank):
            # balanced on its own: every rank that calls it reaches one barrier
            if rank == 0:
                write_logs()
                dist.barrier()
            else:
                dist.barrier()

        def evaluate(model, rank):
            score = model.score()
            sync_logs(rank)
            return score

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            {call}
        """
    assert lint(source.format(call="if rank == 0:\n                evaluate(model, rank)"), ["DDP007"]) == [(20, "DDP007")]
    assert lint(source.format(call="evaluate(model, rank)"), ["DDP007"]) == []


def test_collective_after_the_early_return_of_the_other_ranks_through_a_call(lint):
    source = """
        import torch.distributed as dist

        def finish():
            dist.barrier()

        def save(model, rank):
            if rank != 0:
                return
            write(model)
            {tail}
        """
    assert lint(source.format(tail="finish()"), ["DDP007"]) == [(10, "DDP007")]
    assert lint(source.format(tail="log()"), ["DDP007"]) == []


def test_callee_collective_under_a_condition_the_caller_decided_otherwise(lint):
    source = """
        import torch.distributed as dist

        class Tracker:
            def _sync(self, value):
                if self.cfg.pipelined:
                    dist.all_reduce(value)
                return value

            def update(self, value):
                if self.cfg.pipelined:
                    self._sync(value)
                else:
                    if dist.get_rank() == 0:
                        self._sync(value)
                    {tail}
        """
    assert lint(source.format(tail="dist.barrier()"), ["DDP007"]) == []
    flagged = source.replace("if self.cfg.pipelined:\n                    dist.all_reduce", "if self.cfg.verbose:\n                    dist.all_reduce")
    # Under a condition the call site does not decide: rank 0 may reach it alone.
    assert lint(flagged.format(tail="dist.barrier()"), ["DDP007"]) == [(14, "DDP007")]


def test_lightning_save_checkpoint_on_global_zero_only(lint):
    source = """
        import lightning.pytorch as pl

        class Saver(pl.Callback):
            def on_train_epoch_end(self, trainer, module):
                if trainer.is_global_zero:
                    trainer.save_checkpoint("last.ckpt")
                {tail}
        """
    assert lint(source.format(tail="pass"), ["DDP007"]) == [(6, "DDP007")]
    assert lint(source.replace("if trainer.is_global_zero:\n                    ", "").format(tail="pass"), ["DDP007"]) == []


def test_collective_reached_is_a_record_not_text():
    _, facts = _facts(
        """
        import torch.distributed as dist

        def evaluate(model):
            dist.all_reduce(model.metric, group=pair)

        evaluate(net)
        """
    )
    site = next(s for s in facts.calls if s.name == "evaluate")
    reach = facts.ranks.collective_reached(site)
    assert (reach.name, reach.function, reach.subgroup) == ("all_reduce", "evaluate", True)
    assert str(reach) == "all_reduce in evaluate()"


def test_literal_flags_passed_to_a_helper_decide_its_guards(lint):
    source = """
        import torch

        def load_features(args, evaluate=False):
            if args.local_rank not in [-1, 0] and not evaluate:
                torch.distributed.barrier()
            feats = torch.load("cache_features", map_location="cpu")
            if args.local_rank == 0 and not evaluate:
                torch.distributed.barrier()
            return feats

        torch.distributed.init_process_group("nccl")
        if args.local_rank in [-1, 0]:
            feats = load_features(args{flag})
        """
    assert lint(source.format(flag=", evaluate=True"), ["DDP007"]) == []
    assert lint(source.format(flag=""), ["DDP007"]) == [(13, "DDP007")]


# -- DDP010: a final evaluation ---------------------------------------------------------------------
def test_final_evaluation_at_the_end_of_the_run_is_silent(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            {loop}
            if dist.get_rank() == 0:
                model.eval()
                with torch.no_grad():
                    for x, y in val_loader:
                        score(model(x), y)
            dist.barrier()
            {tail}
        """
    once = "for epoch in range(3):\n                train_one_epoch(model, loader, optimizer)"
    assert lint(source.format(loop=once, tail="dist.destroy_process_group()"), ["DDP010"]) == []
    again = "for epoch in range(3):\n                train_one_epoch(model, loader, optimizer)"
    more_training = "for epoch in range(3):\n                for x, y in loader:\n                    model(x).sum().backward()\n                    optimizer.step()"
    assert lint(source.format(loop=again, tail=more_training), ["DDP010"]) == [(8, "DDP010")]
    per_epoch = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            for epoch in range(3):
                for x, y in loader:
                    model(x).sum().backward()
                    optimizer.step()
                if dist.get_rank() == 0:
                    model.eval()
                    with torch.no_grad():
                        for x, y in val_loader:
                            score(model(x), y)
                dist.barrier()
        """
    assert lint(per_epoch, ["DDP010"]) == [(10, "DDP010")]


def test_device_set_by_a_spawned_project_function_or_a_framework_helper(lint, tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "launch.py").write_text(
        textwrap.dedent(
            """
            import torch
            import torch.distributed as dist

            def run(local_rank, world_size, func):
                dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
                torch.cuda.set_device(local_rank)
                func()
            """
        )
    )
    (tmp_path / "tools.py").write_text(
        textwrap.dedent(
            """
            import torch
            import launch

            def start(n, func):
                torch.multiprocessing.spawn(launch.run, nprocs=n, args=(n, func))

            def measure(model, x):
                return model(x.cuda())
            """
        )
    )
    found = [d for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP005"]]) if d.code == "DDP005"]
    assert found == []
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torchtune import utils

        dist.init_process_group("nccl")
        device = utils.get_device(device="cuda")
        model = build().to("cuda")
        """,
        ["DDP005"],
    ) == []
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        model = build().to("cuda")
        """,
        ["DDP005"],
    ) == [(5, "DDP005")]


def test_jax_script_with_launcher_boilerplate_is_not_distributed(lint):
    source = """
        import os
        {imports}
        from torch.utils.data import DataLoader

        env_local_rank = int(os.environ.get("LOCAL_RANK", -1))
        loader = DataLoader(train_set, shuffle=True)
        for epoch in range(3):
            for batch in loader:
                step(batch)
        """
    assert lint(source.format(imports="import jax"), ["DDP001"]) == []
    assert lint(source.format(imports="import torch"), ["DDP001"]) == [(6, "DDP001")]


def test_fsdp_flag_guards_the_distributed_path(lint):
    source = """
        import torch
        import torch.distributed as dist

        def train(cfg, local_rank, batch):
            if cfg.{flag}:
                batch = batch.to(local_rank)
            else:
                batch = batch.to("cuda:0")
            dist.all_reduce(loss(batch))
        """
    assert lint(source.format(flag="enable_fsdp"), ["DDP005"]) == []
    assert lint(source.format(flag="use_amp"), ["DDP005"]) == [(8, "DDP005")]


def test_ignite_parallel_makes_a_script_distributed():
    _, facts = _facts(
        """
        import ignite.distributed as idist

        with idist.Parallel(backend="nccl") as parallel:
            parallel.run(training, config)
        """
    )
    assert facts.distributed


def test_an_amount_per_rank_is_not_a_rank(lint):
    source = """
        import torch.distributed as dist

        def setup(cfg):
            tokens = cfg.{name}
            if tokens % 8 != 0:
                raise ValueError("tokens must divide by 8")
            dist.barrier()
        """
    assert lint(source.format(name="tokens_per_dp_rank"), ["DDP007"]) == []
    assert lint(source.format(name="local_rank"), ["DDP007"]) == [(7, "DDP007")]


def test_single_process_condition_through_a_module_level_rank(lint):
    source = """
        import os
        import torch

        RANK = int(os.getenv("RANK", "-1"))

        def train(model, cuda):
            if cuda and RANK == -1 and torch.cuda.device_count() > 1:
                model = torch.nn.DataParallel(model)
            return model(batch)
        """
    # `RANK == -1`: the single-process path of a script launched with torchrun otherwise
    [fallback] = _messages(source, "DDP003")
    assert "single-process fallback" in fallback and "`RANK == -1` to be false" in fallback
    [plain] = _messages(source.replace("RANK == -1", "RANK >= 0"), "DDP003")
    assert "fallback" not in plain
    assert lint(source.replace("RANK == -1", "RANK >= 0"), ["DDP003"]) == [(8, "DDP003")]


def test_data_parallel_device_ids_from_a_one_gpu_default(lint):
    source = """
        import torch.nn as nn

        class Metric:
            def initialize(self, net, gpu_ids={default}):
                self.net = nn.DataParallel(net, device_ids=gpu_ids)
        """
    assert lint(source.format(default="[0]"), ["DDP003"]) == []
    assert lint(source.format(default="[0, 1]"), ["DDP003"]) == [(5, "DDP003")]


def test_rank_getter_of_a_parallel_group_is_a_rank(lint):
    source = """
        import torch
        import torch.distributed as dist

        def load_buffers(mpu, filename):
            dist.init_process_group("nccl")
            dp_rank = mpu.{getter}()
            if dp_rank == 0:
                state = torch.load(filename)
        """
    assert lint(source.format(getter="get_data_parallel_rank"), ["DDP008"]) == []
    assert lint(source.format(getter="get_data_parallel_size"), ["DDP008"]) == [(8, "DDP008")]


def test_script_whose_distributed_calls_run_only_if_initialised_is_single_process(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            rank = dist.get_rank() if {guard} else 0
            model = build().to("cuda:0")
            print(rank)
        {main}
        """
    main = 'if __name__ == "__main__":\n            main()'
    assert lint(source.format(guard="dist.is_initialized()", main=main), ["DDP005"]) == []
    assert lint(source.format(guard="verbose", main=main), ["DDP005"]) == [(6, "DDP005")]
    # A helper module (no __main__) runs inside whatever job imports it: still judged.
    assert lint(source.format(guard="dist.is_initialized()", main=""), ["DDP005"]) == [(6, "DDP005")]


def test_pytest_class_without_importing_pytest_is_test_code(lint):
    source = """
        import torch
        import torch.distributed as dist

        class {name}:
            def test_saved_grads(self, tmp_path):
                dist.init_process_group("gloo")
                state = torch.load(tmp_path / "grads.pth")
        """
    assert lint(source.format(name="TestCheckpoint"), ["DDP008"]) == []
    assert lint(source.format(name="Checkpointer"), ["DDP008"]) == [(7, "DDP008")]


def test_device_handed_to_a_cuda_query_is_not_a_placement(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        arch = torch.cuda.get_device_properties(torch.device("cuda:0")).major
        {extra}
        """
    assert lint(source.format(extra=""), ["DDP005"]) == []
    assert lint(source.format(extra='model = build().to(torch.device("cuda:0"))'), ["DDP005"]) == [(6, "DDP005")]


def test_sampling_a_few_written_prompts_is_not_an_evaluation_pass(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        master = dist.get_rank() == 0
        for step, (x, y) in enumerate(loader):
            model(x).sum().backward()
            optimizer.step()
            if master and step % 100 == 0:
                model.eval()
                with torch.no_grad():
                    for item in {items}:
                        print(generate(model, item))
                model.train()
        """
    assert lint(source.format(items='["The capital of France is", "My favourite colour is"]'), ["DDP010"]) == []
    assert lint(source.format(items="val_loader"), ["DDP010"]) == [(9, "DDP010")]


def test_rank_in_a_process_group_object(lint):
    source = """
        import torch
        import torch.distributed as dist

        class Optimizer:
            def load_state(self, filename):
                dist.barrier()
                if self.{owner}.rank() == 0:
                    return torch.load(filename)
        """
    assert lint(source.format(owner="data_parallel_group"), ["DDP008"]) == []
    assert lint(source.format(owner="scheduler"), ["DDP008"]) == [(8, "DDP008")]


def test_data_parallel_in_test_code_and_in_a_loop_that_rebuilds_the_model(lint):
    test_file = """
        import unittest
        import torch.nn as nn

        class CheckpointTest(unittest.TestCase):
            def test_loads_into_wrapped_model(self):
                self.trainer.model = nn.DataParallel(self.trainer.model)
                self.checkpoint.load_state_dict()
        """
    assert lint(test_file, ["DDP003"]) == []
    looped = """
        import torch.nn as nn

        def check_loading(state):
            for wrap in [False, True]:
                model = build()
                if wrap:
                    model = nn.DataParallel(model)
                model.load_state_dict(state)
                {tail}
        """
    assert lint(looped.format(tail="pass"), ["DDP003"]) == []
    assert lint(looped.format(tail="model(batch)"), ["DDP003"]) == [(7, "DDP003")]


def test_classy_vision_sets_the_device(lint):
    source = """
        import torch
        import torch.distributed as dist
        {imports}

        def run(local_rank):
            dist.init_process_group("nccl")
            {call}
            dist.all_reduce(torch.zeros(1).cuda())
        """
    helper = "from classy_vision.generic.distributed_util import set_cuda_device_index"
    assert lint(source.format(imports=helper, call="set_cuda_device_index(local_rank)"), ["DDP005"]) == []
    assert lint(source.format(imports="", call="pass"), ["DDP005"]) == [(8, "DDP005")]
