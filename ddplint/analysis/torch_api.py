"""What ddplint knows about torch and the frameworks around it, written once.

The screens, the analysis and `ddplint verify`'s in-rank probe all read these tables, so a
collective or a loader class added here is seen by every one of them. This module imports nothing
of ddplint: it is data, not analysis. Qualified names are canonical (see analysis/imports.py:
`torch.nn.parallel.data_parallel.DataParallel` is written `torch.nn.DataParallel`).
"""

from __future__ import annotations

# -- collectives ------------------------------------------------------------------------------
# torch.distributed collectives that make the other ranks wait for this one's data: the ranks
# that did not run the work wait here for the one that did.
BROADCAST_COLLECTIVES = frozenset({"broadcast", "broadcast_object_list", "scatter", "scatter_object_list"})
BARRIER_COLLECTIVES = frozenset({"barrier", "monitored_barrier", "wait_for_everyone"})

# Every torch.distributed call that every rank of the group must make (a rank that skips one
# leaves the others waiting, or pairs their call with a different one).
COLLECTIVES = frozenset(
    {
        "barrier", "monitored_barrier", "all_reduce", "all_reduce_coalesced", "broadcast", "all_gather",
        "all_gather_into_tensor", "all_gather_coalesced", "reduce", "reduce_scatter", "reduce_scatter_tensor",
        "scatter", "gather", "all_to_all", "all_to_all_single", "broadcast_object_list", "all_gather_object",
        "gather_object", "scatter_object_list", "new_group",
    }
)
# The subset of COLLECTIVES that exchange data and are functions of torch.distributed the probe can
# wrap at run time (`new_group` and `all_reduce_coalesced` are set-up / deprecated forms).
PROBED_COLLECTIVES = tuple(sorted(COLLECTIVES - {"new_group", "all_reduce_coalesced", "all_gather_coalesced"}))

# Accelerator (HF Accelerate) methods that talk to every process.
ACCELERATOR = frozenset({"accelerate.Accelerator"})
ACCELERATOR_COLLECTIVES = frozenset({"wait_for_everyone", "gather", "gather_for_metrics", "reduce", "pad_across_processes"})
# Framework methods that wrap the model they are given in DistributedDataParallel (or FSDP) on a
# multi-process run, by the framework object they are called on: what they return is a wrapped
# model whose forward talks to the other ranks, and building the wrapper is itself a collective
# (DDP's constructor checks every rank's parameter shapes and broadcasts rank 0's weights).
MODEL_WRAPPING_METHODS = {
    "prepare": ACCELERATOR,  # `model, opt = accelerator.prepare(model, opt)`
    "prepare_model": ACCELERATOR,
    "setup": frozenset({"lightning.fabric.Fabric", "lightning.Fabric", "lightning_fabric.Fabric"}),
    "setup_module": frozenset({"lightning.fabric.Fabric", "lightning.Fabric", "lightning_fabric.Fabric"}),
}
# Calls whose result is a module (never an optimizer or a loader): `accelerator.unwrap_model(m)`,
# `AutoModel.from_pretrained(...)`. With a `torch.nn` layer, a project `nn.Module` subclass, or a
# value whose `.parameters()` the file asks for, what tells a prepared argument is a model.
MODULE_RETURNING_METHODS = frozenset({"unwrap_model", "from_pretrained"})
MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
TORCH_MODULE = frozenset({"torch.nn.Module"})

# Framework methods that synchronise every process inside (their docs: "must be called on all
# processes"): method -> the words the receiver's name holds. Only in files that import the
# framework (LIGHTNING_PACKAGES).
FRAMEWORK_COLLECTIVES = {
    "save_checkpoint": frozenset({"trainer"}),  # Lightning Trainer: strategy barrier / checkpoint IO
    "save": frozenset({"fabric"}),  # Fabric.save
    "load": frozenset({"fabric"}),  # Fabric.load
    "barrier": frozenset({"fabric", "strategy"}),
    "all_reduce": frozenset({"fabric"}),
    "all_gather": frozenset({"fabric"}),
    "broadcast": frozenset({"fabric", "strategy"}),
    "reduce_boolean_decision": frozenset({"strategy"}),  # an all_reduce of one flag
}

