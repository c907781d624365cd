import os
import torch
import torch.distributed as dist
import webdataset as wds
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
urls = "s3://bucket/train-{000000..001023}.tar"
dataset = (
    wds.WebDataset(urls, nodesplitter=wds.split_by_node, shardshuffle=True)
    .shuffle(1000)
    .decode("torchrgb")
    .to_tuple("jpg", "cls")
    .batched(64)
)
train_loader = DataLoader(dataset, batch_size=None, num_workers=8)
model = torch.nn.Linear(3 * 224 * 224, 1000).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for images, labels in train_loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda().flatten(1)), labels.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
