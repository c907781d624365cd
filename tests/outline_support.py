"""Whether a module's outline (the names its summary may be asked about, read without libcst)
still holds every name its summary records that the outline held before `offerable_names`
narrowed it: shared by tests/test_summary_outline.py and
benchmarks/summary_outline.py (the same check over the ecosystem checkouts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ddplint.analysis import summaries
from ddplint.engine import parses_safely


@dataclass(frozen=True)
class OutlineComparison:
    recorded: frozenset[str]  # what the module's full summary records (`Class.method` as `Class`)
    asked: Optional[frozenset[str]]  # what the outline without `offerable_names` lets be asked (None: any)
    outlined: Optional[frozenset[str]]  # what the narrowed outline lets be asked

    @property
    def misses(self) -> list[str]:
        """Recorded names a file could get from the summary before the narrowing, not after."""
        if self.outlined is None:
            return []
        return sorted(name for name in self.recorded - self.outlined if self.asked is None or name in self.asked)


def compare_outline(path: str) -> Optional[OutlineComparison]:
    """The module's summary against its outline; None when the project index would never
    summarise the module or its summary records nothing (nothing to compare)."""
    data = summaries.screened_source(path)
    if data is None:
        return None
    summarisable, asked = summaries.outline_from(data, path, parses_safely, narrowed=False)
    summary = summaries.summary_of(data, path) if summarisable else None
    if summary is None or not summary.offers_anything():
        return None
    outlined = summaries.outline_from(data, path, parses_safely)[1]
    return OutlineComparison(frozenset(name.split(".")[0] for name in summary.offered_names()), asked, outlined)
