"""ModuleFacts: one pass over a libcst module that records what every rule needs.

The pass is deliberately cheaper than libcst's generic metadata providers (scope, qualified
names, parents): it keeps an import table, the bindings of each scope, every call / loop / branch
with the context it sits in (scope, enclosing loops and branches, statement path), and the
functions and classes of the file. Questions about meaning (is this a rank-0 guard, which loader
does this sampler reach) are answered from these records by the derived models, which
`model.ModuleModel` builds, each at most once per file: this module imports none of them.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cached_property, lru_cache
from typing import AbstractSet, Callable, Iterator, Optional, Sequence, Union

import libcst as cst

from ddplint.analysis.imports import ImportTable
from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.reaching import hidden_in_arms, reaching
from ddplint.analysis.records import (  # re-exported: the rules import the records from here
    Binding,
    Branch,
    BranchSite,
    CallSite,
    ClassInfo,
    Context,
    FunctionInfo,
    Loop,
    LoopSite,
    Scope,
    excludes,
)
from ddplint.analysis.syntax import alternatives, dotted_name, string_value, walk
from ddplint.analysis.torch_api import DATA_PARALLEL, DISTRIBUTED_DATA_PARALLEL, MODULE_METHODS_RETURNING_SELF, SPAWNERS

# Wrappers whose `.module` is the model they were given.
MODEL_WRAPPERS = DATA_PARALLEL | DISTRIBUTED_DATA_PARALLEL

__all__ = [
    "Binding", "Branch", "BranchSite", "CallSite", "ClassInfo", "Context", "FunctionInfo",
    "Loop", "LoopSite", "ModuleFacts", "Scope", "StatementFacts", "build_facts", "excludes",
]


class _Collector(cst.CSTVisitor):
    """The single pass. Kept free of rule knowledge: it records, it does not judge."""

    def __init__(self, facts: "ModuleFacts") -> None:
        self.facts = facts
        self.scope = facts.module_scope
        self.loops: list[LoopSite] = []
        self.branches: list[tuple[cst.If, bool]] = []
        self.path: list[list] = []  # [body, index of current statement]
        self.functions: list[FunctionInfo] = []
        self.classes: list[str] = []
        self._context: Optional[Context] = None
        self._saved: list[tuple] = []
        # id(function scope) -> the names its `global` statements hand to the module scope
        self._globals: dict[int, set[str]] = {}
        self.outermost: Optional[Union[FunctionInfo, ClassInfo]] = None  # the first def / class met
        self.opened: list[Scope] = []  # every scope pushed, in order

    def walk(self, node: cst.CSTNode) -> None:
        """libcst's `node.visit(visitor)` rebuilds every node it passes (a dataclass construction
        and validation per node, even for a read-only visitor): about half the cost of the whole
        pass. This walks the same children in the same order and calls the same visit_/leave_
        methods, without building anything (and without calling libcst's empty default hooks,
        looked up once per node type, `_Hooks`)."""
        hooks = _HOOKS.get(type(node)) or _hooks(type(node))
        if self.path:
            top = self.path[-1]
            body, index = top
            # Statements of a block are visited in order; `elif` nodes are not block members.
            if index + 1 < len(body) and body[index + 1] is node:
                top[1] = index + 1
                self._context = None
        if hooks.visit is None or hooks.visit(self, node) is not False:
            for name in hooks.fields:
                value = getattr(node, name)
                if _is_node(value):
                    self.walk(value)
                elif isinstance(value, (list, tuple)):
                    for item in value:
                        if _is_node(item):
                            self.walk(item)
        if hooks.leave is not None:
            hooks.leave(self, node)

    def walk_module(self, module: cst.Module, reuse: "StatementFacts") -> None:
        """`walk(module)`, with each top-level `def` and `class` walked on its own and joined in
        (`StatementFacts`): one whose children are the nodes of an earlier module is not walked
        again. The records come out as `walk(module)` makes them (tests/test_lsp_incremental.py)."""
        reuse.start_module()
        self.visit_Module(module)
        body = module.body
        for index, statement in enumerate(body):
            records = reuse.records(statement, body, index) if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) else None
            if records is not None and not records.facts.module_scope.bindings:
                self._join(records, body, index)
            else:
                # Not a `def` / `class`, or one binding module names (`global x; x = ...`): those
                # bindings belong to this module's scope, so the statement is walked in it.
                self.walk(statement)

    def _join(self, records: "_StatementRecords", body: Sequence[cst.BaseStatement], index: int) -> None:
        """What walking the statement at `body[index]` would have added to the facts."""
        self.path[-1][1] = index
        facts, mine, scope = self.facts, records.facts, records.scope
        # The one place a statement's records point outside it: its own scope's parent, and
        # where it is defined (this module's statement path, this module's node for it).
        statement = body[index]
        scope.parent = facts.module_scope
        scope.defined_at = Context(facts.module_scope, (), (), ((body, index),))
        scope.node = records.info.node = statement  # type: ignore[assignment]
        facts.calls.extend(mine.calls)
        facts.loops.extend(mine.loops)
        facts.branches.extend(mine.branches)
        facts.functions.extend(mine.functions)
        for info in mine.functions:
            facts.functions_by_name.setdefault(info.name, []).append(info)
        facts.classes.update(mine.classes)
        facts.env_reads.extend(mine.env_reads)
        facts.name_contexts.update(mine.name_contexts)
        facts.assigned_to.update(mine.assigned_to)
        assert isinstance(mine.imports, _ImportLog)
        mine.imports.replay(facts.imports)
        self._context = None

    # -- context --------------------------------------------------------------------------
    def context(self) -> Context:
        if self._context is None:
            depth = self.scope.path_depth
            self._context = Context(
                scope=self.scope,
                loops=tuple(self.loops),
                branches=tuple(self.branches),
                path=tuple((body, index) for body, index in self.path[depth:] if index >= 0),
            )
        return self._context

    def _changed(self) -> None:
        self._context = None

    # -- statement path -------------------------------------------------------------------
    def _enter_block(self, body: Sequence[cst.CSTNode]) -> None:
        self.path.append([body, -1])
        self._changed()

    def _leave_block(self) -> None:
        self.path.pop()
        self._changed()

    def visit_Module(self, node: cst.Module) -> None:
        self._enter_block(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_block(node.body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._leave_block()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_block(node.body)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._leave_block()

    # -- scopes ---------------------------------------------------------------------------
    def _push_scope(self, kind: str, node: cst.CSTNode, name: str) -> Scope:
        self._saved.append((self.scope, self.loops, self.branches))
        defined_at = self.context()
        self.scope = Scope(kind, node, self.scope, name, path_depth=len(self.path), defined_at=defined_at)
        self.opened.append(self.scope)
        self.loops, self.branches = [], []
        self._changed()
        return self.scope

    def _pop_scope(self) -> None:
        self.scope, self.loops, self.branches = self._saved.pop()
        self._changed()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.facts.imports.local_names.add(node.name.value)
        scope = self._push_scope("function", node, node.name.value)
        params = []
        p = node.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            params.append(param.name.value)
            scope.bind(Binding(param.name.value, param.default, "param", param, scope))
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bind(Binding(star.name.value, None, "param", star, scope))
        info = FunctionInfo(node, scope, self.classes[-1] if self.classes else None, params)
        self.outermost = self.outermost or info
        self.facts.functions.append(info)
        self.facts.functions_by_name.setdefault(node.name.value, []).append(info)
        self.functions.append(info)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()
        self._pop_scope()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.facts.imports.local_names.add(node.name.value)
        info = ClassInfo(node, [arg.value for arg in node.bases if arg.keyword is None])
        self.outermost = self.outermost or info
        self.facts.classes[node.name.value] = info
        self.classes.append(node.name.value)
        info.scope = self._push_scope("class", node, node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()
        self._pop_scope()

    # -- loops and branches -----------------------------------------------------------------
    def _enter_loop(self, node: Loop) -> None:
        site = LoopSite(node, self.context())
        self.facts.loops.append(site)
        self.loops.append(site)
        self._changed()

    def _leave_loop(self) -> None:
        self.loops.pop()
        self._changed()

    # Loops and `if`s visit their children by hand: the loop covers its body but not its
    # iterable, and the branch is known per arm. (libcst's per-attribute hooks would do the same
    # at the price of a lookup on every attribute of every node; they are switched off below.)
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def visit_For(self, node: cst.For) -> bool:
        self._bind_target(node.target, node.iter, "loop", node)
        return self._loop(node, (node.target, node.iter))

    def visit_While(self, node: cst.While) -> bool:
        return self._loop(node, (node.test,))

    def _loop(self, node: Union[cst.For, cst.While], header: tuple) -> bool:
        for part in header:  # the iterable or condition is not part of the repeated body
            self.walk(part)
        self._enter_loop(node)
        self.walk(node.body)
        self._leave_loop()
        if node.orelse is not None:
            self.walk(node.orelse)
        return False

    # `[step(x) for x in loader]` is a loop over the loader like any `for` statement.
    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node.for_in, (node.elt,))

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node.for_in, (node.elt,))

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node.for_in, (node.elt,))

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node.for_in, (node.key, node.value))

    def _comprehension(self, comp: cst.CompFor, elements: tuple) -> bool:
        self.walk(comp.iter)
        self._bind_target(comp.target, comp.iter, "loop", comp)
        self._enter_loop(comp)
        self.walk(comp.target)
        for condition in comp.ifs:
            self.walk(condition)
        if comp.inner_for_in is not None:
            self._comprehension(comp.inner_for_in, elements)
        else:
            for element in elements:
                self.walk(element)
        self._leave_loop()
        return False

    def visit_If(self, node: cst.If) -> bool:
        self.facts.branches.append(BranchSite(node, self.context()))
        self.walk(node.test)
        self._in_branch(node, True, node.body)
        if node.orelse is not None:
            self._in_branch(node, False, node.orelse)
        return False

    def _in_branch(self, node: cst.If, in_body: bool, child: cst.CSTNode) -> None:
        self.branches.append((node, in_body))
        self._changed()
        self.walk(child)
        self.branches.pop()
        self._changed()

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.facts.branches.append(BranchSite(node, self.context()))

    # -- bindings -------------------------------------------------------------------------
    def _bind_target(self, target: cst.BaseExpression, value, kind: str, node, index=None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for i, element in enumerate(target.elements):
                inner = element.value
                if isinstance(element, cst.StarredElement):
                    continue
                self._bind_target(inner, value, "unpack" if kind == "assign" else kind, node, i)
            return
        if isinstance(target, cst.Subscript):
            owner = dotted_name(target.value)
            elements = target.slice
            if owner and len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
                item = string_value(elements[0].slice.value)
                if item is not None:
                    self.scope.bind(
                        Binding(owner, value, "item", node, self.scope, item=item, arms=tuple(self.branches), context=self.context())
                    )
            return
        key = dotted_name(target)
        if key is None:
            return
        scope = self.scope
        if key.startswith("self.") and scope.class_scope is not None:
            scope = scope.class_scope
        elif key in self._globals.get(id(scope), ()):
            # `global _RANK; _RANK = dist.get_rank()` in a set-up function: the module's `_RANK`
            scope = self.facts.module_scope
        scope.bind(Binding(key, value, kind, node, self.scope, index, arms=tuple(self.branches), context=self.context()))
        if kind == "assign" and value is not None:
            # `loader = A if distributed else B`: both A and B are stored under `loader`
            for option in alternatives(value):
                self.facts.assigned_to.setdefault(id(option), []).append(key.split(".")[-1])
        if scope.kind == "module" and "." not in key:
            self.facts.imports.local_names.add(key)
            if kind == "assign" and scope is self.scope:
                self.facts.imports.add_alias(key, value)

    def visit_Global(self, node: cst.Global) -> None:
        if self.scope.kind == "function":
            self._globals.setdefault(id(self.scope), set()).update(item.name.value for item in node.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node.value, "assign", node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, "assign", node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, "assign", node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, node.item, "with", node)

    def visit_Return(self, node: cst.Return) -> None:
        if self.functions and node.value is not None:
            self.functions[-1].returns.append((node.value, tuple(self.branches)))

    # -- imports --------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.facts.imports.add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.facts.imports.add_import_from(node)

    # -- calls and environment reads --------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self.facts.calls.append(CallSite(node, self.context()))

    def visit_Name(self, node: cst.Name) -> None:
        self.facts.name_contexts[id(node)] = self.context()

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # os.environ["LOCAL_RANK"]
        owner = dotted_name(node.value)
        if owner and owner.split(".")[-1] == "environ" and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                key = string_value(element.value)
                if key is not None:
                    self.facts.env_reads.append((key, node))


class ModuleFacts:
    """What the one pass recorded about a file, and the generic queries over it (the derived
    models are built from it by `model.ModuleModel`)."""

    def __init__(self, module: cst.Module, source: str = "") -> None:
        self.module = module
        self.source = source
        self.imports = ImportTable()
        self.module_scope = Scope("module", module, None)
        self.calls: list[CallSite] = []
        self.loops: list[LoopSite] = []
        self.branches: list[BranchSite] = []
        self.functions: list[FunctionInfo] = []
        self.functions_by_name: dict[str, list[FunctionInfo]] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.env_reads: list[tuple[str, cst.CSTNode]] = []
        # id(Name node) -> where it sits: the position of a use, for program order
        self.name_contexts: dict[int, Context] = {}
        # id(value expression) -> last names it is assigned to (each alternative of `a if c else b`)
        self.assigned_to: dict[int, list[str]] = {}
        # The project's other modules as this file imports them (analysis/project.py), when
        # several files are checked together; None for a file checked on its own.
        self.project = None
        # What the file's configuration declares about the project's own helpers
        # (`[tool.ddplint]`'s rank-zero-functions, sharded-loader-factories).
        self.options = NO_OPTIONS
        # The code cells of a Jupyter notebook: always run as a program, top to bottom.
        self.notebook = False
        # id(node) -> (node, its qualified names), once the import table is complete
        self._resolved: Optional[dict[int, tuple[cst.CSTNode, frozenset[str]]]] = None

    # -- generic queries used by the analysis modules ----------------------------------------
    def qualified_names(self, node: cst.CSTNode) -> AbstractSet[str]:
        """What `node` names, fully qualified through the imports. Read-only and shared: the
        same few thousand callees are asked about ~14,000 times an edit, a copy each was a cost."""
        return self._qualified(node)

    def _qualified(self, node: cst.CSTNode) -> AbstractSet[str]:
        resolved = self._resolved
        if resolved is None:  # the import table is still being filled
            return self.imports.qualified_names(node)
        # Models and rules ask about the same callees many times over. Keyed by identity, with
        # the node kept so that its id cannot be reused.
        known = resolved.get(id(node))
        if known is None:
            known = resolved[id(node)] = (node, frozenset(self.imports.qualified_names(node)))
        return known[1]

    def calls_named(self, *qualified: str) -> Iterator[CallSite]:
        by_name = self._calls_by_qualified_name
        found = {position for name in set(qualified) for position in by_name.get(name, ())}
        return (self.calls[position] for position in sorted(found))

    @cached_property
    def _calls_by_qualified_name(self) -> dict[str, list[int]]:
        """qualified name -> positions in `calls` of the calls of it: every model asks for some."""
        index: dict[str, list[int]] = {}
        for position, site in enumerate(self.calls):
            for name in self._qualified(site.node.func):
                index.setdefault(name, []).append(position)
        return index

    def context_of(self, expr: cst.BaseExpression) -> Optional[Context]:
        """Where a name or attribute chain (`args.gpu`: where `args` is) is used."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return self.name_contexts.get(id(expr))

    def reaching(self, bindings: Sequence[Binding], expr: cst.BaseExpression) -> list[Binding]:
        """Those of `bindings` (of the name or attribute chain `expr`) that may reach this use
        of it in program order (analysis/reaching.py); all of them where its place is unknown."""
        use = self.context_of(expr)
        return reaching(bindings, use) if use is not None else list(bindings)

    def hidden_in_arms(self, binding: Binding, expr: cst.BaseExpression) -> list[tuple[cst.If, bool]]:
        """The `if` arms that replace `binding` before this use of its key (see reaching.py)."""
        use = self.context_of(expr)
        key = dotted_name(expr)
        if use is None or key is None:
            return []
        return hidden_in_arms(binding, use.scope.lookup(key), use)

    def subclasses_of(self, qualified: AbstractSet[str]) -> set[str]:
        """Names of classes in this file that derive (transitively) from one of `qualified`."""
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, info in self.classes.items():
                if name in found:
                    continue
                for base in info.bases:
                    base_name = dotted_name(base)
                    if (base_name in found) or not qualified.isdisjoint(self.qualified_names(base)):
                        found.add(name)
                        changed = True
                        break
        return found

    def calls_constructing(self, qualified: AbstractSet[str], local_classes: AbstractSet[str]) -> list[CallSite]:
        """The calls `is_instance_of` holds for, in order, read off the indexes of calls by name
        (models ask it of every DataLoader / sampler class over every call of the file)."""
        positions = {position for name in qualified for position in self._calls_by_qualified_name.get(name, ())}
        positions.update(position for name in local_classes for position in self._calls_by_callee.get(name, ()))
        return [self.calls[position] for position in sorted(positions)]

    @cached_property
    def _calls_by_callee(self) -> dict[Optional[str], list[int]]:
        """The callee as written (`dotted_name` of the call's func) -> positions in `calls`."""
        index: dict[Optional[str], list[int]] = {}
        for position, site in enumerate(self.calls):
            index.setdefault(dotted_name(site.node.func), []).append(position)
        return index

    def is_instance_of(self, call: cst.Call, qualified: AbstractSet[str], local_classes: AbstractSet[str]) -> bool:
        """Whether a call constructs one of `qualified` or a local subclass of them."""
        callee = dotted_name(call.func)
        return callee in local_classes or not qualified.isdisjoint(self._qualified(call.func))

    def functions_called_by(self, site: CallSite) -> list[tuple[FunctionInfo, Optional[bool]]]:
        """File-local functions a call may reach, with how it binds their parameters (see
        `FunctionInfo.param_for`): a method call through `self.` and a class instantiation
        reaching `__init__` bind `self`; `mp.spawn(fn, args=...)` calls `fn(rank, *args)`."""
        # Asked of the same calls by many models: answered once per call (the site is kept with
        # its answer, so that its id stays its own). Callers only read the list.
        known = self._called_by.get(id(site))
        if known is None:
            known = self._called_by[id(site)] = (site, self._functions_called_by(site))
        return known[1]

    @cached_property
    def _called_by(self) -> dict[int, tuple[CallSite, list[tuple[FunctionInfo, Optional[bool]]]]]:
        return {}

    def _functions_called_by(self, site: CallSite) -> list[tuple[FunctionInfo, Optional[bool]]]:
        func = site.node.func
        if site.node.args and not SPAWNERS.isdisjoint(self._qualified(func)):
            target = site.node.args[0].value
            if isinstance(target, cst.Name):
                return [(f, None) for f in self.functions_by_name.get(target.value, []) if f.class_name is None]
            return []
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.classes:
                return [(f, True) for f in self.methods_of(name, "__init__")]
            return [(f, False) for f in self.functions_by_name.get(name, []) if f.class_name is None]
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls"):
            cls = site.context.scope.class_scope
            return [(f, True) for f in self.methods_of(cls.name, func.attr.value)] if cls is not None else []
        owner = func.value if isinstance(func, cst.Attribute) else None
        if isinstance(owner, cst.Attribute) and owner.attr.value == "module" and isinstance(owner.value, cst.Name):
            owner = owner.value  # `model.module.inference(...)`: the module a DDP wrapper holds
        if isinstance(func, cst.Attribute) and isinstance(owner, cst.Name):
            # `trainer = Trainer(...)` then `trainer.fit(loader)`: a method of a class of this file
            return [(f, True) for cls in self._instance_classes(owner.value, site.context.scope)
                    for f in self.methods_of(cls, func.attr.value)]
        return []

    def instance_classes(self, name: str, scope: Scope) -> list[str]:
        """Classes of this file that `name` (a variable, or `self.x` set in a method) is built
        from (see `_instance_classes`)."""
        return self._instance_classes(name, scope)

    def _instance_classes(self, name: str, scope: Scope, seen: frozenset = frozenset()) -> list[str]:
        """Classes of this file that `name` is built from by a direct assignment, also through
        `.to(device)` / `.cuda()` and a DDP / DataParallel wrapper around it (`model =
        DDP(Net().to(rank))`: `model.module` is the Net)."""
        found: list[str] = []
        for binding in scope.lookup(name):
            value = binding.value
            if binding.kind != "assign" or not isinstance(value, cst.Call):
                continue
            while isinstance(value.func, cst.Attribute) and value.func.attr.value in MODULE_METHODS_RETURNING_SELF:
                if not isinstance(value.func.value, cst.Call):
                    break
                value = value.func.value
            if isinstance(value.func, cst.Name) and value.func.value in self.classes:
                built = [value.func.value]
            elif self._qualified(value.func) & MODEL_WRAPPERS and value.args and isinstance(value.args[0].value, cst.Name):
                inner = value.args[0].value.value
                built = self._instance_classes(inner, binding.scope or scope, seen | {name}) if inner not in seen else []
            else:
                continue
            found.extend(cls for cls in built if cls not in found)
        return found

    def class_lineage(self, name: str) -> list[ClassInfo]:
        """A class of this file and its bases defined in this file, nearest first (asked again
        for every `self.x` the flow follows: found once per class; callers only read it)."""
        known = self._lineages.get(name)
        if known is None:
            known = self._lineages[name] = self._class_lineage(name)
        return known

    @cached_property
    def _lineages(self) -> dict[str, list[ClassInfo]]:
        return {}

    def _class_lineage(self, name: str) -> list[ClassInfo]:
        lineage: list[ClassInfo] = []
        pending = [name]
        while pending:
            info = self.classes.get(pending.pop(0))
            if info is None or info in lineage:
                continue
            lineage.append(info)
            pending.extend(dotted_name(base) or "" for base in info.bases)
        return lineage

    def methods_of(self, class_name: str, method: str) -> list[FunctionInfo]:
        """`method` as a `class_name` instance resolves it: its own, else the nearest base's."""
        for info in self.class_lineage(class_name):
            found = [f for f in self.functions_by_name.get(method, []) if f.class_name == info.name]
            if found:
                return found
        return []

    def inherited_bindings(self, scope: Scope, key: str) -> list[Binding]:
        """`self.x` assigned in a base class's methods (`self.loader` set by an inherited
        `__init__`)."""
        owner = scope.class_scope
        if owner is None:
            return []
        for info in self.class_lineage(owner.name)[1:]:
            if info.scope is not None and key in info.scope.bindings:
                return info.scope.bindings[key]
        return []

    def call_sites_of(self, function: FunctionInfo) -> list[tuple[CallSite, Optional[bool]]]:
        return self._call_sites_by_function.get(id(function), [])

    def never_called(self, function: FunctionInfo) -> bool:
        """A top-level function of the file that no call reaches and no name refers to outside its
        `def` (not a callback, not `mp.spawn(fn)`, not in a table): nothing in this file runs it."""
        if function.class_name is not None or function.scope.parent is not self.module_scope:
            return False
        return not self.call_sites_of(function) and function.name not in self._names_used and not self._dispatches_by_name

    def context_of_value(self, node: cst.CSTNode) -> Optional[Context]:
        """Where a value is computed: the call it is, or a name it reads."""
        if isinstance(node, cst.Call):
            for site in self.calls:
                if site.node is node:
                    return site.context
        for inner in walk(node):
            if isinstance(inner, cst.Name):
                context = self.name_contexts.get(id(inner))
                if context is not None:
                    return context
        return None

    @cached_property
    def functions_never_run(self) -> frozenset[int]:
        """id() of the top-level functions nothing in this file runs: those `never_called`, and
        those whose name is used only inside such functions (a `setup()` that only an unused
        `train_ddp()` calls), to a fixpoint."""
        top = [f for f in self.functions if f.class_name is None and f.scope.parent is self.module_scope]
        dead = {id(f) for f in top if self.never_called(f)}
        if not dead:
            return frozenset()
        uses: dict[str, list] = {}
        defined = {id(function.node.name) for function in self.functions}
        for node in walk(self.module):
            if isinstance(node, cst.Name) and id(node) not in defined and id(node) in self.name_contexts:
                uses.setdefault(node.value, []).append(self.name_contexts[id(node)].scope)
        changed = True
        while changed:
            changed = False
            dead_scopes = {id(f.scope) for f in top if id(f) in dead}
            for function in top:
                scopes = uses.get(function.name)
                if id(function) not in dead and scopes and all(scope.within(dead_scopes) for scope in scopes):
                    dead.add(id(function))
                    changed = True
        return frozenset(dead)

    @cached_property
    def _dispatches_by_name(self) -> bool:
        """The file can run a function it never names: `globals()[command]()`, or `fire.Fire()`
        with no argument, which makes every top-level function a command."""
        for site in self.calls:
            names = self.qualified_names(site.node.func) | {site.name}
            if names & {"globals", "locals"} or ("fire.Fire" in names and not site.node.args):
                return True
        return False

    @cached_property
    def _names_used(self) -> frozenset[str]:
        """Names the file's expressions use, the functions' own `def` names left out."""
        defined = {id(function.node.name) for function in self.functions}
        return frozenset(
            node.value
            for node in walk(self.module)
            if isinstance(node, cst.Name) and id(node) not in defined and id(node) in self.name_contexts
        )

    @cached_property
    def _call_sites_by_function(self) -> dict[int, list[tuple[CallSite, Optional[bool]]]]:
        index: dict[int, list[tuple[CallSite, Optional[bool]]]] = {}
        for site in self.calls:
            for target, bound in self.functions_called_by(site):
                index.setdefault(id(target), []).append((site, bound))
        return index

    @cached_property
    def calls_by_function(self) -> dict[int, list[CallSite]]:
        """id(FunctionInfo) -> the calls written directly in its body."""
        index: dict[int, list[CallSite]] = {}
        for site in self.calls:
            function = self.function_of(site.context.scope)
            if function is not None:
                index.setdefault(id(function), []).append(site)
        return index

    def functions_reaching(self, predicate) -> set:
        """The file's functions that make a call satisfying `predicate`, directly or through
        calls of other functions of the file: the callers, transitively, of the direct ones."""
        found = {f for f in self.functions if any(predicate(s) for s in self.calls_by_function.get(id(f), []))}
        queue = list(found)
        while queue:
            for site, _ in self.call_sites_of(queue.pop()):
                caller = self.function_of(site.context.scope)
                if caller is not None and caller not in found:
                    found.add(caller)
                    queue.append(caller)
        return found

    def reaching_test(self, predicate: Callable[[CallSite], bool]) -> "_Reaching":
        """`functions_reaching(predicate)` for membership tests only (`function in ...`): each
        function asked about is answered by following its own calls down, so `predicate` is
        judged on the calls of the functions below those asked about, not on every call of
        the file."""
        return _Reaching(self, predicate)

    def calls_in_arm(self, branch: BranchSite, in_body: bool) -> list[CallSite]:
        """Calls in one arm of an `if` statement or of a conditional expression."""
        node = branch.node
        if isinstance(node, cst.IfExp):
            inside = {id(sub) for sub in walk(node.body if in_body else node.orelse)}
            return [site for site in self.calls if id(site.node) in inside]
        return list(self._calls_by_arm.get((id(node), in_body), ()))

    @cached_property
    def _calls_by_arm(self) -> dict[tuple[int, bool], list[CallSite]]:
        """(id(if statement), arm) -> the calls inside that arm, in source order: DDP007 asks
        for the arms of every rank condition, a scan of all calls each."""
        index: dict[tuple[int, bool], list[CallSite]] = {}
        for site in self.calls:
            for key in dict.fromkeys((id(node), in_body) for node, in_body in site.context.branches):
                index.setdefault(key, []).append(site)
        return index

    def calls_in_statements(self, statements: Sequence[cst.CSTNode]) -> list[CallSite]:
        """Call sites inside the given statements of one function, in source order. Read off
        each call's statement path rather than by walking the statements' subtrees, which for a
        guard at module level would be the rest of the file, once per guard."""
        wanted = {id(statement) for statement in statements}
        return [
            site for site in self.calls if any(id(body[index]) in wanted for body, index in site.context.path)
        ]

    def function_of(self, scope: Scope) -> Optional[FunctionInfo]:
        return self._functions_by_scope.get(id(scope))

    @cached_property
    def _functions_by_scope(self) -> dict[int, FunctionInfo]:
        return {id(info.scope): info for info in self.functions}


