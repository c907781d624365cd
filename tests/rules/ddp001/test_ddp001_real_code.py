"""DDP001 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_loader_over_the_dataset_deepspeed_shards_is_not_flagged(lint):
    # DeepSpeedExamples cifar: a shuffling loader for a preview batch, then DeepSpeed builds the
    # real (sharded) training loader from the same dataset and the name is rebound.
    assert lint(
        """
        import deepspeed
        from torch.utils.data import DataLoader

        deepspeed.init_distributed()
        trainset = make_dataset()
        trainloader = DataLoader(trainset, batch_size=16, shuffle=True)
        images, labels = next(iter(trainloader))
        engine, _, trainloader, _ = deepspeed.initialize(
            model=net, model_parameters=net.parameters(), training_data=trainset
        )
        for epoch in range(2):
            for x, y in trainloader:
                loss = criterion(engine(x), y)
                engine.backward(loss)
                engine.step()
        """
    ) == []


def test_kwargs_dict_grown_with_update_of_a_literal(lint):
    # The MNIST example turned into DDP: kwargs dicts merged with .update({...}), no sampler.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(ds, model, opt):
            dist.init_process_group("nccl")
            train_kwargs = {"batch_size": 64}
            train_kwargs.update({"num_workers": 1, "pin_memory": True, "shuffle": True})
            train_loader = torch.utils.data.DataLoader(ds, **train_kwargs)
            model = DDP(model)
            for epoch in range(3):
                for x, y in train_loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
        """
    ) == [(9, "DDP001")]


def test_loader_built_by_the_leader_rank_only_needs_no_sampler(lint):
    # The leader loads and scatters batches; its loader must not get a DistributedSampler.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        dist.init_process_group("gloo")
        if dist.get_rank() == 0:
            leader_loader = DataLoader(train_set, batch_size=64, shuffle=True)
            for batch in leader_loader:
                send_to_workers(batch)
        """
    ) == []


def test_kwargs_dict_updated_with_another_named_dict(lint):
    # PrincetonUniversity multi_gpu_training: MNIST example moved to DDP, loader kwargs merged
    # from a second dict, and no DistributedSampler anywhere.
    assert lint(
        """
        import os
        import torch
        import torch.distributed as dist

        def main(args, dataset1, model, optimizer):
            dist.init_process_group("nccl")
            train_kwargs = {"batch_size": args.batch_size}
            if torch.cuda.is_available():
                cuda_kwargs = {"num_workers": int(os.environ["SLURM_CPUS_PER_TASK"]), "pin_memory": True, "shuffle": True}
                train_kwargs.update(cuda_kwargs)
            train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
            for epoch in range(1, args.epochs + 1):
                for data, target in train_loader:
                    optimizer.zero_grad()
                    model(data).sum().backward()
                    optimizer.step()
        """
    ) == [(11, "DDP001")]


def test_factory_returning_train_or_eval_loader_by_flag(lint):
    # One helper builds either loader; the `loader` name is assigned in both arms of the `if`,
    # and only the train arm's loader is trained on.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def make_loader(ds, train):
            if train:
                sampler = DistributedSampler(ds, shuffle=True)
                loader = DataLoader(ds, batch_size=8, sampler=sampler)
                return loader, sampler
            else:
                loader = DataLoader(ds, batch_size=8, shuffle=False)
                return loader

        def main(model, opt, train_ds, test_ds):
            dist.init_process_group("gloo")
            train_loader, sampler = make_loader(train_ds, train=True)
            test_loader = make_loader(test_ds, train=False)
            for epoch in range(3):
                sampler.set_epoch(epoch)
                for x, y in train_loader:
                    opt.zero_grad()
                    ((model(x) - y) ** 2).mean().backward()
                    opt.step()
                with torch.no_grad():
                    for x, y in test_loader:
                        model(x)
        """
    ) == []


def test_loader_on_the_single_process_path(lint):
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def main(model, opt, ds):
            ddp = torch.cuda.device_count() > 1
            if ddp:
                dist.init_process_group("nccl")
            if ddp:
                train_loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))
            else:
                train_loader = DataLoader(ds, batch_size=8, shuffle=True)
            for epoch in range(3):
                if ddp:
                    train_loader.sampler.set_epoch(epoch)
                for x, y in train_loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
        """
    ) == []


def test_dataset_handed_to_a_library_class_by_another_module(lint):
    # EleutherAI-style Trainer: the caller (another module) shards the dataset per rank.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        class Trainer:
            def __init__(self, dataset, model, opt):
                self.dataset, self.model, self.opt = dataset, model, opt

            def fit(self):
                rank_zero = not dist.is_initialized() or dist.get_rank() == 0
                loader = DataLoader(self.dataset, batch_size=8, shuffle=False)
                for batch in loader:
                    self.model(batch).mean().backward()
                    self.opt.step()
        """
    ) == []


def test_dataset_built_in_a_function_run_by_a_pool(lint):
    # NVIDIA BERT pretraining: each rank's shard file is chosen by the caller and the loader is
    # built in a helper submitted to a process pool.
    assert lint(
        """
        import torch.distributed as dist
        from concurrent.futures import ProcessPoolExecutor
        from torch.utils.data import DataLoader, RandomSampler

        def create_pretraining_dataset(input_file, batch_size):
            train_data = ShardFileDataset(input_file)
            return DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=batch_size)

        def main(files, model, opt):
            dist.init_process_group("nccl")
            rank, world = dist.get_rank(), dist.get_world_size()
            pool = ProcessPoolExecutor(1)
            for f_id in range(1, len(files)):
                future = pool.submit(create_pretraining_dataset, files[(f_id * world + rank) % len(files)], 32)
                for batch in future.result():
                    opt.zero_grad()
                    model(batch).mean().backward()
                    opt.step()
        """
    ) == []


def test_arguments_of_mp_spawn_reach_the_worker(lint):
    # mp.spawn(worker, args=(world_size, dataset)) calls worker(rank, world_size, dataset).
    assert lint(
        """
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader

        class Trainer:
            def __init__(self, dataset):
                self.dataset = dataset

        def worker(rank, world_size, dataset):
            dist.init_process_group("gloo", rank=rank, world_size=world_size)
            loader = DataLoader(dataset, batch_size=8, shuffle=True)
            for x in loader:
                pass

        if __name__ == "__main__":
            mp.spawn(worker, args=(2, make_dataset()), nprocs=2)
        """
    ) == [(11, "DDP001")]
