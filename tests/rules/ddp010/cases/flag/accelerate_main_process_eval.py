"""An Accelerate loop that evaluates on the main process only, between epochs."""

import torch
from accelerate import Accelerator


def run_eval(model, loader):
    model.eval()
    losses = []
    for batch in loader:
        with torch.no_grad():
            losses.append(model(**batch).loss.item())
    model.train()
    return sum(losses) / len(losses)


def main(model, optimizer, train_loader, eval_loader, epochs):
    accelerator = Accelerator()
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    for epoch in range(epochs):
        for batch in train_loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.is_main_process:  # <- DDP010
            eval_loss = run_eval(accelerator.unwrap_model(model), eval_loader)
            accelerator.print(f"epoch {epoch}: eval loss {eval_loss:.3f}")
