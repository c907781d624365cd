from examples.run_lm_finetuning import *  # provides torch, BertForPreTraining, ...

n_gpu = torch.cuda.device_count()
model = BertForPreTraining.from_pretrained("bert-base-uncased")
model.to("cuda")
if n_gpu > 1:
    model = torch.nn.DataParallel(model)   # <- DDP003