# Distributed checkpoint (DCP) calls that coordinate every rank's shard ("a collective call"),
# unless given `no_dist=True`.
CHECKPOINT_COLLECTIVES = frozenset(
    {
        "torch.distributed.checkpoint.save", "torch.distributed.checkpoint.load",
        "torch.distributed.checkpoint.async_save", "torch.distributed.checkpoint.save_state_dict",
        "torch.distributed.checkpoint.load_state_dict",
    }
)

# Methods every process must call, by what built the object they are called on: DeepSpeed's
# engine ("all processes must call this method", it saves and loads each rank's shard), and an
# FSDP (FullyShardedDataParallel) module, whose state_dict() all-gathers the sharded parameters.
SYNCHRONISING_METHODS = {
    "deepspeed.initialize": frozenset({"save_checkpoint", "load_checkpoint"}),
    "torch.distributed.fsdp.FullyShardedDataParallel": frozenset({"state_dict"}),
}
# Metric objects whose `compute()` first gathers every process's state (a collective), by the
# package of the class that built them: torchmetrics' `Metric` in a distributed run (unless built
# with `sync_on_compute=False`), ignite's metrics (their `compute` is wrapped by `sync_all_reduce`).
METRICS_SYNCING_ON_COMPUTE = ("torchmetrics.", "ignite.metrics.")
METRIC_SYNCING_METHOD = "compute"

# A LightningModule's own methods that talk to every process (`self.all_gather(x)`), and its
# logging calls that do when given `sync_dist=True` (a reduce across processes).
LIGHTNING_MODULE = frozenset(
    {
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "lightning.LightningModule",
    }
)
LIGHTNING_MODULE_COLLECTIVES = frozenset({"all_gather"})
# Lightning's Trainer: with its defaults (`devices="auto"`, strategy "auto") a machine with
# several GPUs runs one process per GPU, each building the LightningModule and running its hooks.
LIGHTNING_TRAINER = frozenset(
    {"lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer", "lightning.pytorch.trainer.trainer.Trainer", "lightning.Trainer"}
)
# The Trainer attribute that ends `fit()` after the current step, on the rank that sets it: the
# others go on into the next step's collectives (Lightning's EarlyStopping reduces it first).
LIGHTNING_STOP_FLAG = "should_stop"
# A LightningModule's hooks that the Trainer runs on every rank for each batch of that rank's
# shard of the evaluation loaders.
LIGHTNING_EVALUATION_STEPS = frozenset({"validation_step", "test_step"})
# Lightning's decorator that makes a function do nothing on every rank but 0 (and mmcv's /
# mmengine's `master_only`, which does the same).
RANK_ZERO_ONLY_DECORATORS = frozenset(
    {
        "lightning.pytorch.utilities.rank_zero_only",
        "lightning.pytorch.utilities.rank_zero.rank_zero_only",
        "lightning.pytorch.utilities.distributed.rank_zero_only",
        "lightning.fabric.utilities.rank_zero_only",
        "lightning.fabric.utilities.rank_zero.rank_zero_only",
        "lightning_utilities.core.rank_zero.rank_zero_only",
        "mmcv.runner.master_only",
        "mmcv.runner.dist_utils.master_only",
        "mmengine.dist.master_only",
        "mmengine.dist.utils.master_only",
    }
)
# An Accelerator's methods that, used as decorators, run the function in one process only.
ACCELERATOR_ONE_PROCESS_DECORATORS = frozenset({"on_main_process", "on_local_main_process", "on_last_process"})
LIGHTNING_SYNCED_LOGGING = frozenset({"log", "log_dict"})

# Frameworks that call torch.cuda.set_device(local_rank) for you when they start, and calls that
# do it (torchtune's get_device sets the local rank's device for "cuda").
DEVICE_SETTING_FRAMEWORKS = ("accelerate", "lightning", "lightning.pytorch", "lightning.fabric", "deepspeed")
# Packages whose training loop sets the epoch of the DistributedSampler of a loader it is handed
# (Lightning's fit loop, Accelerate's prepared loaders, the Hugging Face Trainer, Ignite's engine,
# MMEngine's and MMCV's runners, Composer's trainer), by top-level package name.
EPOCH_SETTING_FRAMEWORKS = ("lightning", "pytorch_lightning", "accelerate", "transformers", "ignite", "mmengine", "mmcv", "composer")
DEVICE_SETTING_CALLS = frozenset(
    {
        "transformers.Trainer", "transformers.TrainingArguments", "deepspeed.initialize",
        "torchtune.utils.get_device", "torchtune.training.get_device",
        "classy_vision.generic.distributed_util.set_cuda_device_index",  # VISSL / Classy Vision
    }
)

