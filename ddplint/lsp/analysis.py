"""Running the engine for the server: one document's text in, located findings (or a crash) out.

Runs in the analysis worker process (see worker.py), never on the event loop, so it must not
touch the server.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Optional, Sequence

from ddplint.diagnostics import Diagnostic
from ddplint.engine import InternalError, lint_source
from ddplint.lsp.incremental import StatementParser
from ddplint.rules import Rule


@dataclass(frozen=True)
class EngineOutcome:
    diagnostics: tuple[Diagnostic, ...]
    # Rules that raised on this text: the engine keeps going with the others and says which.
    rule_errors: tuple[InternalError, ...]
    # The engine itself raised: the traceback, and no diagnostics at all.
    crash: Optional[str]
    seconds: float


# One per worker process: the statements of every document it analysed, parsed once.
PARSER = StatementParser()


def run_engine(text: str, filename: str, rules: Sequence[Rule]) -> EngineOutcome:
    started = time.perf_counter()
    errors: list[InternalError] = []
    try:
        diagnostics = tuple(lint_source(text, filename, rules, errors, parser=PARSER))
        crash = None
    except Exception:  # RecursionError and MemoryError too: whatever a text does, the server lives
        diagnostics, crash = (), traceback.format_exc()
    except BaseException as exc:
        # libcst's native parser reports a Rust panic as pyo3's PanicException, which derives
        # from BaseException; that is one bad text too, not a reason to stop serving.
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        diagnostics, crash = (), traceback.format_exc()
    return EngineOutcome(diagnostics, tuple(errors), crash, time.perf_counter() - started)
