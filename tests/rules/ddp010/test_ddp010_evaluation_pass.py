"""DDP010 on real-code shapes: an evaluation pass is a loop over data whose amount grows with the
dataset (a loader, a dataset, a batch source fed by one) that rank 0 alone runs while the others
wait. A fixed-size sample made for a log (a few images from the command-line prompts, one text
generated from a start string) or the scoring of results every rank already computed is not.
Each shape is checked on what must be flagged and on what must be left alone."""

from __future__ import annotations

# A training loop whose rank-0 block runs `{call}`; the others wait in the next step's all-reduce.
_TRAINING = """
import argparse
import torch
import torch.distributed as dist

{functions}

parser = argparse.ArgumentParser()
parser.add_argument("--sample_prompts", nargs="+")
parser.add_argument("--sample_pictures", nargs="+")
parser.add_argument("--num_samples", type=int, default=4)
args = parser.parse_args()
dist.init_process_group("nccl")
for step, (x, y) in enumerate(train_loader):
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    if dist.get_rank() == 0 and step % 500 == 0:
        {call}
"""


def _script(functions: str, call: str) -> str:
    return _TRAINING.format(functions=functions.strip("\n"), call=call)


def _flagged(lint, functions: str, call: str) -> list:
    source = _script(functions, call)
    line = source.lstrip("\n").splitlines().index("    if dist.get_rank() == 0 and step % 500 == 0:") + 1
    return [(row, code) for row, code in lint(source, ["DDP010"]) if row == line]


# -- a few samples repeated a set number of times -----------------------------------------------
_REPEATED_SAMPLES = """
def draw_samples(painter, args):
    pictures = []
    with torch.no_grad():
        codes = painter.encode(args.sample_prompts[0])
        for _ in range(args.num_samples):
            pictures.append(painter(codes))
    return pictures
"""

# The same loop shape, but each round draws a fresh batch from the validation file.
_BATCHES_FROM_A_FILE = """
import numpy as np

def next_batch(split):
    tokens = np.memmap(f"{split}.bin", dtype=np.uint16, mode="r")
    start = torch.randint(len(tokens) - 65, (8,))
    return torch.stack([torch.from_numpy(tokens[s:s + 64].astype(np.int64)) for s in start])

@torch.no_grad()
def mean_loss(net, rounds):
    net.eval()
    total = 0.0
    for _ in range(rounds):
        batch = next_batch("val")
        total += net(batch).item()
    net.train()
    return total / rounds
"""


def test_repeating_one_input_a_set_number_of_times_is_a_sample_for_the_log(lint):
    assert _flagged(lint, _REPEATED_SAMPLES, "draw_samples(model.module, args)") == []


def test_drawing_a_fresh_batch_from_the_data_every_round_is_an_evaluation_pass(lint):
    assert len(_flagged(lint, _BATCHES_FROM_A_FILE, "print(mean_loss(model.module, 200))")) == 1


# -- items given on the command line or written in the code -----------------------------------
_PICTURES_FROM_THE_COMMAND_LINE = """
from PIL import Image

def rebuild_pictures(autoencoder, args):
    autoencoder.eval()
    rebuilt = []
    for i, path in enumerate(args.sample_pictures):
        picture = to_tensor(Image.open(path).convert("RGB")).unsqueeze(0)
        with torch.no_grad():
            rebuilt.append(autoencoder(picture))
    autoencoder.train()
    return rebuilt
"""

_PICTURES_FROM_A_LOADER = """
def rebuild_pictures(autoencoder, pictures):
    autoencoder.eval()
    error = 0.0
    with torch.no_grad():
        for picture, _ in pictures:
            error += (autoencoder(picture) - picture).abs().mean().item()
    autoencoder.train()
    return error
"""


def test_reconstructing_the_pictures_named_on_the_command_line_is_a_sample_for_the_log(lint):
    assert _flagged(lint, _PICTURES_FROM_THE_COMMAND_LINE, "rebuild_pictures(model.module, args)") == []


def test_reconstructing_every_picture_of_a_validation_loader_is_an_evaluation_pass(lint):
    functions = _PICTURES_FROM_A_LOADER + "\nval_loader = torch.utils.data.DataLoader(val_set, batch_size=32)\n"
    assert len(_flagged(lint, functions, "print(rebuild_pictures(model.module, val_loader))")) == 1


def test_pictures_repeated_to_match_the_prompts_stay_a_fixed_handful(lint):
    functions = """
def paint(painter, args):
    pairs = args.sample_pictures * len(args.sample_prompts)
    out = []
    with torch.no_grad():
        for i, picture in enumerate(pairs):
            out.append(painter(picture, args.sample_prompts[i % 2]))
    return out
"""
    assert _flagged(lint, functions, "paint(model.module, args)") == []


