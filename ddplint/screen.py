"""Which selected rules could have anything to say about a file, decided without libcst.

libcst costs ~3 ms per kB (parse plus our one visitor pass); almost no file in a large repository
has anything for a rule to find. So every file goes through two cheap stages first:

1. bytes: a rule is a candidate only if one of its triggers occurs in the raw bytes (name
   triggers as whole words: `broadcast` does not match `broadcast_tensors`, `*valid*` matches
   `validate`), and distributed-only rules also need a distributed token;
2. CPython's compiler, which every remaining file needs anyway as the syntax check in front of
   libcst: name triggers must match names the code uses (loads, attributes, imports, keyword
   names), not only words in a comment or a docstring.

The compiler is also the guard that keeps libcst alive: its native parser overflows the C stack on
pathological nesting, where CPython raises RecursionError / MemoryError instead.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import Iterable, Optional, Sequence

from ddplint.analysis.distributed import DISTRIBUTED_TOKENS
from ddplint.rules import Rule

# Deeper syntax trees than this are refused: real code stays far below (a few dozen levels), and
# libcst's native parser overflows the C stack somewhere past a few thousand. Python >= 3.11's
# compiler refuses such input itself; older ones parse it happily, so there the tree is measured.
MAX_NESTING = 500
_COMPILER_GUARDS_NESTING = sys.version_info >= (3, 11)


@dataclass(frozen=True)
class Unparsable:
    """Why a file cannot be analysed, with the position CPython reported."""

    reason: str
    row: int = 1
    column: int = 1
    is_syntax_error: bool = False  # the code, not its encoding or its depth: recovery.py may save the rest


@dataclass(frozen=True)
class _RuleTriggers:
    words: Optional[re.Pattern]  # name patterns, as whole words in the bytes
    names: Optional[re.Pattern]  # the same, to be met by a name the code uses
    raw: tuple[bytes, ...]  # other triggers (`.to(`, ...): a plain substring is enough


_NAME_PATTERN = re.compile(rb"^[\w*]*\w[\w*]*$")


@lru_cache(maxsize=None)
def _triggers_of(rule: Rule) -> _RuleTriggers:
    """A rule's triggers are name patterns, `*` standing for any run of name characters:
    `DataLoader` is that name only, `*valid*` any name holding "valid" (`validate`,
    `run_validation`). Anything else (`.to(`) is looked for as raw bytes."""
    patterns = [t for t in rule.triggers if _NAME_PATTERN.match(t)]
    raw = tuple(t for t in rule.triggers if not _NAME_PATTERN.match(t))
    if not patterns:
        return _RuleTriggers(None, None, raw)
    alternatives = b"|".join(re.escape(p).replace(rb"\*", rb"\w*") for p in sorted(patterns))
    words = re.compile(rb"(?<!\w)(?:%s)(?!\w)" % alternatives)
    names = re.compile(alternatives.decode())
    return _RuleTriggers(words, names, raw)


def candidates_by_bytes(data: bytes, rules: Sequence[Rule]) -> list[Rule]:
    """Stage 1: the rules whose triggers occur in the raw bytes."""
    distributed = any(token in data for token in DISTRIBUTED_TOKENS)
    return [rule for rule in rules if (distributed or not rule.distributed_only) and _bytes_match(rule, data)]


def _bytes_match(rule: Rule, data: bytes) -> bool:
    triggers = _triggers_of(rule)
    return any(raw in data for raw in triggers.raw) or (triggers.words is not None and triggers.words.search(data) is not None)


def candidates_by_names(rules: Sequence[Rule], data: bytes, names: frozenset[str]) -> list[Rule]:
    """Stage 2: drop rules whose name triggers occur only in comments and strings."""
    return [rule for rule in rules if _names_match(_triggers_of(rule), data, names)]


def _names_match(triggers: _RuleTriggers, data: bytes, names: frozenset[str]) -> bool:
    if any(raw in data for raw in triggers.raw):
        return True
    return triggers.names is not None and any(triggers.names.fullmatch(name) for name in names)


def compile_screen(data: bytes, filename: str) -> tuple[Optional[Unparsable], frozenset[str]]:
    """(problem, names used by the code). CPython's messages are the ones users know, and its
    compiler is several times cheaper than libcst."""
    try:
        with warnings.catch_warnings():
            # The checked file's own SyntaxWarnings (`"\d"`, `1if x`) are not ddplint's to print.
            warnings.simplefilter("ignore")
            if _COMPILER_GUARDS_NESTING:
                return None, frozenset(_code_names(compile(data, filename, "exec", dont_inherit=True)))
            tree = compile(data, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        message = str(exc.msg)
        reason = "cannot decode file" if "decod" in message or "encoding" in message else "syntax error"
        return Unparsable(f"{reason}: {message}", exc.lineno or 1, exc.offset or 1, reason == "syntax error"), frozenset()
    except (RecursionError, MemoryError):
        return Unparsable("cannot parse: code nested too deeply"), frozenset()
    except (ValueError, UnicodeDecodeError, LookupError) as exc:
        return Unparsable(f"cannot decode file: {exc}"), frozenset()
    if _nesting_exceeds(tree, MAX_NESTING):
        return Unparsable(f"cannot parse: code nested too deeply (over {MAX_NESTING} levels)"), frozenset()
    return None, frozenset(_tree_names(tree))


def _code_names(code: CodeType) -> Iterable[str]:
    """Every name a compiled module uses: globals, attributes, imported modules and names, locals,
    and the strings of constant tuples (keyword-argument names live there). Docstrings, comments
    and other string literals are not names. Walking code objects costs a few milliseconds where
    an AST walk costs a hundred."""
    stack = [code]
    while stack:
        current = stack.pop()
        for name in current.co_names:
            yield from name.split(".")
        yield from current.co_varnames
        yield from current.co_cellvars
        yield from current.co_freevars
        for const in current.co_consts:
            if isinstance(const, CodeType):
                stack.append(const)
            elif isinstance(const, tuple):
                yield from (item for item in const if isinstance(item, str) and item.isidentifier())


def _tree_names(tree: ast.AST) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield from node.name.split(".")
            if node.asname:
                yield node.asname
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


def _nesting_exceeds(tree: ast.AST, limit: int) -> bool:
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
