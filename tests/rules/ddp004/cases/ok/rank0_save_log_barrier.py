import json
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
rank = dist.get_rank()
out_dir = os.environ.get("OUT_DIR", "runs/exp1")
model = torch.nn.Linear(16, 1).cuda()
for epoch in range(10):
    loss = model(torch.randn(32, 16, device="cuda")).pow(2).mean()
    loss.backward()
    if rank == 0:
        os.makedirs(out_dir, exist_ok=True)
        torch.save({"epoch": epoch, "model": model.state_dict()}, f"{out_dir}/ckpt_{epoch}.pt")
        with open(f"{out_dir}/metrics.jsonl", "a") as f:
            f.write(json.dumps({"epoch": epoch, "loss": loss.item()}) + "\n")
        print(f"epoch {epoch}: loss={loss.item():.4f}")
    dist.barrier()
