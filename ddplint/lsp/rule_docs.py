"""Where a diagnostic's "more information" link points.

ddplint has no hosted documentation site, and a link that 404s is worse than none. So by default
each rule's page (`Rule.documentation()`, the same text `ddplint rule CODE` prints) is written as
Markdown into the user's cache directory, under the installed version, and diagnostics link to it
with a `file://` URI:

    $XDG_CACHE_HOME/ddplint/<version>/rules/<CODE>.md      (~/.cache when XDG_CACHE_HOME is unset)

The page always matches the installed ddplint, works offline, and editors open it on a click.
Teams that host the pages somewhere can set the `docsUrl` initialization option to a template
instead, e.g. `https://docs.example.org/ddplint/rules/{code}.html` (`{code}`, `{name}` and
`{version}` are filled in).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from ddplint import __version__
from ddplint.rules import ENTRIES_BY_CODE

# The links need only the registry (code, name): the CLI's json / SARIF output asks for them on
# runs whose files are all cached, which never load a rule (and libcst with it).


def default_pages_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache, "ddplint", __version__, "rules")


def write_rule_pages(directory: Path) -> None:
    """Write every rule's page; raises OSError when the directory is not writable."""
    from ddplint.rules import ALL_RULES  # loads every rule: their pages are their documentation

    directory.mkdir(parents=True, exist_ok=True)
    for rule in ALL_RULES:
        page = directory / f"{rule.code}.md"
        text = rule.documentation()
        # Rewrite only on a difference: several servers may share the directory.
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")


class RuleLinks:
    """code -> URL of the rule's page, from a template or from the written pages."""

    def __init__(self, template: Optional[str] = None, pages_dir: Optional[Path] = None):
        self._template = template
        self._pages_dir = pages_dir

    def url(self, code: str) -> Optional[str]:
        rule = ENTRIES_BY_CODE.get(code)
        if rule is None:
            return None  # DDP000 (unreadable / unparsable input) has no page
        if self._template:
            return self._template.format(code=rule.code, name=rule.name, version=__version__)
        if self._pages_dir is not None:
            return (self._pages_dir / f"{rule.code}.md").resolve().as_uri()
        return None


def pages_written(directory: Path) -> bool:
    """Whether every rule's page is in `directory` already (the version is part of its path)."""
    return all((directory / f"{code}.md").is_file() for code in ENTRIES_BY_CODE)
