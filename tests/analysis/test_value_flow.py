"""How the shared analysis follows values (issue 11, flow side): what a value is where it is used,
in program order (tuples, dicts, returns, reassignments, loops, early returns, closures), and
which scripts are distributed. Each shape is tested on what must be flagged and on what must be
left alone. Snippets are our own."""

from __future__ import annotations

import textwrap

import libcst as cst

from case_files import CASE_FILES
from ddplint.analysis.facts import build_facts
from ddplint.analysis.model import ModuleModel


def _facts(source: str):
    source = textwrap.dedent(source).lstrip("\n")
    module = cst.parse_module(source)
    return module, build_facts(module, source)


def values_at_use(source: str) -> list[str]:
    """The source expressions of the argument of the (first) `use(...)` call, as code."""
    module, facts = _facts(source)
    site = next(s for s in facts.calls if s.name == "use")
    found = ModuleModel(facts).flow.sources(site.node.args[0].value, site.context.scope, site.context.branches)
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


def test_value_walk_leaves_out_attribute_and_keyword_names():
    from ddplint.analysis.syntax import value_walk

    expression = cst.parse_expression("f(args.seed, seed=cfg.rank)")
    names = {node.value for node in value_walk(expression) if isinstance(node, cst.Name)}
    assert names == {"f", "args", "cfg"}


def test_no_attribute_of_the_corpus_resolves_to_a_bare_name():
    """Over every file of tests/corpus: the bindings an attribute chain is resolved to are
    always bindings of that very chain, never of its last identifier."""

    corpus = CASE_FILES
    assert corpus
    checked = 0
    for path in corpus:
        source = path.read_text(encoding="utf-8")
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        facts = build_facts(module, source)
        model = ModuleModel(facts)
        from ddplint.analysis.syntax import dotted_name

        for site in facts.calls:
            for node in _walk(site.node):
                if not isinstance(node, cst.Attribute) or dotted_name(node) is None:
                    continue
                context = facts.context_of(node)
                if context is None:
                    continue
                for binding in model.flow.bindings_for(node, context.scope, context.branches):
                    assert binding.key == dotted_name(node), (path.name, dotted_name(node), binding.key)
                checked += 1
    assert checked > 1000


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
    reach = ModuleModel(facts).ranks.collective_reached(site)
    assert (reach.name, reach.function, reach.subgroup) == ("all_reduce", "evaluate", True)
    assert str(reach) == "all_reduce in evaluate()"


def test_ignite_parallel_makes_a_script_distributed():
    _, facts = _facts(
        """
        import ignite.distributed as idist

        with idist.Parallel(backend="nccl") as parallel:
            parallel.run(training, config)
        """
    )
    assert ModuleModel(facts).distributed


# -- a parameter or a value replaced on every path ---------------------------------------------
def test_parameter_replaced_in_both_arms_of_an_if_else_no_longer_reaches():
    assert values_at_use(
        """
        def validate(model, final):
            if final:
                model = load_best()
            else:
                model = unwrap(model)
            use(model)

        validate(DDP(net), False)
        """
    ) == ["load_best()", "unwrap(model)"]


def test_parameter_replaced_in_one_arm_only_still_reaches():
    assert values_at_use(
        """
        def validate(model, final):
            if final:
                model = load_best()
            use(model)

        validate(DDP(net), False)
        """
    ) == ["DDP(net)", "load_best()"]


def test_parameter_replaced_before_the_use_no_longer_reaches():
    assert values_at_use(
        """
        def validate(model):
            model = unwrap(model)
            use(model)

        validate(DDP(net))
        """
    ) == ["unwrap(model)"]


def test_earlier_assignment_replaced_in_both_arms_no_longer_reaches():
    assert values_at_use(
        """
        net = build()
        model = DDP(net)
        if fast:
            model = compile(net)
        else:
            model = net
        use(model)
        """
    ) == ["build()", "compile(net)"]