# -- devices ----------------------------------------------------------------------------------
# The device constructor (`torch.device("cuda", local_rank)`).
TORCH_DEVICE = "torch.device"
# Calls that choose this process's current device (`torch.cuda.set_device(local_rank)`, the
# `with torch.cuda.device(i):` context, torch.accelerator's device-generic forms).
SET_DEVICE = frozenset(
    {
        "torch.cuda.set_device", "torch.cuda.device",
        "torch.accelerator.set_device_index", "torch.accelerator.set_device_idx", "torch.accelerator.device_index",
    }
)
# The default device of every tensor created after it (`torch.set_default_device("cuda")`).
SET_DEFAULT_DEVICE = "torch.set_default_device"
# `torch.cuda` calls that act on the current device whatever their arguments: an event records on
# the current stream of the current device (`Event(enable_timing=True)` names none).
CURRENT_DEVICE_ALWAYS = frozenset({"torch.cuda.Event"})
# Tensor / module methods that place their receiver on a device (`x.to(device)`, `model.cuda()`).
PLACEMENT_METHODS = frozenset({"to", "cuda"})
# `torch.cuda` calls that act on the current device when no device is passed: with none set per
# rank, they act on GPU 0 in every process.
CURRENT_DEVICE_CALLS = frozenset(
    "torch.cuda." + name
    for name in (
        "synchronize", "empty_cache", "current_device", "current_stream", "Stream", "Event",
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
        "reset_peak_memory_stats", "mem_get_info", "memory_stats", "get_device_properties",
    )
)

# -- checkpoints (DDP008) -----------------------------------------------------------------------
TORCH_SAVE = "torch.save"
# torch.load restores each tensor onto the device it was saved from, unless given map_location.
TORCH_LOAD = "torch.load"
TORCH_FROM_NUMPY = "torch.from_numpy"  # its argument is a NumPy array, never a tensor
# The test that picks a device by whether CUDA is there (`map_location` chosen under it).
CUDA_AVAILABLE = "torch.cuda.is_available"
# Tensor methods whose result lives on the CPU (`x.cpu()`, `x.numpy()`, `x.tolist()`).
CPU_COPY_METHODS = frozenset({"cpu", "numpy", "tolist"})
# Methods whose result lives where the tensor they are called on lives.
SAME_DEVICE_METHODS = frozenset({"detach", "clone", "contiguous", "float", "half", "double", "int", "long", "bool", "item"})
# Module methods that move a module's parameters to the CPU in place (`net.cpu()`).
CPU_MOVES = frozenset({"cpu"})
# The module of torch's learning-rate schedulers: their `state_dict()` holds step counts, rates
# and factors as Python numbers, no tensor that could be restored onto a GPU.
LR_SCHEDULER_MODULE = "torch.optim.lr_scheduler"
# Hugging Face's schedule factories, which build one of those schedulers (a LambdaLR).
LR_SCHEDULER_FACTORIES = frozenset(
    f"{module}.{name}"
    for module in ("transformers", "transformers.optimization")
    for name in (
        "get_scheduler",
        "get_constant_schedule",
        "get_constant_schedule_with_warmup",
        "get_linear_schedule_with_warmup",
        "get_cosine_schedule_with_warmup",
        "get_cosine_with_hard_restarts_schedule_with_warmup",
        "get_polynomial_decay_schedule_with_warmup",
        "get_inverse_sqrt_schedule",
    )
)
# `typing.cast(T, value)`: the value, declared to be a T.
TYPING_CAST = "typing.cast"
# Tensor factories: without a `device=` they make the tensor on the CPU. Qualified, and not
# SIZED_TENSOR_FACTORIES: a different question (where the tensor lives, not whether its content is
# made up), so `torch.from_numpy` is here and `torch.zeros_like` (the device of its argument) is not.
CPU_DEFAULT_TENSOR_FACTORIES = frozenset(
    f"torch.{name}"
    for name in ("zeros", "ones", "empty", "full", "arange", "Tensor", "LongTensor", "FloatTensor",
                 "from_numpy", "rand", "randn", "randint", "randperm", "linspace", "eye")
)

