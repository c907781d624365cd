from accelerate import Accelerator
from datasets import load_dataset
from transformers import AutoTokenizer

accelerator = Accelerator()
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
raw = load_dataset("glue", "mrpc")
with accelerator.main_process_first():
    tokenized = raw.map(lambda ex: tokenizer(ex["sentence1"], ex["sentence2"], truncation=True),
                        batched=True, remove_columns=["idx", "sentence1", "sentence2"])
if accelerator.is_main_process:
    print(tokenized)
accelerator.wait_for_everyone()
