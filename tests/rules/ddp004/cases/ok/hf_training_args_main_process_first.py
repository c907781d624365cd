from datasets import load_dataset
from transformers import AutoTokenizer, HfArgumentParser, TrainingArguments

(training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
tokenizer = AutoTokenizer.from_pretrained("roberta-base")
raw = load_dataset("imdb")
with training_args.main_process_first(desc="dataset map tokenization"):
    train_ds = raw["train"].map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
if training_args.local_rank in (-1, 0):
    print(f"{len(train_ds)} training examples")