class _Reaching:
    """See `ModuleFacts.reaching_test`. A function is in `functions_reaching(predicate)` when
    a call satisfying it is written in the function or in one it calls, transitively: the same
    call edges, followed from the caller's side."""

    def __init__(self, facts: ModuleFacts, predicate: Callable[[CallSite], bool]) -> None:
        self._facts = facts
        self._predicate = predicate
        self._direct: dict[int, bool] = {}  # id(function) -> one of its own calls satisfies it
        self._known: dict[int, bool] = {}  # id(function) -> the answer

    def __contains__(self, function: object) -> bool:
        if not isinstance(function, FunctionInfo):
            return False
        known = self._known.get(id(function))
        if known is not None:
            return known
        seen, pending, found = {id(function): function}, [function], False
        while pending and not found:
            current = pending.pop()
            if self._known.get(id(current)) is False:
                continue  # nothing below it satisfies the predicate
            if self._known.get(id(current)) or self._calls_directly(current):
                found = True
                break
            for site in self._facts.calls_by_function.get(id(current), []):
                for callee, _ in self._facts.functions_called_by(site):
                    if id(callee) not in seen:
                        seen[id(callee)] = callee
                        pending.append(callee)
        if found:
            self._known[id(function)] = True
        else:  # everything below it was looked at: none of it reaches a call either
            self._known.update((key, False) for key in seen)
        return found

    def _calls_directly(self, function: FunctionInfo) -> bool:
        direct = self._direct.get(id(function))
        if direct is None:
            calls = self._facts.calls_by_function.get(id(function), [])
            direct = self._direct[id(function)] = any(self._predicate(site) for site in calls)
        return direct


