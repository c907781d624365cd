"""Make the checkouts that run.py reads, from bare git mirrors already on this machine.

    python benchmarks/ecosystem/extract.py MIRRORS_DIR CHECKOUTS_DIR

MIRRORS_DIR holds one bare repository per entry of repos.toml, as ``owner+name/repo`` (the layout
the fetch tool leaves) or ``owner+name.git``; getting them there (clone, fetch) happens outside and
is the only step that needs a network. Each pinned commit's files are written (only its subfolder's,
when one is given; blobs a snapshot lacks, its largest files, are skipped) to ``CHECKOUTS_DIR/owner__name/``; existing checkouts are left alone,
so a second run only adds what is missing. Nothing fetched is ever copied into this repository.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Repo, load_repos


def git_dir(mirrors: Path, repo: Repo) -> Path | None:
    stem = repo.name.replace("/", "+")
    for candidate in (
        mirrors / stem / "repo" / ".git",
        mirrors / stem / "repo",
        mirrors / f"{stem}.git",
    ):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def list_blobs(source: Path, repo: Repo) -> list[tuple[str, str]]:
    """(sha, path) of every regular file of the pinned commit, under the subfolder if any."""
    command = ["git", "--git-dir", str(source), "ls-tree", "-r", "-z", repo.commit]
    if repo.subfolder:
        command += ["--", repo.subfolder]
    listing = subprocess.run(command, capture_output=True, check=True).stdout.decode()
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode in ("100644", "100755"):
            blobs.append((sha, path))
    return blobs


def write_blobs(source: Path, blobs: list[tuple[str, str]], target: Path) -> int:
    """Write each blob under target; return how many the snapshot lacks (large files are left out
    of snapshots, so `git archive` would fail on them)."""
    missing = 0
    batch = subprocess.Popen(
        ["git", "--git-dir", str(source), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert batch.stdin and batch.stdout
    for sha, path in blobs:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[-1] == b"missing":
            missing += 1
            continue
        content = batch.stdout.read(int(header[2]))
        batch.stdout.readline()
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)
    batch.stdin.close()
    batch.wait()
    return missing


def extract(mirrors: Path, checkouts: Path, repo: Repo) -> str:
    target = checkouts / repo.checkout_name
    if target.exists():
        return "kept"
    source = git_dir(mirrors, repo)
    if source is None:
        return "no mirror"
    target.mkdir(parents=True)
    entries = list_blobs(source, repo)
    missing = write_blobs(source, entries, target)
    if missing:
        return f"extracted ({missing} large files absent from the snapshot, skipped)"
    return "extracted"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirrors", type=Path)
    parser.add_argument("checkouts", type=Path)
    parser.add_argument("--repos", type=Path, default=Path(__file__).resolve().parent / "repos.toml")
    args = parser.parse_args(argv)
    failures = 0
    for repo in load_repos(args.repos):
        outcome = extract(args.mirrors, args.checkouts, repo)
        failures += not outcome.startswith(("kept", "extracted"))
        print(f"{repo.name}: {outcome}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
