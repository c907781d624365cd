import paddle
import paddle.distributed as pdist
from paddle import DataParallel

pdist.init_parallel_env()
model = paddle.vision.models.resnet50()
# paddle.DataParallel is multi-process (one process per GPU), like torch DDP
model = DataParallel(model)
opt = paddle.optimizer.Adam(parameters=model.parameters())
x = paddle.randn([32, 3, 224, 224])
loss = model(x).mean()
loss.backward()
opt.step()
opt.clear_grad()
