"""Constructs found in real, public training scripts that once misled ddplint (false positives)
or hid a real bug from it (misses). Each is written from scratch to reproduce the construct; the
fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

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


def test_helper_module_that_only_calls_collectives_is_distributed(lint):
    assert lint(
        """
        import torch.distributed as dist
        from datasets import load_dataset

        def build():
            if dist.get_rank() == 0:
                data = load_dataset("json", data_files="train.jsonl")
            else:
                data = None
            objs = [data]
            dist.broadcast_object_list(objs, src=0)
            return objs[0]
        """
    ) == [(5, "DDP004")]


def test_leader_rank_held_in_a_constant(lint):
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        LEADER = 0

        def get_batches(rank, world_size, tokenizer, texts):
            out = torch.zeros(8, 16, dtype=torch.long)
            if rank == LEADER:
                parts = [torch.tensor(tokenizer(texts[i::world_size])) for i in range(world_size)]
            else:
                parts = None
            dist.scatter(out, parts, src=LEADER)
            return out
        """
    ) == [(9, "DDP004")]


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


def test_leader_rank_from_an_attribute_still_one_rank(lint):
    # A leader rank held on self: the leader alone loads and tokenizes, the others wait in
    # scatter; the leader's own DataLoader needs no DistributedSampler.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        class Feeder:
            def __init__(self, rank, leader_rank, world_size):
                dist.init_process_group("nccl")
                self.rank, self.leader_rank, self.world_size = rank, leader_rank, world_size

            def next_shard(self, out):
                if self.rank == self.leader_rank:
                    loader = DataLoader(load_corpus("train.txt"), batch_size=512, shuffle=True)
                    parts = [tokenize(batch) for batch in loader]
                else:
                    parts = None
                dist.scatter(out, parts, src=self.leader_rank)
                return out
        """
    ) == [(10, "DDP004")]


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


def test_download_only_with_inline_transforms(lint):
    assert lint(
        """
        import os
        import torch
        import torch.distributed as dist
        from torchvision import datasets, transforms

        local_rank = int(os.getenv("LOCAL_RANK", 0))
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)  # the bare barrier below runs on this GPU
        if local_rank == 0:
            dataset = datasets.FashionMNIST("./data", train=True, download=True, transform=transforms.ToTensor())
        dist.barrier()
        dataset = datasets.FashionMNIST("./data", train=True, download=False, transform=transforms.ToTensor())
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


def test_conditional_expression_inside_the_collective_call(lint):
    assert lint(
        """
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        payload = [load_and_tokenize("train.jsonl") if rank == 0 else None]
        dist.broadcast_object_list(payload, src=0)
        """
    ) == [(5, "DDP004")]
    assert lint(
        """
        import torch.distributed as dist

        dist.init_process_group("gloo")
        objects = [load_dataset_file("a.pt") if dist.get_rank() == 0 else None]; dist.broadcast_object_list(objects)
        """
    ) == [(4, "DDP004")]


def test_rank_zero_downloads_through_helpers_then_every_rank_builds(lint):
    # salesforce/LAVIS dataset builder: rank 0 fetches annotation files into the cache (through
    # two helper methods ending in torchvision's download_url), a barrier, then every rank builds.
    assert lint(
        """
        import os
        import torch.distributed as dist
        from torchvision.datasets.utils import download_url

        class Builder:
            def build_datasets(self):
                if dist.get_rank() == 0:
                    self._download_data()
                dist.barrier()
                return self.build()

            def _download_data(self):
                self._download_ann()

            def _download_ann(self):
                for url, path in self.urls:
                    download_url(url=url, root=os.path.dirname(path))
        """
    ) == []


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


# -- issue 7: the new rules on real code ---------------------------------------------------------------
def test_callee_whose_barrier_is_guarded_by_rank_is_not_a_collective(lint):
    # Legacy Hugging Face scripts: evaluation under `local_rank in [-1, 0]` calls a feature-cache
    # helper whose barriers sit under `... and not evaluate`, and passes evaluate=True: rank 0
    # never reaches them. (Without the flag, rank 0 alone would reach `if local_rank == 0:
    # barrier()` and hang: see test_flow_shapes.py.)
    assert lint(
        """
        import torch

        def load_features(args, split, evaluate=False):
            if args.local_rank not in [-1, 0] and not evaluate:
                torch.distributed.barrier()
            feats = torch.load(f"cache_{split}_features")
            if args.local_rank == 0 and not evaluate:
                torch.distributed.barrier()
            return feats

        def evaluate(args, model):
            feats = load_features(args, "dev", evaluate=True)
            return sum(model(x).item() for x in feats)

        torch.distributed.init_process_group("nccl")
        if args.do_eval and args.local_rank in [-1, 0]:
            results = evaluate(args, model.module)
        """,
        ["DDP007"],
    ) == []


