"""`ddplint verify`: run a training script briefly on N ranks and judge the static findings.

    command   the command line: static check, launch, verdicts, report, exit code
    launcher  torchrun in its own session, step budget and timeout, no orphan processes
    sweep     isolated starts, death signal, the run's mark, the reaper: nothing of a run outlives it
    probe     runs inside every rank: instruments torch, then runs the script as __main__
    emulation verify --cpu, inside every rank: N logical GPUs on the CPU, device requests recorded
    spawn     scripts that start their own ranks (mp.spawn, multiprocessing): the workers followed
    provenance which device saved a file, kept in the project's cache folder between rehearsals
    telemetry the per-rank JSON-lines files (written by the probe, read back by the launcher)
    ranks     per-rank measurements summarised from the telemetry
    verdicts  confirmed / refuted / inconclusive for each finding, plus runtime-only findings
    report    text and JSON output, Chrome trace
    nvml      GPU utilisation and memory sampling (optional `gpu` extra)

Only `probe`, `emulation`, `spawn`, `telemetry` and `sweep` are imported inside the ranks (and analysis/torch_api.py,
loaded as a lone file); they must stay light (no libcst).
"""
