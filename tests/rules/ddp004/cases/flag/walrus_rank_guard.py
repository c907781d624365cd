import numpy as np
import torch.distributed as dist

dist.init_process_group("gloo")
buf = [None]
if (rank := dist.get_rank()) == 0:  # <- DDP004
    arr = np.load("train_features.npz")
    buf = [{k: arr[k] for k in arr.files}]
dist.broadcast_object_list(buf, src=0)
features = buf[0]
print(rank, len(features))
