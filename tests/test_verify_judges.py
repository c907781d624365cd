"""The runtime verdicts for DDP005-DDP012 on synthetic telemetry: each confirmed on the buggy
shape, refuted (or not confirmed) on the fixed one, inconclusive where the run cannot tell."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ddplint.diagnostics import Diagnostic, Location
from ddplint.verify.verdicts import (
    CONFIRMED,
    INCONCLUSIVE,
    REFUTED,
    judge_ddp005,
    judge_ddp006,
    judge_ddp007,
    judge_ddp008,
    judge_ddp009,
    judge_ddp010,
    judge_ddp011,
    judge_ddp012,
    judge_run,
)
from tests.test_verify_units import SCRIPT, RankLog, batches, context


def emulated(rank: int) -> RankLog:
    log = RankLog(rank)
    log.records[0]["emulated_gpus"] = 2
    return log


def request(log: RankLog, what: str, device: str, line: int = 12) -> RankLog:
    return log.add("cuda_request", what=what, device=device, site={"file": SCRIPT, "line": line})


# -- DDP005: logical devices of the CPU rehearsal ---------------------------------------------------------
def test_ddp005_two_ranks_asking_for_the_same_logical_gpu_is_confirmed():
    logs = [request(emulated(r), "model", "cuda:0", line=30) for r in (0, 1)]
    judgement = judge_ddp005(context(*logs), 30)
    assert judgement.status == CONFIRMED
    assert "asked for cuda:0 (ranks 0, 1), first as the model device on line 30" in judgement.evidence
    assert "logical GPUs of the CPU rehearsal" in judgement.evidence


def test_ddp005_own_logical_gpus_are_refuted_and_the_model_outranks_a_stray_tensor():
    # rank 1 also moved one tensor to cuda:0 (a constant), but its model is on cuda:1
    logs = [request(request(emulated(r), "tensor", "cuda:0"), "model", f"cuda:{r}") for r in (0, 1)]
    assert [s.devices()[0] for s in (log.summary() for log in logs)] == ["cuda:0", "cuda:1"]
    assert judge_ddp005(context(*logs), 12).status == REFUTED


# -- DDP006 -------------------------------------------------------------------------------------------------
def test_ddp006_confirmed_by_the_loaders_start_up_error_and_refuted_when_it_was_built():
    error = "ValueError: sampler option is mutually exclusive with shuffle"
    failing = [RankLog(r).add("loader_error", site={"file": SCRIPT, "line": 10}, error=error).end("exception")
               for r in (0, 1)]
    judgement = judge_ddp006(context(*failing), 10)
    assert judgement.status == CONFIRMED and judgement.row == 10
    assert "raised ValueError: sampler option is mutually exclusive with shuffle on ranks 0, 1" in judgement.evidence
    built = [RankLog(r).loader(line=10) for r in (0, 1)]
    assert judge_ddp006(context(*built), 10).status == REFUTED
    assert judge_ddp006(context(RankLog(0).loader(line=10), RankLog(1)), 10).status == INCONCLUSIVE


# -- DDP007 -------------------------------------------------------------------------------------------------
def collectives(log: RankLog, *calls) -> RankLog:
    for op, line, duration in calls:
        log.add("coll_begin", op=op, site={"file": SCRIPT, "line": line, "lines": [line, 90]}, size=[1])
        if duration is not None:
            log.add("coll_end", dt=duration, op=op, dur=duration)
    return log


def test_ddp007_extra_collective_on_one_rank_is_confirmed_even_when_the_run_finished():
    rank0 = collectives(RankLog(0), ("all_reduce", 40, 0.01), ("all_reduce", 55, 0.01)).end("finished")
    rank1 = collectives(RankLog(1), ("all_reduce", 40, 0.01)).end("finished")
    judgement = judge_ddp007(context(rank0, rank1), 55)
    assert judgement.status == CONFIRMED
    assert "diverge at collective #2: rank 0 all_reduce [1] at line 55, rank 1 none (it issued 1 in all)" \
        in judgement.evidence
    assert "all_reduce at line 55 issued 1x by rank 0, 0x by rank 1" in judgement.evidence


def test_ddp007_the_same_call_on_opposite_branches_matches_and_is_refuted():
    # rank 0 broadcasts from line 40, the others from line 42 (the `else:` arm): one for one
    rank0 = collectives(RankLog(0), ("broadcast", 40, 0.01)).end("finished")
    rank1 = collectives(RankLog(1), ("broadcast", 42, 0.01)).end("finished")
    judgement = judge_ddp007(context(rank0, rank1), 40)
    assert judgement.status == REFUTED and "same sequence of 1 collectives" in judgement.evidence
    # a line that issued nothing within the budget is no evidence either way
    assert judge_ddp007(context(rank0, rank1), 77).status == INCONCLUSIVE
    # without a static finding, matching sequences are no runtime finding
    assert judge_ddp007(context(rank0, rank1)) is None


def test_ddp007_hang_is_confirmed_at_the_timeout_with_each_ranks_stack(tmp_path):
    rank0 = collectives(RankLog(0), ("barrier", 8, None))
    rank1 = RankLog(1)
    ctx = context(rank0, rank1)
    stacks = {
        0: f'Thread 0x01 (most recent call first):\n  File "/x/torch/distributed/c10d.py", line 9 in barrier\n'
           f'  File "{SCRIPT}", line 8 in <module>\n',
        1: f'Current thread 0x02 (most recent call first):\n  File "{SCRIPT}", line 10 in wait\n'
           f'  File "{SCRIPT}", line 12 in <module>\n',
    }
    ranks = [replace(summary, stack=stacks[summary.rank]) for summary in ctx.ranks]
    judgement = judge_ddp007(replace(ctx, ranks=ranks, timed_out=True), 8)
    assert judgement.status == CONFIRMED
    assert "rank 0 blocked" in judgement.evidence and "in barrier [1] at line 8 [stack: line 8 in <module>]" \
        in judgement.evidence
    assert "rank 1 not in any collective, at line 10 in wait <- line 12 in <module>" in judgement.evidence
    # Blocked alone at the timeout elsewhere: perhaps only early (the others still working, DDP004)
    hung = replace(ctx, ranks=ranks, timed_out=True)
    assert judge_ddp007(hung, 30).status == INCONCLUSIVE
    assert judge_ddp007(hung) is None


def test_ddp007_a_rank_that_failed_on_its_own_is_left_out():
    rank0 = collectives(RankLog(0), ("barrier", 8, 0.5))
    rank1 = RankLog(1).end("exception", exit_code=1, error="RuntimeError: corrupt shard on rank 1")
    assert judge_ddp007(context(rank0, rank1)) is None
    broken = RankLog(1).end("exception", exit_code=1, error="RuntimeError: [gloo] Connection closed by peer")
    assert judge_ddp007(context(rank0, broken)).status == CONFIRMED


# -- DDP008 -------------------------------------------------------------------------------------------------
def load(log: RankLog, devices, own, line=58) -> RankLog:
    return log.add("load", devices=devices, own=own, map_location=None, site={"file": SCRIPT, "line": line})


def test_ddp008_tensors_restored_onto_another_ranks_gpu_is_confirmed():
    logs = [load(emulated(r), ["cuda:0"], f"cuda:{r}") for r in (0, 1)]
    judgement = judge_ddp008(context(*logs), 58)
    assert judgement.status == CONFIRMED
    assert "restored the tensors onto cuda:0 on rank 1, whose own GPU is cuda:1" in judgement.evidence


def test_ddp008_own_device_or_cpu_is_refuted_and_a_plain_cpu_run_says_nothing():
    own = [load(emulated(r), [f"cuda:{r}"], f"cuda:{r}") for r in (0, 1)]
    assert judge_ddp008(context(*own), 58).status == REFUTED
    cpu_copies = [load(emulated(r), ["cpu"], f"cuda:{r}") for r in (0, 1)]
    assert judge_ddp008(context(*cpu_copies), 58).status == REFUTED
    plain = [load(RankLog(r), ["cpu"], "cpu") for r in (0, 1)]
    judgement = judge_ddp008(context(*plain), 58)
    assert judgement.status == INCONCLUSIVE and "verify --cpu" in judgement.evidence
    assert judge_ddp008(context(*own), 99).status == INCONCLUSIVE  # that line never ran


# -- DDP009 -------------------------------------------------------------------------------------------------
def iterable(log: RankLog, digests, line=62) -> RankLog:
    log.add("loader", loader=1, site={"file": SCRIPT, "line": line}, dataset="Stream", dataset_len=None,
            iterable=True, sampler=None, sampler_len=None, shuffle=False, num_replicas=None, batch_size=4,
            num_workers=0)
    log.add("epoch", loader=1, n=0, sampler_epoch=None)
    for step, start in enumerate(range(0, len(digests), 4), 1):
        log.add("batch", loader=1, step=step, wait=0.001, indices=[], digests=digests[start:start + 4], bw=step)
    return log


def test_ddp009_same_items_on_every_rank_is_confirmed_and_split_streams_are_refuted():
    same = [iterable(RankLog(r), [f"d{i}" for i in range(16)]) for r in (0, 1)]
    judgement = judge_ddp009(context(*same), 62)
    assert judgement.status == CONFIRMED and "16 (100 %) of them identical in content" in judgement.evidence
    split = [iterable(RankLog(r), [f"d{i}" for i in range(r, 32, 2)]) for r in (0, 1)]
    assert judge_ddp009(context(*split), 62).status == REFUTED
    few = [iterable(RankLog(r), ["d0", "d1"]) for r in (0, 1)]
    assert judge_ddp009(context(*few), 62).status == INCONCLUSIVE


# -- DDP010 -------------------------------------------------------------------------------------------------
def evaluation(log: RankLog, passes: int, seconds: float) -> RankLog:
    """A training batch, then (on this rank) an evaluation pass of `seconds`, then the barrier."""
    log.loader(line=20)
    log.add("loader", loader=2, site={"file": SCRIPT, "line": 70}, dataset="TensorDataset", dataset_len=64,
            iterable=False, sampler="SequentialSampler", sampler_len=64, shuffle=False, num_replicas=None,
            batch_size=16, num_workers=0)
    for number in range(passes):
        log.add("epoch", loader=1, n=number, sampler_epoch=number)
        log.add("batch", loader=1, step=log.step + 1, wait=0.001, indices=[number], bw=log.backward_calls)
        log.step += 1
        log.backward_calls += 1
        log.t += 0.01
        if seconds:
            log.add("epoch", loader=2, n=number, sampler_epoch=None)
            for _ in range(2):
                log.add("batch", loader=2, step=log.step + 1, wait=0.001, indices=[0], bw=log.backward_calls)
                log.step += 1
                log.t += seconds / 2
        collectives(log, ("barrier", 85, 0.001 if seconds else 0.5))
    return log.end()


def test_ddp010_rank_zero_evaluating_alone_while_others_wait_is_confirmed():
    rank0 = evaluation(RankLog(0), passes=2, seconds=0.5)
    rank1 = evaluation(RankLog(1), passes=2, seconds=0.0)
    judgement = judge_ddp010(context(rank0, rank1), 81)
    assert judgement.status == CONFIRMED, judgement
    assert "rank 0 spent 1.00 s in 2 evaluation pass(es) alone while rank 1 waited" in judgement.evidence


def late_to_the_barrier(busy: float, held: float, passes: int = 2) -> RankLog:
    """Rank 1 of `evaluation(RankLog(0), passes, 0.5)`: after its training batch it is busy for
    `busy` s more (a slow step on a loaded machine), then waits `held` s in the barrier."""
    log = RankLog(1).loader(line=20)
    for number in range(passes):
        log.add("epoch", loader=1, n=number, sampler_epoch=number)
        log.add("batch", loader=1, step=log.step + 1, wait=0.001, indices=[number], bw=log.backward_calls)
        log.step += 1
        log.backward_calls += 1
        log.t += 0.01 + busy
        collectives(log, ("barrier", 85, held))
        log.t += 0.5 + 0.001 - busy - held  # rank 0's pass takes 0.511 s; keep the clocks in step
    return log.end()


def test_ddp010_a_rank_late_to_the_barrier_but_released_by_rank_zero_still_waited_for_it():
    rank0 = evaluation(RankLog(0), passes=2, seconds=0.5)
    # busy for 0.3 s of rank 0's 0.5 s evaluation, then held until rank 0 joins: 40 % of it waited
    judgement = judge_ddp010(context(rank0, late_to_the_barrier(busy=0.3, held=0.2)), 81)
    assert judgement.status == CONFIRMED, judgement
    assert "rank 1 waited 0.40 s" in judgement.evidence
    # the same wait, but released 0.1 s before rank 0 joined: something else let it go, no verdict
    judgement = judge_ddp010(context(rank0, late_to_the_barrier(busy=0.3, held=0.1)), 81)
    assert judgement.status == INCONCLUSIVE, judgement


def test_ddp010_sharded_evaluation_is_refuted_and_no_evaluation_is_inconclusive():
    both = [evaluation(RankLog(r), passes=2, seconds=0.2) for r in (0, 1)]
    judgement = judge_ddp010(context(*both), 81)
    assert judgement.status == REFUTED and "every rank ran the evaluation pass" in judgement.evidence
    training_only = [RankLog(r).loader().epoch(0, batches(0, 3)) for r in (0, 1)]
    assert judge_ddp010(context(*training_only), 81).status == INCONCLUSIVE


# -- DDP011 -------------------------------------------------------------------------------------------------
def seeded(rank: int, seed: int, indices) -> RankLog:
    log = RankLog(rank).loader(line=50)
    log.records[-1]["seed"] = seed
    return log.epoch(0, [indices])


def test_ddp011_different_seeds_with_overlapping_shards_is_confirmed_and_one_seed_is_refuted():
    judgement = judge_ddp011(context(seeded(0, 17, [1, 5, 9, 12]), seeded(1, 18, [5, 9, 30, 31])), 50)
    assert judgement.status == CONFIRMED
    assert "seed 17 on rank 0, seed 18 on rank 1" in judgement.evidence and "2 (50 %)" in judgement.evidence
    judgement = judge_ddp011(context(seeded(0, 17, [1, 5, 9, 12]), seeded(1, 17, [2, 6, 10, 13])), 50)
    assert judgement.status == REFUTED and "0 (0 %)" in judgement.evidence


# -- DDP012 -------------------------------------------------------------------------------------------------
def test_ddp012_data_bound_steps_confirmed_and_a_cpu_run_never_refutes():
    starving = [RankLog(r).loader().epoch(0, batches(0, 8), wait=0.030, compute=0.005) for r in (0, 1)]
    judgement = judge_ddp012(context(*starving), 10)
    assert judgement.status == CONFIRMED and "rank 0: 30.0 of 35.0 ms (86 %)" in judgement.evidence
    fed = [RankLog(r).loader().epoch(0, batches(0, 8), wait=0.0005, compute=0.02) for r in (0, 1)]
    judgement = judge_ddp012(context(*fed), 10)
    assert judgement.status == INCONCLUSIVE and "only a GPU run can refute" in judgement.evidence
    on_gpu = [RankLog(r).add("ddp", param_devices=[f"cuda:{r}"]).loader().epoch(0, batches(0, 8), wait=0.0005,
                                                                                  compute=0.02) for r in (0, 1)]
    assert judge_ddp012(context(*on_gpu), 10).status == REFUTED


def test_runtime_only_findings_for_the_new_rules_but_never_for_opt_in_ddp012():
    rank0 = collectives(RankLog(0), ("all_reduce", 40, 0.01), ("all_reduce", 55, 0.01)).end("finished")
    rank1 = collectives(RankLog(1), ("all_reduce", 40, 0.01)).end("finished")
    verdicts = judge_run([], context(rank0, rank1))
    assert [(v.finding.code, v.status, v.source, v.finding.location.row) for v in verdicts] == [
        ("DDP007", CONFIRMED, "runtime", 55)]
    starving = [RankLog(r).loader().epoch(0, batches(0, 8), wait=0.030, compute=0.005) for r in (0, 1)]
    assert [v.finding.code for v in judge_run([], context(*starving))] == []
    static = Diagnostic("DDP012", "no workers", SCRIPT, Location(10, 1), Location(10, 9))
    assert [(v.finding.code, v.status) for v in judge_run([static], context(*starving))] == [("DDP012", CONFIRMED)]


# -- the emulation in one plain process (no torchrun) -----------------------------------------------------
EMULATED_SCRIPT = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

assert torch.cuda.is_available() and torch.cuda.device_count() == 2
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
torch.cuda.set_device(1)
assert torch.cuda.current_device() == 1
model = nn.Linear(4, 1).to(torch.device("cuda", 1))
scaler = torch.amp.GradScaler("cuda")
legacy = torch.cuda.amp.GradScaler()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
stream = torch.cuda.Stream()
loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, pin_memory=True)
for x, y in loader:
    start.record()
    with torch.cuda.stream(stream), torch.autocast("cuda", dtype=torch.float16):
        x, y = x.cuda(non_blocking=True), y.to(1)
        loss = nn.functional.mse_loss(model(x), y)
    assert loss.dtype == torch.float32  # autocast for cuda is off on the CPU
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    end.record()
    torch.cuda.synchronize()
    assert end.elapsed_time(start) is not None and torch.cuda.memory_allocated() == 0
states = torch.cuda.get_rng_state_all()
torch.cuda.set_rng_state_all(states)
assert len(states) == 2
compiled = torch.compile(model)
assert compiled is model and torch.compile(mode="max-autotune")(len) is len
from torch.utils.checkpoint import checkpoint
checkpoint(model, torch.randn(2, 4, device="cuda", requires_grad=True), use_reentrant=False).sum().backward()
with torch.cuda.device(0):
    assert torch.cuda.current_device() == 0
    extra = torch.zeros(3, device="cuda")
assert torch.cuda.current_device() == 1
print("properties", torch.cuda.get_device_properties(0).name, flush=True)
torch.save(model.state_dict(), "weights.pt")
restored = torch.load("weights.pt")
remapped = torch.load("weights.pt", map_location={"cuda:1": "cuda:0"})
torch.save({name: value.cpu() for name, value in model.state_dict().items()}, "cpu_weights.pt")
on_cpu = torch.load("cpu_weights.pt")
try:
    torch.zeros(1, device="cuda:5")
except RuntimeError as exc:
    print("ordinal", exc, flush=True)
import triton

@triton.jit
def add_kernel(x, y):
    pass

print("grid", triton.cdiv(10, 4), flush=True)
add_kernel[(4,)](x, y)
print("not reached", flush=True)
'''


def _emulated_probe(tmp_path, source: str):
    import os
    import subprocess
    import sys

    from ddplint.verify.telemetry import rank_file, read_records

    script = tmp_path / "train.py"
    script.write_text(source)
    env = dict(os.environ, DDPLINT_VERIFY_DIR=str(tmp_path), DDPLINT_VERIFY_MAX_STEPS="100",
               DDPLINT_VERIFY_EPOCH_STEPS="0", DDPLINT_VERIFY_CPU_GPUS="2", RANK="0", LOCAL_RANK="0",
               WORLD_SIZE="1", OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-m", "ddplint.verify.probe", str(script)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    return script, proc, (tmp_path / "rank-0.log").read_text(), read_records(rank_file(tmp_path, 0))


@pytest.mark.parametrize("source, call, what", [
    ("from torch.utils.cpp_extension import load_inline\n"
     "ops = load_inline('scale', cpp_sources='', cuda_sources='__global__ void k() {}')\n",
     "torch.utils.cpp_extension.load_inline(...)", "a custom CUDA kernel"),
    ("import torch\ngraph = torch.cuda.CUDAGraph()\n", "torch.cuda.CUDAGraph(...)", "a CUDA graph"),
])
def test_emulation_refuses_gpu_only_work_with_one_line_naming_the_call(tmp_path, source, call, what):
    script, proc, log, records = _emulated_probe(tmp_path, source)
    assert proc.returncode == 2 and records[-1]["reason"] == "not-emulatable"
    assert records[-1]["error"] == (
        f"cannot rehearse on CPU: {call} at {script}:2 runs {what}, which needs a GPU "
        f"(run `ddplint verify` without --cpu on a GPU machine)")
    assert "Traceback" not in log


def test_emulation_in_one_process_records_logical_devices_and_stops_at_a_triton_launch(tmp_path):
    script, proc, log, records = _emulated_probe(tmp_path, EMULATED_SCRIPT)
    end = records[-1]
    assert end["kind"] == "end" and end["reason"] == "not-emulatable", (end, log)
    assert proc.returncode == 2
    assert end["error"].startswith(f"cannot rehearse on CPU: Triton kernel add_kernel[grid](...) at {script}:")
    assert "not reached" not in log and "grid 3" in log
    assert "properties ddplint logical GPU 0 (CPU rehearsal)" in log
    assert "ordinal CUDA error: invalid device ordinal (cuda:5" in log
    requests = {(r["what"], r["device"]) for r in records if r["kind"] == "cuda_request"}
    assert requests == {("set_device", "cuda:1"), ("model", "cuda:1"), ("tensor", "cuda:1"), ("set_device", "cuda:0"),
                        ("tensor", "cuda:0")}, requests
    loads = [(r["devices"], r["own"], r["map_location"]) for r in records if r["kind"] == "load"]
    # own: cuda:LOCAL_RANK, the GPU a rank owns when it sees one per rank of the node
    assert loads == [(["cuda:1"], "cuda:0", None), (["cuda:0"], "cuda:0", "dict"), (["cpu"], "cuda:0", None)], loads
    assert sum(1 for r in records if r["kind"] == "batch") == 4


def test_the_probe_wraps_the_collectives_of_the_one_torch_table():
    from ddplint.analysis import torch_api
    from ddplint.verify import probe

    assert probe.COLLECTIVES == torch_api.PROBED_COLLECTIVES
    assert {"all_reduce", "barrier", "broadcast_object_list"} <= set(probe.COLLECTIVES)


def test_gpu_examples_are_flagged_exactly_at_their_markers():
    """examples/gpu/ (GPU-written scripts that verify --cpu rehearses): the static check flags each
    *_buggy.py on its `# <- DDPnnn` line and is silent on the others."""
    import re
    from pathlib import Path

    from ddplint.api import lint_file
    from ddplint.rules import select_rules

    scripts = sorted((Path(__file__).resolve().parent.parent / "examples" / "gpu").glob("*.py"))
    assert len(scripts) >= 4
    for path in scripts:
        marks = [(number, match.group(1)) for number, line in enumerate(path.read_text().splitlines(), 1)
                 if (match := re.search(r"# <- (DDP\d{3})", line))]
        found = sorted((d.location.row, d.code) for d in lint_file(str(path), select_rules()))
        assert found == marks, path.name
        assert bool(marks) == path.stem.endswith("_buggy"), path.name


def test_extend_select_adds_opt_in_rules_and_rejects_unknown_codes(tmp_path, capsys):
    from ddplint.verify import command

    args = command.parse_args(["train.py", "--cpu", "--extend-select", "ddp012, DDP003"])
    assert args.cpu and args.extend_select == ["DDP012", "DDP003"]
    assert command.main(["train.py", "--extend-select", "XYZ9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("argument --extend-select: no rule matches 'XYZ9'"), err
    from pathlib import Path

    script = Path(__file__).resolve().parent / "verify_scripts" / "gpu_slow_loader.py"
    assert "DDP012" not in {f.code for f in command._static_findings(str(script))}
    assert "DDP012" in {f.code for f in command._static_findings(str(script), ["DDP012"])}


def test_cpu_sync_batchnorm_matches_batchnorm_over_the_whole_batch(tmp_path):
    """The emulation's SyncBatchNorm arithmetic (sums all-reduced over the group) on a one-rank
    group equals plain batch norm: outputs, gradients and running statistics."""
    import torch
    import torch.distributed as dist

    from ddplint.verify.emulation import _synchronised_batch_norm

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        reference = torch.nn.BatchNorm2d(3)
        synced = torch.nn.SyncBatchNorm(3)
        synced.load_state_dict(reference.state_dict())
        x = torch.randn(4, 3, 5, 5, requires_grad=True)
        expected = reference(x)
        (expected * torch.arange(expected.numel()).view_as(expected)).sum().backward()
        grad_expected, x.grad = x.grad.clone(), None
        got = _synchronised_batch_norm(torch, synced, x, dist.group.WORLD)
        (got * torch.arange(got.numel()).view_as(got)).sum().backward()
        assert torch.allclose(got, expected, atol=1e-5)
        assert torch.allclose(x.grad, grad_expected, atol=1e-4)
        assert torch.allclose(synced.running_mean, reference.running_mean, atol=1e-6)
        assert torch.allclose(synced.running_var, reference.running_var, atol=1e-5)
    finally:
        dist.destroy_process_group()
