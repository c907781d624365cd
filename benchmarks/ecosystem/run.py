"""ddplint's ecosystem check: run ddplint over public repositories and compare with the verdicts.

    python benchmarks/ecosystem/run.py CHECKOUTS_DIR [--verdicts FILE] [--out REPORT.md]
                                       [--json FINDINGS.json] [--update-verdicts] [--only NAME ...]

CHECKOUTS_DIR holds one checkout per entry of repos.toml, named ``owner__name`` (extract.py makes
them from mirrors fetched elsewhere; this script needs no network). ddplint is run the way a user
runs it, ``python -m ddplint check --output-format json .`` from the repository root, or from the
entry's subfolder, with default rules and configuration; the ddplint that runs is the one this
interpreter imports (put a worktree on PYTHONPATH to measure it).

Each finding is keyed by repository, path, code and the stripped text of the reported line (and
an occurrence index, written to the file, among identical lines of one file), so a finding whose
line only moved keeps its verdict; identical lines are paired by line number. Against the verdicts file every finding is *judged* (same key, same line), *moved* (same
key, other line; or same line and code with changed text), or *new* (no verdict yet); a verdict
with no finding left is *gone*. Precision per rule counts true / (true + false) over judged and
moved findings; arguable ones are reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python < 3.11: the backport ddplint already depends on
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "false", "arguable")


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    subfolder: str = ""
    kind: str = ""

    @property
    def checkout_name(self) -> str:
        return self.name.replace("/", "__")


def load_repos(path: Path) -> list[Repo]:
    table = tomllib.loads(Path(path).read_text())
    return [
        Repo(
            entry["name"],
            entry["commit"],
            entry.get("subfolder", ""),
            entry.get("kind", ""),
        )
        for entry in table.get("repo", [])
    ]


# --- findings ---------------------------------------------------------------------------------


@dataclass
class Finding:
    repo: str
    path: str  # relative to the repository root (subfolder included), with forward slashes;
    # a notebook's finding adds its code cell: "nb.ipynb[cell 3]" (line is then the line in the cell)
    code: str
    line: int
    text: str  # the reported line, stripped
    message: str
    occurrence: int = 0

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.repo, self.path, self.code, self.text, self.occurrence)


@dataclass
class Verdict:
    repo: str
    path: str
    code: str
    text: str
    occurrence: int
    line: int
    verdict: str  # true / false / arguable, or "" when not judged yet
    reason: str
    message: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.repo, self.path, self.code, self.text, self.occurrence)


def is_test_code(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(part in ("test", "tests", "testing", "unittests") for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def source_line(file: Path, row: int) -> str:
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    if row < 1 or row > len(lines):
        return ""
    return lines[row - 1].strip()


def notebook_cell_line(file: Path, cell: int, row: int) -> str:
    """Line `row` of the `cell`-th code cell (both 1-based, as ddplint reports them)."""
    try:
        document = json.loads(file.read_text(encoding="utf-8", errors="replace"))
        code_cells = [c for c in document.get("cells", []) if c.get("cell_type") == "code"]
        source = code_cells[cell - 1].get("source", "")
    except (OSError, ValueError, IndexError, AttributeError):
        return ""
    lines = ("".join(source) if isinstance(source, list) else str(source)).splitlines()
    return lines[row - 1].strip() if 1 <= row <= len(lines) else ""


def number_occurrences(findings: list[Finding]) -> list[Finding]:
    """Give identical keys (same file, code and line text) an index in line order."""
    seen: Counter = Counter()
    for finding in sorted(findings, key=lambda f: (f.repo, f.path, f.line, f.code)):
        base = (finding.repo, finding.path, finding.code, finding.text)
        finding.occurrence = seen[base]
        seen[base] += 1
    return findings


def ddplint_environment() -> dict[str, str]:
    """The environment for the ddplint subprocess: this interpreter's ddplint first on the path,
    with every PYTHONPATH entry made absolute (ddplint runs from the checkout)."""
    import ddplint

    package_root = str(Path(ddplint.__file__).resolve().parent.parent)
    entries = [package_root] + [str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(entries)), NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return env


@dataclass
class RepoRun:
    repo: Repo
    status: str  # "ok", "missing", or what went wrong
    python_files: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)


def run_ddplint(repo: Repo, checkouts: Path, jobs: int | None, timeout: float) -> RepoRun:
    root = checkouts / repo.checkout_name
    workdir = root / repo.subfolder if repo.subfolder else root
    if not workdir.is_dir():
        return RepoRun(repo, "missing")
    python_files = sum(1 for _ in workdir.rglob("*.py"))
    # -P: the checkout's own modules must not shadow the standard library (a user's `ddplint`
    # console script does not put the working directory on sys.path either).
    command = [
        sys.executable,
        "-P",
        "-m",
        "ddplint",
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--exit-zero",
        ".",
    ]
    if jobs:
        command[-1:-1] = ["--jobs", str(jobs)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            check=False,  # a failed run is reported from its output below
            cwd=workdir,
            env=ddplint_environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return RepoRun(
            repo,
            f"timed out after {timeout:.0f} s",
            python_files,
            time.monotonic() - started,
        )
    seconds = time.monotonic() - started
    try:
        raw = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return RepoRun(repo, f"ddplint exited {done.returncode}: {tail[0]}", python_files, seconds)
    findings = []
    for item in raw:
        file = (workdir / item["filename"]).resolve()
        try:
            path = file.relative_to(root.resolve()).as_posix()
        except ValueError:
            path = item["filename"]
        row = item["location"]["row"]
        if item.get("cell") is not None:  # a notebook: the cell is part of where the finding is
            path, text = (
                f"{path}[cell {item['cell']}]",
                notebook_cell_line(file, item["cell"], row),
            )
        else:
            text = source_line(file, row)
        findings.append(Finding(repo.name, path, item["code"], row, text, item["message"]))
    return RepoRun(repo, "ok", python_files, seconds, number_occurrences(findings))


# --- verdicts ---------------------------------------------------------------------------------


def load_verdicts(path: Path | None) -> list[Verdict]:
    if path is None or not path.exists():
        return []
    table = tomllib.loads(path.read_text())
    verdicts = []
    for entry in table.get("finding", []):
        verdict = entry.get("verdict", "")
        if verdict not in VERDICTS + ("",):
            raise SystemExit(f"{path}: verdict {verdict!r} for {entry.get('path')} is not one of {VERDICTS}")
        verdicts.append(
            Verdict(
                entry["repo"],
                entry["path"],
                entry["code"],
                entry["text"],
                int(entry.get("occurrence", 0)),
                int(entry.get("line", 0)),
                verdict,
                entry.get("reason", ""),
                entry.get("message", ""),
            )
        )
    return verdicts


def toml_string(value: str) -> str:
    # JSON's escapes (\" \\ \n \uXXXX) are all valid in a TOML basic string.
    return json.dumps(value, ensure_ascii=False)


def dump_verdicts(verdicts: list[Verdict]) -> str:
    lines = [
        "# Every finding of the ecosystem check, judged by hand (see benchmarks/ecosystem/README.md).",
        "# Key: repo + path + code + text (the stripped reported line) + occurrence; `line` and",
        '# `message` are for the reader. verdict = "true" | "false" | "arguable"; "" = not judged yet.',
        "",
    ]
    for v in sorted(verdicts, key=lambda v: (v.repo.lower(), v.path, v.line, v.code, v.occurrence)):
        lines += [
            "[[finding]]",
            f"repo = {toml_string(v.repo)}",
            f"path = {toml_string(v.path)}",
            f"code = {toml_string(v.code)}",
            f"line = {v.line}",
            f"text = {toml_string(v.text)}",
        ]
        if v.occurrence:
            lines.append(f"occurrence = {v.occurrence}")
        lines += [
            f"verdict = {toml_string(v.verdict)}",
            f"reason = {toml_string(v.reason)}",
        ]
        if v.message:
            lines.append(f"message = {toml_string(v.message)}")
        lines.append("")
    return "\n".join(lines)


@dataclass
class Comparison:
    judged: list[tuple[Finding, Verdict]] = field(default_factory=list)
    moved: list[tuple[Finding, Verdict]] = field(default_factory=list)
    new: list[Finding] = field(default_factory=list)
    gone: list[Verdict] = field(default_factory=list)

    def verdict_of(self) -> list[tuple[Finding, Verdict]]:
        return self.judged + self.moved


def compare(findings: list[Finding], verdicts: list[Verdict], repos_run: set[str] | None = None) -> Comparison:
    """Match findings to verdicts of the same repo, path, code and line text: the same line first
    (judged), then the rest in line order (moved); then, for findings re-anchored on another
    text, the same repo, path, code and line (moved). Verdicts of repositories that were not run
    are neither matched nor gone. Identical lines in one file are told apart by their line, so a
    new identical finding above an old one does not take its verdict."""
    if repos_run is not None:
        verdicts = [v for v in verdicts if v.repo in repos_run]
    result = Comparison()
    findings_by_text, verdicts_by_text = defaultdict(list), defaultdict(list)
    for finding in findings:
        findings_by_text[finding.key[:4]].append(finding)
    for verdict in verdicts:
        verdicts_by_text[verdict.key[:4]].append(verdict)
    unmatched: list[Finding] = []
    used: set[int] = set()
    for text_key, group in findings_by_text.items():
        candidates = sorted(verdicts_by_text.get(text_key, []), key=lambda v: v.line)
        rest = []
        for finding in sorted(group, key=lambda f: f.line):
            same_line = next((v for v in candidates if v.line in (finding.line, 0)), None)
            if same_line is None:
                rest.append(finding)
                continue
            candidates.remove(same_line)
            used.add(id(same_line))
            result.judged.append((finding, same_line))
        for finding, verdict in zip(rest, candidates):
            used.add(id(verdict))
            result.moved.append((finding, verdict))
        unmatched += rest[len(candidates) :]
    left = defaultdict(list)
    for verdict in verdicts:
        if id(verdict) not in used:
            left[(verdict.repo, verdict.path, verdict.code, verdict.line)].append(verdict)
    for finding in unmatched:
        same_place = left.get((finding.repo, finding.path, finding.code, finding.line))
        if same_place:
            verdict = same_place.pop(0)
            used.add(id(verdict))
            result.moved.append((finding, verdict))
        else:
            result.new.append(finding)
    result.gone = [v for v in verdicts if id(v) not in used]
    return result


def updated_verdicts(comparison: Comparison, verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts file after this run: matched verdicts follow their finding (key and line),
    new findings get an empty verdict to fill in, gone ones and verdicts of repositories not run
    are kept (a later run may bring them back)."""
    matched = {id(v) for _, v in comparison.verdict_of()}
    result = [v for v in verdicts if id(v) not in matched]
    result.extend(_verdict_at(finding, verdict.verdict, verdict.reason) for finding, verdict in comparison.verdict_of())
    result.extend(_verdict_at(finding, "", "") for finding in comparison.new)
    return result


