import os
import torch
from torch.utils.data import DataLoader
from transformers import Trainer, TrainingArguments
from my_project.data import build_model, load_train_set


class BucketedTrainer(Trainer):
    def get_train_dataloader(self):
        return DataLoader(
            self.train_dataset,
            batch_size=self.args.per_device_train_batch_size,
            shuffle=True,
            collate_fn=self.data_collator,
        )


local_rank = int(os.environ.get("LOCAL_RANK", -1))
args = TrainingArguments(output_dir="out", per_device_train_batch_size=16, local_rank=local_rank)
trainer = BucketedTrainer(model=build_model(), args=args, train_dataset=load_train_set())
trainer.train()
