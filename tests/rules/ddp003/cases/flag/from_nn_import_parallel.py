import torch
from torch.nn import parallel
import torch.nn.parallel as par

a = parallel.DataParallel(torch.nn.Linear(8, 8).cuda())  # <- DDP003
b = par.DataParallel(torch.nn.Linear(8, 8).cuda())  # <- DDP003
