"""GPU utilisation and memory while the ranks run, sampled through NVML (the optional `gpu`
extra, nvidia-ml-py). This is the "GPU 0 at 100 %, the others idle" picture, measured.

Imported lazily; without the package or without a GPU, `start_sampler` returns None and the
report simply has no GPU section. NOT YET RUN ON A GPU: written against the NVML API
(nvmlDeviceGetUtilizationRates, nvmlDeviceGetMemoryInfo) but only exercised on CPU machines.
"""

from __future__ import annotations

import threading
from typing import Optional

SAMPLE_INTERVAL_S = 0.5


class NvmlSampler:
    def __init__(self, pynvml, interval_s: float = SAMPLE_INTERVAL_S):
        self._nvml = pynvml
        self._interval = interval_s
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        self._samples: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(self._handles))}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ddplint-nvml", daemon=True)

    def start(self) -> "NvmlSampler":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for index, handle in enumerate(self._handles):
                try:
                    util = self._nvml.nvmlDeviceGetUtilizationRates(handle).gpu
                    used = self._nvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20
                except Exception:  # a device that went away mid-run: keep the other samples
                    continue
                self._samples[index].append((float(util), float(used)))
            self._stop.wait(self._interval)

    def stop(self) -> dict:
        """{"devices": [{index, samples, util_mean, util_max, mem_max_mib}]}"""
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self._nvml.nvmlShutdown()
        except Exception:
            pass
        devices = []
        for index, samples in self._samples.items():
            if not samples:
                continue
            utils = [u for u, _ in samples]
            devices.append({"index": index, "samples": len(samples), "util_mean": sum(utils) / len(utils),
                            "util_max": max(utils), "mem_max_mib": max(m for _, m in samples)})
        return {"devices": devices}


def start_sampler() -> Optional[NvmlSampler]:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        if pynvml.nvmlDeviceGetCount() == 0:
            pynvml.nvmlShutdown()
            return None
        return NvmlSampler(pynvml).start()
    except Exception:  # no driver, no device: not an error for verify, just no GPU section
        return None
