"""Small, pure helpers over libcst: parsing, and names, literals, arguments of expression nodes."""

from __future__ import annotations

import dataclasses
import re
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator, Optional, Sequence, Union

import libcst as cst
from libcst._nodes.base import CSTNode


def parse_module(source: Union[bytes, str], keep: bool = True) -> cst.Module:
    """`libcst.parse_module`, without validating every node the parser builds. libcst checks each
    node as it is constructed (`CSTNode.__post_init__`), which guards trees built by hand; the
    parser builds only valid ones (libcst's own comment there says validation could be skipped
    when parsing). It is a sixth of the parse: ~6 CPU-s over the files torch's package has us
    parse. Where libcst's layout is not the one this expects, its plain parse runs.

    The same content is parsed once while its tree is among the last few kept (`_KEPT`): a
    module's summary and its own analysis read the same bytes in one run, in either order (the
    summary for a file that imports it, the analysis when its turn comes). libcst's trees are
    immutable, and everything built over one (facts, positions) is kept beside it, never in it.
    `keep=False` for a text whose tree must be its own: the language server's statement pieces,
    where a statement written twice in one document needs two trees (nodes are told apart by
    identity), and which have their own store (lsp/incremental.py)."""
    tree = _KEPT.get(source) if keep else None
    if tree is not None:
        _KEPT.move_to_end(source)
        return tree
    if len(source) > KEPT_SOURCE_BYTES:
        _KEPT.clear()  # a large file's tree is not built on top of the kept ones: the peak memory
    with _nodes_unvalidated():
        tree = cst.parse_module(source)
    if keep:
        _keep(source, tree)
    return tree


# Trees of at most this much source in all are kept for a second parse of the same content. A
# tree costs 300 - 700 bytes per byte of source: this holds a process at most ~100 MB above what
# it would hold without, most of the time far less (the kept trees are small ones, the analysed
# file's tree is alive anyway while the summaries it asks for are built).
KEPT_SOURCE_BYTES = 192_000
_KEPT: "OrderedDict[Union[bytes, str], cst.Module]" = OrderedDict()


def _keep(source: Union[bytes, str], tree: cst.Module) -> None:
    if len(source) > KEPT_SOURCE_BYTES:
        return
    _KEPT[source] = tree
    kept = sum(len(text) for text in _KEPT)
    while kept > KEPT_SOURCE_BYTES:
        oldest, _ = _KEPT.popitem(last=False)
        kept -= len(oldest)


def forget_parsed() -> None:
    """Drop the kept trees (a worker handing freed memory back to the system, a test)."""
    _KEPT.clear()


# The hook, kept here so that it is always the one put back (two threads parsing at once must not
# leave the other's stand-in in place).
_VALIDATION_HOOK = CSTNode.__dict__.get("__post_init__")
_SKIP_VALIDATION = getattr(getattr(_VALIDATION_HOOK, "__code__", None), "co_names", None) == ("_validate",)


@contextmanager
def _nodes_unvalidated() -> Iterator[None]:
    if not _SKIP_VALIDATION:
        yield
        return
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        yield
    finally:
        CSTNode.__post_init__ = _VALIDATION_HOOK  # type: ignore[method-assign,assignment]


def _no_validation(self: CSTNode) -> None:
    return None


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while _chain_kind(node) == _ATTRIBUTE:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if _chain_kind(node) == _NAME:
        parts.append(node.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


_ATTRIBUTE, _NAME, _OTHER = 1, 2, 0
# node type -> _ATTRIBUTE / _NAME / _OTHER. `dotted_name` is asked of nearly every call and name
# by the models, and an isinstance test against libcst's node classes goes through ABCMeta; the
# answer depends on the type alone.
_CHAIN_KINDS: dict[type, int] = {}


def _chain_kind(node: object) -> int:
    kind = _CHAIN_KINDS.get(type(node))
    if kind is None:
        kind = _ATTRIBUTE if isinstance(node, cst.Attribute) else _NAME if isinstance(node, cst.Name) else _OTHER
        _CHAIN_KINDS[type(node)] = kind
    return kind


def last_name(node: cst.CSTNode) -> Optional[str]:
    """The rightmost identifier of a callee or reference: `self.opt.step` -> `step`."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def receiver(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """For `x.y.method`, the expression `x.y`; None for a bare name."""
    if isinstance(node, cst.Attribute):
        return node.value
    return None


def is_none(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def is_true(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_false(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def int_value(node: Optional[cst.CSTNode]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_value(node.expression)
        return -inner if inner is not None else None
    return None


def string_value(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        text = _text_without_escapes(node.value)
        if text is not None:
            return text
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # malformed escape in user code: not a literal we can use
            return None
        return value if isinstance(value, str) else None
    return None


def _text_without_escapes(token: str) -> Optional[str]:
    """The value of a string token with no escape, no carriage return and no bytes prefix
    (`"cuda:0"`, `r'x'`, a triple-quoted text): the text between its quotes. None for any
    other token, which `evaluated_value` reads instead (a compile per call: the rules read
    the same literals on every edit of the language server)."""
    start = 0
    while start < len(token) and token[start] not in "'\"":
        start += 1
    if token[:start].lower() not in ("", "r", "u"):
        return None
    quote = token[start : start + 3] if token[start : start + 3] in ("'''", '"""') else token[start : start + 1]
    inner = token[start + len(quote) : len(token) - len(quote)]
    if not quote or "\\" in inner or "\r" in inner:
        return None
    return inner


def keyword_arg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    out = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            break
        out.append(arg)
    return out


def argument(call: cst.Call, name: str, position: Optional[int] = None) -> Optional[cst.BaseExpression]:
    """The expression passed for a parameter, by keyword or (if given) by position."""
    kw = keyword_arg(call, name)
    if kw is not None:
        return kw.value
    if position is not None:
        positional = positional_args(call)
        if position < len(positional):
            return positional[position].value
    return None


def double_star_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.star == "**"]


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star == "*" for arg in call.args)


def walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node below `node` (itself included), in source order: the nodes a libcst visitor
    visits, in its order. Read off the nodes' fields without a visitor: libcst's `visit` builds
    a new copy of every node it passes (and validates it), ~a tenth of a cold run's CPU where
    models walk subtrees; `node.children` does the same at every level."""
    return _walked(node, values_only=False)


def value_walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes below `node` that stand for values: `walk` without the names in attribute or
    keyword position (`args.seed`, `f(seed=1)`: `seed`), which name attributes and parameters,
    never a variable of the scope, so that a `Name` found here may be looked up as a variable.
    The dot and the equal sign there are left out too; the `Attribute` or `Arg` itself is kept."""
    return _walked(node, values_only=True)


def _walked(root: cst.CSTNode, values_only: bool) -> list[cst.CSTNode]:
    nodes: list[cst.CSTNode] = []
    stack = [root]
    while stack:  # a stack, not recursion: as deep as the tree, never Python's recursion limit
        node = stack.pop()
        nodes.append(node)
        if values_only and isinstance(node, (cst.Attribute, cst.Arg)):
            stack.append(node.value)
            continue
        children: list[cst.CSTNode] = []
        for name in _visited_fields(node):
            value = getattr(node, name)
            if isinstance(value, CSTNode):
                children.append(value)
            elif isinstance(value, (tuple, list)):
                children.extend(value)
            # None, MaybeSentinel: nothing there
        children.reverse()
        stack.extend(children)
    return nodes


# Per node class, the fields libcst's visitors visit, in their order: recorded from the class's
# own `_visit_and_replace_children` the first time a node of it is walked (the order is fixed
# per class; where the code branches, it picks how to visit the same field, or skips one that
# is None: see `_visited_fields`).
_VISITED_FIELDS: dict[type, tuple[str, ...]] = {}


def _visited_fields(node: cst.CSTNode) -> tuple[str, ...]:
    fields = _VISITED_FIELDS.get(type(node))
    if fields is None:
        recorder = _FieldRecorder(node)
        node._visit_and_replace_children(recorder)
        fields = tuple(recorder.fields)
        # A visit may leave out a field it finds None (an f-string part's format_spec): such a
        # recording serves this node only, or a later node with that field set would lose it.
        if not any(getattr(node, field.name) is None and field.name not in fields for field in dataclasses.fields(node)):
            _VISITED_FIELDS[type(node)] = fields
    return fields


class _FieldRecorder(cst.CSTVisitor):
    """Notes the fields a node's visit goes through, without going below its children."""

    def __init__(self, parent: cst.CSTNode) -> None:
        self.parent = parent
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.parent:
            self.fields.append(attribute)


def alternatives(node: cst.BaseExpression) -> Sequence[cst.BaseExpression]:
    """The values an expression may take when it picks between others.

    `a if c else b` -> (a, b); `a or b` -> (a, b); anything else -> (node,).
    """
    if isinstance(node, cst.IfExp):
        return (*alternatives(node.body), *alternatives(node.orelse))
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return (*alternatives(node.left), *alternatives(node.right))
    return (node,)


# What ends a block by leaving it: the function (`return`, `raise`), or also the loop.
FUNCTION_EXITS: tuple[type, ...] = (cst.Return, cst.Raise)
BLOCK_EXITS: tuple[type, ...] = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def ends_with(block: cst.BaseSuite, exits: tuple[type, ...]) -> bool:
    """The block's last statement is one of `exits` (FUNCTION_EXITS, BLOCK_EXITS)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    if not body:
        return False
    last = body[-1]
    small = last.body if isinstance(last, cst.SimpleStatementLine) else [last]
    return any(isinstance(statement, exits) for statement in small)


def and_parts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`a and b and c` as [a, b, c]: each holds wherever the whole does."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return and_parts(test.left) + and_parts(test.right)
    return [test]


def identifier_words(name: str) -> list[str]:
    """`trainLoader` / `train_loader` / `TrainLoader` -> ['train', 'loader']."""
    return list(_identifier_words(name))


@lru_cache(maxsize=8192)  # the same few hundred names are split again by every model and rule
def _identifier_words(name: str) -> tuple[str, ...]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return tuple(w for w in re.split(r"[_\W]+", spaced.lower()) if w)
