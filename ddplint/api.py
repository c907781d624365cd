"""Files in, findings out: the entry points of the CLI and verify (the language server lints its
open documents with `engine.lint_source` directly).

`lint_document()` checks one file's contents, Python or notebook by its name; `lint_file()` reads
it first (both live in ddplint/runner.py, beside the pool that runs them); `lint_paths()` joins
discovery (ddplint/discovery.py), the project index, the module summaries kept in the results
cache's folder and the runner, and keeps going past any bad file; `fix_document()` fixes one
file's text until stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Optional, Sequence

from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.project import ProjectIndex
from ddplint.cache import ResultCache
from ddplint.diagnostics import Diagnostic, InternalError, error_diagnostic
from ddplint.discovery import Listings, discover
from ddplint.rules import select_codes
from ddplint.runner import lint_document, lint_file, lint_python, project_index, run_checks

if TYPE_CHECKING:
    from ddplint.fix import FixOutcome
    from ddplint.rules.base import Rule

# The fix loop and the notebook format are imported by `fix_document`: a check never needs them.


def lint_paths(
    paths: Sequence[str],
    rules: Optional[Sequence[Rule]] = None,
    errors: Optional[list[InternalError]] = None,
    codes_for: Optional[Callable[[str], Sequence[str]]] = None,
    is_excluded: Optional[Callable[[str], bool]] = None,
    force_exclude: bool = False,
    *,
    jobs: Optional[int] = None,
    cache: Optional[ResultCache] = None,
    respect_gitignore: bool = False,
    options_for: Optional[Callable[[str], AnalysisOptions]] = None,
) -> Iterator[Diagnostic]:
    """Diagnostics for every file under `paths`, file by file in a stable (discovery) order,
    streamed as soon as each file and all before it are done. `codes_for` (per-file
    configuration: the codes of the rules for a path) overrides `rules` when given. `jobs`
    worker processes (default: by the amount of source, up to one per core); `cache` skips
    files whose results are known; `respect_gitignore`: as for `discover`. Rules are loaded only
    if a file is to be analysed. `options_for`: the analysis options of a path's configuration
    (none when not given); they are part of the cache key, as the rules are."""
    default_codes = select_codes() if rules is None else tuple(rule.code for rule in rules)
    listings = Listings()  # each folder read once: discovery and the project model walk one tree
    found = list(discover(paths, is_excluded, force_exclude, respect_gitignore, listings))
    # Cross-module flow: files checked together see what each other offers (analysis/project.py).
    readable = [path for path, problem in found if problem is None]
    project = project_index(readable, listings)
    # Module summaries kept across runs, in the results cache's folder (none with --no-cache).
    store = cache.summary_store() if cache is not None and project is not None else None
    if store is not None and project is not None:
        project.use_store(store)
    try:
        yield from run_checks(found, default_codes, codes_for, options_for, cache, project, jobs, errors)
    finally:
        if store is not None:
            store.close()


# -- fixes --------------------------------------------------------------------------------------
@dataclass
class DocumentFix:
    before: str
    after: str
    fixed: int
    remaining: list[Diagnostic]
    fixed_codes: tuple[str, ...] = ()  # the code of each finding fixed


def fix_document(
    source: str,
    filename: str,
    rules: Sequence[Rule],
    unsafe: bool = False,
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
    check_noqa: bool = False,
    options: AnalysisOptions = NO_OPTIONS,
) -> DocumentFix:
    """Fix one file's text (a Python file, or a notebook's JSON by its name) until stable, and
    what is still reported afterwards, located as users see it (notebooks: by cell). `project`:
    and `check_noqa` as for lint_document, so --fix and --diff see what the check sees."""
    from ddplint.fix import fix_until_stable
    from ddplint.notebook import NotebookError, fix_notebook

    def lint(text: str) -> list[Diagnostic]:
        return lint_python(text, filename, rules, errors, project, check_noqa, options)

    if filename.endswith(".ipynb"):
        outcomes: list[FixOutcome] = []

        def fix_program(program: str) -> str:
            outcomes.append(fix_until_stable(program, lint, unsafe))
            return outcomes[-1].source

        try:
            after = fix_notebook(source, fix_program)
        except NotebookError as exc:
            # Unreadable, or fixable only by reformatting the file: say so, keep the findings.
            found = lint_document(source, filename, rules, errors, project, check_noqa, options) if outcomes else []
            return DocumentFix(source, source, 0, [error_diagnostic(filename, str(exc)), *found])
        fixed = outcomes[-1].fixed if outcomes else 0
        codes = outcomes[-1].fixed_codes if outcomes else ()
        return DocumentFix(source, after, fixed, lint_document(after, filename, rules, errors, project, check_noqa, options), codes)
    outcome = fix_until_stable(source, lint, unsafe)
    return DocumentFix(source, outcome.source, outcome.fixed, outcome.remaining, outcome.fixed_codes)


# lint_document and lint_file are defined in the runner, which checks files with them; they are
# part of this public layer.
__all__ = ["DocumentFix", "fix_document", "lint_document", "lint_file", "lint_paths"]