# -- process groups and model wrappers --------------------------------------------------------
# Calls that make a script multi-process by themselves.
DISTRIBUTED_ENTRY_POINTS = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.init_device_mesh",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.utils.data.DistributedSampler",
        "deepspeed.init_distributed",
        "deepspeed.initialize",  # starts the process group unless one exists (dist_init_required)
        "horovod.torch.init",
        "ignite.distributed.Parallel",  # `with idist.Parallel(backend="nccl") as parallel:`
        "ignite.distributed.initialize",
    }
)
# Calls that start the ranks of a job: the place a per-rank device must be chosen (DDP005), and
# what makes a project function a process-group set-up for the files that call it.
PROCESS_GROUP_STARTERS = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "deepspeed.init_distributed",
    }
)
# Calls that start worker processes running a function (`mp.spawn(worker, nprocs=n)`): the
# function runs in every rank, the calling process is the launcher.
SPAWNERS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})
# Other array frameworks: a file built on them is not a torch distributed script because it reads
# LOCAL_RANK (copied launcher boilerplate).
OTHER_FRAMEWORKS = ("jax", "flax", "tensorflow")
# Wrappers whose forward / backward synchronise every rank.
WRAPPED_MODEL_CLASSES = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        # FSDP2 shards in place and returns the module: `model = fully_shard(model, mesh=mesh)`
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
    }
)
# The wrapper classes a project may subclass, by their own name
# (`class DistributedDataParallel(parallel.DistributedDataParallel)`): what a module's summary
# screen looks for besides calls.
WRAPPER_CLASS_NAMES = frozenset({"DistributedDataParallel", "FullyShardedDataParallel"})
# torch.distributed APIs that run in a single process (no process group needed): a script that only
# calls these is not a distributed one.
SINGLE_PROCESS_APIS = ("torch.distributed.checkpoint.",)
# Test harness base classes: a file with tests is run by pytest / unittest, not launched per GPU.
# torch's own distributed test bases start their ranks themselves (one process per test rank).
DISTRIBUTED_TEST_BASES = frozenset(
    {
        "torch.testing._internal.common_distributed.MultiProcessTestCase",
        "torch.testing._internal.common_distributed.DistributedTestBase",
        "torch.testing._internal.common_distributed.MultiThreadedTestCase",
        "torch.testing._internal.common_distributed.MultiProcContinuousTest",
        "torch.testing._internal.common_fsdp.FSDPTest",
        "torch.testing._internal.distributed._tensor.common_dtensor.DTensorTestBase",
    }
)
TEST_CASE_CLASSES = frozenset(
    {"unittest.TestCase", "torch.testing._internal.common_utils.TestCase", *DISTRIBUTED_TEST_BASES}
)
# Class names that say "a test" (`AllReduceTest`, `SamplerTests`): a test harness runs their methods.
TEST_CLASS_SUFFIXES = ("Test", "Tests", "TestCase")
# Test runners that collect `test*` functions of a module (nose: `nose.runmodule()`).
TEST_FRAMEWORKS = ("pytest", "unittest", "nose", "nose2")
DISTRIBUTED_DATA_PARALLEL = frozenset({"torch.nn.parallel.DistributedDataParallel"})
DATA_PARALLEL = frozenset({"torch.nn.DataParallel"})
# DataParallel's functional form: the same scatter / replicate / gather on every call.
FUNCTIONAL_DATA_PARALLEL = frozenset({"torch.nn.parallel.data_parallel"})

