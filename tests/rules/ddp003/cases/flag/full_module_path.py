import torch
import torch.nn.parallel.data_parallel

net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
net = torch.nn.parallel.data_parallel.DataParallel(net).cuda()  # <- DDP003
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
loss = net(torch.randn(8, 128).cuda()).logsumexp(1).mean()
loss.backward()
optimizer.step()
