"""Recall on real fixes: does ddplint flag the bug before a public fix, and stay quiet after it?

    python benchmarks/fixes/run.py --mirrors /work/.mirror --trees /work/fixes-trees
                                   [--only ddp002 ...] [--split tuning|held-back] [--json OUT.json]

Each pair in pairs/ddpNNN.toml pins a repository, a fix commit, its first parent, a file and a
rule (the format is described in README.md). Both commits are materialised with ``git archive``
from the mirror (``MIRRORS/owner+name/repo``, as the ``fetch`` tool lays them out) into
``TREES/owner+name/<commit>/``, kept between runs. ddplint is run the way a user runs it,
``python -m ddplint check --output-format json --no-cache --exit-zero .`` in the repository root
(or the pair's subfolder), with the ddplint this interpreter imports (put the build under test on
PYTHONPATH). DDP012 is off by default, so it is added with ``--extend-select``; rules are
independent, so this changes nothing for the others.

A pair is *caught* when the parent's run reports the rule in the file on the finding's lines, and
*silent* when the fix's run reports nothing for the rule on the fixed lines. Lines default to the
fix's changed hunks in that file, each widened by 2 lines; a pair may pin them instead.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python < 3.11: the backport ddplint already depends on
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
PAIRS_DIR = HERE / "pairs"
SPLITS = ("tuning", "held-back")
WIDEN = 2  # lines added on each side of a changed hunk when a pair pins no lines
OFF_BY_DEFAULT = "DDP012"  # enabled for the run so its pairs can be measured at all
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

Ranges = list[tuple[int, int]]


@dataclass
class Pair:
    repo: str
    fix: str
    parent: str
    path: str
    rule: str
    split: str
    reason: str
    source: str  # the pairs file it came from
    after_path: str = ""
    lines: Ranges = field(default_factory=list)
    after_lines: Ranges = field(default_factory=list)
    subfolder: str = ""

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.fix[:10]}:{self.path}"

    @property
    def fixed_path(self) -> str:
        return self.after_path or self.path


def expected_split(repo: str, fix: str, path: str) -> str:
    digit = int(hashlib.sha256(f"{repo}@{fix}:{path}".encode()).hexdigest()[0], 16)
    return "tuning" if digit % 2 == 0 else "held-back"


def as_ranges(value: list | None) -> Ranges:
    """`[85, 92]` or `[[85, 92], [120, 121]]` -> list of inclusive ranges."""
    if not value:
        return []
    if len(value) == 2 and all(isinstance(v, int) for v in value):
        return [(value[0], value[1])]
    return [(int(a), int(b)) for a, b in value]


def load_pairs(files: list[Path]) -> tuple[list[Pair], list[str]]:
    pairs: list[Pair] = []
    problems: list[str] = []
    for file in files:
        try:
            table = tomllib.loads(file.read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            problems.append(f"{file.name}: cannot read: {error}")
            continue
        for index, entry in enumerate(table.get("pair", []), 1):
            try:
                pair = Pair(
                    repo=entry["repo"],
                    fix=entry["fix"],
                    parent=entry["parent"],
                    path=entry["path"],
                    rule=entry["rule"].upper(),
                    split=entry["split"],
                    reason=entry.get("reason", ""),
                    source=file.name,
                    after_path=entry.get("after_path", ""),
                    lines=as_ranges(entry.get("lines")),
                    after_lines=as_ranges(entry.get("after_lines")),
                    subfolder=entry.get("subfolder", "").strip("/"),
                )
            except (KeyError, TypeError, ValueError) as error:
                problems.append(f"{file.name}: pair {index}: missing or malformed field {error}")
                continue
            wanted = expected_split(pair.repo, pair.fix, pair.path)
            if pair.split != wanted:
                problems.append(f"{file.name}: {pair.label}: split is {pair.split!r}, the hash says {wanted!r}")
            pairs.append(pair)
    return pairs, problems


# --- git ----------------------------------------------------------------------------------------


def git_dir(mirrors: Path, repo: str) -> Path:
    """The mirror's git directory: bare as `repo`, or a checkout's `repo/.git`."""
    root = mirrors / repo.replace("/", "+") / "repo"
    return root / ".git" if (root / ".git").is_dir() else root


def git(gdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(gdir), *args], check=True, capture_output=True
    ).stdout


def materialise(mirrors: Path, trees: Path, repo: str, commit: str) -> Path:
    """The tree of `commit`, extracted once and kept (a marker file says it is complete)."""
    target = trees / repo.replace("/", "+") / commit
    done = target / ".fixes-complete"
    if done.exists():
        return target
    gdir = git_dir(mirrors, repo)
    target.mkdir(parents=True, exist_ok=True)
    try:
        archive = git(gdir, "archive", "--format=tar", commit)
    except subprocess.CalledProcessError:
        # snapshots leave out files of 4 MiB and more (data, weights): write the blobs that exist
        write_present_blobs(gdir, commit, target)
    else:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter=_inside_only)
    done.touch()
    return target


def _inside_only(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's "data" filter, except that a member it refuses (a link to an absolute path or out
    of the tree) is left out instead of failing the whole pair: such links are never the code."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None


def write_present_blobs(gdir: Path, commit: str, target: Path) -> None:
    listing = git(gdir, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0")
    paths: dict[str, list[str]] = defaultdict(list)
    for entry in filter(None, listing):
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob" and mode != "120000":  # no symlinks: they could point outside the tree
            paths[sha].append(name.decode("utf-8", "surrogateescape"))
    batch = subprocess.run(
        ["git", "--git-dir", str(gdir), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha in paths).encode(), capture_output=True, check=True,
    ).stdout
    position = 0
    for sha in paths:
        end = batch.index(b"\n", position)
        header = batch[position:end].split()
        position = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        content = batch[position : position + size]
        position += size + 1
        for path in paths[sha]:
            file = target / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(content)


def changed_hunks(mirrors: Path, pair: Pair) -> tuple[Ranges, Ranges]:
    """The fix's hunks in the file: (parent-side ranges, fix-side ranges), each widened."""
    paths = [pair.path] + ([pair.after_path] if pair.after_path else [])
    diff = git(
        git_dir(mirrors, pair.repo), "diff", "-U0", "-M", pair.parent, pair.fix, "--", *paths
    ).decode("utf-8", "replace")
    before: Ranges = []
    after: Ranges = []
    for line in diff.splitlines():
        match = HUNK.match(line)
        if not match:
            continue
        old_start, old_count, new_start, new_count = (
            int(match.group(i)) if match.group(i) is not None else 1 for i in range(1, 5)
        )
        before.append(widened(old_start, old_count))
        after.append(widened(new_start, new_count))
    return before, after


