"""What a run leaves on disk while it works (the cache's file being written, a pool's shared
summaries) is named after the process that made it, so that a later run can remove what a killed
run left (SIGKILL gives no chance to clean up) without touching what a running one still uses."""

from __future__ import annotations

import os


def owned_name(prefix: str) -> str:
    """The start of a name this process owns: `prefix`, its process id, a dash."""
    return f"{prefix}{os.getpid()}-"


def left_by_dead_process(name: str, prefix: str) -> bool:
    """Whether `name` was made by `owned_name(prefix)` in a process that no longer runs."""
    if not name.startswith(prefix):
        return False
    pid = name[len(prefix):].partition("-")[0]
    return pid.isascii() and pid.isdigit() and not _running(int(pid))


def _running(pid: int) -> bool:
    if os.name != "posix":  # no harmless probe (os.kill ends the process there): assume it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OverflowError, ValueError):  # not a process id at all
        return False
    return True
