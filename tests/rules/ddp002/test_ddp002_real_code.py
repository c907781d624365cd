"""DDP002 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_loader_passed_to_a_trainer_class_and_iterated_in_a_method(lint):
    # pytorch/examples multigpu: loader handed to Trainer.__init__, kept on self, iterated in
    # _run_epoch, which train() calls once per epoch.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        class Trainer:
            def __init__(self, model, train_data, opt):
                self.model, self.train_data, self.opt = model, train_data, opt

            def _run_epoch(self, epoch):
                for x, y in self.train_data:
                    self.opt.zero_grad()
                    self.model(x).sum().backward()
                    self.opt.step()

            def train(self, n):
                for epoch in range(n):
                    self._run_epoch(epoch)

        def main(ds, model, opt):
            dist.init_process_group("nccl")
            Trainer(model, DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds)), opt).train(10)
        """
    ) == [(15, "DDP002")]


def test_shuffling_sampler_of_an_evaluation_loader_needs_no_set_epoch(lint):
    # torchvision segmentation reference: the test sampler is a default (shuffling)
    # DistributedSampler that never gets set_epoch; evaluation order does not matter.
    assert lint(
        """
        import torch
        import torch.distributed as dist

        def evaluate(model, data_loader):
            with torch.no_grad():
                for image, target in data_loader:
                    model(image)

        def main(args):
            dist.init_process_group("nccl")
            train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
            test_sampler = torch.utils.data.distributed.DistributedSampler(dataset_test)
            data_loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=train_sampler)
            data_loader_test = torch.utils.data.DataLoader(dataset_test, batch_size=1, sampler=test_sampler)
            for epoch in range(args.epochs):
                train_sampler.set_epoch(epoch)
                train_one_epoch(model, data_loader, epoch)
                evaluate(model, data_loader_test)
        """
    ) == []


def test_hf_style_local_rank_minus_one_means_single_process(lint):
    assert lint(
        """
        import torch
        from torch.utils.data import DataLoader, DistributedSampler

        def train(args, train_dataset, model):
            if args.local_rank != -1:
                torch.distributed.init_process_group(backend="nccl")
            if args.local_rank == -1:
                train_dataloader = DataLoader(train_dataset, batch_size=8, shuffle=True)
            else:
                train_dataloader = DataLoader(train_dataset, batch_size=8, sampler=DistributedSampler(train_dataset))
            for epoch in range(3):
                for batch in train_dataloader:
                    model(batch).loss.backward()
        """
    ) == [(11, "DDP002")]


def test_self_referential_attribute_does_not_recurse_forever(lint):
    # huggingface/peft EVA example: `model = model.module` while set_epoch is traced.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        sampler = DistributedSampler(dataset)
        dataloader = DataLoader(dataset, batch_size=8, sampler=sampler)
        sampler.set_epoch(0)
        model = wrap(model)
        model = model.module
        for epoch in range(2):
            model.set_epoch(epoch)
            for batch in dataloader:
                model(batch).loss.backward()
        """
    ) == [(10, "DDP002")]