def _verdict_at(finding: Finding, verdict: str, reason: str) -> Verdict:
    """A verdict keyed and placed where `finding` is now."""
    return Verdict(
        finding.repo, finding.path, finding.code, finding.text, finding.occurrence, finding.line,
        verdict, reason, finding.message,
    )


# --- report -----------------------------------------------------------------------------------


def precision_rows(comparison: Comparison, findings: list[Finding]) -> list[dict]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for finding in findings:
        counts[finding.code]["findings"] += 1
    for finding, verdict in comparison.verdict_of():
        counts[finding.code][verdict.verdict or "unjudged"] += 1
        if verdict.verdict and is_test_code(finding.path):
            counts[finding.code][f"test_{verdict.verdict}"] += 1
    for finding in comparison.new:
        counts[finding.code]["unjudged"] += 1
    rows: list[dict] = []
    total: Counter = Counter()
    for code in sorted(counts):
        rows.append(dict(code=code, **counts[code]))
        total.update(counts[code])
    rows.append(dict(code="all", **total))
    for row in rows:
        decided = int(row.get("true", 0)) + int(row.get("false", 0))
        row["precision"] = round(row.get("true", 0) / decided, 3) if decided else None
    return rows


def gone_breakdown(comparison: Comparison) -> str:
    """Gone false findings are fixes; gone true ones are lost bugs: say which."""
    counts = Counter(v.verdict or "unjudged" for v in comparison.gone)
    if not counts:
        return "none gone"
    named = {
        "false": "fixed (were false)",
        "true": "LOST (were true)",
        "arguable": "arguable",
    }
    parts = [f"{counts[k]} {word}" for k, word in named.items() if counts[k]]
    if counts["unjudged"]:
        parts.append(f"{counts['unjudged']} unjudged")
    return ", ".join(parts)


def fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def markdown_report(
    runs: list[RepoRun],
    findings: list[Finding],
    comparison: Comparison,
    ddplint_at: str,
) -> str:
    files = sum(run.python_files for run in runs if run.status == "ok")
    ran = [run for run in runs if run.status == "ok"]
    out = [
        "# ddplint ecosystem check",
        "",
        (f"ddplint from `{ddplint_at}`; {len(ran)} of {len(runs)} repositories run, {files} .py files, {len(findings)} findings."),
        "",
        "## Per-rule precision (true / (true + false); arguable apart)",
        "",
        "| rule | findings | true | false | arguable | unjudged | precision | in test code (t/f/a) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in precision_rows(comparison, findings):
        tests = f"{row.get('test_true', 0)}/{row.get('test_false', 0)}/{row.get('test_arguable', 0)}"
        out.append(
            f"| {row['code']} | {row.get('findings', 0)} | {row.get('true', 0)} | {row.get('false', 0)} | "
            f"{row.get('arguable', 0)} | {row.get('unjudged', 0)} | {fmt(row['precision'])} | {tests} |"
        )
    out += [
        "",
        "## Against the verdicts",
        "",
        (
            f"{len(comparison.judged)} judged, {len(comparison.moved)} moved, {len(comparison.new)} new "
            f"(need a verdict), {len(comparison.gone)} gone."
        ),
        "",
        f"Gone: {gone_breakdown(comparison)}.",
        "",
    ]
    if comparison.new:
        out += ["### New (no verdict yet)", ""]
        out += [f"- `{f.repo}` {f.path}:{f.line} {f.code}: `{f.text}` ({f.message[:160]})" for f in comparison.new]
        out.append("")
    if comparison.gone:
        out += [
            "### Gone (verdict, no finding now; true ones first: bugs no longer reported)",
            "",
        ]
        order = {"true": 0, "arguable": 1, "": 2, "false": 3}
        out += [
            f"- [{v.verdict or 'unjudged'}] `{v.repo}` {v.path}:{v.line} {v.code}: `{v.text}` ({v.reason})"
            for v in sorted(comparison.gone, key=lambda v: order.get(v.verdict, 2))
        ]
        out.append("")
    if comparison.moved:
        out += ["### Moved (verdict kept)", ""]
        out += [f"- [{v.verdict or 'unjudged'}] `{f.repo}` {f.path}:{v.line} -> {f.line} {f.code}: `{f.text}`" for f, v in comparison.moved]
        out.append("")
    unjudged = [(f, v) for f, v in comparison.verdict_of() if not v.verdict]
    if unjudged:
        out += ["### In the verdicts file but not judged yet", ""]
        out += [f"- `{f.repo}` {f.path}:{f.line} {f.code}: `{f.text}`" for f, _ in unjudged]
        out.append("")
    out += [
        "## Per repository",
        "",
        "| repository | subfolder | kind | status | .py files | seconds | findings by rule |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        by_rule = Counter(f.code for f in run.findings)
        rules = ", ".join(f"{code} {n}" for code, n in sorted(by_rule.items())) or "-"
        out.append(
            f"| {run.repo.name} | {run.repo.subfolder or '.'} | {run.repo.kind} | {run.status} | "
            f"{run.python_files} | {run.seconds:.1f} | {rules} |"
        )
    return "\n".join(out) + "\n"


def summary(runs: list[RepoRun], findings: list[Finding], comparison: Comparison) -> str:
    rows = precision_rows(comparison, findings)
    per_rule = "; ".join(
        f"{r['code']} {r.get('findings', 0)} (p={fmt(r['precision'])}, arguable {r.get('arguable', 0)})" for r in rows if r["code"] != "all"
    )
    total = rows[-1]
    problems = [f"{run.repo.name}: {run.status}" for run in runs if run.status != "ok"]
    lines = [
        (
            f"{sum(r.status == 'ok' for r in runs)} repositories, "
            f"{sum(r.python_files for r in runs if r.status == 'ok')} .py files, {len(findings)} findings"
        ),
        (
            f"precision {fmt(total['precision'])} (true {total.get('true', 0)}, false {total.get('false', 0)}, "
            f"arguable {total.get('arguable', 0)}, unjudged {total.get('unjudged', 0)})"
        ),
        f"per rule: {per_rule or '-'}",
        (
            f"against verdicts: {len(comparison.judged)} judged, {len(comparison.moved)} moved, "
            f"{len(comparison.new)} new, {len(comparison.gone)} gone"
        ),
        f"gone: {gone_breakdown(comparison)}",
    ]
    lines += [f"not run: {p}" for p in problems]
    return "\n".join(lines)


def findings_json(findings: list[Finding], comparison: Comparison) -> list[dict]:
    status: dict[int, tuple[str, Verdict | None]] = {}
    for finding, verdict in comparison.judged:
        status[id(finding)] = ("judged", verdict)
    for finding, verdict in comparison.moved:
        status[id(finding)] = ("moved", verdict)
    rows = []
    for finding in findings:
        state, judged_by = status.get(id(finding), ("new", None))
        rows.append(
            {
                "repo": finding.repo,
                "path": finding.path,
                "code": finding.code,
                "line": finding.line,
                "text": finding.text,
                "occurrence": finding.occurrence,
                "message": finding.message,
                "status": state,
                "verdict": judged_by.verdict if judged_by else "",
                "reason": judged_by.reason if judged_by else "",
                "test_code": is_test_code(finding.path),
            }
        )
    return rows


def runs_from_json(repos: list[Repo], checkouts: Path, findings_file: Path) -> list[RepoRun]:
    """The runs an earlier --json file recorded (findings only; file counts from the checkouts)."""
    recorded = defaultdict(list)
    for row in json.loads(findings_file.read_text()):
        recorded[row["repo"]].append(
            Finding(
                row["repo"],
                row["path"],
                row["code"],
                row["line"],
                row["text"],
                row["message"],
                row["occurrence"],
            )
        )
    runs = []
    for repo in repos:
        workdir = checkouts / repo.checkout_name / repo.subfolder
        files = sum(1 for _ in workdir.rglob("*.py")) if workdir.is_dir() else 0
        runs.append(RepoRun(repo, "ok", files, 0.0, recorded.get(repo.name, [])))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path, help="directory of owner__name checkouts")
    parser.add_argument("--repos", type=Path, default=HERE / "repos.toml")
    parser.add_argument("--verdicts", type=Path, default=HERE / "verdicts.toml")
    parser.add_argument(
        "--out",
        type=Path,
        help="write the markdown report here (default: print summary only)",
    )
    parser.add_argument("--json", type=Path, help="write every finding with its status and verdict here")
    parser.add_argument(
        "--update-verdicts",
        action="store_true",
        help="rewrite the verdicts file: follow moved findings, add new ones with an empty verdict",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="run these repositories only (owner/name)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="passed to ddplint --jobs")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per repository")
    parser.add_argument(
        "--findings",
        type=Path,
        help="compare the findings of an earlier --json file instead of running ddplint (after editing verdicts)",
    )
    args = parser.parse_args(argv)

    import ddplint

    if not args.checkouts.is_dir():
        print(f"{args.checkouts}: not a directory of checkouts", file=sys.stderr)
        return 2
    repos = load_repos(args.repos)
    if args.only:
        repos = [repo for repo in repos if repo.name in args.only]
    if args.findings:
        runs = runs_from_json(repos, args.checkouts, args.findings)
    else:
        runs = []
        for repo in repos:
            run = run_ddplint(repo, args.checkouts, args.jobs, args.timeout)
            print(
                f"{repo.name}: {run.status}, {run.python_files} files, {len(run.findings)} findings, {run.seconds:.1f} s",
                file=sys.stderr,
            )
            runs.append(run)
    findings = [finding for run in runs for finding in run.findings]
    verdicts = load_verdicts(args.verdicts)
    comparison = compare(findings, verdicts, {run.repo.name for run in runs if run.status == "ok"})
    ddplint_at = str(Path(ddplint.__file__).resolve().parent)
    if args.out:
        args.out.write_text(markdown_report(runs, findings, comparison, ddplint_at))
    if args.json:
        args.json.write_text(json.dumps(findings_json(findings, comparison), indent=1, ensure_ascii=False) + "\n")
    if args.update_verdicts:
        args.verdicts.write_text(dump_verdicts(updated_verdicts(comparison, verdicts)))
    print(summary(runs, findings, comparison))
    return 0


if __name__ == "__main__":
    sys.exit(main())
