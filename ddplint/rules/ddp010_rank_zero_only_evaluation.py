"""DDP010 rank-zero-only-evaluation."""

from __future__ import annotations

from typing import Iterator, Optional

from ddplint.analysis.facts import BranchSite, LoopSite
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.rank_guards import RANK_GUARD_WORDS
from ddplint.analysis.torch_api import PROCESS_LAUNCHING_PACKAGES
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    # Lightning runs the step on every rank; the decorator is the multi-process evidence itself.
    facts = model.facts
    for function, decorator in model.data.rank_zero_only_evaluation_steps():
        yield RULE.finding(
            decorator,
            f"`@rank_zero_only` on `{function.name}`: only rank 0 evaluates, and only its own shard",
            why=f"the Trainer runs the evaluation loop on every rank, each over its shard of the "
            f"data; with `@rank_zero_only` the `{function.name}` of every other rank does nothing, "
            f"so their GPUs idle while rank 0 works and the metrics rank 0 logs cover 1/world_size "
            f"of the data; drop the decorator and log with `self.log(..., sync_dist=True)` (or "
            f"gather the outputs) so that every rank evaluates its shard and the metric covers all",
        )
    # Accelerate / Lightning Fabric scripts are multi-process under their launcher without
    # torch.distributed.
    if not model.distributed and not facts.imports.imports_any(PROCESS_LAUNCHING_PACKAGES):
        return
    data, ranks = model.data, model.ranks
    for branch in facts.branches:
        arm = ranks.single_rank_arm(branch)
        if arm is None or branch.context.branches and ranks.runs_on_one_rank_only(branch.context):
            continue  # an inner guard of an already guarded block: the outer one is reported
        loops = [loop for loop in facts.loops if (branch.node, arm) in loop.context.branches]
        work = data.evaluation_pass(facts.calls_in_arm(branch, arm), loops)
        if work is None:
            continue
        wait = _where_the_others_wait(model, branch)
        if wait is None:
            continue
        shown = f"`{work}`" if len(work) <= 32 and work.endswith(")") else "this evaluation pass"
        yield RULE.finding(
            branch.node,
            f"only rank 0 runs {shown} while the other ranks wait for it: their GPUs idle",
            why=f"only rank 0 runs this evaluation pass ({work}) while the other ranks go on and wait "
            f"for it in {wait}: their GPUs idle for the whole evaluation, every time it runs, and "
            f"the pass takes world_size times longer than it needs to; shard it instead: give the "
            f"evaluation loader a DistributedSampler(val_set, shuffle=False), evaluate on every "
            f"rank, all_reduce the metric sums (correct, count, loss) and print on rank 0",
        )


def _where_the_others_wait(model: ModuleModel, branch: BranchSite) -> Optional[str]:
    """The next place the other ranks need rank 0: a collective after the branch, or the next
    training step of the loop around it (DDP's gradient all-reduce)."""
    facts = model.facts
    ranks = model.ranks
    loop = branch.context.loops[-1] if branch.context.loops else _loop_of_the_ranks_around_callers(model, branch)
    statements = list(branch.context.statements_after())
    after = facts.calls_in_statements(statements)
    for site in after:
        collective = ranks.collective_reached(site)
        if collective is not None:
            if loop is None and not _training_follows(model, statements):
                return None  # a final evaluation: the others wait once, at the closing collective
            return f"`{collective}`"
    if loop is not None and model.data.loop_trains(loop):
        return "the next training step's gradient all-reduce"
    return None


def _loop_of_the_ranks_around_callers(model: ModuleModel, branch: BranchSite) -> Optional[LoopSite]:
    """The loop that calls the function holding the branch again, if the ranks run that loop
    (hyper-parameter search rounds asserted single-process do not repeat the distributed run)."""
    loop = model.data.repeating_loop(branch.context)
    return loop if loop is not None and model.where.in_a_rank(loop.context) else None


def _training_follows(model: ModuleModel, statements: list) -> bool:
    """A training loop runs after the evaluation (in the same function): the run goes on."""
    facts = model.facts
    wanted = {id(statement) for statement in statements}
    return any(
        model.data.loop_trains(loop)
        for loop in facts.loops
        if any(id(body[index]) in wanted for body, index in loop.context.path) or id(loop.node) in wanted
    )


