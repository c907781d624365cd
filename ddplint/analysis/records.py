"""Record types of the analysis: bindings, scopes, call / loop / branch sites, the context a node
sits in, functions and classes of a file.

Plain data with small queries over themselves; it imports nothing else of ddplint so that every
analysis module (and anything outside the package) can use the records without pulling in the
builders that fill them (`facts.py`) or the models that judge them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import AbstractSet, Iterator, Optional, Sequence, Union

import libcst as cst

Loop = Union[cst.For, cst.While, cst.CompFor]
Branch = Union[cst.If, cst.IfExp]


@dataclass(eq=False)
class Binding:
    """One assignment to a name or attribute chain (`x`, `self.loader`, `args.rank`)."""

    key: str
    value: Optional[cst.BaseExpression] = field(repr=False)
    kind: str  # assign | param | loop | with | unpack | item
    node: cst.CSTNode = field(repr=False)
    # Where the value is evaluated. Usually the scope holding the binding, but `self.x = v` in a
    # method is stored on the class while `v` is evaluated in the method.
    scope: "Scope" = field(repr=False)
    index: Optional[int] = None  # position in a tuple unpacking
    item: Optional[str] = None  # for kind == "item": the literal key of `d["key"] = value`
    # The `if` arms the assignment sits in: a use in the other arm of the same `if` cannot see it.
    arms: tuple = field(default=(), repr=False)
    # Where the assignment runs (statement path, loops), for program order (analysis/reaching.py).
    context: Optional["Context"] = field(default=None, repr=False)


@dataclass(eq=False)
class Scope:
    kind: str  # module | class | function
    node: cst.CSTNode = field(repr=False)
    parent: Optional["Scope"] = field(repr=False)
    name: str = ""
    bindings: dict[str, list[Binding]] = field(default_factory=dict, repr=False)
    path_depth: int = 0  # statement-path depth at which this scope's body starts
    # Where the `def` / `class` statement sits in the enclosing scope (None for the module).
    defined_at: Optional["Context"] = field(default=None, repr=False)

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.key, []).append(binding)

    def within(self, scopes: "set[int]") -> bool:
        """This scope is one of `scopes` (by id) or nested in one."""
        scope: Optional[Scope] = self
        while scope is not None:
            if id(scope) in scopes:
                return True
            scope = scope.parent
        return False

    @property
    def class_scope(self) -> Optional["Scope"]:
        scope: Optional[Scope] = self
        while scope is not None and scope.kind != "class":
            if scope.kind == "module":
                return None
            scope = scope.parent
        return scope

    def lookup(self, key: str) -> list[Binding]:
        """Bindings visible for `key` from here, Python's LEGB order (class bodies skipped),
        except that `self.x` is looked up in the enclosing class."""
        if key.startswith("self."):
            owner = self.class_scope
            return owner.bindings.get(key, []) if owner is not None else []
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            if first or scope.kind != "class":
                if key in scope.bindings:
                    return scope.bindings[key]
            first = False
            scope = scope.parent
        return []


@dataclass(eq=False)
class LoopSite:
    node: Loop = field(repr=False)
    context: "Context" = field(repr=False)

    @property
    def iterable(self) -> Optional[cst.BaseExpression]:
        return self.node.iter if isinstance(self.node, (cst.For, cst.CompFor)) else None


@dataclass(eq=False)
class Context:
    """Where a node sits: its scope, the loops and `if` branches around it (same function,
    outermost first) and the statement path (block body, index) used to find what runs after."""

    scope: Scope
    loops: tuple[LoopSite, ...]
    branches: tuple[tuple[cst.If, bool], ...]  # (if statement, inside its body rather than else)
    path: tuple[tuple[Sequence[cst.BaseStatement], int], ...]

    def current_statement(self) -> Optional[cst.CSTNode]:
        if not self.path:
            return None
        body, index = self.path[-1]
        return body[index]

    def statements_after(self) -> Iterator[cst.CSTNode]:
        """Statements that run after this one in the same function, innermost block first,
        including the `else:` / `finally:` of a `try` whose body holds it."""
        for level in range(len(self.path) - 1, -1, -1):
            body, index = self.path[level]
            yield from body[index + 1 :]
            if level == 0:
                continue
            outer_body, outer_index = self.path[level - 1]
            owner = outer_body[outer_index]
            if isinstance(owner, cst.Try) and owner.body.body is body:
                for tail in (owner.orelse, owner.finalbody):
                    if tail is not None:
                        yield from tail.body.body


def excludes(these: tuple, those: tuple) -> bool:
    """Two places in opposite arms of one `if` statement never both run."""
    if not these or not those:
        return False
    mine = {id(node): arm for node, arm in these}
    return any(mine.get(id(node), arm) != arm for node, arm in those)


@dataclass(eq=False)
class CallSite:
    node: cst.Call = field(repr=False)
    context: Context = field(repr=False)

    @cached_property  # asked of every call by several models and rules
    def name(self) -> Optional[str]:
        """The rightmost identifier of the callee: `self.opt.step(...)` -> `step`."""
        func = self.node.func
        if isinstance(func, cst.Name):
            return func.value
        if isinstance(func, cst.Attribute):
            return func.attr.value
        return None


@dataclass(eq=False)
class BranchSite:
    node: Branch = field(repr=False)
    context: Context = field(repr=False)

    @property
    def test(self) -> cst.BaseExpression:
        return self.node.test


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef = field(repr=False)
    scope: Scope
    class_name: Optional[str]
    params: list[str]
    # Each `return value` with the `if` arms it sits in.
    returns: list[tuple[cst.BaseExpression, tuple]] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.node.name.value

    def param_for(self, call: cst.Call, binding: Optional[bool]) -> dict[str, cst.BaseExpression]:
        """Map this function's parameter names to the expressions a call passes.

        `binding`: False for a plain call, True when the call binds `self`, None for
        `torch.multiprocessing.spawn(fn, args=(a, b))`, which calls `fn(rank, a, b)`."""
        if binding is None:
            spawned = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "args"), None)
            if not isinstance(spawned, (cst.Tuple, cst.List)):
                return {}
            return {name: element.value for name, element in zip(self.params[1:], spawned.elements)}
        params = self.params[1:] if binding and self.params else self.params
        mapping: dict[str, cst.BaseExpression] = {}
        position = 0
        for arg in call.args:
            if arg.star:
                continue
            if arg.keyword is not None:
                mapping[arg.keyword.value] = arg.value
            elif position < len(params):
                mapping[params[position]] = arg.value
                position += 1
        return mapping


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef = field(repr=False)
    bases: list[cst.BaseExpression] = field(repr=False)
    scope: Optional[Scope] = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(frozen=True)
class CollectiveReach:
    """A collective a call makes, itself or through functions it calls: what every other rank of
    the group must also reach."""

    name: str  # `all_reduce`, `barrier`, `wait_for_everyone`, `save_checkpoint`, ...
    function: Optional[str] = None  # the function called at the site that makes it, if not the site
    module: Optional[str] = None  # the project module that function lives in, if another one
    subgroup: bool = False  # made with an explicit `group=`: maybe only the ranks that get there
    # (parameter, position, value) of the function called at the site: passed that literal, the
    # call leaves the collective out (`log_event(..., sync=False)` where `log_event` makes its
    # barrier only `if sync:`). Kept for the function a summary names; `through` drops it.
    skipped_by: frozenset[tuple[str, int, bool]] = frozenset()

    def __str__(self) -> str:
        """For messages: "all_reduce" or "all_reduce in evaluate()"."""
        return self.name if self.function is None else f"{self.name} in {self.function}()"

    def through(self, function: str, module: Optional[str] = None) -> "CollectiveReach":
        """The same collective, as reached by calling `function`."""
        return CollectiveReach(self.name, function, module, self.subgroup)

    def skipped_at(self, call: cst.Call, false_here: AbstractSet[int] = frozenset()) -> bool:
        """The call passes one of the literal flags of `skipped_by` (by keyword, or by position
        before any `*args`), or for a False flag an argument known false where the call is made
        (`false_here`: ids of argument nodes)."""
        if not self.skipped_by:
            return False
        passed: dict[object, bool] = {}
        position = 0
        for arg in call.args:
            if arg.star == "*":
                break
            if arg.star:
                continue
            value = arg.value.value if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False") else None
            if value is None and id(arg.value) in false_here:
                value = "False"
            key: object = arg.keyword.value if arg.keyword is not None else position
            if arg.keyword is None:
                position += 1
            if value is not None:
                passed[key] = value == "True"
        return any(passed.get(name) is value or passed.get(index) is value for name, index, value in self.skipped_by)

