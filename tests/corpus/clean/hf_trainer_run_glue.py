"""Text classification with the Hugging Face Trainer (run_glue-like).

    torchrun --nproc_per_node 8 hf_trainer_run_glue.py --model_name_or_path roberta-base \
        --task_name sst2 --do_train --do_eval --output_dir out
"""
import logging
import sys
from dataclasses import dataclass, field
from typing import Optional

import evaluate
import numpy as np
from datasets import load_dataset
from transformers import (AutoConfig, AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, HfArgumentParser, Trainer, TrainingArguments,
                          set_seed)

logger = logging.getLogger(__name__)


@dataclass
class DataArguments:
    task_name: str = field(default="sst2")
    max_seq_length: int = field(default=128)
    max_train_samples: Optional[int] = field(default=None)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="roberta-base")


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    logging.basicConfig(level=logging.INFO if training_args.should_log else logging.WARN,
                        handlers=[logging.StreamHandler(sys.stdout)])
    set_seed(training_args.seed)

    raw = load_dataset("glue", data_args.task_name)
    labels = raw["train"].features["label"].names
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, num_labels=len(labels))
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(model_args.model_name_or_path, config=config)

    def preprocess(examples):
        return tokenizer(examples["sentence"], truncation=True, max_length=data_args.max_seq_length)

    with training_args.main_process_first(desc="dataset map pre-processing"):
        raw = raw.map(preprocess, batched=True, desc="Running tokenizer on dataset")

    train_dataset = raw["train"]
    if data_args.max_train_samples is not None:
        train_dataset = train_dataset.select(range(data_args.max_train_samples))
    eval_dataset = raw["validation"]

    metric = evaluate.load("glue", data_args.task_name)

    def compute_metrics(p):
        preds = np.argmax(p.predictions, axis=1)
        return metric.compute(predictions=preds, references=p.label_ids)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset if training_args.do_train else None,
        eval_dataset=eval_dataset if training_args.do_eval else None,
        compute_metrics=compute_metrics,
        tokenizer=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8),
    )

    if training_args.do_train:
        result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
        trainer.save_model()
        trainer.log_metrics("train", result.metrics)
        trainer.save_metrics("train", result.metrics)
        trainer.save_state()
    if training_args.do_eval:
        metrics = trainer.evaluate()
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