RULE = Rule(
    code="DDP010",
    name="rank-zero-only-evaluation",
    summary="A whole evaluation pass on rank 0 while the other ranks wait in the next collective.",
    what="""
        Flags a single-rank guard (`if rank == 0:`, `if is_main_process():`, `if master_process:`,
        `if accelerator.is_main_process:`, ...) whose body runs a whole evaluation pass (a loop
        over data that runs the model under `torch.no_grad()` / `inference_mode()` / after
        `model.eval()` without stepping it, a function of the file that does, or a call such as
        `evaluate(model, val_loader)` / `validate(...)`) when the other ranks then wait for rank 0:
        in a collective after the guard, or in the next training step of the loop around it.
        A loop goes over data when it iterates a loader or a dataset, draws a batch each round
        from a source fed by the data (`for k in range(eval_iters): x, y = get_batch("val")`),
        or hands items of an origin the file does not show to something that may be a model.
        A method of the file's model class reached through the DDP wrapper
        (`model.module.inference(x, loader)`, with `model = DDP(Net().to(rank))`) counts as a
        function of the file. The guard may be a `@property` of the class whose every value is a
        rank-0 test (`self.leader`, `return self.fabric.global_rank == 0`), and a Lightning Fabric
        script counts as distributed (`fabric.launch()` starts the processes; the others wait in
        `fabric.barrier()`, also from a helper method). Also flags a LightningModule's `validation_step` / `test_step`
        decorated `@rank_zero_only`: the Trainer runs the evaluation loop on every rank over its
        shard, and the step does nothing on the others (their GPUs idle, and the metric rank 0
        logs covers its own shard only).
    """,
    why="""
        While rank 0 evaluates the whole validation set on one GPU, every other rank has already
        reached the next collective (the first gradient all-reduce of the next epoch, a barrier)
        and sits in it, GPU idle, for as long as the evaluation takes. Evaluation time does not
        shrink with more GPUs, and with N GPUs, N-1 are paid for and idle during it. It is often a
        deliberate trade for simplicity (hence a warning), but it is the most common cause of
        "GPU 0 at 100 %, the others at 0 %" in real training code.
    """,
    fix="""
        Evaluate on every rank over its shard and combine the numbers: build the evaluation
        loader with `DistributedSampler(val_set, shuffle=False)`, run the loop on every rank,
        accumulate sums (`correct`, `count`, `loss_sum`) in a tensor, `dist.all_reduce` it and
        compute and print the metric on rank 0. (DistributedSampler pads the last batch with
        repeated samples; use `drop_last` or count only real samples if the metric must be exact.)
    """,
    silent="""
        - Evaluation under a rank-0 guard at the very end, with nothing after it that waits.
        - A fixed-size sample made for the log, whose size does not grow with the dataset: a loop
          over items written in the code (a handful of prompts) or given on the command line
          (`for path in args.validation_images`, where `args` comes from an
          `argparse.ArgumentParser`), or `range(n)` repeats of one input with no data drawn in the
          body (`for _ in range(args.num_validation_images): pipeline(prompt_embeds=...)`, a
          token-by-token generation loop).
        - Scoring results that every rank already computed: a loop whose items only go to array,
          math, image or logging functions (`np.argsort(scores)`, `wandb.Image(picture)`), to
          torch's tensor arithmetic and tensor methods that reshape, compare or reduce (a k-NN
          vote: `torch.mm(chunk, bank.t())`, `scores.topk(k)`), or are only the receivers of
          their own methods (`for tracker in trackers: tracker.log(...)`).
        - Text generated from prompts written in the code: a loop over what a call made from
          such items and constants (`outputs = model.generate(encoded, max_new_tokens=48)` with
          `encoded = [tok.encode(p) for p in prompts]`, `prompts = ["...", "..."]`) is a sample
          of that size, not a pass (prompts read from a file named by an option still count).
        - `@rank_zero_only` on other LightningModule hooks (`on_validation_end` writing a
          summary), or on a `validation_step` of a class that is no LightningModule.
        - A final evaluation that runs once (in no loop, nor in a function called from one) with no
          training after it: the others wait once, at the closing barrier, not every epoch. A
          loop around the callers counts only if the ranks run it: hyper-parameter search rounds
          after `assert local_rank == -1` (single process only) do not repeat the distributed run.
        - Logging, printing, checkpoint saving under a rank-0 guard (no evaluation pass).
        - Evaluation that every rank runs (`evaluate(...)` outside the guard).
        - Scripts that are not distributed.
    """,
    blind_spots="""
        - A trainer module that never names torch.distributed (nor a launcher variable), whose
          class another module builds with a DDP model and a rank (`Trainer(net, ..., global_rank)`
          evaluating `if self.global_rank == 0:` every N steps), is not seen as distributed: the
          file is skipped before it is read.
        - A method of the model reached through the wrapper is found only when the model is
          built from a class of the same file (`Net().to(rank)`), not from a factory.
        - A loop around the callers over a list that holds one item only by an option's default
          (`for key in args.keys.split(",")`) counts as repeating the evaluation.
        - An evaluation function of another module is recognised only by its name (`evaluate`,
          `validate`, `run_test` ...).
        - When the evaluation also makes a collective only rank 0 reaches, DDP007 reports the hang
          as well.
        - How long the evaluation takes is not estimated: `range(n)` rounds that each draw a batch
          from the validation data count as a pass even when n is small, and a fixed number of
          samples picked from a dataset (`for i in range(args.num_images): val_set[i]`) does not.
        - A list the user passes on the command line is taken to be a handful of values; one that
          names every file of a validation set is missed.
        - The libraries whose calls cannot run a model form a short table (numpy, math, scipy,
          PIL, wandb, matplotlib, json, logging, os, pandas, torchvision.utils, builtins); items of
          an unknown origin handed only to other libraries' functions still count as a pass.
        - A project's own rank-0 helper is recognised by its name when it is a usual one
          (`is_main_process()`, `is_master()`, `is_rank_zero()` ...); any other (`is_coordinator()`)
          only once declared in `rank-zero-functions` (README, Configuration).
    """,
    # the words of an evaluation call (training._EVALUATION_CALL_WORDS): "val" only as a word of
    # the name (`val_epoch`, `run_val`), not inside `value` / `interval`
    triggers=(
        b"*eval*", b"*valid*", b"*test*", b"val", b"val_*", b"*_val", b"*_val_*", b"*no_grad*", b"*inference_mode*",
    ),
    distributed_only=True,  # "accelerate" counts as a distributed token
    # Every finding is a branch with a single-rank arm (`single_rank_arm`): no rank guard, no
    # finding.
    requires=(RANK_GUARD_WORDS,),
    check=check,
    invalid=(
        """
        import torch
        import torch.distributed as dist

        def evaluate(model, loader):
            model.eval()
            correct = 0
            with torch.no_grad():
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum().item()
            return correct / len(loader.dataset)

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in train_loader:
                loss = criterion(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if rank == 0:  # <- DDP010
                print(epoch, evaluate(model.module, val_loader))
        """,
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        master_process = dist.get_rank() == 0
        for epoch in range(epochs):
            train_one_epoch(model, optimizer, train_loader)
            if master_process:  # <- DDP010
                metrics = validate(model.module, val_loader, device)
            dist.barrier()
        """,
    ),
    valid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))
        for epoch in range(epochs):
            train_one_epoch(model, optimizer, train_loader)
            totals = torch.zeros(2, device=device)
            with torch.no_grad():
                for x, y in val_loader:
                    totals += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
            dist.all_reduce(totals)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} accuracy {totals[0] / totals[1]:.3f}")
        """,
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(epochs):
            train_one_epoch(model, optimizer, train_loader)
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), f"epoch{epoch}.pt")
        # the final test once training is over: nobody waits for it
        if dist.get_rank() == 0:
            test(model.module, test_loader)
        """,
        """
        # A few pictures generated from the prompts given on the command line, for the tracker:
        # the same size whatever the dataset, not an evaluation pass.
        import argparse
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--validation_prompts", nargs="+")
        parser.add_argument("--num_validation_images", type=int, default=4)
        args = parser.parse_args()
        dist.init_process_group("nccl")
        for step, batch in enumerate(train_loader):
            model(**batch).loss.backward()
            optimizer.step()
            if dist.get_rank() == 0 and step % 1000 == 0:
                with torch.no_grad():
                    embeds = pipeline.encode_prompt(args.validation_prompts)
                    images = [pipeline(prompt_embeds=embeds).images[0] for _ in range(args.num_validation_images)]
                tracker.log({"samples": images})
        """,
        """
        # Accelerate: every process evaluates its shard, gather_for_metrics combines them.
        import torch
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer, train_loader, eval_loader = accelerator.prepare(model, optimizer, train_loader, eval_loader)
        for epoch in range(epochs):
            train_one_epoch(model, optimizer, train_loader, accelerator)
            model.eval()
            correct = 0
            with torch.no_grad():
                for batch in eval_loader:
                    preds, labels = accelerator.gather_for_metrics((model(**batch).logits.argmax(-1), batch["labels"]))
                    correct += (preds == labels).sum().item()
            if accelerator.is_main_process:
                print(epoch, correct)
        """,
    ),
    severity="warning",
)
