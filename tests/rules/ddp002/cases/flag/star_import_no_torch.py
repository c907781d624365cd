from models import *  # brings torch, torchvision, nn into scope
import horovod.torch as hvd

train_dataset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True)

if __name__ == "__main__":
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    sampler = torch.utils.data.distributed.DistributedSampler(
        train_dataset, num_replicas=hvd.size(), rank=hvd.rank())
    loader = torch.utils.data.DataLoader(train_dataset, batch_size=64, sampler=sampler)
    model = Net().cuda()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01))
    for epoch in range(10):          # <- DDP002
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
