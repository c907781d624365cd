import logging
import torch
import torch.nn as nn

log = logging.getLogger(__name__)
model = nn.Linear(16, 1).cuda()
wrapper_cls = nn.parallel.DistributedDataParallel
log.info(f"not using {nn.DataParallel.__name__}; {torch.cuda.device_count()} GPUs visible")
log.info("choices: %s", [nn.DataParallel.__name__, wrapper_cls.__name__])
