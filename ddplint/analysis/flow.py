"""Where a value comes from: a small, bounded data flow over one file.

`sources(expr)` follows a name back through its assignments, tuple unpackings, `with ... as`,
loop targets (to the elements of a literal container), parameters (to the arguments at each call site of the function)
and calls of the file's own functions (to what they return), and yields the expressions it ends
at. `feeds(expr, target)` asks whether the value of `target` (a `DataLoader(...)` call, say) may
reach `expr`, also through wrappers such as `enumerate(loader)` or `accelerator.prepare(loader)`.

It answers "unknown" rather than guessing when the trail goes cold (a parameter nobody in this
file passes, a name from another module): rules treat unknown as "stay silent".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from ddplint.analysis.facts import excludes
from ddplint.analysis.syntax import alternatives, argument, dotted_name

if TYPE_CHECKING:
    from ddplint.analysis.facts import CallSite, FunctionInfo, ModuleFacts, Scope

_MAX_DEPTH = 8


@dataclass(frozen=True, eq=False)
class Source:
    """An expression a value may come from. `node is None` means the trail went cold.

    `via` lists the call sites crossed from a parameter back to its argument, innermost first:
    how a loop inside `train_one_epoch(loader)` finds the epoch loop around the call.
    """

    node: Optional[cst.CSTNode]
    scope: "Scope"
    via: tuple["CallSite", ...] = ()
    # When the trail went cold at a parameter that no call in this file passes: its function.
    parameter_of: Optional["FunctionInfo"] = None

    @property
    def unknown(self) -> bool:
        return self.node is None


class Flow:
    def __init__(self, facts: "ModuleFacts") -> None:
        self.facts = facts
        self._call_sites = {id(site.node): site for site in facts.calls}
        self._feeds_memo: dict[tuple, Optional[bool]] = {}
        self._sources_memo: dict[tuple, list[Source]] = {}

    def call_site(self, node: cst.Call) -> Optional["CallSite"]:
        return self._call_sites.get(id(node))

    # -- sources ------------------------------------------------------------------------------
    def sources(self, expr: cst.BaseExpression, scope: "Scope", arms: tuple = ()) -> list[Source]:
        """`arms`: the `if` arms the expression sits in, so that an assignment in the other arm
        of the same `if` (`if train: loader = A  else: loader = B`) is not taken for its value."""
        key = (id(expr), id(scope), _arms_key(arms))
        if key not in self._sources_memo:
            out: list[Source] = []
            self._sources(expr, scope, (), 0, set(), out, arms)
            self._sources_memo[key] = out
        return self._sources_memo[key]

    def _sources(self, expr, scope, via, depth, seen, out, arms=()) -> None:
        marker = (id(expr), id(scope))
        if marker in seen:
            return
        seen.add(marker)
        if depth > _MAX_DEPTH:
            out.append(Source(None, scope, via))
            return
        options = alternatives(expr)
        if len(options) > 1:
            for option in options:
                self._sources(option, scope, via, depth + 1, seen, out, arms)
            return
        if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
            out.append(Source(expr, scope, via))
            return
        if isinstance(expr, (cst.Name, cst.Attribute)):
            self._name_sources(expr, scope, via, depth, seen, out, arms)
            return
        if isinstance(expr, cst.Call):
            returns = self._local_returns(expr)
            if returns:
                for value, function_scope, return_arms in returns:
                    self._sources(value, function_scope, via, depth + 1, seen, out, return_arms)
                return
        out.append(Source(expr, scope, via))

    def _local_returns(self, call: cst.Call) -> list[tuple[cst.BaseExpression, "Scope", tuple]]:
        site = self.call_site(call)
        if site is None:
            return []
        return [
            (value, f.scope, arms)
            for f, _ in self.facts.functions_called_by(site)
            for value, arms in f.returns
        ]

    def _name_sources(self, expr, scope, via, depth, seen, out, arms=()) -> None:
        key = dotted_name(expr)
        found = (scope.lookup(key) or self.facts.inherited_bindings(scope, key)) if key else []
        bindings = [b for b in found if b.kind != "item"]
        visible = [b for b in bindings if not excludes(arms, b.arms)]
        bindings = visible or bindings
        if not bindings:
            if key and key.split(".")[0] in self.facts.imports.bindings:
                out.append(Source(expr, scope, via))  # a module attribute: a known leaf
            elif isinstance(expr, cst.Attribute):
                # `loader.sampler`, `self.loaders.train`: the value lives on its base object.
                out.append(Source(expr, scope, via))
            else:
                out.append(Source(None, scope, via))
            return
        for binding in bindings:
            if binding.kind == "param":
                self._param_sources(binding, scope, via, depth, seen, out)
            elif binding.kind == "unpack":
                self._unpack_sources(binding, scope, via, depth, seen, out)
            elif binding.kind == "loop":
                self._element_sources(binding, scope, via, depth, seen, out)
            elif binding.value is not None:
                self._sources(binding.value, binding.scope, via, depth + 1, seen, out, binding.arms)
            else:
                out.append(Source(None, scope, via))

    def _param_sources(self, binding, scope, via, depth, seen, out) -> None:
        owner = binding.scope
        function = self.facts.function_of(owner)
        sites = list(self.facts.call_sites_of(function)) if function is not None else []
        if not sites:
            # Called from elsewhere (another module, a framework, a callback): the default value
            # says nothing about what callers pass.
            out.append(Source(None, scope, via, parameter_of=function))
            return
        for site, bound in sites:
            argument = function.param_for(site.node, bound).get(binding.key)
            if argument is not None:
                self._sources(argument, site.context.scope, (site, *via), depth + 1, seen, out, site.context.branches)
            elif binding.value is not None:  # this call leaves the default in place
                self._sources(binding.value, owner, via, depth + 1, seen, out)
            else:
                out.append(Source(None, scope, via))

    def _element_sources(self, binding, scope, via, depth, seen, out) -> None:
        """`for s in [train_sampler, val_sampler]`: s is one of the elements. An element of
        anything else (a batch of a loader) is not followed: it is not the container."""
        containers: list[Source] = []
        self._sources(binding.value, binding.scope, via, depth + 1, seen, containers, binding.arms)
        for container in containers:
            if isinstance(container.node, (cst.List, cst.Tuple, cst.Set)):
                for element in container.node.elements:
                    self._sources(element.value, container.scope, container.via, depth + 1, seen, out)
            else:
                out.append(Source(None, container.scope, container.via))

    def _unpack_sources(self, binding, scope, via, depth, seen, out) -> None:
        value = binding.value
        candidates = [(value, binding.scope, binding.arms)]
        if isinstance(value, cst.Call):
            candidates = self._local_returns(value) or candidates
        for candidate, candidate_scope, arms in candidates:
            if isinstance(candidate, (cst.Tuple, cst.List)) and binding.index is not None:
                elements = candidate.elements
                if binding.index < len(elements):
                    self._sources(elements[binding.index].value, candidate_scope, via, depth + 1, seen, out, arms)
                    continue
            # `model, loader = accelerator.prepare(model, loader)`: the call is the source.
            out.append(Source(candidate, candidate_scope, via))

    def _attribute_feeds(self, node: cst.Attribute, scope, target, depth) -> Optional[bool]:
        """`loaders.train` where `loaders = Loaders(train=A, val=B)` is A, not B."""
        for base in self.sources(node.value, scope):
            if isinstance(base.node, cst.Call):
                field_value = argument(base.node, node.attr.value)
                if field_value is not None:
                    if self._feeds(field_value, base.scope, target, depth + 1):
                        return True
                    continue
            if self._source_feeds(base, target, depth + 1):
                return True
        return False

    # -- feeds --------------------------------------------------------------------------------
    def feeds(self, expr: cst.BaseExpression, scope: "Scope", target: cst.CSTNode, arms: tuple = ()) -> Optional[bool]:
        """True if `target`'s value may reach `expr`; None if the trail went cold; else False."""
        return self._feeds(expr, scope, target, 0, arms)

    def _feeds(self, expr, scope, target, depth, arms=()) -> Optional[bool]:
        memo_key = (id(expr), id(scope), id(target), _arms_key(arms))
        if memo_key in self._feeds_memo:
            return self._feeds_memo[memo_key]
        self._feeds_memo[memo_key] = False  # cycle guard
        result: Optional[bool] = False
        if depth <= _MAX_DEPTH:
            for source in self.sources(expr, scope, arms):
                answer = self._source_feeds(source, target, depth)
                if answer:
                    result = True
                    break
                if answer is None:
                    result = None
        self._feeds_memo[memo_key] = result
        return result

    def source_feeds(self, source: Source, target: cst.CSTNode) -> Optional[bool]:
        """Whether `target`'s value may reach a source (it is the target, or wraps it)."""
        return self._source_feeds(source, target, 0)

    def _source_feeds(self, source: Source, target, depth) -> Optional[bool]:
        if source.unknown or depth > _MAX_DEPTH:
            return None
        node = source.node
        if node is target:
            return True
        if isinstance(node, cst.Attribute):
            return self._attribute_feeds(node, source.scope, target, depth)
        # Inside a known wrapper (`enumerate(loader)`, `prepare(loader)`) only a positive answer
        # counts: an untraceable argument of a known call does not make the call the target.
        return any(self._feeds(inner, source.scope, target, depth + 1) for inner in contained_values(node))


def _arms_key(arms: tuple) -> tuple:
    return tuple((id(node), arm) for node, arm in arms)


def contained_values(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """Sub-values a wrapper passes on: call arguments, container elements, an attribute's base."""
    if isinstance(node, cst.Call):
        for arg in node.args:
            yield arg.value
    elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        for element in node.elements:
            yield element.value
    elif isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                yield element.value
    elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        yield node.elt
    elif isinstance(node, cst.DictComp):
        yield node.value
    elif isinstance(node, cst.Attribute):
        yield node.value
    elif isinstance(node, cst.Subscript):
        yield node.value
