import torch
from torch.nn import DataParallel as DP
from torchvision.models import resnet50

model = resnet50(num_classes=100)
model = DP(model, device_ids=list(range(torch.cuda.device_count()))).cuda()  # <- DDP003
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(64, 3, 224, 224).cuda()).logsumexp(1).mean()
loss.backward()
opt.step()
