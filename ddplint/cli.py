"""Command line: `ddplint [check] [PATH ...]` and `ddplint rule CODE`.

Exit codes (ruff's): 0 nothing found, 1 findings, 2 usage / configuration / internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from ddplint import __version__
from ddplint.cache import CACHE_DIR_NAME, ResultCache, default_cache_dir
from ddplint.engine import InternalError, lint_paths
from ddplint.output import FORMATTERS
from ddplint.rules import ALL_RULES, RULES_BY_CODE, UnknownSelector, select_rules

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SUBCOMMANDS = ("check", "rule", "verify", "lsp")


def _codes(value: str) -> list[str]:
    return [part for part in (p.strip() for p in value.split(",")) if part]


def _check_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    parser.add_argument(
        "--select", type=_codes, action="extend", metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (e.g. DDP001,DDP00); replaces the default set",
    )
    parser.add_argument(
        "--ignore", type=_codes, action="extend", metavar="CODES", help="comma-separated rule codes or prefixes to skip"
    )
    parser.add_argument(
        "--output-format", choices=sorted(FORMATTERS), default="text", help="how to print findings (default: text)"
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    parser.add_argument(
        "-j", "--jobs", type=_positive_int, metavar="N", help="worker processes (default: one per available core)"
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache")
    parser.add_argument(
        "--cache-dir", type=Path, metavar="DIR",
        help=f"where to keep the results cache (default: {CACHE_DIR_NAME}/ in the project root; env DDPLINT_CACHE_DIR)",
    )


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {number}")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ddplint",
        description="Find the bugs that make multi-GPU PyTorch training scale badly.",
        epilog="`ddplint PATH` is short for `ddplint check PATH`. `ddplint rule CODE` explains a rule.",
    )
    parser.add_argument("--version", action="version", version=f"ddplint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{check,rule,verify,lsp}")
    _check_parser(sub.add_parser("check", help="check files (the default command)"))
    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", nargs="?", help="rule code or name, e.g. DDP001 or missing-set-epoch")
    rule.add_argument("--all", action="store_true", help="print every rule's documentation")
    # Listed for --help only: main() hands these to their own modules before parsing.
    sub.add_parser("verify", help="run a script briefly on N ranks and confirm findings (needs torch)")
    sub.add_parser("lsp", help="language server over stdio (needs the `lsp` extra)")
    return parser


# Subcommands with their own argument parsers and dependencies, imported only when used so that
# `ddplint check` never pays for torch (verify) or pygls (lsp).
DELEGATED = {"verify": "ddplint.verify.command", "lsp": "ddplint.lsp"}


def _delegate(command: str, argv: list[str]) -> int:
    import importlib

    try:
        module = importlib.import_module(DELEGATED[command])
    except ImportError as exc:
        print(f"ddplint {command}: unavailable: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return int(module.main(argv) or 0)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in DELEGATED:
        return _delegate(args_list[0], args_list[1:])
    if not args_list or (args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "check")
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: 0 for --help/--version, 2 for usage errors
        return int(exc.code or 0)
    try:
        if args.command == "rule":
            return _rule_command(args)
        return _check_command(args)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        # `ddplint | head`: the reader left. Point stdout at /dev/null so the interpreter's
        # final flush does not print a second error on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # never a traceback for users; the message names what broke
        print(f"ddplint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _check_command(args: argparse.Namespace) -> int:
    try:
        rules = select_rules(args.select, args.ignore)
    except UnknownSelector as exc:
        print(f"ddplint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    errors: list[InternalError] = []
    cache = _open_cache(args, rules)
    diagnostics = list(lint_paths(args.paths, rules, errors, jobs=args.jobs, cache=cache))
    if cache is not None:
        problem = cache.save()
        if problem is not None:
            print(f"ddplint: warning: {problem}", file=sys.stderr)
    sys.stdout.write(FORMATTERS[args.output_format](diagnostics))
    for error in errors:
        print(f"{error.filename}: {error.detail} (please report this)", file=sys.stderr)
    if not args.quiet and args.output_format == "text":
        files = len({d.filename for d in diagnostics})
        if diagnostics:
            noun = "finding" if len(diagnostics) == 1 else "findings"
            print(f"Found {len(diagnostics)} {noun} in {files} file{'s' if files != 1 else ''}.", file=sys.stderr)
        else:
            print("All checks passed!", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _open_cache(args: argparse.Namespace, rules) -> Optional[ResultCache]:
    if args.no_cache:
        return None
    directory = args.cache_dir or (Path(os.environ["DDPLINT_CACHE_DIR"]) if os.environ.get("DDPLINT_CACHE_DIR") else None)
    # Everything that changes results must be in the key: the rules chosen (ddplint's version is
    # added by the cache itself).
    return ResultCache(directory or default_cache_dir(), ",".join(rule.code for rule in rules))


def _rule_command(args: argparse.Namespace) -> int:
    if args.all:
        print("\n".join(rule.documentation() for rule in ALL_RULES), end="")
        return EXIT_CLEAN
    if not args.code:
        width = max(len(rule.name) for rule in ALL_RULES)
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<{width}}  {rule.summary}")
        return EXIT_CLEAN
    wanted = args.code.strip()
    rule = RULES_BY_CODE.get(wanted.upper()) or next((r for r in ALL_RULES if r.name == wanted), None)
    if rule is None:
        print(f"ddplint: error: unknown rule {wanted!r} (`ddplint rule` lists them)", file=sys.stderr)
        return EXIT_ERROR
    print(rule.documentation(), end="")
    return EXIT_CLEAN
