"""The shared analysis layer: one semantic model (`ModuleFacts`) per file that every rule reads.

Rules stay small; everything hard (qualified names through aliases, which sampler reaches which
loader, which loop is the epoch loop, what counts as a rank-0 guard, which framework shards for
you) is answered here, once, and tested here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts, build_facts


def __getattr__(name: str) -> Any:
    # PEP 562: importing a module of this package (the project index, torch's tables) must not
    # import the facts pass and libcst; `ddplint.analysis.build_facts` still works.
    if name in ("ModuleFacts", "build_facts"):
        from ddplint.analysis import facts

        return getattr(facts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ModuleFacts", "build_facts"]
