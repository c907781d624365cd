"""Command line: `ddplint [check] [PATH ...]` and `ddplint rule CODE`.

Exit codes (ruff's): 0 nothing found, 1 findings, 2 usage / configuration / internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

from ddplint import __version__
from ddplint.api import fix_document, lint_document, lint_paths
from ddplint.cache import CACHE_DIR_NAME, ResultCache, default_cache_dir
from ddplint.config import ConfigError, Overrides, Resolver
from ddplint.diagnostics import Diagnostic, InternalError, error_diagnostic
from ddplint.discovery import discover
from ddplint.isolation import leave_workspace_out
from ddplint.output import COLORED_FORMATS, FORMATTERS, LINKED_FORMATS, FormatOptions, format_statistics, rule_name, use_color
from ddplint.rules import META_BY_CODE, UNUSED_NOQA_CODE, UnknownSelector, load_rules, select_codes
from ddplint.runner import project_index
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
    files.add_argument(
        "--respect-gitignore", action=argparse.BooleanOptionalAction, default=True,
        help="skip files that .gitignore, .ignore or git's global excludes name when walking folders (default: on)",
    )
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also apply (or offer) fixes that change behaviour")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument(
        "--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding (keeps existing comments)"
    )
    report = parser.add_argument_group("output")
    report.add_argument(
        "--output-format", choices=list(FORMATTERS), default="concise",
        help="how to print findings (default: concise; `text` is its older name)",
    )
    report.add_argument("-o", "--output-file", metavar="FILE", help="write the findings to FILE instead of stdout")
    report.add_argument("--show-fixes", action="store_true", help="list the fixes applied (with --fix) or available, per file and rule")
    report.add_argument("--show-files", action="store_true", help="list the files that would be checked, and stop")
    report.add_argument("--show-settings", action="store_true", help="print the settings resolved for the first file, and stop")
    report.add_argument("-w", "--watch", action="store_true", help="check again whenever a checked file changes (Ctrl-C ends)")
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
        problem = _usage_problem(args)
        if problem is not None:
            print(f"ddplint: error: {problem}", file=sys.stderr)
            return EXIT_ERROR
        with _output_stream(args):
            return _dispatch(args, resolver)
    except (UnknownSelector, ConfigError) as exc:
        print(f"ddplint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OutputFileError as exc:
        print(f"ddplint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _usage_problem(args: argparse.Namespace) -> Optional[str]:
    """Flags that cannot go together (argparse's groups cannot say it across option groups)."""
    if args.add_noqa and (args.fix or args.diff):
        return "--add-noqa cannot be combined with --fix or --diff"
    if args.paths == ["-"] and (args.add_noqa or args.watch or args.show_files):
        return "--add-noqa, --watch and --show-files work on files, not stdin"
    if args.watch and (args.fix or args.diff):
        return "--watch cannot be combined with --fix or --diff"
    return None


def _dispatch(args: argparse.Namespace, resolver: Resolver) -> int:
    if args.show_settings:
        return _show_settings(args, resolver)
    if args.show_files:
        return _show_files(args, resolver)
    if args.paths == ["-"]:
        return _check_stdin(args, resolver)
    if args.add_noqa:
        return _add_noqa(args, resolver)
    if args.watch:
        return _watch(args, resolver)
    return _check_once(args, resolver)


def _check_once(args: argparse.Namespace, resolver: Resolver) -> int:
    errors: list[InternalError] = []
    if args.fix or args.diff:
        return _fix_paths(args, resolver, errors)
    cache = _open_cache(args)
    diagnostics = list(
        lint_paths(
            args.paths, None, errors, resolver.codes_for, resolver.is_excluded, args.force_exclude,
            jobs=args.jobs, cache=cache, respect_gitignore=args.respect_gitignore, options_for=resolver.options_for,
        )
    )
    if cache is not None:
        problem = cache.save()
        if problem is not None:
            print(f"ddplint: warning: {problem}", file=sys.stderr)
    _report(args, diagnostics, errors)
    return _exit_code(args, diagnostics, errors)


class OutputFileError(Exception):
    """`-o FILE` cannot be written; the message names the file and why."""


@contextmanager
def _output_stream(args: argparse.Namespace) -> Iterator[None]:
    """`args.out`: where findings (and diffs, listings) go: `-o FILE`, else stdout."""
    if not args.output_file:
        args.out = sys.stdout
        yield
        return
    try:
        handle = open(args.output_file, "w", encoding="utf-8")
    except OSError as exc:
        raise OutputFileError(f"cannot write {args.output_file}: {reason_of(exc)}") from None
    args.out = handle
    try:
        with handle:
            yield
    finally:
        args.out = sys.stdout


def _files(args: argparse.Namespace, resolver: Resolver) -> list[tuple[str, Optional[str]]]:
    return list(discover(args.paths, resolver.is_excluded, args.force_exclude, args.respect_gitignore))


def _show_files(args: argparse.Namespace, resolver: Resolver) -> int:
    """ruff's --show-files: what a check of these paths would read, after excludes and ignore files."""
    unreadable = False
    for path, problem in _files(args, resolver):
        if problem is None:
            print(path, file=args.out)
        else:
            unreadable = True
            print(f"{path}: {problem}", file=sys.stderr)
    return EXIT_ERROR if unreadable else EXIT_CLEAN


def _show_settings(args: argparse.Namespace, resolver: Resolver) -> int:
    """ruff's --show-settings: the settings one file is checked with (the first file found, or
    the stdin name)."""
    if args.paths == ["-"]:
        path = args.stdin_filename or str(Path.cwd() / "-")
    else:
        path = next((found for found, problem in _files(args, resolver) if problem is None), None)
        if path is None:
            print("ddplint: error: no file to check under the paths given", file=sys.stderr)
            return EXIT_ERROR
    settings = resolver.settings_for(path)
    lines = [
        f"Resolved settings for: {path}",
        f"Settings path: {settings.path if settings.path is not None else '(none: defaults)'}",
        f"root = {str(settings.root)!r}",
        f"rules = {list(resolver.codes_for(path))}",
        f"select = {list(settings.select) if settings.select is not None else '(default)'}",
        f"extend-select = {list(settings.extend_select)}",
        f"ignore = {list(settings.ignore)}",
        f"per-file-ignores (this file) = {list(settings.per_file_ignored_codes(path))}",
        f"exclude = {list(settings.exclude)}",
        f"extend-exclude = {list(settings.extend_exclude)}",
        f"force-exclude = {str(args.force_exclude).lower()}",
        f"respect-gitignore = {str(args.respect_gitignore).lower()}",
        f"unsafe-fixes = {str(args.unsafe_fixes).lower()}",
        f"output-format = {args.output_format}",
        f"cache = {'off' if args.no_cache else (args.cache_dir or os.environ.get('DDPLINT_CACHE_DIR') or default_cache_dir())}",
    ]
    print("\n".join(lines), file=args.out)
    return EXIT_CLEAN


# How often --watch looks at the files' sizes and modification times (seconds).
WATCH_INTERVAL = 0.5


def _pause() -> None:
    time.sleep(WATCH_INTERVAL)


def _watch(args: argparse.Namespace, resolver: Resolver) -> int:
    """Check, then check again whenever a file that would be checked appears, goes or changes
    (polling: no dependency, works on every file system). Ctrl-C ends it with exit 0."""
    try:
        _check_once(args, resolver)
        args.out.flush()  # a pipe (`| tee`) sees each round's findings as the round ends
        seen = _watched_state(args, resolver)
        while True:
            _pause()
            now = _watched_state(args, resolver)
            if now != seen:
                seen = now
                print("[watch] a file changed: checking again", file=sys.stderr)
                _check_once(args, resolver)
                args.out.flush()
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_CLEAN


def _watched_state(args: argparse.Namespace, resolver: Resolver) -> list[tuple[str, int, int]]:
    state = []
    for path, problem in _files(args, resolver):
        try:
            info = os.stat(path) if problem is None else None
        except OSError:
            info = None
        state.append((path, info.st_mtime_ns if info else -1, info.st_size if info else -1))
    return state


def _add_noqa(args: argparse.Namespace, resolver: Resolver) -> int:
    """ruff's --add-noqa: silence every current finding where it is, so that a team can adopt the
    linter on an existing repository and fix the findings one by one."""
    from ddplint.noqa import add_noqa

    added, failed = 0, False
    found = _files(args, resolver)
    project = project_index([path for path, problem in found if problem is None])
    for path, problem in found:
        read = _read_source(path) if problem is None else f"cannot read: {problem}"
        if isinstance(read, str):
            print(f"{path}: {read}", file=sys.stderr)
            failed = True
            continue
        if path.endswith(".ipynb"):
            continue  # a comment would go into a cell's JSON string: not done (docs/cli.md)
        data, source, encoding = read
        diagnostics = lint_document(source, path, resolver.rules_for(path), None, project)
        text, count = add_noqa(source, diagnostics)
        if count:
            problem = _write_fixes(path, data, text, encoding)
            if problem is not None:
                print(f"{path}: {problem}", file=sys.stderr)
                failed = True
                continue
            added += count
    if not args.quiet:
        print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if failed else EXIT_CLEAN


def _report(args: argparse.Namespace, diagnostics: list[Diagnostic], errors: list[InternalError], fixed: int = 0,
            options: Optional[FormatOptions] = None, stream=None, fixed_by_file: Optional[dict[str, Counter]] = None) -> None:
    stream = stream or args.out
    hidden = 0 if args.unsafe_fixes else sum(1 for d in diagnostics if d.fix is not None and not d.fix.is_safe)
    if not args.unsafe_fixes:  # unsafe fixes are neither shown nor offered unless asked for
        diagnostics = [d if d.fix is None or d.fix.is_safe else _without_fix(d) for d in diagnostics]
    options = options or FormatOptions()
    options.color = args.output_format in COLORED_FORMATS and use_color(stream)
    if args.output_format in LINKED_FORMATS and not args.statistics:
        options.url_of = _rule_url()
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
    if args.show_fixes:
        if fixed_by_file is not None:  # a --fix run: what it applied
            _print_fixes(fixed_by_file, applied=True)
        else:
            _print_fixes(_fixable_by_file(diagnostics), applied=False)


def _fixable_by_file(diagnostics: Sequence[Diagnostic]) -> dict[str, Counter]:
    found: dict[str, Counter] = {}
    for d in diagnostics:
        if d.fix is not None:
            found.setdefault(d.filename, Counter())[d.code] += 1
    return found


def _print_fixes(by_file: dict[str, Counter], applied: bool) -> None:
    """ruff's --show-fixes listing: per file, how many findings of each rule were (or would be) fixed."""
    total = sum(sum(counts.values()) for counts in by_file.values())
    if not total:
        print("No fixes applied." if applied else "No fixes available.", file=sys.stderr)
        return
    noun = "finding" if total == 1 else "findings"
    print(f"Fixed {total} {noun}:" if applied else f"Fixes available for {total} {noun}:", file=sys.stderr)
    for filename in sorted(by_file):
        if not by_file[filename]:
            continue
        print(f"- {filename}:", file=sys.stderr)
        for code, count in sorted(by_file[filename].items(), key=lambda item: (-item[1], item[0])):
            print(f"    {count} × {code} ({rule_name(code)})", file=sys.stderr)


def _rule_url() -> Callable[[str], Optional[str]]:
    """The language server's links to rule pages (ddplint/lsp/rule_docs.py), for json's `url` and
    SARIF's `helpUri`: DDPLINT_DOCS_URL as a template (`{code}`, `{name}`, `{version}`), else
    the pages written as Markdown into the user's cache; no link where they cannot be written."""
    from ddplint.lsp.rule_docs import RuleLinks, default_pages_dir, pages_written, write_rule_pages

    template = os.environ.get("DDPLINT_DOCS_URL")
    if template:
        return RuleLinks(template).url
    directory = default_pages_dir()
    try:
        if not pages_written(directory):  # written once per version: a cached run loads no rule
            write_rule_pages(directory)
    except OSError:
        return lambda code: None
    return RuleLinks(pages_dir=directory).url


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
    fixed = hidden = 0
    fixed_by_file: dict[str, Counter] = {}
    found = _files(args, resolver)
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
        codes, options = resolver.codes_for(path), resolver.options_for(path)
        result = fix_document(
            source, path, load_rules(codes), args.unsafe_fixes, errors, project, UNUSED_NOQA_CODE in codes, options
        )
        if args.diff:
            fixed += result.fixed
            fixed_by_file[path] = Counter(result.fixed_codes)
            hidden += _unsafe_fixes(result.remaining)
            args.out.write(_unified_diff(result.before, result.after, path))
            continue
        problem = _write_fixes(path, data, result.after, encoding) if result.after != result.before else None
        if problem is None:
            fixed += result.fixed
            fixed_by_file[path] = Counter(result.fixed_codes)
            remaining.extend(result.remaining)
        else:  # nothing was written: the file still has every finding it came with
            remaining.append(error_diagnostic(path, problem))
            remaining.extend(lint_document(source, path, load_rules(codes), None, project, UNUSED_NOQA_CODE in codes, options))
    if args.diff:
        # Files that could not be read (all `remaining` holds here) on stderr: stdout is the diff.
        sys.stderr.write(FORMATTERS["concise"](remaining, FormatOptions()))
        if not args.quiet:
            print(_would_fix(fixed, hidden), file=sys.stderr)
        if args.show_fixes:
            _print_fixes(fixed_by_file, applied=False)
        return EXIT_ERROR if errors else (EXIT_FINDINGS if fixed or remaining else EXIT_CLEAN)
    _report(args, sorted(remaining, key=lambda d: d.sort_key), errors, fixed, fixed_by_file=fixed_by_file)
    return _exit_code(args, remaining, errors)


def _unsafe_fixes(diagnostics: Sequence[Diagnostic]) -> int:
    return sum(1 for d in diagnostics if d.fix is not None and not d.fix.is_safe)


def _would_fix(fixed: int, hidden: int) -> str:
    """--diff's last line; it names the fixes `--unsafe-fixes` would add (ruff's wording)."""
    line = f"Would fix {fixed} finding{'s' if fixed != 1 else ''}"
    if hidden:
        line += f" ({hidden} fix{'es' if hidden != 1 else ''} available with `--unsafe-fixes`)"
    return line + "."


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
    from ddplint.fix import write_fixed_file

    return write_fixed_file(path, data, fixed)


def _unified_diff(before: str, after: str, path: str) -> str:
    from ddplint.fix import unified_diff  # with difflib: only --diff needs them

    return unified_diff(before, after, path)


def _check_stdin(args: argparse.Namespace, resolver: Resolver) -> int:
    """`ddplint - --stdin-filename train.py`: for editors and scripts. With --fix the fixed source
    goes to stdout (in the input's own encoding) and the findings to stderr; with --diff the diff
    goes to stdout."""
    filename = args.stdin_filename or "-"
    configured_as = filename if args.stdin_filename else str(Path.cwd() / "-")
    codes, options = resolver.codes_for(configured_as), resolver.options_for(configured_as)
    rules, check_noqa = load_rules(codes), UNUSED_NOQA_CODE in codes
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
        result = fix_document(source, filename, rules, args.unsafe_fixes, errors, project, check_noqa, options)
        if args.diff:
            args.out.write(_unified_diff(result.before, result.after, filename))
            return EXIT_ERROR if errors else (EXIT_FINDINGS if result.fixed else EXIT_CLEAN)
        applied = {filename: Counter(result.fixed_codes)}
        try:
            fixed_data, fixed, remaining = encode_source(result.after, encoding, filename), result.fixed, result.remaining
        except SourceEncodingError as exc:
            fixed_data, fixed, applied = data, 0, {}
            remaining = [error_diagnostic(filename, f"cannot write fixes: {exc}; the input is passed on as it was"),
                         *lint_document(data, filename, rules, None, project, check_noqa, options)]
        _write_stdout(fixed_data, encoding)
        _report(args, remaining, errors, fixed, stream=sys.stderr, fixed_by_file=applied)
        return _exit_code(args, remaining, errors)
    diagnostics = lint_document(data, filename, rules, errors, project, check_noqa, options)
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
    if wanted.upper() in META_BY_CODE or wanted in {entry.name for entry in META_BY_CODE.values()}:
        import ddplint.noqa  # the meta-code's page is its module's documentation

        print(f"# unused-noqa ({UNUSED_NOQA_CODE})\n\n{ddplint.noqa.__doc__}", end="")
        return EXIT_CLEAN
    chosen: Optional[Rule] = RULES_BY_CODE.get(wanted.upper()) or next((r for r in ALL_RULES if r.name == wanted), None)
    if chosen is None:
        print(f"ddplint: error: unknown rule {wanted!r} (`ddplint rule` lists them)", file=sys.stderr)
        return EXIT_ERROR
    print(chosen.documentation(), end="")
    return EXIT_CLEAN
