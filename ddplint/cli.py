"""Command line: `ddplint [check] [PATH ...]` and `ddplint rule CODE`.

Exit codes (ruff's): 0 nothing found, 1 findings, 2 usage / configuration / internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from ddplint import __version__
from ddplint.api import discover, fix_document, lint_document, lint_paths, project_index
from ddplint.cache import CACHE_DIR_NAME, ResultCache, default_cache_dir
from ddplint.config import ConfigError, Overrides, Resolver
from ddplint.diagnostics import Diagnostic, InternalError, error_diagnostic
from ddplint.fix import unified_diff, write_fixed_file
from ddplint.isolation import leave_workspace_out
from ddplint.output import COLORED_FORMATS, FORMATTERS, FormatOptions, format_statistics, use_color
from ddplint.rules import UnknownSelector, select_codes
from ddplint.source import MAX_READ_BYTES, SourceEncodingError, decode_source, encode_source, line_at, read_file, reason_of

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SUBCOMMANDS = ("check", "rule", "verify", "lsp")


def _codes(value: str) -> list[str]:
    return [part for part in (p.strip() for p in value.split(",")) if part]


def _check_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .); `-` reads stdin"
    )
    rules = parser.add_argument_group("rule selection (on top of [tool.ddplint])")
    rules.add_argument(
        "--select", type=_codes, action="extend", metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (e.g. DDP001,DDP00); replaces the configured set",
    )
    rules.add_argument(
        "--extend-select", type=_codes, action="extend", default=[], metavar="CODES", help="rules to enable in addition"
    )
    rules.add_argument(
        "--ignore", type=_codes, action="extend", default=[], metavar="CODES",
        help="comma-separated rule codes or prefixes to skip",
    )
    files = parser.add_argument_group("files")
    files.add_argument("--exclude", type=_codes, action="extend", metavar="PATTERNS", help="replaces the excluded patterns")
    files.add_argument(
        "--extend-exclude", type=_codes, action="extend", default=[], metavar="PATTERNS", help="more patterns to exclude"
    )
    files.add_argument(
        "--force-exclude", action="store_true", help="apply exclusions to files named on the command line too"
    )
    files.add_argument("--config", metavar="FILE", help="use this pyproject.toml / ddplint.toml instead of searching")
    files.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    files.add_argument("--stdin-filename", metavar="NAME", help="the name to report (and configure) stdin under")
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also apply (or offer) fixes that change behaviour")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    report = parser.add_argument_group("output")
    report.add_argument(
        "--output-format", choices=list(FORMATTERS), default="text", help="how to print findings (default: text)"
    )
    report.add_argument("--statistics", action="store_true", help="print counts per rule instead of findings")
    report.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    report.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    speed = parser.add_argument_group("speed")
    speed.add_argument(
        "-j", "--jobs", type=_positive_int, metavar="N", help="worker processes (default: one per 64 kB of source, up to one per core)"
    )
    speed.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache")
    speed.add_argument(
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
    if argv is None:  # run as a program (the `ddplint` script): see ddplint.isolation
        leave_workspace_out()
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
        for selectors in (args.select, args.extend_select, args.ignore):
            select_codes(selectors)  # an unknown code on the command line: stop before any work
        resolver = Resolver(
            Overrides(args.select, args.extend_select, args.ignore, args.exclude, args.extend_exclude),
            Path(args.config) if args.config else None,
            args.isolated,
        )
        if args.paths == ["-"]:
            return _check_stdin(args, resolver)
        errors: list[InternalError] = []
        if args.fix or args.diff:
            return _fix_paths(args, resolver, errors)
        cache = _open_cache(args)
        diagnostics = list(
            lint_paths(
                args.paths, None, errors, resolver.codes_for, resolver.is_excluded, args.force_exclude,
                jobs=args.jobs, cache=cache, options_for=resolver.options_for,
            )
        )
    except (UnknownSelector, ConfigError) as exc:
        print(f"ddplint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if cache is not None:
        problem = cache.save()
        if problem is not None:
            print(f"ddplint: warning: {problem}", file=sys.stderr)
    _report(args, diagnostics, errors)
    return _exit_code(args, diagnostics, errors)


def _report(args: argparse.Namespace, diagnostics: list[Diagnostic], errors: list[InternalError], fixed: int = 0,
            options: Optional[FormatOptions] = None, stream=None) -> None:
    stream = stream or sys.stdout
    hidden = 0 if args.unsafe_fixes else sum(1 for d in diagnostics if d.fix is not None and not d.fix.is_safe)
    if not args.unsafe_fixes:  # unsafe fixes are neither shown nor offered unless asked for
        diagnostics = [d if d.fix is None or d.fix.is_safe else _without_fix(d) for d in diagnostics]
    options = options or FormatOptions()
    options.color = args.output_format in COLORED_FORMATS and use_color(stream)
    if args.statistics:
        stream.write(format_statistics(diagnostics, as_json=args.output_format == "json"))
    else:
        stream.write(FORMATTERS[args.output_format](diagnostics, options))
    for error in errors:
        print(f"{error.filename}: {error.detail} (please report this)", file=sys.stderr)
    if args.quiet or args.output_format not in COLORED_FORMATS:
        return
    files = len({d.filename for d in diagnostics})
    if diagnostics or fixed:
        noun = "finding" if len(diagnostics) + fixed == 1 else "findings"
        tail = f" ({fixed} fixed, {len(diagnostics)} remaining)" if fixed else ""
        where = f" in {files} file{'s' if files != 1 else ''}" if not fixed else ""
        print(f"Found {len(diagnostics) + fixed} {noun}{where}{tail}.", file=sys.stderr)
        _print_fixable(diagnostics, args, hidden)
    else:
        print("All checks passed!", file=sys.stderr)


def _without_fix(diagnostic: Diagnostic) -> Diagnostic:
    return dataclasses.replace(diagnostic, fix=None)


def _print_fixable(diagnostics: Sequence[Diagnostic], args: argparse.Namespace, hidden: int) -> None:
    """ruff's hint lines: what `--fix` would do now, and fixes hidden behind `--unsafe-fixes`."""
    fixable = sum(1 for d in diagnostics if d.fix is not None)
    if fixable and not args.fix:
        option = "`--fix --unsafe-fixes`" if args.unsafe_fixes else "the `--fix` option"
        print(f"[*] {fixable} fixable with {option}.", file=sys.stderr)
    if hidden:
        noun = "fix" if hidden == 1 else "fixes"
        print(f"({hidden} hidden {noun} can be enabled with the `--unsafe-fixes` option.)", file=sys.stderr)


