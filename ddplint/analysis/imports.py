"""Qualified names through every import form.

`import torch.utils.data as tud`, `from torch.utils import data`, `from torch.nn.parallel import
DistributedDataParallel as Net`, star imports and module-level aliases (`DDP = nn.parallel.
DistributedDataParallel`) all resolve to one canonical public name, so a rule compares against
`torch.nn.DataParallel` and never cares how the file spelled it.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Iterable, Mapping, Optional

import libcst as cst

from ddplint.analysis.syntax import dotted_name

# Where torch defines a thing vs. where users are told to import it from. Keys are rewritten to
# values at a dot boundary (longest key first), so every spelling compares equal.
_CANONICAL_PREFIXES = {
    "torch.utils.data.dataloader": "torch.utils.data",
    "torch.utils.data.distributed": "torch.utils.data",
    "torch.utils.data.sampler": "torch.utils.data",
    "torch.utils.data.dataset": "torch.utils.data",
    "torch.nn.parallel.data_parallel.DataParallel": "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel": "torch.nn.DataParallel",
    "torch.nn.parallel.data_parallel.data_parallel": "torch.nn.parallel.data_parallel",
    "torch.nn.parallel.distributed": "torch.nn.parallel",
    "torch.nn.parallel.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.distributed.distributed_c10d": "torch.distributed",
    "torch.distributed.fsdp.fully_sharded_data_parallel": "torch.distributed.fsdp",
    "torch.multiprocessing.spawn.spawn": "torch.multiprocessing.spawn",
    "pytorch_lightning": "lightning.pytorch",
    "lightning_fabric": "lightning.fabric",
}
_PREFIXES_LONGEST_FIRST = sorted(_CANONICAL_PREFIXES, key=len, reverse=True)


def canonical(qualified: str) -> str:
    for prefix in _PREFIXES_LONGEST_FIRST:
        if qualified == prefix or qualified.startswith(prefix + "."):
            return _CANONICAL_PREFIXES[prefix] + qualified[len(prefix):]
    return qualified


def _module_name(node: Optional[cst.BaseExpression]) -> str:
    return (dotted_name(node) or "") if node is not None else ""


class ImportTable:
    """Local name -> the set of qualified names it may stand for (flow-insensitive, file-wide).

    A set, because files legitimately bind one name two ways (`try: from apex... import DDP`
    `except ImportError: from torch... import DistributedDataParallel as DDP`).
    """

    def __init__(self) -> None:
        self.bindings: dict[str, set[str]] = {}
        self.star_modules: list[str] = []
        self.modules: set[str] = set()  # every module imported, for "is this a Lightning file"
        self.aliases: dict[str, cst.BaseExpression] = {}  # module-level `X = a.b.C`
        self.local_names: set[str] = set()  # classes, functions and globals the file defines
        # What a star-imported project module hands on (`from models import *` where models.py
        # says `import torch.nn as nn`): module name -> {local name: qualified names}; set when
        # the file is checked within a project (ProjectIndex.star_exports).
        self.star_exports: Optional[Callable[[str], Mapping[str, AbstractSet[str]]]] = None

    # -- building ---------------------------------------------------------------------------
    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = _module_name(alias.name)
            self.modules.add(module)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, module)
            else:
                # `import torch.distributed` binds `torch`; attribute chains do the rest.
                head = module.split(".")[0]
                self._bind(head, head)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        module = "." * len(node.relative) + _module_name(node.module)
        self.modules.add(module)
        if isinstance(node.names, cst.ImportStar):
            self.star_modules.append(module)
            return
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            separator = "" if module.endswith(".") else "."
            self._bind(local, f"{module}{separator}{name}")
            self.modules.add(f"{module}{separator}{name}")

    def add_alias(self, name: str, value: cst.BaseExpression) -> None:
        if dotted_name(value) is not None:
            self.aliases.setdefault(name, value)

    def _bind(self, local: str, qualified: str) -> None:
        self.bindings.setdefault(local, set()).add(qualified)

    # -- queries ----------------------------------------------------------------------------
    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Canonical qualified names an expression may refer to (empty if not an import)."""
        dotted = dotted_name(node)
        return self._resolve_dotted(dotted, depth=0) if dotted else set()

    def _resolve_dotted(self, dotted: str, depth: int) -> set[str]:
        head, _, rest = dotted.partition(".")
        suffix = f".{rest}" if rest else ""
        if head in self.bindings:
            return {canonical(q + suffix) for q in self.bindings[head]}
        if head in self.aliases and depth < 3:
            target = dotted_name(self.aliases[head])
            if target and target.partition(".")[0] != head:
                return self._resolve_dotted(target + suffix, depth + 1)
        # An unbound name may come from `from M import *`: guess each absolute star module; a
        # wrong guess only yields a name no rule asks about. A name the file defines itself is
        # its own (`from torch.utils.data import *` then `class DataLoader: ...`).
        if head in self.local_names:
            return set()
        exported = self._star_exported(head)
        if exported:
            return {canonical(q + suffix) for q in exported}
        guesses = {canonical(f"{m}.{dotted}") for m in self.star_modules if not m.startswith(".")}
        if head == "torch" and self.star_modules:
            # `from models import *` re-exporting `torch`: nothing else could be meant by it
            guesses.add(canonical(dotted))
        return guesses

    def _star_exported(self, head: str) -> set[str]:
        """What the star-imported project modules bind `head` to by an import of their own."""
        if self.star_exports is None:
            return set()
        found: set[str] = set()
        for module in self.star_modules:
            found.update(self.star_exports(module).get(head, ()))
        return found

    def matches(self, node: cst.CSTNode, names: Iterable[str]) -> bool:
        wanted = set(names)
        return not wanted.isdisjoint(self.qualified_names(node))

    def imports_any(self, prefixes: Iterable[str]) -> bool:
        """Whether the file imports a module under any of the given package prefixes."""
        for module in self.modules:
            canon = canonical(module)
            for prefix in prefixes:
                if canon == prefix or canon.startswith(prefix + "."):
                    return True
        return False
