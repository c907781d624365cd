"""`ddplint verify` under faults: stopped by a signal, a workspace that plants modules, bad input,
a run where one rank crashes while another exits cleanly, leftovers in the temp folder.

What "no process of the run" means here: every process whose environment carries a mark this test
puts in verify's own environment (verify, its reaper, torchrun, the ranks and anything they start
inherit it), found in /proc. A process that replaced its whole environment would escape this
check; none of the scripts here does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ddplint.verify import command
from tests.test_verify import EXAMPLES, REPO, SCRIPTS, _env, verify_command
from tests.test_verify_units import RankLog, _launch, batches

TEST_MARK = "DDPLINT_TEST_RUN_MARK"
STARTUP_TIMEOUT_S = 180  # verify's static check, torchrun, two ranks importing torch: on a loaded machine
GONE_WITHIN_S = 10.0  # "within a few seconds"; the clean-up itself takes about 3 s (SIGTERM grace)

linux_only = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds processes through /proc")
linux_pdeathsig = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def marked(mark: str) -> dict:
    """pid -> command line of every live process whose environment carries the test's mark."""
    entry = f"{TEST_MARK}={mark}".encode()
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if entry in (proc / "environ").read_bytes().split(b"\0"):
                found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def wait_until_gone(mark: str, within: float) -> dict:
    deadline = time.monotonic() + within
    while True:
        left = marked(mark)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def kill_marked(mark: str) -> None:
    """The test's own safety net: whatever verify left is killed here, pass or fail."""
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# -- item 6: stopped by a signal ----------------------------------------------------------------------
@pytest.mark.slow
@linux_only
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"])
def test_verify_stopped_by_a_signal_leaves_no_process_of_its_run(tmp_path, name):
    # `timeout 15 ddplint verify ...` in CI, a closed terminal, ^C, `kill -9`: the signal goes to
    # verify's process group (verify is its leader here), while both ranks train and each has left
    # a grandchild in a session of its own whose parent is gone.
    signum = getattr(signal, name)
    mark, ready = uuid.uuid4().hex, tmp_path / "ready"
    ready.mkdir()
    env = dict(_env(), **{TEST_MARK: mark, "DDPLINT_TEST_READY_DIR": str(ready)})
    proc = subprocess.Popen(
        verify_command(SCRIPTS / "detached_grandchild.py", "--max-steps", "100000", "--timeout", "600"),
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for_ranks_training(proc, ready, mark)
        detached = [cmd for cmd in marked(mark).values() if "os.setsid()" in cmd]
        assert len(detached) == 2, marked(mark)  # the two grandchildren are there before the stop
        os.killpg(proc.pid, signum)
        _, stderr = proc.communicate(timeout=60)
        left = wait_until_gone(mark, GONE_WITHIN_S)
        assert not left, f"left running {GONE_WITHIN_S:g} s after {name}:\n" + "\n".join(
            f"{pid}: {cmd}" for pid, cmd in sorted(left.items()))
        if signum != signal.SIGKILL:  # verify itself ran its clean-up and said so in one line
            assert proc.returncode == 2, stderr
            assert f"ddplint verify: stopped by {name}; every process of the run was stopped" in stderr, stderr
            assert "Traceback" not in stderr, stderr
    finally:
        proc.kill()
        proc.communicate()
        kill_marked(mark)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_stop_signal_during_the_clean_up_waits_until_it_is_done():
    from ddplint.verify.launcher import StopRequested, stop_signals_held, stop_signals_raise

    done, before = [], signal.getsignal(signal.SIGTERM)
    with pytest.raises(StopRequested) as stopped:
        with stop_signals_raise():
            with stop_signals_held():  # as around the launcher's clean-up
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
                done.append("clean-up")
            done.append("after the clean-up")  # never reached: the held signal stops verify here
    assert done == ["clean-up"] and stopped.value.signal_name == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) == before  # the caller's handler is back