def build_facts(
    module: cst.Module,
    source: str = "",
    project=None,
    reuse: Optional["StatementFacts"] = None,
    options: AnalysisOptions = NO_OPTIONS,
    notebook: bool = False,
) -> ModuleFacts:
    """`project`: a `ProjectView` of the other files checked together (cross-module flow).
    `reuse`: the records of top-level statements met in earlier modules (the language server's
    modules share the nodes of the statements an edit did not touch, lsp/incremental.py).
    `options`: what the file's configuration declares (analysis/options.py). `notebook`: the
    source is a notebook's code cells (notebook.py)."""
    facts = ModuleFacts(module, source)
    facts.project = project
    facts.notebook = notebook
    if project is not None:
        facts.imports.star_exports = project.star_exports
    facts.options = options
    if reuse is None:
        _Collector(facts).walk(module)
    else:
        _Collector(facts).walk_module(module, reuse)
    facts._resolved = {}
    return facts


class StatementFacts:
    """The records of top-level `def`s and `class`es, walked one at a time, kept for the next
    module that holds the same statement.

    Everything a `def` or `class` adds to the facts is about its own nodes, in its own scope,
    except for two things: its scope's parent (the module's scope) and where the statement is
    defined (the module's statement path). The walk reads only the statement's child fields, never
    its layout (whitespace, comments, the blank lines before it), so a statement whose child
    fields are the very nodes walked before gets the same records: those are reused, with the
    two outside references pointed at the new module (the previous module's facts are then no
    longer usable: the language server analyses one version at a time)."""

    def __init__(self, keep_modules: int = 8) -> None:
        # id(statement.body) -> the records, and the last module they were joined into. Kept while
        # one of the last `keep_modules` modules held the statement: every version of an edited
        # function would otherwise stay (with its tree), and a few documents open side by side
        # each keep theirs.
        self._kept: dict[int, tuple[_StatementRecords, int]] = {}
        self._keep_modules = keep_modules
        self._modules = 0  # modules built so far
        self._joined: set[int] = set()  # entries already joined into the module being built
        self.reused = 0  # for the benchmark and the tests
        self.walked = 0

    def start_module(self) -> None:
        self._modules += 1
        self._joined = set()
        oldest = self._modules - self._keep_modules
        for key in [key for key, (_, last) in self._kept.items() if last < oldest]:
            self._kept.pop(key)[0].release()

    def detach(self) -> None:
        """After an analysis: the kept records stop pointing at the module they were last joined
        into, so that it (its scope, its bindings) can be freed; the next `build_facts` points
        them at its own module again. The last facts built are no longer usable after this."""
        for records, _ in self._kept.values():
            records.detach()

    def records(
        self, statement: Union[cst.FunctionDef, cst.ClassDef], body: Sequence[cst.BaseStatement], index: int
    ) -> "_StatementRecords":
        key = id(statement.body)
        kept = self._kept.get(key)
        if kept is not None and key not in self._joined and _same_children(kept[0].node, statement):
            self._kept[key] = (kept[0], self._modules)
            self._joined.add(key)
            self.reused += 1
            return kept[0]
        records = _walk_alone(statement, body, index)
        self.walked += 1
        if key not in self._joined:  # a statement met twice in one module keeps its own records
            self._kept[key] = (records, self._modules)
            self._joined.add(key)
        return records


