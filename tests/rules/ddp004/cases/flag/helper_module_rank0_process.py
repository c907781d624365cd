from torch import distributed as dist


def process(dataset, tokenizer):
    dataset = dataset.map(lambda ex: tokenizer(ex["text"]), batched=True, num_proc=32)
    return dataset.filter(lambda ex: len(ex["input_ids"]) > 0)


def process_hf_dataset(*args, **kwargs):
    if not (dist.is_available() and dist.is_initialized()):
        return process(*args, **kwargs)
    if dist.get_rank() == 0:          # <- DDP004
        dataset = process(*args, **kwargs)
        objects = [dataset]
    else:
        objects = [None]
    dist.broadcast_object_list(objects, src=0)
    return objects[0]
