"""Each rank leaves a detached grandchild behind (a child that forks, calls setsid() in the fork and
exits: the grandchild is in a session of its own and its parent is gone), then trains slowly. Once
training has begun, each rank drops a file in $DDPLINT_TEST_READY_DIR so that the test knows when
to stop verify."""
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

DETACH = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n"

dist.init_process_group("gloo")
rank = dist.get_rank()
subprocess.run([sys.executable, "-c", DETACH], check=True)
dataset = TensorDataset(torch.randn(4096, 4))
loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
for step, _batch in enumerate(loader):
    if step == 0:
        open(os.path.join(os.environ["DDPLINT_TEST_READY_DIR"], f"rank-{rank}"), "w").close()
    time.sleep(0.2)