@dataclasses.dataclass
class _StatementRecords:
    node: cst.CSTNode  # the statement walked: kept, so that the ids of its children stay its own
    scope: Scope  # the scope the statement opens
    info: Union[FunctionInfo, ClassInfo]
    facts: "ModuleFacts"  # what the walk recorded, in order (its imports: an _ImportLog)
    scopes: list[Scope]  # every scope opened in it

    def detach(self) -> None:
        """Let go of the module last joined into (its scope, its node for the statement)."""
        self.scope.parent = self.scope.defined_at = None
        self.scope.node = self.info.node = self.node  # type: ignore[assignment]

    def release(self) -> None:
        """No module will join these records again: break the scope <-> binding cycles, so that
        reference counting frees them (the language server's worker freezes its heap)."""
        for scope in self.scopes:
            scope.bindings = {}


def _walk_alone(
    statement: Union[cst.FunctionDef, cst.ClassDef], body: Sequence[cst.BaseStatement], index: int
) -> _StatementRecords:
    """The statement walked as the module walk reaches it: at the top level, statement `index`
    of `body`, into facts of its own."""
    alone = ModuleFacts(cst.Module(body=[]))
    alone.imports = _ImportLog()
    collector = _Collector(alone)
    collector.path.append([body, index - 1])
    collector.walk(statement)
    info = collector.outermost
    assert info is not None and info.node is statement and info.scope is not None
    assert info.scope.parent is alone.module_scope
    return _StatementRecords(statement, info.scope, info, alone, collector.opened)


