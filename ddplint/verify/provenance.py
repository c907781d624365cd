"""Which device saved a file, kept between runs: the evidence DDP008 needs under --cpu.

A CPU rehearsal writes checkpoints whose tensors say `cpu`, whatever logical GPU the saving rank
was on; the emulation records the logical device in the run directory (`SAVES_FILE`). A script
that resumes loads in its next run what it saved in this one, so that record is kept in the
project's cache folder (`verify-saves.json`, trusted as the results cache is: JSON only, vouched
for by the folder's key, no link followed), keyed by the file's path and content hash. Before a
run the entries whose file is unchanged are handed to the ranks as if saved in the run; a file
changed since (or never seen) has no known origin, and its load is judged inconclusive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from ddplint.cache import content_hasher, default_cache_dir, read_owned_json, write_owned_json
from ddplint.verify.emulation import SAVES_FILE

SAVES_NAME = "verify-saves.json"
MAX_FILES = 512  # the most recent saves kept: a project's checkpoints, not a history
CHUNK = 1 << 20


def cache_directory(script: str) -> Path:
    """The project's cache folder (DDPLINT_CACHE_DIR, else `.ddplint_cache` in the script's project)."""
    if os.environ.get("DDPLINT_CACHE_DIR"):
        return Path(os.environ["DDPLINT_CACHE_DIR"])
    return default_cache_dir(Path(script).resolve().parent)


def file_hash(path: str) -> Optional[str]:
    hasher = content_hasher()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                hasher.update(chunk)
    except OSError:
        return None
    return hasher.hexdigest()


def known_saves(cache_dir: Path) -> dict:
    content = read_owned_json(cache_dir, SAVES_NAME) or {}
    saves = content.get("saves")
    return saves if isinstance(saves, dict) else {}


def seed_run(run_dir: Path, cache_dir: Path) -> int:
    """Hand the ranks the origin of every known file that is unchanged; returns how many."""
    lines = []
    for path, entry in known_saves(cache_dir).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("device"), str):
            continue
        try:
            if os.path.getsize(path) != entry.get("size"):
                continue
        except OSError:
            continue
        if file_hash(path) == entry.get("hash"):
            lines.append(json.dumps({"path": path, "device": entry["device"], "earlier": True}) + "\n")
    if lines:
        with open(Path(run_dir) / SAVES_FILE, "a") as handle:
            handle.writelines(lines)
    return len(lines)


def remember(run_dir: Path, cache_dir: Path) -> Optional[str]:
    """Keep what this run's ranks saved (the last device per path) for the next runs; returns why it
    could not be written, if so."""
    saved: dict = {}
    try:
        with open(Path(run_dir) / SAVES_FILE) as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and not entry.get("earlier") and isinstance(entry.get("path"), str):
                    saved[entry["path"]] = entry.get("device")
    except OSError:
        return None  # nothing saved
    if not saved:
        return None
    saves = known_saves(cache_dir)
    for path, device in saved.items():
        digest = file_hash(path)
        if digest is None or not isinstance(device, str):
            saves.pop(path, None)
            continue
        saves.pop(path, None)  # re-inserted last: the most recent are kept
        saves[path] = {"hash": digest, "size": os.path.getsize(path), "device": device}
    kept = dict(list(saves.items())[-MAX_FILES:])
    return write_owned_json(cache_dir, SAVES_NAME, {"saves": kept})
