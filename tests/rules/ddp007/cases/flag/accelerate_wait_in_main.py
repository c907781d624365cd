"""Accelerate script whose saving step waits for the other processes from inside the
main-process branch: the others never get there."""

import torch
from accelerate import Accelerator


def main(model, optimizer, train_loader, epochs):
    accelerator = Accelerator()
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.is_main_process:
            accelerator.wait_for_everyone()  # <- DDP007
            unwrapped = accelerator.unwrap_model(model)
            torch.save(unwrapped.state_dict(), f"model_{epoch}.pt")
