"""The language server: open documents in, diagnostics / code actions / hovers out.

Processes: pygls runs the protocol on an asyncio loop. The engine is CPU-bound (hundreds of ms
on a long script), so it runs in one worker process (`worker.AnalysisWorker`): the loop stays
free to read the client's next messages, a crash or a hang in one analysis costs that result,
never the server, and analyses never run concurrently (on a shared 2-core machine a second one
would only slow the first down).

When an analysis runs: at once on open and on save (unless the text was already analysed), and
on change: at once for a change that follows `debounceMs` or more of quiet (an edit, the first
keystroke after a pause: its findings come back in the time of one analysis), otherwise after a
quiet `debounceMs` (each further change of a burst re-arms the timer, so the rest of a burst costs
one analysis). One analysis per document (or notebook) is in flight at a time;
changes meanwhile fold into one rerun. A result is published only if the document is still at
the version that was analysed; otherwise a newer change has already scheduled the next analysis.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path

from ddplint import __version__
from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.config import CONFIG_FILES, ConfigError, load_settings
from ddplint.diagnostics import Diagnostic
from ddplint.lsp import noqa
from ddplint.lsp.actions import KINDS, ActionBuilder
from ddplint.lsp.analysis import EngineOutcome
from ddplint.lsp.convert import DEFAULT_SEVERITY, SEVERITY_CHOICES, to_lsp_diagnostic
from ddplint.lsp.documents import UTF16, DocumentStore, TextDocument
from ddplint.lsp.notebooks import NotebookStore
from ddplint.lsp.rule_docs import RuleLinks, default_pages_dir, write_rule_pages
from ddplint.lsp.worker import DEFAULT_TIMEOUT_S, AnalysisWorker
from ddplint.recovery import is_syntax_error
from ddplint.rules import RULES_BY_CODE, UnknownSelector, select_rules

DEFAULT_DEBOUNCE_MS = 50.0

# Any notebook type ("*" per the LSP spec), Python cells: what `ddplint check` reads in an .ipynb.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(notebook="*", cells=[types.NotebookCellLanguage(language="python")])
    ],
    save=True,
)


@dataclass
class Options:
    """Server settings: the command line sets the defaults, `initializationOptions` override."""

    debounce_ms: float = DEFAULT_DEBOUNCE_MS
    docs_url: Optional[str] = None  # template, see rule_docs
    unsafe_fixes: bool = False  # whether "apply all fixes" includes fixes that change behaviour
    analysis_timeout_s: float = DEFAULT_TIMEOUT_S  # an analysis running longer is stopped
    # Off, like ruff's showSyntaxErrors in its server: the editor's Python support shows them already,
    # and a half-typed line would flash an error on every keystroke. The other findings stay either way.
    show_syntax_errors: bool = False
    severity: str = DEFAULT_SEVERITY  # for rule findings; syntax errors are always errors

    def update(self, init_options: Any, log) -> None:
        if not isinstance(init_options, dict):
            return
        if "debounceMs" in init_options:
            try:
                self.debounce_ms = max(0.0, float(init_options["debounceMs"]))
            except (TypeError, ValueError):
                log(types.MessageType.Warning, f"ignoring debounceMs={init_options['debounceMs']!r}: not a number")
        if isinstance(init_options.get("docsUrl"), str):
            self.docs_url = init_options["docsUrl"]
        if isinstance(init_options.get("unsafeFixes"), bool):
            self.unsafe_fixes = init_options["unsafeFixes"]
        if isinstance(init_options.get("showSyntaxErrors"), bool):
            self.show_syntax_errors = init_options["showSyntaxErrors"]
        if "severity" in init_options:
            if init_options["severity"] in SEVERITY_CHOICES:
                self.severity = init_options["severity"]
            else:
                choices = ", ".join(SEVERITY_CHOICES)
                log(types.MessageType.Warning, f"ignoring severity={init_options['severity']!r}: not one of {choices}")
        timeout = init_options.get("analysisTimeoutS")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
            self.analysis_timeout_s = float(timeout)


@dataclass(frozen=True)
class Analysis:
    """One document's findings as last published, kept for code actions. `stamp` says which
    state of its target (document or notebook, version, configuration) they belong to."""

    document: TextDocument
    stamp: tuple
    diagnostics: tuple[Diagnostic, ...]


@dataclass
class _Pending:
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    tasks: set = field(default_factory=set)  # strong references: the loop only keeps weak ones
    in_flight: dict[str, asyncio.Future] = field(default_factory=dict)
    rerun: set[str] = field(default_factory=set)
    published: dict[str, tuple] = field(default_factory=dict)  # target -> stamp last published
    last_change: dict[str, float] = field(default_factory=dict)  # target -> when it last changed (monotonic s)


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, but a change to a document (or notebook) the client never opened is
    logged and ignored: pygls would apply it to a copy it does not have and answer with a
    KeyError, which editors show as "Error in server" pop-ups. There is no text to change, and
    nothing of it to analyse."""

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if self._is_open(params.text_document.uri, self.workspace.text_documents):
            yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams):
        if self._is_open(params.notebook_document.uri, self.workspace.notebook_documents):
            yield from super().lsp_notebook_document__did_change(params)

    def _is_open(self, uri: str, documents) -> bool:
        if unquote(uri) in documents:
            return True
        if isinstance(self._server, DdplintServer):
            self._server.log(types.MessageType.Log, f"ignoring a change to {uri}: it was never opened")
        return False