# -- data -------------------------------------------------------------------------------------
# Loader classes that take `dataset, batch_size, shuffle, sampler` as torch's DataLoader does
# (drop-ins: a subclass of one of these found in the file counts too). PyG's graph DataLoader
# subclasses torch's and hands it every keyword (`sampler=`, `shuffle=`, `num_workers=`)
# unchanged; only its fourth position differs (`follow_batch`), which nobody passes by position.
DATALOADER = frozenset(
    {
        "torch.utils.data.DataLoader",
        "torchdata.stateful_dataloader.StatefulDataLoader",
        "torch_geometric.loader.DataLoader",
        "torch_geometric.data.DataLoader",  # the older name of the same class
    }
)
DISTRIBUTED_SAMPLER = frozenset({"torch.utils.data.DistributedSampler"})
# The modules DistributedSampler is imported from (`from torch.utils.data.distributed import
# DistributedSampler`): an import from either already binds it (DDP001's fix).
DISTRIBUTED_SAMPLER_MODULES = ("torch.utils.data", "torch.utils.data.distributed")
# The positions torch's signatures give the arguments, for calls that pass them by position:
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
# pin_memory, drop_last, ...) and DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last).
DATALOADER_POSITIONS = {
    "dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4, "num_workers": 5,
    "collate_fn": 6, "pin_memory": 7, "drop_last": 8,
}
DISTRIBUTED_SAMPLER_POSITIONS = {"dataset": 0, "num_replicas": 1, "rank": 2, "shuffle": 3, "seed": 4, "drop_last": 5}
# Samplers that always draw from the whole dataset: on every rank, the same data.
WHOLE_DATASET_SAMPLERS = frozenset({"torch.utils.data.RandomSampler", "torch.utils.data.WeightedRandomSampler"})
SUBSET_SAMPLERS = frozenset({"torch.utils.data.SubsetRandomSampler"})
ITERABLE_DATASETS = frozenset(
    {
        "torch.utils.data.IterableDataset",
        "torch.utils.data.ChainDataset",
        "datasets.IterableDataset",
        "webdataset.WebDataset",
        "webdataset.DataPipeline",
        "torchdata.datapipes.iter.IterableWrapper",
        "streaming.StreamingDataset",  # MosaicML streaming: partitions by rank and worker itself
        "litdata.StreamingDataset",
    }
)
# Streams that partition themselves by rank and worker.
SELF_PARTITIONING_STREAMS = frozenset({"streaming.StreamingDataset", "litdata.StreamingDataset"})
# Where a DataLoader takes its sampler: keyword arguments, and attributes of the built loader.
SAMPLER_SLOTS = ("sampler", "batch_sampler")
# Functions (by their own name) that split a dataset or a stream per rank: HF datasets'
# split_dataset_by_node, webdataset's split_by_node / nodesplitter, `.shard(...)`.
_SPLIT_BY_NODE = frozenset({"split_dataset_by_node", "split_by_node", "nodesplitter", "shard"})
# Two uses, two tables over that core (a union would change what each finds): a loader's dataset
# sharded by hand or by a library (loaders.py; also torchdata's `sharding_filter`), and calls inside
# an IterableDataset that mean it splits its own stream (streams.py, DDP009: also reading the rank,
# the world size or the worker).
SHARDING_FUNCTIONS = _SPLIT_BY_NODE | {"split_by_rank", "sharding_filter"}
STREAM_SPLITTING_CALLS = _SPLIT_BY_NODE | {
    "get_worker_info", "get_rank", "get_world_size", "split_by_worker", "pytorch_worker_info", "get_local_rank",
}