# A process started like torchrun and the probe (sweep.isolated_command) that would live 10 minutes.
SLEEPER = ("timeit", "-n", "1", "-r", "1", "import time; time.sleep(600)")
MIDDLE = """\
import os, subprocess, sys
os.environ[sys.argv[1]] = str(os.getpid())
child = subprocess.Popen(sys.argv[2:])
print(child.pid, flush=True)
child.wait()
"""


@linux_pdeathsig
def test_an_isolated_start_dies_with_its_parent_even_on_sigkill():
    from ddplint.verify.sweep import ENV_PARENT, isolated_command

    env = dict(os.environ, PYTHONPATH=str(REPO))
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE, ENV_PARENT, *isolated_command(*SLEEPER)],
                              stdout=subprocess.PIPE, text=True, env=env)
    child = int(middle.stdout.readline())
    try:
        time.sleep(1.0)  # the child has armed its death signal (it is sleeping in timeit by now)
        assert _alive(child)
        middle.kill()
        middle.wait()
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the child outlived its parent"
    finally:
        middle.kill()
        middle.wait()
        if _alive(child):
            os.kill(child, signal.SIGKILL)


@linux_pdeathsig
def test_an_isolated_start_whose_parent_is_already_gone_does_not_run():
    from ddplint.verify.sweep import ENV_PARENT, isolated_command

    # The parent it expects is not its parent: it died before the death signal could be armed.
    env = dict(os.environ, PYTHONPATH=str(REPO), **{ENV_PARENT: str(os.getpid() + 1_000_000)})
    proc = subprocess.run(isolated_command(*SLEEPER), env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stdout == "", proc


def _alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _wait_for_ranks_training(proc: subprocess.Popen, ready: Path, mark: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while len(list(ready.iterdir())) < 2:
        if proc.poll() is not None:
            pytest.fail(f"verify ended before both ranks trained (exit {proc.returncode}):\n{proc.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"ranks not training after {STARTUP_TIMEOUT_S} s: {marked(mark)}")
        time.sleep(0.2)


# -- item 1: verify's own interpreters import nothing from the workspace ---------------------------------
# Modules the probe and torchrun import before the user's script runs, planted in the workspace.
PLANTED = ("json", "socket", "signal", "threading", "faulthandler", "traceback", "datetime")
PLANT = """\
import os as _os
import sys as _sys
with open({marks!r}, "a") as _f:
    _f.write(f"{{__name__}} pid {{_os.getpid()}}: {{' '.join(_sys.argv)[:300]}}\\n")
if __name__ != "sitecustomize":  # then become the real module, so that the run goes on
    import importlib.machinery as _machinery
    import importlib.util as _util
    _spec = _machinery.PathFinder.find_spec(__name__, [_os.path.dirname(_os.__file__)])
    _module = _util.module_from_spec(_spec)
    _sys.modules[__name__] = _module
    _spec.loader.exec_module(_module)
"""
WORKSPACE_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import workspace_helper  # the script's own module, next to it: the script runs as `python train.py` would

dist.init_process_group("gloo")
dataset = TensorDataset(torch.randn(256, 4))
for epoch in range(100):
    for (batch,) in DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset)):
        pass
"""


@pytest.mark.slow
def test_verify_own_interpreters_import_nothing_from_the_workspace(tmp_path):
    # What verify promises: torchrun and the probe (everything before the user's script starts) never
    # import from the current directory, so a workspace file named like a standard module, or a
    # sitecustomize.py there, runs in none of them. The user's script itself does run, with its own
    # folder first on sys.path as under `python train.py`: its own module is imported (and a
    # standard module it imports first, which none here does, would come from its folder too).
    workspace, marks = tmp_path / "workspace", tmp_path / "marks.txt"
    workspace.mkdir()
    for name in (*PLANTED, "sitecustomize"):
        (workspace / f"{name}.py").write_text(PLANT.format(marks=str(marks)))
    (workspace / "workspace_helper.py").write_text(
        f"import os\nwith open({str(marks)!r}, 'a') as f:\n    f.write(f'workspace_helper pid {{os.getpid()}}\\n')\n")
    (workspace / "train.py").write_text(WORKSPACE_SCRIPT)
    # verify's own command line started without the current directory on its path (the CLI's own
    # isolation is not what this test is about), from inside the workspace, on a relative script path.
    cli = [sys.executable, "-c", "import sys; del sys.path[0]; from ddplint.cli import main; sys.exit(main())"]
    proc = subprocess.run([*cli, *verify_command(Path("train.py"), "--max-steps", "4")[3:]], cwd=workspace,
                          env=_env(), capture_output=True, text=True, timeout=240)
    lines = marks.read_text().splitlines() if marks.exists() else []
    planted = [line for line in lines if not line.startswith("workspace_helper ")]
    assert planted == [], "workspace modules imported by verify's own interpreters:\n" + "\n".join(planted)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert [r["status"] for r in report["ranks"]] == ["stopped after 4 steps"] * 2
    assert len([line for line in lines if line.startswith("workspace_helper ")]) == 2  # once per rank


# -- item 11: honest reports ------------------------------------------------------------------------------
def test_telemetry_dir_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    not_a_dir = tmp_path / "telemetry"
    not_a_dir.write_text("a file")
    script = EXAMPLES / "ddp001_missing_sampler_fixed.py"
    assert command.main([str(script), "--telemetry-dir", str(not_a_dir)]) == 2
    err = capsys.readouterr().err
    assert err == f"ddplint verify: --telemetry-dir {not_a_dir}: not a directory\n"
    assert not_a_dir.read_text() == "a file"


def test_a_rank_that_crashed_after_its_batches_makes_the_run_no_evidence():
    # Rank 0 crashed at its 3rd batch while rank 1 left with sys.exit(0): not a clean run.
    crashed = RankLog(0).loader().epoch(0, batches(0, 3)).end("exception", exit_code=1, error="RuntimeError: NaN")
    crashed = crashed.summary()
    crashed.log_tail = "Traceback ...\nRuntimeError: NaN"
    left = RankLog(1).loader().epoch(0, batches(1, 3)).end("finished", exit_code=0).summary()
    problem, detail = command._no_evidence([crashed, left], _launch(), [], timeout=60)
    assert problem == "rank 0 crashed after 3 steps: RuntimeError: NaN"
    assert detail.endswith("RuntimeError: NaN")
    # Both finishing normally stays evidence.
    done = [RankLog(r).loader().epoch(0, batches(r, 3)).end("finished", exit_code=0).summary() for r in (0, 1)]
    assert command._no_evidence(done, _launch(), [], timeout=60) == (None, "")


@pytest.mark.slow
def test_rank_exiting_0_while_rank_0_crashes_mid_run_is_exit_2_not_clean():
    script = SCRIPTS / "exit_zero_while_rank0_crashes.py"
    proc = subprocess.run(verify_command(script, "--max-steps", "50"), cwd=REPO, env=_env(), capture_output=True,
                          text=True, timeout=240)
    report = json.loads(proc.stdout)
    assert proc.returncode == 2, report
    assert report["evidence"] is False
    assert re.match(r"rank 0 crashed after \d+ steps: RuntimeError: loss is NaN at step 3$", report["problem"]), report
    assert "Traceback" not in proc.stderr


# -- item 12: nothing left in the temp folder -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["ddp008_load_without_map_location_buggy.py", "ddp008_load_without_map_location_fixed.py"])
def test_verify_of_the_checkpoint_examples_leaves_nothing_in_the_temp_folder(tmp_path, name):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(_env(), TMPDIR=str(temp))
    proc = subprocess.run(verify_command(EXAMPLES / name, "--cpu", "--max-steps", "6"), cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["evidence"] is True
    # torch's compiler cache (one folder per user, reused by every torch program) is not a leftover.
    assert sorted(p.name for p in temp.iterdir() if not p.name.startswith("torchinductor_")) == []

