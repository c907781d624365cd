"""What a project declares about its own code in `[tool.ddplint]`, for the analysis to use.

    rank-zero-functions = ["utils.is_master", "is_coordinator"]
    sharded-loader-factories = ["data.build_sharded_loader"]

Plain data (tuples of strings), so that it crosses process boundaries as the rule codes do (the
CLI's worker pool, the language server's analysis process) and keys the results cache. Each file
is analysed with the options of its own configuration: nothing here is global.

A declared name matches a call whose callee ends with it, dot-component by dot-component, as
written (`utils.is_master()`, `self.is_master()` for "is_master") or as imported
(`from proj.utils import is_master; is_master()` for "utils.is_master").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional


@dataclass(frozen=True)
class AnalysisOptions:
    # Functions whose call is true on rank 0 only (`if is_coordinator(): ...`).
    rank_zero_functions: tuple[str, ...] = ()
    # Functions returning a DataLoader that is already this rank's shard.
    sharded_loader_factories: tuple[str, ...] = ()

    def cache_key(self) -> str:
        """Appended to a file's rules key in the results cache: other options, other results.
        Empty without options, so that existing entries stay valid."""
        if not self:
            return ""
        return f";rank-zero-functions={','.join(self.rank_zero_functions)}" + (
            f";sharded-loader-factories={','.join(self.sharded_loader_factories)}"
        )

    def guard_words(self) -> tuple[bytes, ...]:
        """Lower-case last names of the declared guards: a file holding one of them may hold a
        rank guard (the screen's `requires` words, screen.able_to_fire)."""
        return tuple(sorted({last_part(name).lower().encode() for name in self.rank_zero_functions}))

    def __bool__(self) -> bool:
        return bool(self.rank_zero_functions or self.sharded_loader_factories)


NO_OPTIONS = AnalysisOptions()


def last_part(dotted: str) -> str:
    return dotted.rpartition(".")[2]


def declared(candidates: Iterable[Optional[str]], names: tuple[str, ...]) -> bool:
    """Whether one of the dotted `candidates` (a callee as written, its qualified names) ends
    with one of the declared `names`, whole components only (`is_master` is not `not_is_master`)."""
    if not names:
        return False
    for candidate in candidates:
        if not candidate:
            continue
        for name in names:
            if candidate == name or candidate.endswith("." + name):
                return True
    return False