# -- loading and making up datasets (DDP004, DDP008, DDP013) ----------------------------------
# Readers of files whose content the tool cannot judge: a dataset's features, or a checkpoint,
# reference statistics, a config. What the result is used for decides.
DATA_READERS = frozenset(
    {
        "torch.load", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile", "numpy.memmap",
        "json.load", "pickle.load", "h5py.File",
    }
)
# ... and calls whose result is a dataset or a table of samples (HF datasets, pandas readers).
DATASET_LOADERS = frozenset({"datasets.load_dataset", "datasets.load_from_disk"})
TABLE_READER_PREFIXES = ("pandas.read_",)
# torch's domain libraries' dataset packages: their classes build a dataset (DDP004), and fetch and
# extract an archive into `root` when given `download=True` (DDP013:
# torchvision.datasets.CIFAR10(root, download=True) and its kind).
DATASET_PACKAGES = ("torchvision.datasets.", "torchtext.datasets.", "torchaudio.datasets.")
# Methods that apply a function to every sample of a dataset (HF datasets' `ds.map(fn)`), and
# options only those take.
DATASET_TRANSFORMS = frozenset({"map", "filter", "flat_map"})
DATASET_MAP_OPTIONS = frozenset({"batched", "num_proc", "remove_columns", "batch_size", "load_from_cache_file"})
# torch calls, by their own name, that make up tensors from the numbers they are given; a dataset
# built only from them and numbers is a test fixture.
VALUE_TENSOR_FACTORIES = frozenset({"arange", "linspace", "range", "tensor"})
# Factories whose positional arguments are only sizes (and fill values): what they make is made up
# whatever sizes they are given (`torch.randn(n_samples, dim)`, n_samples an option).
SIZED_TENSOR_FACTORIES = frozenset(
    {
        "randn", "rand", "randint", "randperm", "zeros", "ones", "full", "empty", "normal",
        "zeros_like", "ones_like", "randn_like", "rand_like",
    }
)
# In-place fills that replace a tensor's content (`torch.empty(n).random_(10)`).
TENSOR_FILLS = frozenset({"random_", "uniform_", "normal_", "fill_", "zero_", "bernoulli_"})

# -- frameworks that shard the data for you ---------------------------------------------------
# Hooks whose returned loader a framework re-wraps with a DistributedSampler.
FRAMEWORK_LOADER_HOOKS = frozenset(
    {
        "train_dataloader",  # Lightning (LightningModule / LightningDataModule)
        "val_dataloader",
        "test_dataloader",
        "predict_dataloader",
        "get_train_dataloader",  # transformers.Trainer overrides
        "get_eval_dataloader",
        "get_test_dataloader",
    }
)
LIGHTNING_PACKAGES = ("lightning", "lightning.pytorch", "lightning.fabric")
ACCELERATE_PACKAGES = ("accelerate", "ray")
# Frameworks whose launcher starts one process per GPU (`accelerate launch`, Lightning's Trainer
# and `fabric.launch()`): a script that imports one is multi-process without a line of
# torch.distributed.
PROCESS_LAUNCHING_PACKAGES = ("accelerate", *LIGHTNING_PACKAGES)
LIGHTNING_SINKS = frozenset({"fit", "validate", "test", "predict", "setup_dataloaders"})
ACCELERATE_SINKS = frozenset({"prepare", "prepare_data_loader"})
ALWAYS_SINKS = frozenset({"setup_dataloaders", "prepare_data_loader"})

# -- ranks within a sub-group (data helper) ---------------------------------------------------------
# A rank inside a model-parallel / data-parallel group, not in the job: `rank == 0` on one of these
# lets one rank of every group through (Megatron's tensor-parallel leaders), not one rank in all.
# Matched by function name, whatever module they come from (megatron.core.parallel_state, an
# `mpu` of the project, DeepSpeed's groups); `dist.get_rank(group)` is recognised by its argument.
SUBGROUP_RANK_FUNCTIONS = frozenset(
    {
        "get_tensor_model_parallel_rank",
        "get_model_parallel_rank",
        "get_pipeline_model_parallel_rank",
        "get_data_parallel_rank",
        "get_context_parallel_rank",
        "get_expert_model_parallel_rank",
        "get_expert_tensor_parallel_rank",
        "get_tensor_and_expert_parallel_rank",
        "get_sequence_parallel_rank",
        "get_group_rank",
    }
)
# Calls that set up tensor / pipeline model parallelism: the ranks of one model-parallel group must
# read the same batches, so a loader without a DistributedSampler can be right there (by name, as
# above: megatron.core.parallel_state, a project's own `mpu`, torch.distributed.tensor.parallel).
MODEL_PARALLEL_SETUP = frozenset({"initialize_model_parallel", "parallelize_module"})

