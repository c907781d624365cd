"""`ddplint lsp`: a Language Server Protocol server over stdio (needs the `lsp` extra).

See docs/editors.md for editor set-up. The server itself is in `ddplint.lsp.server`.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from typing import Callable, Optional, Sequence

# Signals that end the server the way an editor's shutdown does: the analysis process is
# stopped before the server goes (SIGINT: Ctrl-C where the server was started by hand).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ddplint lsp", description="Run ddplint as a language server over stdio (see docs/editors.md)."
    )
    # Several clients pass --stdio by habit (vscode-languageclient does); stdio is the only transport.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")
    parser.add_argument(
        "--debounce-ms", type=float, default=None, metavar="MS",
        help="changes closer together than this wait for this much quiet before re-analysing; one after a quiet spell is analysed at once (default: 50; initializationOptions.debounceMs overrides)",
    )
    parser.add_argument("--log-file", metavar="PATH", help="write the server's own debug log here")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(list(argv or []))
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.DEBUG, format="%(asctime)s %(name)s %(message)s")
    try:
        from ddplint.lsp.server import DdplintServer, Options
    except ImportError as exc:  # pygls / lsprotocol are the optional `lsp` extra
        print(f"ddplint lsp: unavailable: {exc} (install with: pip install 'ddplint[lsp]')", file=sys.stderr)
        return 2
    options = Options()
    if args.debounce_ms is not None:
        options.debounce_ms = max(0.0, args.debounce_ms)
    server = DdplintServer(options)
    _stop_on_signals(server.stop_worker)
    try:
        server.start_io()
    finally:
        server.stop_worker()  # the client left without shutdown, or the loop broke: none left behind
    return 0


def _stop_on_signals(clean_up: Callable[[], None]) -> None:
    """On SIGTERM / SIGHUP / SIGINT: the same clean-up as a normal exit, then end by that signal
    (so whoever sent it sees it did). Without this, the default action ends the server at once and
    the analysis process only notices later (see worker.py: it also dies with the server)."""

    def stop(signum: int, _frame) -> None:
        try:
            clean_up()
        finally:
            logging.shutdown()
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