class DdplintServer(LanguageServer):
    def __init__(self, options: Optional[Options] = None):
        super().__init__(
            "ddplint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=NOTEBOOK_SYNC,
            protocol_cls=_Protocol,
        )
        self.options = options or Options()
        self.documents = DocumentStore()
        self.notebooks = NotebookStore(self.documents)
        self.analyses: dict[str, Analysis] = {}
        self.links = RuleLinks()
        self._pending = _Pending()
        self._worker = AnalysisWorker()
        self._reported_config_problems: set[str] = set()
        # Bumped whenever a configuration file changes: an analysis made under an older
        # configuration is no longer current even if the text is.
        self.config_generation = 0
        self._register()

    # -- wiring ---------------------------------------------------------------------------------
    def _register(self) -> None:
        self.feature(types.INITIALIZE)(_handler(self.on_initialize))
        self.feature(types.SHUTDOWN)(_handler(self.on_shutdown))
        self.feature(types.TEXT_DOCUMENT_DID_OPEN)(_handler(self.on_did_open))
        self.feature(types.TEXT_DOCUMENT_DID_CHANGE)(_handler(self.on_did_change))
        self.feature(types.TEXT_DOCUMENT_DID_SAVE)(_handler(self.on_did_save))
        self.feature(types.TEXT_DOCUMENT_DID_CLOSE)(_handler(self.on_did_close))
        code_actions = types.CodeActionOptions(code_action_kinds=list(KINDS))
        self.feature(types.TEXT_DOCUMENT_CODE_ACTION, code_actions)(_handler(self.on_code_action))
        self.feature(types.TEXT_DOCUMENT_HOVER)(_handler(self.on_hover))
        self.feature(types.INITIALIZED)(_handler(self.on_initialized))
        self.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(_handler(self.on_did_change_watched_files))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)(_handler(self.on_notebook_did_open))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(_handler(self.on_notebook_did_change))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)(_handler(self.on_notebook_did_save))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(_handler(self.on_notebook_did_close))

    @property
    def encoding(self) -> str:
        """The position encoding pygls negotiated with the client (UTF-16 unless it offered another)."""
        try:
            encoding = self.workspace.position_encoding
        except RuntimeError:  # before initialize
            return UTF16
        return getattr(encoding, "value", encoding) or UTF16

    def log(self, level: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=level, message=f"ddplint: {message}"))

    # -- lifecycle ------------------------------------------------------------------------------
    def on_initialize(self, params: types.InitializeParams) -> None:
        self.options.update(params.initialization_options, self.log)
        self.links = self._rule_links()
        self._worker.timeout_s = self.options.analysis_timeout_s
        self._worker.start()

    async def on_initialized(self, _params: types.InitializedParams) -> None:
        await self._watch_config_files()

    async def _watch_config_files(self) -> None:
        """Ask the client to tell us when a configuration file changes on disk (edited in the
        editor or anywhere else). Clients that cannot watch files still send didSave for the
        configuration files they have open, and every analysis reads the file's current state."""
        capabilities = self.client_capabilities.workspace
        watched = capabilities.did_change_watched_files if capabilities else None
        if not (watched and watched.dynamic_registration):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
        registration = types.Registration(
            id="ddplint-config-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await self.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception as exc:  # the client said no: didSave and per-analysis reads remain
            self.log(types.MessageType.Warning, f"cannot watch configuration files: {exc}")

    def _rule_links(self) -> RuleLinks:
        if self.options.docs_url:
            try:
                self.options.docs_url.format(code="DDP001", name="x", version=__version__)
                return RuleLinks(template=self.options.docs_url)
            except (KeyError, IndexError, ValueError) as exc:
                self.log(types.MessageType.Warning, f"ignoring docsUrl {self.options.docs_url!r}: {exc!r}")
        pages = default_pages_dir()
        try:
            write_rule_pages(pages)
        except OSError as exc:
            self.log(types.MessageType.Warning, f"cannot write rule pages to {pages}: {exc}; diagnostics carry no links")
            return RuleLinks()
        return RuleLinks(pages_dir=pages)

    def on_shutdown(self, *_args) -> None:
        for timer in self._pending.timers.values():
            timer.cancel()
        self._pending.timers.clear()
        self.stop_worker()

    def stop_worker(self) -> None:
        """Stop the analysis process and wait for it to end (shutdown, and every other way out:
        `ddplint.lsp.main` calls it on the way out and on SIGTERM / SIGHUP / SIGINT)."""
        self._worker.close()

    # -- document sync --------------------------------------------------------------------------
    def on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        if not is_python(params.text_document):
            return  # e.g. a pyproject.toml the client syncs too: nothing to analyse
        self.documents.open(params.text_document)
        self.schedule(params.text_document.uri, delay=0)

    def on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        document = self.documents.change(params.text_document, params.content_changes, self.encoding)
        if document is not None:
            self.schedule_change(document.uri)

    def on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_config_file(uri):
            self.config_changed(f"{uri} saved")
        elif self.documents.get(uri) is not None and not self._is_current(uri):
            self.schedule(uri, delay=0)

    def on_did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        changed = [change.uri for change in params.changes if is_config_file(change.uri)]
        if changed:
            self.config_changed(", ".join(changed) + " changed")

    def config_changed(self, reason: str) -> None:
        """A configuration file changed on disk: analyse every open document again (the cache
        in `ddplint.config` notices the new mtime and reads the file again)."""
        self.config_generation += 1
        self._reported_config_problems.clear()
        targets = {self.target_of(document.uri) for document in self.documents}
        self.log(types.MessageType.Info, f"{reason}: re-analysing {len(targets)} open document(s)")
        for target in sorted(targets):
            self.schedule(target, delay=0)

    def on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._cancel_timer(uri)
        self._pending.last_change.pop(uri, None)
        self.documents.close(uri)
        self._clear(uri)

    # -- notebook sync (cells arrive through these, never through textDocument/didOpen) ---------
    def on_notebook_did_open(self, params: types.DidOpenNotebookDocumentParams) -> None:
        state = self.notebooks.open(params)
        self.schedule(state.uri, delay=0)

    def on_notebook_did_change(self, params: types.DidChangeNotebookDocumentParams) -> None:
        state, removed = self.notebooks.change(params, self.encoding)
        for uri in removed:
            self._clear(uri)
        if state is not None:
            self.schedule_change(state.uri)

    def on_notebook_did_save(self, params: types.DidSaveNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if self.notebooks.get(uri) is not None:
            self.schedule(uri, delay=0)

    def on_notebook_did_close(self, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        self._cancel_timer(uri)
        self._pending.published.pop(uri, None)
        self._pending.last_change.pop(uri, None)
        for cell in self.notebooks.close(uri):
            self._clear(cell)

    # -- scheduling -----------------------------------------------------------------------------
    # A "target" is what one analysis covers: an open text document, or a whole notebook (its
    # cells are one program). Timers, in-flight analyses and reruns are all per target.
    def target_of(self, uri: str) -> str:
        return self.notebooks.owner(uri) or uri

    def schedule(self, target: str, delay: float) -> None:
        """(Re)arm the analysis of `target` to start after `delay` seconds of quiet."""
        self._cancel_timer(target)
        if delay <= 0:
            self._start(target)
        else:
            self._pending.timers[target] = asyncio.get_running_loop().call_later(delay, self._start, target)

    def schedule_change(self, target: str) -> None:
        """A change of `target`: analysed at once after a quiet spell, debounced within a burst."""
        quiet = self.options.debounce_ms / 1000
        now = time.monotonic()
        last = self._pending.last_change.get(target)
        self._pending.last_change[target] = now
        self.schedule(target, delay=0 if last is None or now - last >= quiet else quiet)

    def _cancel_timer(self, target: str) -> None:
        timer = self._pending.timers.pop(target, None)
        if timer is not None:
            timer.cancel()

    def _start(self, target: str) -> None:
        self._pending.timers.pop(target, None)
        task = asyncio.ensure_future(self.refresh(target))
        self._pending.tasks.add(task)
        task.add_done_callback(self._pending.tasks.discard)

    async def refresh(self, target: str) -> None:
        """Bring `target`'s published diagnostics up to date with its current text.

        At most one analysis per target is in flight: a request that arrives meanwhile only
        marks the target for one more run, which then reads the newest text. So however fast
        the edits come, the server is never more than one analysis behind."""
        running = self._pending.in_flight.get(target)
        if running is None or running.done():  # done: its clean-up callback has not run yet
            running = asyncio.ensure_future(self._analyse_until_current(target))
            self._pending.in_flight[target] = running
            running.add_done_callback(lambda task: self._forget_in_flight(target, task))
        else:
            self._pending.rerun.add(target)
        await asyncio.shield(running)

    def _forget_in_flight(self, target: str, task: asyncio.Future) -> None:
        if self._pending.in_flight.get(target) is task:
            del self._pending.in_flight[target]

    async def _analyse_until_current(self, target: str) -> None:
        while True:
            self._pending.rerun.discard(target)
            try:
                await self._analyse_and_publish(target)
            except Exception:  # a bug of the server's own: say so, keep serving
                self.log(types.MessageType.Error, f"analysing {target} failed (please report this):\n{traceback.format_exc()}")
            if target not in self._pending.rerun:
                return

    def _stamp(self, target: str):
        """What must not have changed for a finished analysis of `target` to be published."""
        notebook = self.notebooks.get(target)
        if notebook is not None:
            return (notebook, notebook.version, self.config_generation)
        document = self.documents.get(target)
        return (document, document.version if document else None, self.config_generation)

    def _is_current(self, uri: str) -> bool:
        analysis = self.analyses.get(uri)
        return analysis is not None and analysis.stamp == self._stamp(self.target_of(uri)) and (
            analysis.document is self.documents.get(uri)
        )

    async def _analyse_and_publish(self, target: str) -> None:
        """Analyse the target as it is now and publish the result, unless it or the configuration
        changed meanwhile (then a newer analysis is already scheduled). Never raises: a crash
        is logged and publishes an empty result."""
        stamp = self._stamp(target)
        if stamp[0] is None:
            return  # closed meanwhile
        if self._pending.published.get(target) == stamp:
            return  # a rerun or a save found nothing new since the last analysis
        notebook = self.notebooks.get(target)
        program = None
        if notebook is not None:
            try:
                program = self.notebooks.program(notebook)
            except Exception:  # ddplint.notebook refusing what the client sent: log it, show nothing
                self.log(types.MessageType.Error, f"cannot read notebook {target}:\n{traceback.format_exc()}")
                return
        text = program.notebook.program if program is not None else stamp[0].text
        rules = self.rules_for(target)
        if rules is None:
            outcome = EngineOutcome((), (), None, 0.0)
            self.log(types.MessageType.Log, f"{target} is excluded by the configuration: not analysed")
        else:
            codes = [rule.code for rule in rules]
            outcome = await self._worker.analyse(text, filename_of(target), codes, self.options_for(target))
        if self._stamp(target) != stamp:
            return  # superseded: the change that superseded it has its own analysis scheduled
        if not self.options.show_syntax_errors:
            outcome = dataclasses.replace(outcome, diagnostics=tuple(d for d in outcome.diagnostics if not is_syntax_error(d)))
        self._report_problems(target, outcome)
        self.log(
            types.MessageType.Log,  # before publishing: a client holding the diagnostics has this line
            f"analysed {target} (version {stamp[1]}): {len(outcome.diagnostics)} finding(s)"
            f" in {outcome.seconds * 1000:.0f} ms",
        )
        self._pending.published[target] = stamp
        for document, diagnostics in self._per_document(target, stamp, program, outcome):
            self._publish_safely(stamp, document, diagnostics)

    def _per_document(self, target, stamp, program, outcome: EngineOutcome):
        """(document, its diagnostics) to publish: the document itself, or each code cell."""
        if program is None:
            return [(stamp[0], outcome.diagnostics)]
        try:
            by_cell = program.by_cell(outcome.diagnostics)
        except Exception:  # a bug in mapping findings to cells: log it, clear the cells
            self.log(types.MessageType.Error, f"placing findings in the cells of {target} failed:\n{traceback.format_exc()}")
            by_cell = {}
        return [(cell, by_cell.get(cell.uri, ())) for cell in program.code_cells]

    def _publish_safely(self, stamp, document: TextDocument, diagnostics) -> None:
        try:
            self._publish(stamp, document, tuple(diagnostics))
        except Exception:  # a bug here must cost one result, not the server
            self.log(types.MessageType.Error, f"publishing diagnostics for {document.uri} failed:\n{traceback.format_exc()}")
            self._publish(stamp, document, ())

    def _publish(self, stamp, document: TextDocument, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.analyses[document.uri] = Analysis(document, stamp, diagnostics)
        lsp_diagnostics = [self.lsp_diagnostic(document, d) for d in diagnostics]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=document.uri, version=document.version, diagnostics=lsp_diagnostics)
        )

    def _clear(self, uri: str) -> None:
        self.analyses.pop(uri, None)
        self._pending.published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def rules_for(self, uri: str) -> Optional[tuple]:
        """The rules `[tool.ddplint]` selects for this document, or None for an excluded file.

        `load_settings` re-reads a configuration file whose mtime or size changed, so every
        analysis sees the configuration as it is on disk now; `config_changed` makes sure open
        documents are analysed again when it changes."""
        path = filename_of(uri)
        if path == uri:  # not a file on disk (untitled:): no configuration applies
            return select_rules()
        try:
            settings = load_settings(Path(path))
            if settings.is_excluded(path):
                return None
            return settings.rules_for(path)
        except (ConfigError, UnknownSelector) as exc:
            self._config_problem(str(exc))
            return select_rules()
        except OSError as exc:  # e.g. the file's directory vanished: lint with the defaults
            self.log(types.MessageType.Warning, f"cannot read the configuration for {path}: {exc}")
            return select_rules()
        except Exception as exc:  # a configuration the reader did not expect (a bug of ours, or
            # one nested deeper than the parser recurses): say so, and keep serving with the defaults
            self._config_problem(f"{_config_file_near(path)}: cannot read it: {type(exc).__name__}: {exc}")
            return select_rules()

    def options_for(self, uri: str) -> AnalysisOptions:
        """The analysis options `[tool.ddplint]` declares for this document (none for a buffer
        not on disk, or where the configuration cannot be used: `rules_for` reports why)."""
        path = filename_of(uri)
        if path == uri:
            return NO_OPTIONS
        try:
            return load_settings(Path(path)).options
        except Exception:  # reported by rules_for, asked just before
            return NO_OPTIONS

    def _config_problem(self, message: str) -> None:
        """Tell the user once per distinct problem (not on every keystroke) and go on with the
        default rules, so that a typo in pyproject.toml does not silence ddplint altogether."""
        if message in self._reported_config_problems:
            return
        self._reported_config_problems.add(message)
        self.log(types.MessageType.Error, f"configuration error, using the default rules: {message}")
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"ddplint: {message} (using the default rules)")
        )

    def _report_problems(self, uri: str, outcome: EngineOutcome) -> None:
        if outcome.crash is not None:
            self.log(types.MessageType.Error, f"analysis of {uri} crashed (please report this):\n{outcome.crash}")
        for error in outcome.rule_errors:
            self.log(types.MessageType.Error, f"{uri}: {error.detail} (please report this)")

    def lsp_diagnostic(self, document: TextDocument, diagnostic: Diagnostic) -> types.Diagnostic:
        return to_lsp_diagnostic(diagnostic, document, self.encoding, self.links, self.options.severity)

    async def current_analysis(self, uri: str) -> Optional[Analysis]:
        """The findings for the document's current text: a code action asked between a change
        and its debounced analysis must not offer edits computed for the old text."""
        if not self._is_current(uri):
            target = self.target_of(uri)
            self._cancel_timer(target)
            await self.refresh(target)
        return self.analyses.get(uri) if self._is_current(uri) else None

    # -- requests -------------------------------------------------------------------------------
    async def on_code_action(self, params: types.CodeActionParams) -> Optional[list[types.CodeAction]]:
        analysis = await self.current_analysis(params.text_document.uri)
        if analysis is None or not analysis.diagnostics:
            return None
        document = analysis.document
        builder = ActionBuilder(
            document, self.encoding, self._client_takes_versioned_edits(),
            lambda d: self.lsp_diagnostic(document, d),
        )
        actions = builder.for_range(analysis.diagnostics, params.range, params.context.only, self.options.unsafe_fixes)
        return actions or None

    def _client_takes_versioned_edits(self) -> bool:
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        edit = workspace.workspace_edit if workspace else None
        return bool(edit and edit.document_changes)

    def on_hover(self, params: types.HoverParams) -> Optional[types.Hover]:
        document = self.documents.get(params.text_document.uri)
        if document is None:
            return None
        row = params.position.line
        line = document.line(row)
        column = document.offset(params.position, self.encoding) - document.offset(
            types.Position(line=row, character=0), self.encoding
        )
        hit = noqa.noqa_at(line, column)
        if hit is None:
            return None
        text = self._noqa_markdown(hit)
        start = document.client_position(row, hit.start, self.encoding)
        end = document.client_position(row, hit.end, self.encoding)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=types.Range(start=start, end=end),
        )

    def _noqa_markdown(self, hit: noqa.NoqaHit) -> str:
        if hit.bare:
            return "`# noqa` without codes: every ddplint finding on this line is suppressed."
        entries = []
        for code in hit.codes:
            rule = RULES_BY_CODE.get(code)
            if rule is None:
                entries.append(f"**{code}**: not a ddplint rule")
                continue
            url = self.links.url(code)
            more = f" ([documentation]({url}))" if url else ""
            entries.append(f"**{code}** `{rule.name}`: {rule.summary}{more}")
        return "\n\n".join(entries)


def _handler(method):
    """pygls tags handlers with attributes, which bound methods cannot carry: wrap each in a plain
    function (a coroutine function for async methods, so pygls still awaits it)."""
    async def awaiting_handler(params):
        return await method(params)

    def handler(params):
        return method(params)

    chosen = awaiting_handler if inspect.iscoroutinefunction(method) else handler
    chosen.__name__ = method.__name__
    return chosen


def is_python(item: types.TextDocumentItem) -> bool:
    return item.language_id == "python" or item.uri.endswith((".py", ".pyi"))


def is_config_file(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_FILES


def _config_file_near(path: str) -> str:
    """The configuration file nearest to `path` (to name the one that could not be read)."""
    for folder in Path(path).parents:
        for name in CONFIG_FILES:
            if (folder / name).is_file():
                return str(folder / name)
    return "the configuration"


def filename_of(uri: str) -> str:
    """The path the engine reports and configuration is matched against; for a document that is
    not a file (untitled:, vscode-notebook-cell:) the URI itself."""
    return to_fs_path(uri) or uri