def widened(start: int, count: int) -> tuple[int, int]:
    # count 0 means a pure insertion or deletion after line `start`: the gap is start..start+1
    last = start + count - 1 if count else start + 1
    return max(1, start - WIDEN), last + WIDEN


# --- ddplint ------------------------------------------------------------------------------------


@dataclass
class Run:
    findings: list[dict]
    error: str = ""
    seconds: float = 0.0


def run_ddplint(tree: Path, subfolder: str, jobs: int, timeout: int) -> Run:
    cwd = tree / subfolder if subfolder else tree
    command = [
        sys.executable, "-m", "ddplint", "check", "--output-format", "json", "--no-cache",
        "--exit-zero", "--extend-select", OFF_BY_DEFAULT, "-j", str(jobs), ".",
    ]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run([], f"ddplint ran past {timeout} s", timeout)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return Run([], f"ddplint exit {done.returncode}: {last}", seconds)
    try:
        findings = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return Run([], "ddplint printed no JSON", seconds)
    for finding in findings:  # paths relative to the repository root, forward slashes
        name = finding["filename"].replace("\\", "/").removeprefix("./")
        finding["repo_path"] = f"{subfolder}/{name}" if subfolder else name
    return Run(findings, "", seconds)


def ddplint_location() -> str:
    """Where the ddplint that the runs import lives (PYTHONPATH decides), asked from a neutral cwd."""
    done = subprocess.run(
        [sys.executable, "-c", "import ddplint; print(ddplint.__file__)"],
        cwd="/", capture_output=True, text=True,
    )
    return str(Path(done.stdout.strip()).parent) if done.returncode == 0 else "(ddplint not importable)"


def rows_in(findings: list[dict], rule: str, path: str, ranges: Ranges) -> list[int]:
    return sorted(
        f["location"]["row"]
        for f in findings
        if f["code"] == rule
        and f["repo_path"] == path
        and any(a <= f["location"]["row"] <= b for a, b in ranges)
    )


# --- the benchmark ------------------------------------------------------------------------------


@dataclass
class Result:
    pair: Pair
    caught: bool = False
    silent: bool = False
    before_rows: list[int] = field(default_factory=list)
    after_rows: list[int] = field(default_factory=list)
    lines: Ranges = field(default_factory=list)
    after_lines: Ranges = field(default_factory=list)
    error: str = ""