def _exit_code(args: argparse.Namespace, diagnostics: Sequence[Diagnostic], errors: Sequence[InternalError]) -> int:
    if errors:
        return EXIT_ERROR
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _open_cache(args: argparse.Namespace) -> Optional[ResultCache]:
    if args.no_cache:
        return None
    directory = args.cache_dir or (Path(os.environ["DDPLINT_CACHE_DIR"]) if os.environ.get("DDPLINT_CACHE_DIR") else None)
    # Each entry records the rules it was checked with (they vary per file with per-file-ignores)
    # and its configuration's analysis options (api.lint_paths: the rules key); the cache adds
    # ddplint's version. Nothing else in the configuration changes results.
    return ResultCache(directory or default_cache_dir(), "per-file-rules")


def _fix_paths(args: argparse.Namespace, resolver: Resolver, errors: list[InternalError]) -> int:
    """--fix writes the fixed files and reports what is left; --diff prints the changes instead."""
    remaining: list[Diagnostic] = []
    fixed = 0
    found = list(discover(args.paths, resolver.is_excluded, args.force_exclude))
    project = project_index([path for path, problem in found if problem is None])
    for path, problem in found:
        if problem is not None:
            remaining.append(error_diagnostic(path, problem))
            continue
        read = _read_source(path)
        if isinstance(read, str):
            remaining.append(error_diagnostic(path, read))
            continue
        data, source, encoding = read
        rules, options = resolver.rules_for(path), resolver.options_for(path)
        result = fix_document(source, path, rules, args.unsafe_fixes, errors, project, options)
        if args.diff:
            fixed += result.fixed
            sys.stdout.write(unified_diff(result.before, result.after, path))
            continue
        problem = _write_fixes(path, data, result.after, encoding) if result.after != result.before else None
        if problem is None:
            fixed += result.fixed
            remaining.extend(result.remaining)
        else:  # nothing was written: the file still has every finding it came with
            remaining.append(error_diagnostic(path, problem))
            remaining.extend(lint_document(source, path, rules, None, project, options))  # internal errors: recorded by the fix run
    if args.diff:
        # Files that could not be read (all `remaining` holds here) on stderr: stdout is the diff.
        sys.stderr.write(FORMATTERS["text"](remaining, FormatOptions()))
        if not args.quiet:
            print(f"Would fix {fixed} finding{'s' if fixed != 1 else ''}.", file=sys.stderr)
        return EXIT_ERROR if errors else (EXIT_FINDINGS if fixed or remaining else EXIT_CLEAN)
    _report(args, sorted(remaining, key=lambda d: d.sort_key), errors, fixed)
    return _exit_code(args, remaining, errors)


