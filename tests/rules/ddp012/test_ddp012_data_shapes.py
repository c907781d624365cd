"""DDP012 on the shapes real training code is written in (a pytest test that feeds a GPU model):
what it must flag and what it must leave alone. Snippets are our own, written after shapes seen in
public repositories."""

from __future__ import annotations

from rule_snippets import rows_and_messages


def test_ddp012_is_silent_in_a_pytest_test_that_feeds_a_gpu_model():
    source = """
    import pytest
    import torch
    from torch.utils.data import DataLoader

    def test_training_step_reduces_the_loss():
        loader = DataLoader(load_corpus_split("train"), batch_size=2, shuffle=True)
        model = build_model().cuda()
        for batch in loader:
            model(batch.cuda()).backward()
            optimizer.step()
        assert final_loss(model) < initial
    """
    assert rows_and_messages(source, "DDP012") == []
    script = source.replace("import pytest\n    ", "").replace("def test_training_step_reduces_the_loss", "def main")
    assert len(rows_and_messages(script, "DDP012")) == 1