def measure(pair: Pair, args: argparse.Namespace, runs: dict[tuple[str, str, str], Run]) -> Result:
    result = Result(pair)
    try:
        hunks_before, hunks_after = changed_hunks(args.mirrors, pair)
        result.lines = pair.lines or hunks_before
        result.after_lines = pair.after_lines or hunks_after
        trees = {c: materialise(args.mirrors, args.trees, pair.repo, c) for c in (pair.parent, pair.fix)}
    except (subprocess.CalledProcessError, OSError, tarfile.TarError) as error:
        detail = getattr(error, "stderr", b"") or b""
        result.error = f"git: {detail.decode('utf-8', 'replace').strip() or error}"
        return result
    if not result.lines or not result.after_lines:
        result.error = f"the fix does not change {pair.path}"
        return result
    for commit in (pair.parent, pair.fix):
        key = (pair.repo, commit, pair.subfolder)
        if key not in runs:
            runs[key] = run_ddplint(trees[commit], pair.subfolder, args.jobs, args.timeout)
            if args.verbose:
                print(f"  ran {pair.repo}@{commit[:10]} in {runs[key].seconds:.1f} s", file=sys.stderr)
    before, after = runs[(pair.repo, pair.parent, pair.subfolder)], runs[(pair.repo, pair.fix, pair.subfolder)]
    result.error = before.error or after.error
    if result.error:
        return result
    result.before_rows = rows_in(before.findings, pair.rule, pair.path, result.lines)
    result.after_rows = rows_in(after.findings, pair.rule, pair.fixed_path, result.after_lines)
    result.caught = bool(result.before_rows)
    result.silent = not result.after_rows
    return result


def ratio(hits: int, total: int) -> str:
    return f"{hits}/{total} = {hits / total:.2f}" if total else "-"


def table(results: list[Result]) -> str:
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for result in results:
        if not result.error:
            groups[(result.pair.rule, result.pair.split)].append(result)
            groups[(result.pair.rule, "all")].append(result)
            groups[("all", result.pair.split)].append(result)
            groups[("all", "all")].append(result)
    lines = [
        "| rule | split | pairs | repos | recall (before flagged) | silence (after quiet) |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for rule in sorted({r for r, _ in groups}, key=lambda r: (r == "all", r)):
        for split in (*SPLITS, "all"):
            group = groups.get((rule, split), [])
            if not group:
                continue
            repos = len({r.pair.repo for r in group})
            caught = sum(r.caught for r in group)
            silent = sum(r.silent for r in group)
            lines.append(
                f"| {rule} | {split} | {len(group)} | {repos} | {ratio(caught, len(group))} "
                f"| {ratio(silent, len(group))} |"
            )
    return "\n".join(lines)


def report_misses(results: list[Result]) -> list[str]:
    out = []
    for r in results:
        where = f"{r.pair.rule} {r.pair.split:9} {r.pair.label}"
        if r.error:
            out.append(f"error   {where}: {r.error}")
            continue
        if not r.caught:
            out.append(f"missed  {where} lines {r.lines}")
        if not r.silent:
            out.append(f"loud    {where} after: rows {r.after_rows} in {r.after_lines}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="bare mirrors, owner+name/repo")
    parser.add_argument("--trees", type=Path, required=True, help="where commits are extracted (kept)")
    parser.add_argument("--pairs", type=Path, default=PAIRS_DIR, help="folder of ddpNNN.toml files")
    parser.add_argument("--only", action="append", default=[], help="pairs file stem, e.g. ddp002 (repeatable)")
    parser.add_argument("--split", choices=SPLITS)
    parser.add_argument("--json", type=Path, help="write per-pair results here")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="ddplint worker processes (default 1)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per ddplint run")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    args.mirrors, args.trees = args.mirrors.resolve(), args.trees.resolve()

    files = sorted(args.pairs.glob("ddp*.toml"))
    if args.only:
        wanted = {name.lower().removesuffix(".toml") for name in args.only}
        files = [f for f in files if f.stem in wanted]
    pairs, problems = load_pairs(files)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    if args.split:
        pairs = [p for p in pairs if p.split == args.split]
    if not pairs:
        print("no pairs to measure", file=sys.stderr)
        return 2

    print(f"ddplint under test: {ddplint_location()}")
    runs: dict[tuple[str, str, str], Run] = {}
    results = []
    for number, pair in enumerate(pairs, 1):
        if args.verbose:
            print(f"[{number}/{len(pairs)}] {pair.rule} {pair.label}", file=sys.stderr)
        results.append(measure(pair, args, runs))

    print(table(results))
    errors = sum(bool(r.error) for r in results)
    if errors:
        print(f"\n{errors} of {len(results)} pairs could not be measured (listed below, left out of the table)")
    misses = report_misses(results)
    if misses:
        print("\n" + "\n".join(misses))
    if args.json:
        records = [
            {
                "repo": r.pair.repo, "fix": r.pair.fix, "parent": r.pair.parent, "path": r.pair.path,
                "after_path": r.pair.fixed_path, "rule": r.pair.rule, "split": r.pair.split,
                "lines": r.lines, "after_lines": r.after_lines, "caught": r.caught,
                "silent": r.silent, "before_rows": r.before_rows, "after_rows": r.after_rows,
                "error": r.error,
            }
            for r in results
        ]
        args.json.write_text(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
