import torch
from torch.nn.parallel.data_parallel import DataParallel as _DP
from torchvision.models import vit_b_16

model = vit_b_16().cuda()
if torch.cuda.device_count() > 1:
    model = _DP(model)  # <- DDP003
images = torch.randn(64, 3, 224, 224, device="cuda")
logits = model(images)
print(logits.shape)
