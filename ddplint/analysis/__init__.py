"""The shared analysis layer: one semantic model (`ModuleFacts`) per file that every rule reads.

Rules stay small; everything hard (qualified names through aliases, which sampler reaches which
loader, which loop is the epoch loop, what counts as a rank-0 guard, which framework shards for
you) is answered here, once, and tested here.
"""

from ddplint.analysis.facts import ModuleFacts, build_facts

__all__ = ["ModuleFacts", "build_facts"]
