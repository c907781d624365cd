"""DDP002 missing-set-epoch."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.epochs import YieldSite
from ddplint.analysis.facts import LoopSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import argument, int_value, keyword_arg, walk
from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule, flat_code, held_as


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed:
        return
    data = model.data
    reported: set[int] = set()
    for sampler in data.samplers:
        if not sampler.shuffles:
            continue
        for loader in sampler.loaders:
            if data.is_evaluation_loader(loader):
                continue  # evaluation visits every sample once whatever the order
            if data.is_iterable_dataset(loader):
                continue  # DataLoader refuses a sampler for a stream (ValueError): that arm never trains
            iterations = data.iterations(loader)
            if not iterations and data.returned_never_seeded(sampler, loader):
                if id(loader.site.node) not in reported:
                    reported.add(id(loader.site.node))
                    yield RULE.finding(loader.site.node, RETURNED_SHORT, why=RETURNED_WHY)
                continue
            for iteration in iterations:
                if data.replays_first_pass(iteration):
                    if id(iteration.where.node) not in reported:
                        reported.add(id(iteration.where.node))
                        yield RULE.finding(iteration.where.node, CYCLE_MESSAGE, why=CYCLE_WHY)
                    continue
                if iteration.restarted_in is not None:
                    if id(iteration.where.node) not in reported and not data.set_epoch_reaches(sampler):
                        reported.add(id(iteration.where.node))
                        named = held_as(facts, loader.site.node, "this loader")
                        if iteration.epochs_in_callee:
                            callee = iteration.where.name  # type: ignore[union-attr]  # the call that runs the epochs
                            short = f"`{callee}(...)` runs its epochs over {named} and never sets the sampler's epoch: same order each epoch"
                            why = _callee_epochs_message(facts, iteration, sampler)
                        else:
                            short = f"each new pass over {named} replays the same order: no set_epoch()"
                            why = _restarted_message(facts, iteration, sampler)
                        yield RULE.finding(iteration.where.node, short, why=why)
                    continue
                loop = iteration.epoch_loop
                if loop is None or id(loop.node) in reported or _reseeded_per_epoch(sampler, loop):
                    continue
                if data.runs_once(loop):
                    continue  # `for epoch in range(1)`: one epoch, no order to repeat
                if data.set_epoch_reaches(sampler, loop):
                    continue
                reported.add(id(loop.node))
                reach = _sampler_reach(facts, sampler, loader, loop)
                hint = reach or "sampler"  # the hint's receiver: the name the code has, else the generic one
                whole_passes = _runs_whole_passes(iteration)  # not a step loop
                epoch = _epoch_variable(loop) or (_pass_counter(loop) if whole_passes else None) or "epoch"
                fixed = data.fixed_set_epoch(sampler, loop)
                if fixed is not None:
                    short = f"{flat_code(facts, fixed.node, 'set_epoch()')} gives the sampler the same epoch every time: same order each epoch"
                    yield RULE.finding(loop.node, short, _pass_epoch_fix(fixed, loop), why=_fixed_epoch_message(facts, fixed, hint))
                    continue
                ineffective = data.ineffective_epoch_setting(sampler)
                if ineffective is not None:
                    message = (
                        f"this loop iterates a loader whose shuffling DistributedSampler never gets "
                        f"the epoch: `{_code(facts, ineffective.node)}` sets it on the DataLoader, "
                        f"which has no epoch of its own and never passes it on, so every epoch "
                        f"replays the same order on every rank; call {hint}.set_epoch(epoch) "
                        f"at the start of each epoch"
                    )
                    short = f"{flat_code(facts, ineffective.node, 'the set_epoch() call')} sets the epoch on the DataLoader, not its sampler"
                elif _rebuilt_in(facts, sampler, loop):
                    message = (
                        f"this loop builds a new shuffling DistributedSampler on every pass "
                        f"(`{_code(facts, sampler.site.node)}`) and never calls set_epoch() on it: "
                        f"a new sampler starts at epoch 0, so every epoch replays the same order on "
                        f"every rank; call set_epoch(epoch) on the new sampler before the loader is "
                        f"iterated (or build it once, before the loop)"
                    )
                    short = "this loop builds a new DistributedSampler each epoch and never calls set_epoch() on it"
                elif whole_passes:
                    message = (
                        "this loop iterates a loader whose shuffling DistributedSampler never gets "
                        "set_epoch(): the sampler seeds its shuffle with the epoch, so every epoch "
                        f"replays the same order on every rank; call {hint}.set_epoch({epoch}) at the "
                        f"start of each epoch"
                    )
                    short = f"{_shown(reach)} never gets set_epoch({epoch}): every epoch replays the same order"
                else:  # `it = iter(loader)` again when the last pass is exhausted
                    message = (
                        "this loop starts new passes over a loader (a fresh iterator) whose shuffling "
                        "DistributedSampler never gets set_epoch(): the sampler seeds its shuffle with "
                        "the epoch, so every pass replays the same order on every rank; count the "
                        f"passes and call {hint}.set_epoch(pass_number) before each new iterator"
                    )
                    short = f"new iterators over {held_as(facts, loader.site.node, 'this loader')} replay the same order: no set_epoch()"
                yield RULE.finding(loop.node, short, _set_epoch_fix(facts, sampler, loop, whole_passes), why=message)


def _runs_whole_passes(iteration) -> bool:
    """Each turn of the epoch loop makes a whole pass over the loader: a loop over it, a
    generator's, or a training function called with it (`do_train(model, loader, epoch)`); not
    `iter(loader)` made again when a step loop exhausts the last iterator."""
    where = iteration.where
    return isinstance(where, (LoopSite, YieldSite)) or where.name not in ("iter", "cycle")


def _code(facts: ModuleFacts, node: cst.CSTNode) -> str:
    return " ".join(facts.module.code_for_node(node).split())


def _sampler_reach(facts: ModuleFacts, sampler, loader, loop) -> Optional[str]:
    """The sampler as the epoch loop's code reaches it: its variable, else `<loader>.sampler`
    (`self.train_data.sampler`); None when no name certainly reaches it."""
    reference = _reference_to(sampler, loop.context.scope)
    if reference is not None:
        return reference
    holder = _sole_name_for(loader.site.node, loop.context.scope)
    return f"{holder}.sampler" if holder is not None else None


def _shown(reach: Optional[str]) -> str:
    """The sampler named in a short message: its reference when short, else a description."""
    if reach is not None and len(reach) <= 32:
        return f"`{reach}`"
    return "the loader's DistributedSampler"


def _fixed_epoch_message(facts: ModuleFacts, fixed, reach: str) -> str:
    written = _code(facts, fixed.node)
    if isinstance(fixed.epoch, cst.Name):
        why = f"`{written}`, and nothing in the loop changes `{fixed.epoch.value}`"
    else:
        why = f"`{written}`"
    return (
        f"this loop iterates a loader whose shuffling DistributedSampler gets the same epoch every "
        f"time ({why}): the sampler seeds its shuffle with the epoch, so every epoch replays the "
        f"same order on every rank; pass the epoch number ({reach}.set_epoch(epoch))"
    )


def _restarted_message(facts: ModuleFacts, iteration, sampler) -> str:
    reach = _reference_to(sampler, iteration.where.context.scope) or "sampler"
    return (
        f"`{_code(facts, iteration.where.node)}` starts a new pass over this loader each time the "
        f"last one ends (the loop at {iteration.restarted_in}), and the loader's shuffling "
        f"DistributedSampler never gets set_epoch(): every pass replays the same order on every "
        f"rank; count the passes in that loop and call {reach}.set_epoch(pass_number) before each"
    )


def _callee_epochs_message(facts: ModuleFacts, iteration, sampler) -> str:
    reach = _reference_to(sampler, iteration.where.context.scope) or "sampler"
    return (
        f"`{_code(facts, iteration.where.node)}` hands this loader to a function of another module "
        f"that runs the epochs over it itself (the loop at {iteration.restarted_in}), and nothing "
        f"calls set_epoch() on the loader's shuffling DistributedSampler, here or there: every "
        f"epoch replays the same order on every rank; call set_epoch(epoch) on the sampler at the "
        f"start of each turn of that loop (`loader.sampler.set_epoch(epoch)`), or hand {reach} "
        f"over and set it there"
    )


def _rebuilt_in(facts: ModuleFacts, sampler, loop) -> bool:
    """The sampler (or the call of another module's function that builds it) runs inside the
    loop, or inside a function of the file called there: a new sampler every pass."""
    if any(enclosing is loop for enclosing in sampler.site.context.loops):
        return True
    builder = facts.function_of(sampler.site.context.scope)
    return builder is not None and any(
        any(enclosing is loop for enclosing in site.context.loops) for site, _ in facts.call_sites_of(builder)
    )


RETURNED_SHORT = "this loader's shuffling DistributedSampler never gets set_epoch() anywhere in the project: same order each epoch"
RETURNED_WHY = (
    "this method hands its callers a loader over a shuffling DistributedSampler, and no module "
    "of the project ever calls set_epoch() (nor hands the loader to a framework whose loop "
    "does): the sampler seeds its shuffle with the epoch, so every pass over this loader, and "
    "every loader it builds again, replays the epoch-0 order on every rank; take the epoch as "
    "a parameter and call sampler.set_epoch(epoch) before returning the loader, or call "
    "loader.sampler.set_epoch(epoch) where the epochs are run"
)
CYCLE_MESSAGE = "itertools.cycle() replays the first pass's batches: every epoch repeats the same order"
CYCLE_WHY = (
    "itertools.cycle() keeps the batches of the first pass over a loader with a shuffling "
    "DistributedSampler and replays them: every later pass repeats the first epoch's order (and "
    "its random augmentations) on every rank, and set_epoch() cannot change batches already "
    "saved; re-iterate the loader instead, calling sampler.set_epoch(epoch) before each pass "
    "(`while True: sampler.set_epoch(epoch); yield from loader; epoch += 1`)"
)


def _epoch_variable(loop) -> Optional[str]:
    """`epoch` of `for epoch in ...`; None for a `while` loop or a tuple target (no epoch number)."""
    node = loop.node
    return node.target.value if isinstance(node, cst.For) and isinstance(node.target, cst.Name) else None


def _pass_epoch_fix(fixed, loop) -> Optional[FindingFix]:
    """`set_epoch(0)` -> `set_epoch(<epoch>)`, where the call sits in a `for <epoch> in ...` loop.
    Unsafe for a variable (`set_epoch(step)`): its author may have meant to advance it instead."""
    name = _epoch_variable(loop)
    epoch = fixed.epoch
    if name is None or epoch is None or not any(enclosing is loop for enclosing in fixed.context.loops):
        return None
    edits = (NodeEdit(name, epoch),)
    if isinstance(epoch, cst.Name):
        return FindingFix(f"Pass `{name}` to set_epoch", edits, "unsafe")
    return FindingFix(f"Pass `{name}` to set_epoch", edits)


def _pass_counter(loop) -> Optional[str]:
    """`epoch` of a `while` loop whose body, at its top level, adds a number to `epoch` on every
    pass (`epoch += 1`): a value that differs on every pass. Only where each pass of the loop
    iterates the whole loader: in a step loop that restarts an exhausted iterator the counter
    counts steps, not epochs (the caller knows which)."""
    node = loop.node
    if not isinstance(node, cst.While) or not isinstance(node.body, cst.IndentedBlock):
        return None
    counters = set()
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.AugAssign)
                and isinstance(small.target, cst.Name)
                and isinstance(small.operator, cst.AddAssign)
                and int_value(small.value) not in (None, 0)
            ):
                counters.add(small.target.value)
    return next(iter(counters)) if len(counters) == 1 else None


def _set_epoch_fix(facts: ModuleFacts, sampler, loop, whole_passes: bool = True) -> Optional[FindingFix]:
    """`<sampler>.set_epoch(<epoch>)` as the first statement of the epoch loop, offered only where
    both names are certain: a `for <name> in ...` loop or a `while` loop counting its passes, and
    a name (`sampler`, `loader.sampler`, `self.train_data.sampler`) that refers to this sampler
    and nothing else wherever the loop runs. `whole_passes`: each pass of the loop iterates the
    whole loader (not a step loop that restarts an exhausted iterator)."""
    node, epoch = loop.node, _epoch_variable(loop) or (_pass_counter(loop) if whole_passes else None)
    if epoch is None or not isinstance(node.body, cst.IndentedBlock) or not node.body.body:
        return None
    if _rebuilt_in(facts, sampler, loop):
        return None  # rebuilt every epoch: the first statement would still see last epoch's
    receiver = _reference_to(sampler, loop.context.scope)
    if receiver is None:
        return None
    call = f"{receiver}.set_epoch({epoch})"
    return FindingFix(f"Call `{call}` at the start of each epoch", (NodeEdit(call, node.body.body[0], "line_before"),))


def _reference_to(sampler, scope) -> Optional[str]:
    """An expression that names this sampler from `scope`: a variable bound to it and to nothing
    else, or `<loader>.sampler` for a loader (bound the same way) it is given to as `sampler=`."""
    node = sampler.site.node
    name = _sole_name_for(node, scope) if sampler.inside is None else None
    if name is not None:
        return name
    for loader in sampler.loaders:
        given = argument(loader.site.node, "sampler", 3)
        refers = given is node or (isinstance(given, cst.Name) and _sole_name_for(node, scope, given.value))
        refers = refers or sampler.inside is not None  # the loader holds it (a factory, `**kwargs`)
        loader_name = _sole_name_for(loader.site.node, scope)
        if refers and loader_name is not None:
            return f"{loader_name}.sampler"
    return None


def _sole_name_for(value: cst.CSTNode, scope, name: Optional[str] = None) -> Optional[str]:
    candidates = [name] if name else [_name_of_assignment(value, scope)]
    for candidate in candidates:
        if not candidate:
            continue
        bindings = scope.lookup(candidate)
        if bindings and all(binding.kind == "assign" and binding.value is value for binding in bindings):
            return candidate
    return None


def _name_of_assignment(value: cst.CSTNode, scope) -> Optional[str]:
    """The plain variable `value` is assigned to, found through the bindings visible from scope."""
    current = scope
    while current is not None:
        for key, bindings in current.bindings.items():
            if _plain_reference(key) and any(binding.value is value for binding in bindings):
                return key
        current = current.parent
    return None


def _plain_reference(key: str) -> bool:
    """`loader` or `self.loader`: a name a method's code can write to reach the value."""
    return key.isidentifier() or (key.startswith("self.") and key[5:].isidentifier())


def _reseeded_per_epoch(sampler, loop) -> bool:
    """A sampler rebuilt inside the epoch loop with a seed that changes
    (`DistributedSampler(ds, seed=base + epoch)`) or over a dataset rebuilt there too
    (`ds = base.shuffle(seed=epoch)`): a new order every epoch without set_epoch."""
    if not any(enclosing is loop for enclosing in sampler.site.context.loops):
        return False
    seed = keyword_arg(sampler.site.node, "seed")
    if seed is not None and int_value(seed.value) is None:
        return True
    dataset = argument(sampler.site.node, "dataset", 0)
    if not isinstance(dataset, cst.Name):
        return False
    in_loop = {id(node) for node in walk(loop.node.body)}
    return any(id(binding.node) in in_loop for binding in sampler.site.context.scope.lookup(dataset.value))


RULE = Rule(
    code="DDP002",
    name="missing-set-epoch",
    summary="A shuffling DistributedSampler is reused across epochs without set_epoch(epoch).",
    what="""
        Flags the epoch loop (`for` or `while`) around the iteration of a DataLoader whose
        `DistributedSampler` (or a subclass) shuffles (the default) when `set_epoch` is never called
        on that sampler: not by name, not as `loader.sampler.set_epoch(...)` or
        `loader.batch_sampler.sampler.set_epoch(...)` or `getattr(sampler, "set_epoch")(...)`, not
        inside a function of the file that receives the loader or the sampler. A call made once
        beside the epoch loop (not in any loop) does not count, nor `loader.set_epoch(...)` on a
        plain torch DataLoader, which has no such method (only Accelerate's prepared loaders do),
        nor a call given the same value on every pass: a written number (`sampler.set_epoch(0)`)
        or a variable of the function that nothing inside the loop assigns (`global_step = 0`
        before the loop, `sampler.set_epoch(global_step)` in it, and no `global_step += 1` in
        it); the message names it and the fix passes the loop's epoch (unsafe for a variable: its
        author may have meant to advance it). Setting the attribute by hand counts as the call
        when it is set on the sampler (`sampler.epoch = epoch`, `loader.sampler.epoch = epoch`:
        all that set_epoch does), never when it is set on the DataLoader (`loader.epoch =
        epoch`, which the loader never reads; the message says so). A sampler built anew inside
        the epoch loop without a set_epoch call on it starts at epoch 0 every time, and is
        reported with its own message.

        The loop is found also when the loader is iterated in a helper (`train_one_epoch(model,
        loader)`) called from it, reached through tuples, dicts and arguments, and when the
        epochs are not a `for epoch` loop: a step loop that makes a new iterator when the last
        one is exhausted (`except StopIteration: it = iter(loader)`), or an endless generator
        (`while True: yield from loader`, `while True: for batch in loader: yield batch`). Such a
        generator in another module of the project (`batches = endless(train_loader)`) is
        reported at the call that hands it the loader, naming the generator's loop. So is a
        function of another module, or a method of a class of another module called on an
        instance the file builds (`trainer = Trainer(...)`, then `trainer.fit(loader)`), whose
        own loop over the loader steps the model inside a loop that repeats it (`for epoch in
        range(self.epochs): for x, y in loader: ...`) with no set_epoch call in that loop: the
        finding names that loop. The same holds for a loader handed to the constructor of such a
        class (`trainer = Trainer(model, loader)`, its `__init__` keeping it as
        `self.train_data = loader`) when a method looping over that attribute runs the epochs,
        itself or through another method of the class (`trainer.fit()`, its epoch loop calling
        `self.train_one_epoch()`), or makes one pass inside the script's epoch loop; that class
        module calling set_epoch anywhere counts as setting it. The sampler
        may come from a helper of another module too: a loader factory (also a method of a
        class of another module called on an object the script builds, `data =
        DataModule(cfg)` then `data.train_loader()`), a function returning
        the sampler (`sampler=make_sampler(ds)`), or one returning DataLoader keyword arguments
        with a "sampler" entry (`DataLoader(ds, **get_dataloader_kwargs(ds))`). Those helpers
        are found through a package's re-exports (`from .build import make_dataloader` in its
        `__init__.py`) and in folders a module beside the script puts on `sys.path` (`import
        _init_paths`, then `from dataset import make_dataloader` out of `lib/`). A loader from
        such a factory that each epoch goes to a training function of another module
        (`do_train(cfg, model, train_loader, ...)`) still needs its epoch set in the loop, unless
        that function sets it. PyG's graph `DataLoader` is a DataLoader like torch's, and a
        DistributedSampler subclass another module defines is a DistributedSampler.

        A method that builds a DataLoader over a shuffling DistributedSampler of its module and
        returns it (`def iterator(self): return DataLoader(self, sampler=DistributedSampler(self))`),
        with nothing in the file iterating it, is reported at that DataLoader when no module of
        the project ever sets an epoch: none writes `set_epoch` or assigns an `.epoch`, and none
        imports a framework whose loop sets it (Lightning, Accelerate, Transformers, Ignite,
        MMEngine / MMCV, Composer). Its callers reach it through objects whose class is known
        only at run time, so where the epochs run cannot be followed, but with no epoch set
        anywhere every pass has the epoch-0 order, and so has every loader it builds again for
        the next phase.

        Also flags `itertools.cycle(loader)` over such a loader, whether or not `set_epoch` is
        called: `cycle` saves the batches of its first pass and replays them, so every later
        pass repeats the first one and `set_epoch` cannot change it.

        The message, its why and the automatic fix name the sampler as the loop's code reaches it:
        the sampler's variable (`train_sampler.set_epoch(epoch)`), else the loader's `.sampler`
        (`loader.sampler`, or `self.train_data.sampler` in a method when the loader is an
        attribute set once). The fix inserts that call as the first statement of a `for epoch in
        ...` loop, or of a `while` loop that counts its passes (`epoch += 1` directly in its body);
        it is offered only when that name refers to this sampler and nothing else.
    """,
    why="""
        DistributedSampler derives its permutation from `seed + epoch`. Its epoch only changes when
        you call `set_epoch`, so without it every epoch visits the data in exactly the same order:
        the shuffle you asked for happens once, and models converge worse (and differently from the
        single-GPU run you are scaling up).
    """,
    fix="""
        Call `sampler.set_epoch(epoch)` as the first statement of the epoch loop (or
        `loader.sampler.set_epoch(epoch)` when only the loader is at hand), before the loader is
        iterated.
    """,
    silent="""
        - Samplers built with `shuffle=False` (same order every epoch is what was asked for).
        - Evaluation loaders (`val_loader`, a loader only iterated in `evaluate(...)`, or only in
          functions of the file that run the model frozen with `model.eval()` / `no_grad()` and
          never step it, also through a helper that wraps it in `(b for b in loader)`): the
          order in which a rank evaluates its samples does not matter.
        - Loaders iterated once, outside any loop, or one pass through `iter(loader)` in a step
          loop that never makes a new iterator.
        - `cycle()` of an evaluation loader.
        - A sampler rebuilt inside the epoch loop with a seed that changes (`seed=base + epoch`)
          or over a dataset rebuilt in the loop (`ds = base.shuffle(seed=epoch)`).
        - A sampler handed each epoch to a function the file does not define
          (`train(..., sampler=train_sampler)` from another module): setting its epoch is what
          such a function does with it.
        - Any `set_epoch(...)` call whose receiver the analysis cannot trace (a callback, a parameter
          of a function nobody in this file calls, an attribute set elsewhere) counts as reaching
          the sampler: the rule prefers silence to guessing.
        - A `set_epoch` argument that may change between epochs: the loop variable, a variable
          assigned anywhere inside the loop (`global_step += 1` in the inner loop, `passes += 1`
          at the end of the epoch), one declared `global` / `nonlocal` anywhere in the file (a
          function called in the loop may advance it), an attribute (`self.epoch`) or a
          parameter of a helper called per epoch.
        - `sampler.epoch = epoch` and `loader.sampler.epoch = epoch`: what set_epoch does. An
          `epoch` attribute set on anything the analysis cannot tie to the sampler
          (`state.epoch = epoch`) neither counts nor silences.
        - A generator (of this file or another module) that sets an epoch inside the loop that
          restarts its passes; for another module's generator, any set_epoch call on the sampler
          in the calling file. Likewise a function or method of another module that runs the
          epochs and sets a sampler's epoch in that loop (`batches.sampler.set_epoch(epoch)`, or
          a sampler it is handed), one whose repeated loop never steps the model (scoring,
          statistics), or one whose loop runs once (`range(1)`).
        - Scripts that are not distributed.
        - A loader a top-level function returns: it is judged in the modules that iterate it.
          One a method returns, when some module of the project sets an epoch or imports a
          framework that does, when the project is not seen (a file checked alone), or when
          another module builds the method's class, takes the loader from it and runs epochs
          over it (`DataModule(cfg).train_loader()`): that loop gets the one finding, with its fix.
        - A loader from another module's factory whose DistributedSampler takes its `shuffle`
          from a factory parameter (also through a helper of that module) when the caller
          passes False or leaves a False default (`build_loader(ds, shuffle=False)`), or whose
          factory builds it with `shuffle=False`.
        - A loader over an IterableDataset: DataLoader raises ValueError when such a loader is
          given a sampler, so that code path never reaches an epoch.
        - A loop that runs one epoch (`for epoch in range(1)`, `range(0, 1)`, `range(EPOCHS)` with
          `EPOCHS = 1`): there is no second epoch to replay the first one's order.
    """,
    blind_spots="""
        - An epoch count that is 1 only by an option's default (`--epochs` with `default=1`) is
          taken as several: the user may pass more.
        - A sampler put in a `**kwargs` dict is seen when the dict is built in the file
          (`kwargs["sampler"] = DistributedSampler(ds)`, also inside a helper that returns the
          dict) or returned, built, by a top-level function of another project module; a dict
          handed on through further helpers is not.
        - Another module's generator is followed when it is a top-level function that
          re-iterates one of its parameters itself; a generator method of a class, or one that
          re-iterates an attribute, is not.
        - A `cycle` function of another module (`from utils import cycle`) is not looked into;
          only `itertools.cycle` is known to replay its first pass.
        - Samplers and loaders built in another module, and per-epoch helpers of another module
          that call `set_epoch`, are followed within the file's project (the folder holding its
          pyproject.toml / setup.cfg / .git); a file outside any project sees only the files named
          with it. A helper of another module that hands the loader on to a third module which
          sets the epoch is not followed: the epoch loop is reported.
        - `sys.path` additions are understood only as paths built from the adding module's own
          location and literal parts (`os.path.join(os.path.dirname(__file__), "..", "lib")`).
        - An epoch loop in another module is found in a top-level function, or in a plain
          method of a top-level class called on an instance the file builds (`C(...)`, or a
          name or `self.` attribute bound once to `C(...)`); a method reached through a
          factory's return value, a subclass's inherited method, or a loop that reaches the loader
          through calls into further modules is not followed. A loader the constructor stores
          is followed only when `__init__` assigns the parameter itself to a `self.` attribute
          (not a copy, a wrapper or a dict entry).
        - A method that returns a loader over a shuffling DistributedSampler, called through an
          object whose class is known only at run time (`self.datasets[split].iterator()`), is
          judged by the whole project's text: it is reported only when no module writes
          `set_epoch` or assigns an `.epoch` and none imports a framework whose loop sets it.
          So one unrelated `self.epoch = epoch` anywhere in the project keeps it silent, and a
          project that sets the epoch on some other sampler hides it.
        - A loader another module's method hands out is followed when the caller builds the
          object (`DataModule(cfg).train_loader()`) or holds it from a parameter annotated with
          its class (`def connect(self, data: DataInterface): self.data = data`, then
          `self.data.get_loaders()`), and when the method returns the loader itself or a loader
          a sibling method keeps on the object (`build()` sets `self.train_loader`,
          `get_loaders()` returns it). A parameter of the method that decides whether a
          DistributedSampler is built at all (`distributed_sampler=False`) is not read: the
          caller's loader is taken to have the sampler whatever it passes.
    """,
    triggers=(b"*DistributedSampler*",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for epoch in range(10):  # <- DDP002
            for x, y in loader:
                train_step(x, y)
        """,
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def train_one_epoch(model, loader, optimizer):
            for batch in loader:
                optimizer.zero_grad()
                model(batch).mean().backward()
                optimizer.step()

        dist.init_process_group("nccl")
        loader = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
        step = 0
        while step < 1000:  # <- DDP002
            train_one_epoch(model, loader, optimizer)
            step += len(loader)
        """,
        """
        import itertools
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        batches = itertools.cycle(loader)  # <- DDP002
        for step in range(max_steps):
            x, y = next(batches)
            loss_fn(model(x), y).backward()
            optimizer.step()
        """,
    ),
    valid=(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for epoch in range(10):
            sampler.set_epoch(epoch)
            for x, y in loader:
                train_step(x, y)
        """,
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def train_one_epoch(loader, epoch):
            loader.sampler.set_epoch(epoch)
            for batch in loader:
                step(batch)

        dist.init_process_group("gloo")
        train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))
        for epoch in range(5):
            train_one_epoch(train_loader, epoch)
        """,
        """
        # A fixed order was asked for.
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
        for epoch in range(5):
            for batch in val_loader:
                evaluate(batch)
        """,
    ),
)