def _same_children(kept: cst.CSTNode, statement: cst.CSTNode) -> bool:
    return type(kept) is type(statement) and all(
        getattr(kept, name) is getattr(statement, name) for name in _child_fields(type(statement))
    )


class _ImportLog(ImportTable):
    """The import table of a statement walked alone, and what the walk did to it, in order: done
    again to the table of each module the statement is joined into."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, tuple]] = []
        self.local_names = _LoggedSet(self.log)

    def add_import(self, node: cst.Import) -> None:
        self.log.append(("add_import", (node,)))
        super().add_import(node)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        self.log.append(("add_import_from", (node,)))
        super().add_import_from(node)

    def add_alias(self, name: str, value: cst.BaseExpression) -> None:
        self.log.append(("add_alias", (name, value)))
        super().add_alias(name, value)

    def replay(self, table: ImportTable) -> None:
        for operation, arguments in self.log:
            if operation == "local_name":
                table.local_names.add(arguments[0])
            else:
                getattr(table, operation)(*arguments)


class _LoggedSet(set):
    def __init__(self, log: list) -> None:
        super().__init__()
        self._log = log

    def add(self, name: str) -> None:
        self._log.append(("local_name", (name,)))
        super().add(name)


@dataclasses.dataclass(frozen=True)
class _Hooks:
    """What `_Collector.walk` does at a node type: its own visit_/leave_ method (None where only
    libcst's empty default exists) and the child fields, in libcst's order."""

    visit: Optional[Callable]
    leave: Optional[Callable]
    fields: tuple[str, ...]


_HOOKS: dict[type, _Hooks] = {}


def _hooks(node_type: type) -> _Hooks:
    def own(prefix: str) -> Optional[Callable]:
        name = f"{prefix}_{node_type.__name__}"
        method = getattr(_Collector, name, None)
        return None if method is None or method is getattr(cst.CSTVisitor, name, None) else method

    hooks = _HOOKS[node_type] = _Hooks(own("visit"), own("leave"), _child_fields(node_type))
    return hooks


# type -> whether it is a libcst node: a dict look-up instead of an ABC isinstance check per field.
_NODE_TYPE: dict[type, bool] = {}


def _is_node(value: object) -> bool:
    known = _NODE_TYPE.get(type(value))
    if known is None:
        known = _NODE_TYPE[type(value)] = isinstance(value, cst.CSTNode)
    return known


# Fields that only ever hold whitespace, comments or punctuation: nothing the collector records.
_LAYOUT_FIELD = re.compile(
    r"whitespace|leading_lines|lines_after_decorators|header|footer|^lpar$|^rpar$|^lbracket$|^rbracket$"
    r"|^lbrace$|^rbrace$|^comma$|^semicolon$|^equal$|^colon$|^dot$|_colon$|^trailing_comma$"
)


@lru_cache(maxsize=None)
def _child_fields(node_type: type) -> tuple[str, ...]:
    """A node type's child fields in the order libcst itself visits them (source order, e.g. a
    function's decorators before its body), read off the field names its own
    `_visit_and_replace_children` mentions, in order; dataclass order if that ever fails."""
    names = [f.name for f in dataclasses.fields(node_type)] if dataclasses.is_dataclass(node_type) else []
    method = getattr(node_type, "_visit_and_replace_children", None)
    constants = getattr(getattr(method, "__code__", None), "co_consts", ())
    ordered = list(dict.fromkeys(c for c in constants if isinstance(c, str) and c in names))
    ordered += [name for name in names if name not in ordered]
    return tuple(name for name in ordered if not _LAYOUT_FIELD.search(name))