# -- downloads, metrics and gradient synchronisation (DDP013 - DDP016) --------------------------
# Packages whose dataset classes download when given `download=True`: DATASET_PACKAGES above.
# Context managers under which the main process runs the body first and the others after it
# (Accelerate's Accelerator and PartialState, transformers' TrainingArguments): by method name,
# on whatever object, since the object comes from the framework.
RANK_ZERO_FIRST_CONTEXTS = frozenset({"main_process_first", "local_main_process_first"})
# Hooks a framework runs on (local) rank 0 only: Lightning's LightningModule / LightningDataModule.
RANK_ZERO_HOOKS = frozenset({"prepare_data"})
# Metric objects that reduce their state across processes when they compute (torchmetrics syncs
# by default in a distributed run; torcheval's toolkit and ignite's metrics do as well).
SYNCING_METRIC_PACKAGES = ("torchmetrics", "torcheval", "ignite.metrics", "evaluate")
# Calls that gather or reduce a value across ranks before it is reported, besides COLLECTIVES and
# the Accelerator's (`gather_for_metrics`): helpers frameworks ship for exactly that.
METRIC_REDUCERS = frozenset(
    {
        "reduce_dict", "all_reduce_mean", "reduce_tensor", "reduce_mean", "synchronize_between_processes",
        # Horovod's collectives (`hvd.allreduce(t, name="avg")`)
        "allreduce", "allreduce_", "allgather", "allgather_object", "grouped_allreduce",
    }
)
# Calls that leave a number as it is, or only format it: a count handed to any other call before
# it is reported may come back reduced (a project helper), so the analysis stops there.
VALUE_PRESERVING_CALLS = frozenset(
    {"float", "int", "round", "len", "str", "format", "max", "min", "abs", "item", "tolist", "cpu", "numpy", "mean", "sum"}
)
# Packages whose calls make or join a multi-process run (a function calling none of them starts
# no ranks by itself).
DISTRIBUTED_PACKAGES = ("torch.distributed.", "torch.multiprocessing.", "ignite.distributed.", "horovod.", "deepspeed.", "accelerate.")
# Context managers and decorators under which no gradient is recorded.
GRADIENT_FREE = frozenset({"no_grad", "inference_mode"})
# Locks that order processes on one machine around a download (`with FileLock(path):`).
INTERPROCESS_LOCKS = frozenset(
    {"filelock.FileLock", "filelock.SoftFileLock", "filelock.UnixFileLock", "fasteners.InterProcessLock"}
)
# Ways to keep DDP from all-reducing on a backward that does not step: the wrapper's context
# manager, its flag, Accelerate's accumulate() (no_sync inside), and engines that accumulate
# themselves (DeepSpeed's engine: `engine.backward(loss)` / `engine.step()` every micro-batch).
NO_SYNC_CONTEXTS = frozenset({"no_sync", "accumulate", "no_sync_context"})
NO_SYNC_FLAGS = frozenset({"require_backward_grad_sync", "require_forward_param_sync"})
SELF_ACCUMULATING_ENGINES = frozenset({"deepspeed.initialize"})
# Calls that report a number: printed, logged, written to a tracker (`print`, `logger.info`,
# `wandb.log`, `writer.add_scalar`, `tracker.log_metrics`).
REPORTING_CALLS = frozenset({"print", "info", "log", "log_metrics", "log_dict", "add_scalar", "add_scalars", "set_postfix"})
# Methods of a torch.nn.Module (and of HF models) that run no training forward pass (DDP016).
MODULE_METHODS_WITHOUT_FORWARD = frozenset(
    {
        "state_dict", "load_state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "children",
        "modules", "named_modules", "train", "eval", "to", "cuda", "cpu", "half", "float", "zero_grad",
        "requires_grad_", "apply", "register_buffer", "register_forward_hook", "save_pretrained", "get_submodule",
        "generate", "register_full_backward_hook", "extra_repr",
    }
)
# torch namespaces of tensor math: their functions compute on the tensors they are given and run
# no model (`torch.mm(features, bank)`, `F.normalize(x)`); the top level `torch.X` counts too,
# except the functions below that call a module or function they are handed.
TENSOR_MATH_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
TORCH_CALLS_THAT_RUN_A_CALLABLE = frozenset({"torch.compile", "torch.vmap", "torch.cond"})
# Tensor methods that reshape, index, compare or reduce: a loop whose items only go to these does
# arithmetic on results, not a model forward (a k-NN vote over features every rank extracted).
TENSOR_METHODS = frozenset(
    {
        "view", "reshape", "expand", "expand_as", "t", "transpose", "permute", "flatten", "squeeze", "unsqueeze",
        "contiguous", "clone", "detach", "narrow", "index_select", "gather", "scatter", "scatter_", "masked_fill",
        "topk", "sort", "argsort", "argmax", "argmin", "max", "min", "sum", "mean", "std", "norm", "abs", "exp",
        "exp_", "log", "div", "div_", "mul", "mul_", "add", "add_", "sub", "sub_", "pow", "eq", "ne", "lt", "le",
        "gt", "ge", "item", "tolist", "size", "numel", "dim", "resize_", "zero_", "fill_", "copy_", "float",
        "double", "long", "int", "bool", "half", "cpu", "cuda", "to", "numpy", "type_as", "repeat", "split",
        "chunk", "softmax", "log_softmax", "sigmoid", "clamp", "clamp_", "round", "nonzero", "any", "all",
        "matmul", "mm", "bmm", "dot", "cumsum", "prod",
    }
)
# Module methods that return the module itself (`model = Net().cuda()` is still a Net).
MODULE_METHODS_RETURNING_SELF = frozenset(
    {"cuda", "to", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_"}
)

# -- ranks, launchers and distributed scripts (analysis/distributed.py, rank_guards.py, collectives.py)
# Reading one of these from the environment means the script expects a launcher (torchrun).
LAUNCHER_ENV_VARS = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
RANK_ENV_VARS = frozenset({"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID", "GROUP_RANK"})

# A distributed script contains at least one of these byte strings: the engine skips the
# distributed-only rules in files without any (tests keep this in step with the checks of
# analysis/distributed.py).
DISTRIBUTED_TOKENS = (
    b"distributed", b"Distributed", b"init_process_group", b"RANK", b"WORLD_SIZE", b"spawn", b"start_processes",
    b"fully_shard", b"FullyShardedDataParallel", b"init_device_mesh", b"horovod",
    # `accelerate launch` starts the processes: an Accelerate script needs no torch.distributed.
    b"accelerate",
    # Lightning's Trainer / Fabric start them too (DDP007: `trainer.save_checkpoint` on one rank).
    b"lightning",
    # `deepspeed.initialize(...)` starts the process group unless one exists.
    b"deepspeed",
)

# torch.distributed calls that do not by themselves mean the code runs on several processes.
NOT_DISTRIBUTED_BY_ITSELF = frozenset({"is_available", "is_initialized", "is_nccl_available", "is_gloo_available"})

RANK_FUNCTIONS = frozenset(
    {"get_rank", "get_local_rank", "get_global_rank", "get_node_local_rank", "get_ordinal", "get_process_index"}
)

# Names (of functions, properties or flags) that mean "this process is rank 0".
RANK_ZERO_NAMES = frozenset(
    {
        "is_main_process",
        "is_local_main_process",
        "main_process",
        "is_main",
        "is_master",
        "master",
        "is_master_process",
        "master_process",
        "is_master_ordinal",
        "is_rank_zero",
        "is_rank_0",
        "rank_zero",
        "is_global_zero",
        "is_local_zero",
        "is_world_process_zero",
        "is_local_process_zero",
        "is_primary",
        "is_chief",
    }
)

# Values that differ between processes started at the same moment on one or several machines.
PER_PROCESS_VALUES = frozenset(
    {
        "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
        "time.monotonic_ns", "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
        "os.getpid", "os.urandom", "uuid.uuid4", "uuid.uuid1", "torch.initial_seed", "torch.seed",
        "numpy.random.randint", "random.randint", "random.random", "random.getrandbits", "random.randrange",
    }
)
PER_PROCESS_PREFIXES = ("secrets.",)

# Text that says a model holds buffers DDP broadcasts in its forward.
BUFFER_EVIDENCE = ("BatchNorm", "register_buffer", "running_mean", "resnet", "ResNet")
# FSDP wrappers: their forward always all-gathers the sharded parameters, buffers or not.
ALWAYS_SYNCING_WRAPPERS = frozenset(
    {
        "torch.distributed.fsdp.FullyShardedDataParallel", "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
    }
)
