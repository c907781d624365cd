import torch as T

model = T.nn.Sequential(T.nn.Conv2d(3, 16, 3), T.nn.ReLU(), T.nn.Flatten(), T.nn.LazyLinear(10))
model = T.nn.parallel.DataParallel(model.cuda())  # <- DDP003
y = model(T.randn(16, 3, 32, 32).cuda())
