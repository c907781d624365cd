"""DDP010 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


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