def test_rank_zero_of_a_single_process_run_is_not_a_hardcoded_gpu(lint):
    # A classifier script: `rank = 0` on the non-distributed path, `.to(rank)` everywhere, and a
    # spawned worker that the single-GPU path calls directly with 0.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(gpu, args):
            if args.distributed:
                dist.init_process_group("nccl", rank=gpu, world_size=args.world)
                torch.cuda.set_device(gpu)
            net = Net().cuda(gpu)

        def main(args):
            if args.ddp:
                dist.init_process_group("nccl")
                rank = dist.get_rank() % torch.cuda.device_count()
                torch.cuda.set_device(rank)
            else:
                rank = 0
            model = Net().to(rank)
            if args.distributed:
                mp.spawn(worker, args=(args,), nprocs=args.world)
            else:
                worker(0, args)
        """,
        ["DDP005"],
    ) == []


def test_placement_in_a_helper_only_rank_zero_calls(lint):
    # A TRL distillation callback: the pass-rate evaluation returns early on other ranks and
    # moves the model to cuda:0, rank 0's own GPU.
    assert lint(
        """
        import torch
        import torch.distributed as dist

        def is_main_process():
            return not dist.is_initialized() or dist.get_rank() == 0

        class PassRate:
            def on_step_end(self, model):
                if not is_main_process():
                    return
                self.evaluate(model)

            def evaluate(self, model):
                model.to(torch.device("cuda:0"))

        dist.init_process_group("nccl")
        """,
        ["DDP005"],
    ) == []


def test_load_without_map_location_in_the_all_gpus_arm(lint):
    # MoCo's resume: without a GPU index the process drives all GPUs and loads as saved; with one
    # it maps to that GPU. The author chose per case.
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if args.gpu is None:
            checkpoint = torch.load(args.resume)
        else:
            checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
        """,
        ["DDP008"],
    ) == []


def test_load_inside_a_graph_library_dataset_class(lint):
    # A document-graph dataset derived from a graph library's Dataset reads one processed file
    # per item: data, saved from CPU tensors.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from pathlib import Path
        from torch_geometric.data import Dataset

        class DocGraphs(Dataset):
            def get(self, idx):
                return torch.load(Path(self.processed_dir) / f"data_{idx}.pt")

        dist.init_process_group("nccl")
        """,
        ["DDP008"],
    ) == []


def test_evaluation_only_on_the_single_gpu_path_inside_a_rank_zero_guard(lint):
    # Legacy HF examples: inside `local_rank in [-1, 0]` logging, evaluation runs only when
    # `local_rank == -1` ("only evaluate when single GPU").
    assert lint(
        """
        import torch

        torch.distributed.init_process_group("nccl")
        for step, batch in enumerate(loader):
            loss = model(batch)
            loss.backward()
            optimizer.step()
            if args.local_rank in [-1, 0] and step % args.logging_steps == 0:
                if args.local_rank == -1 and args.evaluate_during_training:
                    results = evaluate(args, model, tokenizer)
                print(loss.item())
        """,
        ["DDP010"],
    ) == []


def test_scoring_a_results_file_on_rank_zero_is_not_an_evaluation_pass(lint):
    # BLIP captioning: every rank generates captions for its shard, rank 0 scores the merged
    # file with the COCO toolkit; the model is not run again.
    assert lint(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(epochs):
            train_one_epoch(model, train_loader, optimizer)
            result_file = save_results(generate(model, val_loader), "val")
            if dist.get_rank() == 0:
                coco_val = coco_caption_eval(config["coco_gt_root"], result_file, "val")
            dist.barrier()
        """,
        ["DDP010"],
    ) == []


def test_forward_through_an_fsdp2_model_on_rank_zero_hangs(lint):
    # A FSDP2 tutorial: `model = fully_shard(model, mesh=mesh)`, then rank-0 validation: the
    # forward all-gathers parameters the other ranks never send (miss, now found).
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import fully_shard

        def test(model, loader):
            model.eval()
            with torch.no_grad():
                return sum(model(x).sum().item() for x in loader)

        dist.init_process_group("nccl")
        model = fully_shard(Net(), mesh=mesh)
        for epoch in range(3):
            train(model)
            dist.barrier()
            if dist.get_rank() == 0:
                acc = test(model, val_loader)
        """,
        ["DDP007"],
    ) == [(16, "DDP007")]


def test_set_device_zero_declares_one_gpu_per_process(lint):
    # A character-level GPT trained across machines with one GPU each: every rank pins GPU 0
    # on purpose and says so with set_device(0).
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        dist.init_process_group("nccl", init_method=f"tcp://{host}:{port}", rank=RANK, world_size=WORLD)
        torch.cuda.set_device(0)
        model = DistributedDataParallel(GPT(vocab).cuda(), device_ids=[0])
        """,
        ["DDP005"],
    ) == []
