#!/usr/bin/env bash
# The GPU check of `ddplint verify`: tests/test_verify_gpu.py (the nccl path, CUDA devices as DDP005
# and DDP008 evidence, NVML sampling, an mp.spawn script on real GPUs), in under 8 minutes on a
# machine with one GPU (the tests that need two are skipped there, with the reason).
#
#   tests/gpu_check.sh            # from anywhere; PYTHON=... picks the interpreter (torch with CUDA)
#
# The output also goes to gpu-check.log ($OUT/gpu-check.log when OUT is set): record what it showed
# in docs/verify.md, "GPU status".
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
log=${OUT:-.}/gpu-check.log
limit_s=470  # 8 minutes with a margin; each verify in the tests stops itself after 60 s

{
    date -u
    nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
    if ! "$python" -c 'import sys, torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count()); sys.exit(0 if torch.cuda.is_available() else 3)'; then
        echo "gpu_check: no CUDA GPU for $python (a CPU build of torch, or no driver): nothing to check"
        exit 2
    fi
    "$python" -c 'import pynvml' 2>/dev/null && echo "nvidia-ml-py: present" || echo "nvidia-ml-py: absent (NVML lines not checked)"
    timeout --signal=INT --kill-after=20 "$limit_s" \
        "$python" -m pytest tests/test_verify_gpu.py -v -rs -p no:cacheprovider
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