def _read_source(path: str) -> tuple[bytes, str, str] | str:
    """(the file's bytes, its text exactly as Python decodes it, the codec), or why it cannot be read."""
    try:
        data = read_file(path)
    except OSError as exc:
        return f"cannot read: {reason_of(exc)}"
    try:
        return (data, *decode_source(data, path))
    except SourceEncodingError as exc:
        return f"cannot decode file: {exc}"


def _write_fixes(path: str, data: bytes, text: str, encoding: str) -> Optional[str]:
    """Write the fixed `text` over the file read as `data`: None when done, else why not."""
    try:
        fixed = encode_source(text, encoding, path)
    except SourceEncodingError as exc:
        return f"cannot write fixes: {exc}; the file is left as it was"
    return write_fixed_file(path, data, fixed)


def _check_stdin(args: argparse.Namespace, resolver: Resolver) -> int:
    """`ddplint - --stdin-filename train.py`: for editors and scripts. With --fix the fixed source
    goes to stdout (in the input's own encoding) and the findings to stderr; with --diff the diff
    goes to stdout."""
    filename = args.stdin_filename or "-"
    configured_as = filename if args.stdin_filename else str(Path.cwd() / "-")
    rules, options = resolver.rules_for(configured_as), resolver.options_for(configured_as)
    data = sys.stdin.buffer.read(MAX_READ_BYTES + 1)  # `ddplint - < /dev/zero` must end
    if len(data) > MAX_READ_BYTES:
        return _report_stdin_too_large(args, filename)
    # Named as a file of a project: judged with that project's modules, as the file itself would be.
    project = project_index([args.stdin_filename]) if args.stdin_filename else None
    try:
        source, encoding = decode_source(data, filename)
    except SourceEncodingError:
        source, encoding = None, "utf-8"
    errors: list[InternalError] = []
    if (args.fix or args.diff) and source is not None:
        result = fix_document(source, filename, rules, args.unsafe_fixes, errors, project, options)
        if args.diff:
            sys.stdout.write(unified_diff(result.before, result.after, filename))
            return EXIT_ERROR if errors else (EXIT_FINDINGS if result.fixed else EXIT_CLEAN)
        try:
            fixed_data, fixed, remaining = encode_source(result.after, encoding, filename), result.fixed, result.remaining
        except SourceEncodingError as exc:
            fixed_data, fixed = data, 0
            remaining = [error_diagnostic(filename, f"cannot write fixes: {exc}; the input is passed on as it was"),
                         *lint_document(data, filename, rules, None, project, options)]
        _write_stdout(fixed_data, encoding)
        _report(args, remaining, errors, fixed, stream=sys.stderr)
        return _exit_code(args, remaining, errors)
    diagnostics = lint_document(data, filename, rules, errors, project, options)
    if args.fix:  # undecodable: the code goes through untouched, the findings to stderr
        _write_stdout(data, encoding)
        _report(args, diagnostics, errors, stream=sys.stderr)
        return _exit_code(args, diagnostics, errors)

    def line_of(d: Diagnostic) -> Optional[str]:
        return None if d.cell is not None else line_at(source or "", d.location.row)

    _report(args, diagnostics, errors, options=FormatOptions(line_of=line_of))
    return _exit_code(args, diagnostics, errors)


def _report_stdin_too_large(args: argparse.Namespace, filename: str) -> int:
    problem = error_diagnostic(filename, f"cannot read: stdin is over the {MAX_READ_BYTES // 2**20} MB limit for any file")
    _report(args, [problem], [], stream=sys.stderr if args.fix else None)
    return _exit_code(args, [problem], [])


def _write_stdout(data: bytes, encoding: str) -> None:
    """Source bytes to stdout exactly (a stream without bytes gets them decoded, undecodable ones
    escaped, rather than an error)."""
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        sys.stdout.write(data.decode(encoding, errors="surrogateescape"))
    else:
        binary.write(data)
        binary.flush()


def _rule_command(args: argparse.Namespace) -> int:
    from ddplint.rules import ALL_RULES, RULES_BY_CODE, Rule  # the documentation lives with each check

    if args.all:
        print("\n".join(rule.documentation() for rule in ALL_RULES), end="")
        return EXIT_CLEAN
    if not args.code:
        width = max(len(rule.name) for rule in ALL_RULES)
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<{width}}  {rule.summary}")
        return EXIT_CLEAN
    wanted = args.code.strip()
    chosen: Optional[Rule] = RULES_BY_CODE.get(wanted.upper()) or next((r for r in ALL_RULES if r.name == wanted), None)
    if chosen is None:
        print(f"ddplint: error: unknown rule {wanted!r} (`ddplint rule` lists them)", file=sys.stderr)
        return EXIT_ERROR
    print(chosen.documentation(), end="")
    return EXIT_CLEAN
