"""One answer per file, however ddplint is run, on real repositories (issue 20).

For each ecosystem checkout (benchmarks/ecosystem/repos.toml, fetched into a folder such as
/work/eco-all), every way a user can run ddplint is compared with `ddplint check .` run in the
repository (the reference), file by file, on (code, line, column, message):

- file:  `ddplint check FILE`;
- stdin: `ddplint check - --stdin-filename FILE` with the file's bytes;
- diff:  `ddplint check --diff --unsafe-fixes --show-fixes FILE`: the rules it would fix equal the
         reference's findings that carry a fix, and its diff equals that file's part of
         `--diff` over the whole repository;
- fix:   `ddplint check --fix --unsafe-fixes --show-fixes .` on a temporary copy: per file, each
         reported finding is fixed or left (by rule; a file nothing was fixed in keeps exactly
         the reference's findings; tests/same_answer_support.py's fix_difference);
- lsp:   `ddplint lsp` initialised on the repository root, each file opened, its
         publishDiagnostics read.

Per-file methods run on every file the reference reports, the files importing one of those, and
a seeded sample of the others, `--max-files` at most. Nothing from the repositories is kept.
Needs the test extras (`pip install -e '.[test]'`: the language server client of tests/lsp_client.py).

    python benchmarks/same_answer.py --checkouts /work/eco-all [--repos owner/name ...] [--max-files 40]

Exit status 1 when any file differs between methods, 2 when a repository cannot be run.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "ecosystem"))
sys.path.insert(0, str(HERE.parent / "tests"))
from run import Repo, ddplint_environment, load_repos  # noqa: E402  (benchmarks/ecosystem/run.py)

from ddplint.analysis.project import PROJECT_MARKERS  # noqa: E402
from same_answer_support import Key, concise_findings, findings_by_file, fix_difference, lsp_findings, shown_fixes  # noqa: E402  (tests/)

# A tutorial, an LLM trainer, two research repositories, a course repository and a collection of
# many independent examples: each has findings at the pinned commit.
DEFAULT_REPOS = (
    "LambdaLabsML/distributed-training-guide",
    "karpathy/nanoGPT",
    "microsoft/SimMIM",
    "WongKinYiu/yolov7",
    "RoyYu0509/LLM-system-project",
    "pytorch/examples",
)
METHODS = ("file", "stdin", "diff", "fix", "lsp")

@dataclass
class Outcome:
    compared: int = 0
    findings: int = 0  # the reference's findings in the files compared
    differences: list[str] = field(default_factory=list)


def ddplint(args: list[str], cwd: Path, stdin: bytes | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    # -P: the checkout's own modules must not shadow the standard library.
    return subprocess.run(
        [sys.executable, "-P", "-m", "ddplint", "check", "--no-cache", *args],
        cwd=cwd, env=ddplint_environment(), input=stdin, capture_output=True, timeout=timeout, check=False,
    )


def json_findings(args: list[str], cwd: Path, stdin: bytes | None = None) -> dict[str, list[Key]]:
    """Findings by file (as reported, relative to `cwd`), each file's sorted."""
    done = ddplint(["--output-format", "json", "--exit-zero", *args], cwd, stdin)
    if done.returncode != 0:
        raise RuntimeError(f"ddplint {' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return findings_by_file(json.loads(done.stdout or b"[]"))


def fixable_codes(args: list[str], cwd: Path) -> dict[str, Counter]:
    """Per file, how many findings of each rule carry a fix, from the JSON output."""
    done = ddplint(["--output-format", "json", "--exit-zero", *args], cwd)
    counts: dict[str, Counter] = {}
    for item in json.loads(done.stdout or b"[]"):
        if item.get("fix") is not None:
            counts.setdefault(Path(item["filename"]).as_posix(), Counter())[item["code"]] += 1
    return counts


def diff_sections(diff: str) -> dict[str, str]:
    """A unified diff over many files, split into each file's part (keyed by its `---` name)."""
    sections: dict[str, str] = {}
    parts = re.split(r"(?m)^(?=--- )", diff)
    for part in parts:
        if (name := re.match(r"--- (?:a/)?(\S+)", part)):
            sections[Path(name.group(1)).as_posix()] = part
    return sections


# -- which files to compare -------------------------------------------------------------------
def imported_modules(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):  # `from . import x`
            names.update(alias.name for alias in node.names)
    return names


def module_tails(name: str) -> set[str]:
    """The path endings a file of this module could have: `a/b.py` for `a.b` and for `x.a.b`."""
    parts = name.split(".")
    return {"/".join(parts[-n:]) + ".py" for n in range(1, len(parts) + 1)}


def files_to_compare(workdir: Path, files: list[str], reported: set[str], max_files: int, seed: int) -> list[str]:
    """Every reported file, the files importing one, then a seeded sample of the rest."""
    chosen = [f for f in files if f in reported]
    importing = []
    for name in files:
        if name in reported:
            continue
        tails = set().union(*(module_tails(m) for m in imported_modules(workdir / name)))
        if any(any(r == t or r.endswith("/" + t) for t in tails) for r in reported):
            importing.append(name)
    chosen += importing
    rest = [f for f in files if f not in chosen]
    random.Random(seed).shuffle(rest)
    chosen += rest[: max(0, max_files - len(chosen))]
    return sorted(chosen[:max_files] if len(chosen) > max_files else chosen)


def _count(expected: object) -> int:
    """How many findings an expected answer holds: a list of keys, a count per rule, or a pair."""
    if isinstance(expected, list):
        return len(expected)
    if isinstance(expected, dict):
        return sum(expected.values())
    return _count(expected[0]) if isinstance(expected, tuple) else 0


# -- the methods ------------------------------------------------------------------------------
def compare(outcome: Outcome, name: str, expected: object, got: object, what: str = "") -> None:
    outcome.compared += 1
    outcome.findings += _count(expected)
    if expected != got:
        outcome.differences.append(f"{name}{what}: reference {expected} != {got}")


def by_file_method(workdir: Path, chosen: list[str], reference: dict[str, list[Key]]) -> dict[str, Outcome]:
    outcomes = {"file": Outcome(), "stdin": Outcome()}
    for name in chosen:
        expected = reference.get(name, [])
        compare(outcomes["file"], name, expected, json_findings([name], workdir).get(name, []))
        piped = json_findings(["-", "--stdin-filename", name], workdir, (workdir / name).read_bytes())
        compare(outcomes["stdin"], name, expected, piped.get(name, []))
    return outcomes


def diff_method(workdir: Path, chosen: list[str]) -> Outcome:
    outcome = Outcome()
    fixable = fixable_codes(["--unsafe-fixes", "."], workdir)
    whole = ddplint(["--diff", "--unsafe-fixes", "--show-fixes", "."], workdir)
    sections = diff_sections(whole.stdout.decode())
    for name in chosen:
        alone = ddplint(["--diff", "--unsafe-fixes", "--show-fixes", name], workdir)
        would_fix = shown_fixes(alone.stderr.decode()).get(name, Counter())
        expected = (dict(fixable.get(name, Counter())), sections.get(name, ""))
        compare(outcome, name, expected, (dict(would_fix), diff_sections(alone.stdout.decode()).get(name, "")),
                " (rules fixed, diff)")
    return outcome


def fix_method(root: Path, subfolder: str, files: list[str], reference: dict[str, list[Key]]) -> Outcome:
    """--fix over a copy of the whole repository: every reported finding fixed or left, file by file."""
    outcome = Outcome()
    with tempfile.TemporaryDirectory(prefix="same-answer-fix-") as temporary:
        copy = Path(temporary, root.name)
        shutil.copytree(root, copy, symlinks=True)
        done = ddplint(["--fix", "--unsafe-fixes", "--show-fixes", "--exit-zero", "."], copy / subfolder)
        left = concise_findings(done.stdout.decode())
        fixed = shown_fixes(done.stderr.decode())
    for name in files:
        outcome.compared += 1
        outcome.findings += len(reference.get(name, []))
        if (difference := fix_difference(reference.get(name, []), left.get(name, []), fixed.get(name, Counter()))):
            outcome.differences.append(f"{name}: reference {reference.get(name, [])}, --fix {difference}")
    return outcome


def lsp_method(workdir: Path, chosen: list[str], reference: dict[str, list[Key]]) -> Outcome:
    outcome = Outcome()
    for name, keys in asyncio.run(lsp_findings(workdir, chosen)).items():
        compare(outcome, name, reference.get(name, []), keys)
    return outcome


# -- one repository ---------------------------------------------------------------------------
def check_repo(repo: Repo, checkouts: Path, max_files: int, seed: int, methods: tuple[str, ...],
               mark_project: bool) -> dict[str, Outcome]:
    """On a copy of the checkout: the fetched checkouts hold no `.git`, and a clone's `.git` is what
    makes its folder the project of every file in it (`ddplint FILE` then sees the other modules);
    `mark_project` puts an empty one in the copy where the repository has no project marker."""
    with tempfile.TemporaryDirectory(prefix="same-answer-") as temporary:
        root = Path(temporary, repo.checkout_name)
        shutil.copytree(checkouts / repo.checkout_name, root, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        if mark_project and not any((root / marker).exists() for marker in PROJECT_MARKERS):
            (root / ".git").mkdir()
        return _check_copy(repo, root, max_files, seed, methods)


def _check_copy(repo: Repo, root: Path, max_files: int, seed: int, methods: tuple[str, ...]) -> dict[str, Outcome]:
    workdir = root / repo.subfolder
    files = sorted(p.relative_to(workdir).as_posix() for p in workdir.rglob("*.py") if ".git" not in p.parts)
    reference = json_findings(["."], workdir)
    chosen = files_to_compare(workdir, files, set(reference), max_files, seed)
    print(f"{repo.name}: {len(files)} files, {sum(map(len, reference.values()))} findings in "
          f"{len(reference)}, comparing {len(chosen)}", file=sys.stderr, flush=True)
    outcomes: dict[str, Outcome] = {}
    if "file" in methods or "stdin" in methods:
        outcomes.update(by_file_method(workdir, chosen, reference))
    if "diff" in methods:
        outcomes["diff"] = diff_method(workdir, chosen)
    if "fix" in methods:
        outcomes["fix"] = fix_method(root, repo.subfolder, files, reference)
    if "lsp" in methods:
        outcomes["lsp"] = lsp_method(workdir, chosen, reference)
    return {method: outcomes[method] for method in METHODS if method in outcomes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkouts", type=Path, default=Path("/work/eco-all"))
    parser.add_argument("--repos", nargs="+", default=list(DEFAULT_REPOS), metavar="OWNER/NAME")
    parser.add_argument("--max-files", type=int, default=40, help="files compared per repository by the per-file methods")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--as-fetched", action="store_true",
                        help="no project marker added: a repository without one is no project, and each file sees only the files named with it")
    args = parser.parse_args(argv)
    pinned = {repo.name: repo for repo in load_repos(HERE / "ecosystem" / "repos.toml")}
    differences = []
    print("| repository | method | files compared | their findings | identical | different |")
    print("|---|---|---:|---:|---:|---:|", flush=True)
    for name in args.repos:  # each repository's rows as soon as it is done: a long run shows progress
        repo = pinned.get(name)
        if repo is None or not (args.checkouts / repo.checkout_name).is_dir():
            print(f"{name}: not pinned in repos.toml or not checked out in {args.checkouts}", file=sys.stderr)
            return 2
        outcomes = check_repo(repo, args.checkouts, args.max_files, args.seed, tuple(args.methods), not args.as_fetched)
        for method, outcome in outcomes.items():
            different = len(outcome.differences)
            print(f"| {name} | {method} | {outcome.compared} | {outcome.findings} | {outcome.compared - different} | {different} |",
                  flush=True)
            differences += [f"- {name} [{method}] {difference}" for difference in outcome.differences]
    print("\n".join(differences))
    failed = bool(differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
