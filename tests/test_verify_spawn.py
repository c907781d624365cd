"""`ddplint verify` for scripts that start their own ranks (torch.multiprocessing.spawn,
multiprocessing.Process), and the one-line pointer to `--cpu` when a script needs a GPU this
machine does not have.

The spawn scripts in verify_scripts/ have the shape of the DDP tutorial's multigpu.py: the main
process sizes its world with torch.cuda.device_count() and spawns one worker per GPU; each worker
calls set_device(rank) and init_process_group itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ddplint.verify import command
from tests.test_verify import SCRIPTS, by_code, confirmed, marker_row, run_verify

SPAWN_FIXED = SCRIPTS / "spawn_fixed.py"
SPAWN_NO_SAMPLER = SCRIPTS / "spawn_missing_sampler.py"
SPAWN_ONE_GPU = SCRIPTS / "spawn_all_on_gpu0.py"
PROCESS_WORKERS = SCRIPTS / "process_workers.py"
GPU_TORCHRUN = SCRIPTS.parent.parent / "examples" / "gpu" / "train_torchrun_fixed.py"


def assert_no_worker_left(script: Path) -> None:
    """The workers' command lines do not name the script (multiprocessing starts them with `-c`):
    they are found by the script path the spawner puts in their environment."""
    entry = f"DDPLINT_VERIFY_SCRIPT={script}".encode()
    left = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environment = (proc / "environ").read_bytes()
        except OSError:
            continue
        if entry in environment.split(b"\0"):
            left.append(proc.name)
    assert not left, f"workers of {script.name} left behind: {left}"


def spawn_verify(script: Path, *options: str):
    rc, report, stderr = run_verify(script, *options)
    assert_no_worker_left(script)
    return rc, report, stderr


# -- which scripts start their own ranks ---------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "import torch.multiprocessing as mp\nmp.spawn(main, args=(2,), nprocs=2)\n",
    "from torch.multiprocessing import start_processes\nstart_processes(main, nprocs=2, start_method='fork')\n",
    "import multiprocessing\np = multiprocessing.Process(target=main)\n",
    "from torch import multiprocessing as mp\nctx = mp.get_context('spawn')\nctx.Process(target=main).start()\n",
])
def test_scripts_that_spawn_their_workers_are_recognised(source):
    assert command._calls_spawn(source.encode())


@pytest.mark.parametrize("source", [
    "import torch.distributed as dist\ndist.init_process_group('nccl')\n",
    "import subprocess\nsubprocess.Popen(['ls'])\n",  # a Popen is not a rank
    "import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\n",  # no worker started
    "def spawn(): pass\nspawn()\n",  # no multiprocessing at all
])
def test_torchrun_scripts_are_not_taken_for_spawners(source):
    assert not command._calls_spawn(source.encode())


def test_launcher_option_overrides_the_detection_and_spawners_run_on_one_node():
    args = argparse.Namespace(script=str(SPAWN_FIXED), launcher="torchrun", nnodes=1)
    assert command._starts_own_ranks(args) is False
    args.launcher = "auto"
    assert command._starts_own_ranks(args) is True
    args.nnodes = 2
    with pytest.raises(command.UsageError, match="one node"):
        command._starts_own_ranks(args)


# -- mp.spawn rehearsed with --cpu -----------------------------------------------------------------------
@pytest.mark.slow
def test_spawn_script_trains_on_every_spawned_rank_and_nothing_is_confirmed():
    rc, report, _ = spawn_verify(SPAWN_FIXED, "--cpu", "--max-steps", "6")
    assert rc == 0, report
    assert report["problem"] is None and confirmed(report) == []
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    for rank in report["ranks"]:
        # The worker's own module-level torch.cuda.is_available() saw the logical GPUs (its assert
        # passed), its set_device(rank) and nccl ran on the CPU.
        assert rank["status"] == "stopped after 6 steps" and rank["backend"] == "gloo", rank
    assert [r["devices"] for r in report["ranks"]] == [["cuda:0"], ["cuda:1"]]


@pytest.mark.slow
def test_spawn_script_without_sampler_confirms_ddp001_with_nproc_logical_gpus():
    # --nproc 3: the main process sees 3 logical GPUs and so spawns 3 ranks.
    rc, report, _ = spawn_verify(SPAWN_NO_SAMPLER, "--cpu", "--nproc", "3", "--max-steps", "4")
    finding = by_code(report, "DDP001")
    assert finding["status"] == "confirmed", finding
    assert finding["location"]["row"] == marker_row(SPAWN_NO_SAMPLER, "DDP001")
    assert "ranks 0-2 of world size 3" in finding["evidence"]
    assert rc == 1
    assert [r["rank"] for r in report["ranks"]] == [0, 1, 2]


@pytest.mark.slow
def test_spawn_script_with_every_rank_on_gpu_0_confirms_ddp005():
    rc, report, _ = spawn_verify(SPAWN_ONE_GPU, "--cpu", "--max-steps", "4")
    # Found statically too (set_device(0) in a spawned worker is no one-GPU-per-process sign): every
    # placement on cuda:0 the file makes is confirmed by what the ranks asked for.
    findings = [f for f in report["findings"] if f["code"] == "DDP005"]
    assert findings and all(f["status"] == "confirmed" and "asked for cuda:0" in f["evidence"] for f in findings), findings
    assert rc == 1
    assert [r["devices"] for r in report["ranks"]] == [["cuda:0"], ["cuda:0"]]


@pytest.mark.slow
@pytest.mark.parametrize("start_method", ["spawn", "fork"])
def test_process_workers_are_ranks_by_the_rank_they_pass(start_method):
    # Started in reverse order (rank 1 first): each still reports as the rank it joined with.
    rc, report, _ = spawn_verify(PROCESS_WORKERS, "--max-steps", "5", "--", "--start-method", start_method)
    assert rc == 0 and report["problem"] is None, report
    assert [(r["rank"], r["status"]) for r in report["ranks"]] == [(0, "stopped after 5 steps"),
                                                                  (1, "stopped after 5 steps")]
    loaders = [r["loaders"][0] for r in report["ranks"]]
    assert [loader["sampler"] for loader in loaders] == ["DistributedSampler"] * 2


# -- a GPU script on a machine without GPUs, without --cpu -------------------------------------------------
def assert_points_at_cpu_rehearsal(report: dict, script: Path) -> None:
    problem = report["problem"]
    assert problem is not None and "\n" not in problem, problem
    assert f"`ddplint verify --cpu {script}" in problem, problem
    assert report["timed_out"] is False and report["elapsed_s"] < 60, report  # not a wait for the timeout


@pytest.mark.slow
def test_spawn_script_sizing_its_world_by_gpus_names_the_cpu_rehearsal():
    rc, report, _ = spawn_verify(SPAWN_FIXED, "--max-steps", "4", "--timeout", "120")
    assert rc == 2 and report["ranks"] == []
    assert "nprocs=0" in report["problem"] and "device_count() is 0" in report["problem"]
    assert_points_at_cpu_rehearsal(report, SPAWN_FIXED)


@pytest.mark.slow
def test_spawned_rank_failing_at_set_device_names_the_cpu_rehearsal():
    rc, report, _ = spawn_verify(SPAWN_FIXED, "--max-steps", "4", "--timeout", "120", "--", "2")
    assert rc == 2
    assert "crashed before its first batch" in report["problem"]
    assert_points_at_cpu_rehearsal(report, SPAWN_FIXED)
    assert report["problem"].endswith("-- 2`")  # the script's own arguments are kept


@pytest.mark.slow
def test_torchrun_gpu_script_failing_without_cuda_names_the_cpu_rehearsal():
    rc, report, _ = run_verify(GPU_TORCHRUN, "--max-steps", "4")
    assert rc == 2
    assert_points_at_cpu_rehearsal(report, GPU_TORCHRUN)
