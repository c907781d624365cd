"""Running the engine for the server: one document's text in, located findings (or a crash) out.

Runs in the analysis worker process (see worker.py), never on the event loop, so it must not
touch the server.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.project import ProjectIndex, project_root
from ddplint.cache import SummaryFolder, default_cache_dir
from ddplint.diagnostics import Diagnostic
from ddplint.discovery import Listings
from ddplint.engine import InternalError, lint_source
from ddplint.lsp.incremental import StatementParser
from ddplint.rules import Rule
from ddplint.runner import project_index


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


# How long a worker trusts its list of a project's modules: a module created meanwhile is followed
# after at most this long. Then the list is made again, unless no folder it came from has changed
# (`_still_listed`). A module changed on disk is seen at the next analysis (its stamp).
PROJECT_LIST_TTL_S = 5.0


class _Projects:
    """The project model of each workspace the worker analyses documents of, kept between
    analyses (walking the project and summarising its modules again per keystroke would cost more
    than the analysis), so an open file gets the findings `ddplint FILE` gives it on disk. The
    modules are read from disk: another module's unsaved edits count once saved."""

    def __init__(self) -> None:
        self._by_root: dict[str, tuple[float, Optional[ProjectIndex], Optional[Listings]]] = {}
        self._stores: dict[str, Optional[SummaryFolder]] = {}

    def for_document(self, filename: str) -> Optional[ProjectIndex]:
        if not os.path.isabs(filename):  # an untitled buffer belongs to no project
            return None
        root = project_root(filename)
        if root is None:
            return None
        built, index, listings = self._by_root.get(root, (0.0, None, None))
        if time.monotonic() - built > PROJECT_LIST_TTL_S and not self._still_listed(root, filename, index, listings):
            listings = Listings(stamped=True)
            older, index = index, project_index([filename], listings)
            if index is not None:
                store = self._store_for(root)
                if store is not None:
                    index.use_store(store)
                if older is not None:
                    index.adopt_summaries(older)
            self._by_root[root] = (time.monotonic(), index, listings)
        elif index is not None:
            index.forget_changed()
        return index

    def _still_listed(self, root: str, filename: str, index: Optional[ProjectIndex], listings: Optional[Listings]) -> bool:
        """Whether the project's list of modules still holds: no folder it was read from has had
        a module added, removed or renamed, and the document is one of them. Then the index (and
        all it resolved) is kept rather than built again: a stat per folder instead of a walk and
        the imports resolved anew (~15 ms per listing of a 1,000-file workspace, once every
        PROJECT_LIST_TTL_S while typing)."""
        if index is None or listings is None or os.path.realpath(filename) not in index.files or not listings.unchanged():
            return False
        self._by_root[root] = (time.monotonic(), index, listings)
        return True

    def _store_for(self, root: str) -> Optional[SummaryFolder]:
        """The module summaries a CLI run kept in the project's cache folder (DDPLINT_CACHE_DIR or
        the default one), opened once per project: a big workspace's first analysis reads them
        instead of parsing the modules. Only a folder some run made: the server makes none."""
        if root not in self._stores:
            configured = os.environ.get("DDPLINT_CACHE_DIR")
            directory = Path(configured) if configured else default_cache_dir(Path(root))
            # Entries are trusted by the folder's key, as the CLI's are; a link there is refused.
            self._stores[root] = SummaryFolder.open(directory) if directory.is_dir() else None
        return self._stores[root]


PROJECTS = _Projects()


def run_engine(text: str, filename: str, rules: Sequence[Rule], options: AnalysisOptions = NO_OPTIONS) -> EngineOutcome:
    """`options`: what the document's configuration declares, as the CLI passes them."""
    started = time.perf_counter()
    errors: list[InternalError] = []
    try:
        project = PROJECTS.for_document(filename)
        diagnostics = tuple(lint_source(text, filename, rules, errors, project, parser=PARSER, options=options))
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
