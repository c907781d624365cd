"""Fine-tune a sequence classifier on a GLUE task with Accelerate (no Trainer).

    accelerate launch accelerate_no_trainer_glue.py --task_name mrpc --model_name_or_path bert-base-cased
"""
import argparse
import math
import os

import evaluate
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          get_scheduler)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--task_name", default="mrpc")
    p.add_argument("--model_name_or_path", required=True)
    p.add_argument("--per_device_train_batch_size", type=int, default=32)
    p.add_argument("--per_device_eval_batch_size", type=int, default=64)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--output_dir", default=None)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    set_seed(args.seed)

    raw = load_dataset("glue", args.task_name)
    num_labels = len(raw["train"].features["label"].names)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)

    def tokenize(batch):
        enc = tokenizer(batch["sentence1"], batch["sentence2"], truncation=True, max_length=128)
        enc["labels"] = batch["label"]
        return enc

    # the main process fills the datasets cache first; the others then read it
    with accelerator.main_process_first():
        processed = raw.map(tokenize, batched=True, remove_columns=raw["train"].column_names)

    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)
    train_dataloader = DataLoader(processed["train"], shuffle=True, collate_fn=collator,
                                  batch_size=args.per_device_train_batch_size)
    eval_dataloader = DataLoader(processed["validation"], collate_fn=collator,
                                 batch_size=args.per_device_eval_batch_size)

    no_decay = ["bias", "LayerNorm.weight"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.learning_rate)
    steps_per_epoch = math.ceil(len(train_dataloader) / accelerator.num_processes)
    max_train_steps = args.num_train_epochs * steps_per_epoch
    lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                                 num_training_steps=max_train_steps)

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler)

    metric = evaluate.load("glue", args.task_name)
    progress = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            progress.update(1)

        model.eval()
        for batch in eval_dataloader:
            with torch.no_grad():
                logits = model(**batch).logits
            preds, refs = accelerator.gather_for_metrics((logits.argmax(dim=-1), batch["labels"]))
            metric.add_batch(predictions=preds, references=refs)
        accelerator.print(f"epoch {epoch}: {metric.compute()}")

    if args.output_dir is not None:
        accelerator.wait_for_everyone()
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process,
                                  save_function=accelerator.save)
        if accelerator.is_main_process:
            tokenizer.save_pretrained(args.output_dir)
            with open(os.path.join(args.output_dir, "done.txt"), "w") as f:
                f.write("ok\n")


if __name__ == "__main__":
    main()