def test_outputs_of_a_generation_from_the_command_line_prompts_are_only_logged(lint):
    call = """model.eval()
        with torch.no_grad():
            pictures = painter(prompt=args.sample_prompts).images
            board.log([wandb.Image(picture) for picture in pictures])
        model.train()"""
    source = _script("import wandb", call)
    assert lint(source, ["DDP010"]) == []
    on_data = _script("import wandb", call.replace("painter(prompt=args.sample_prompts).images", "val_loader"))
    on_data = on_data.replace("wandb.Image(picture)", "model(picture)")
    assert [code for _, code in lint(on_data, ["DDP010"])] == ["DDP010"]


def test_saving_a_written_table_of_models_is_not_an_evaluation_pass(lint):
    functions = """
@torch.no_grad()
def save_parts(parts, folder):
    for name in parts.keys():
        store(unwrap(parts[name]), f"{folder}/{name}")
"""
    assert _flagged(lint, functions, 'save_parts({"encoder": encoder, "head": head}, "out")') == []
    # the same decorated loop over batches of a loader the file builds does evaluate
    loader_pass = functions.replace("parts.keys()", "loader").replace(
        'store(unwrap(parts[name]), f"{folder}/{name}")', "print(model(name))"
    ) + "\nval_loader = torch.utils.data.DataLoader(val_set)\n"
    assert len(_flagged(lint, loader_pass, 'save_parts(val_loader, "out")')) == 1


# -- items of an unknown origin: what the loop does with them decides --------------------------
def test_scoring_results_with_array_functions_is_not_an_evaluation_pass(lint):
    functions = """
import numpy as np

@torch.no_grad()
def retrieval_recall(scores, truth):
    hits = np.zeros(len(scores))
    for row, line in enumerate(scores):
        order = np.argsort(line)[::-1]
        hits[row] = np.where(order == truth[row])[0][0]
    return float((hits < 5).mean())

def scores_of(net, loader):
    return merged_scores(net, loader)
"""
    call = "print(retrieval_recall(scores_of(model, val_loader), val_loader.dataset.truth))"
    assert _flagged(lint, functions, call) == []


def test_items_of_an_unknown_loader_handed_to_the_model_are_an_evaluation_pass(lint):
    functions = """
def accuracy(net, batches):
    net.eval()
    right = 0
    with torch.no_grad():
        for inputs, labels in batches:
            inputs = inputs.cuda()
            right += (net(inputs).argmax(1) == labels.cuda()).sum().item()
    net.train()
    return right
"""
    assert len(_flagged(lint, functions, "print(accuracy(model.module, make_val_loader(args)))")) == 1


def test_a_loop_over_loggers_that_only_call_their_own_methods_is_not_a_pass(lint):
    functions = """
def publish(pictures, board):
    with torch.no_grad():
        for sink in board.sinks:
            sink.write("samples", pictures)
            sink.flush()
"""
    assert _flagged(lint, functions, "publish(samples, board)") == []


def test_tokenising_the_written_prompts_is_part_of_the_sample(lint):
    call = """model.eval()
        for prompt in ["Once upon a time", "The answer is"]:
            ids = tokenizer(prompt)
            with torch.no_grad():
                print(tokenizer.decode(model.module.generate(ids)))
        model.train()"""
    assert lint(_script("", call), ["DDP010"]) == []


# -- counted loops: what the count is and what the body picks by the index ---------------------
_COUNTED = """
@torch.no_grad()
def sliced_loss(net, val_tokens, batch):
    net.eval()
    total = 0.0
    for i in range({count}):
        chunk = val_tokens[i * batch:(i + 1) * batch]
        total += net(chunk).item()
    net.train()
    return total
"""


def test_batches_sliced_from_the_validation_tensor_are_an_evaluation_pass(lint):
    for count in ("len(val_tokens) // batch", "steps_for(val_tokens)"):
        functions = _COUNTED.format(count=count)
        assert len(_flagged(lint, functions, "print(sliced_loss(model.module, held_out, 16))")) == 1, count


def test_a_count_given_on_the_command_line_picks_a_fixed_handful(lint):
    functions = _COUNTED.format(count="args.num_samples")
    assert _flagged(lint, functions, "print(sliced_loss(model.module, held_out, 16))") == []


def test_an_evaluation_helper_named_val_is_screened_in(lint):
    # "val" is a word of an evaluation call; the screen must let such files through to DDP010
    source = """
import torch.distributed as dist

def run(model, loader, val_loader, optimizer):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    for epoch in range(10):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
        if rank == 0:
            {call}
        dist.barrier()
"""
    assert lint(source.format(call="val_epoch(model, val_loader)"), ["DDP010"]) == [(10, "DDP010")]
    assert lint(source.format(call="log_value(model)"), ["DDP010"]) == []
