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

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from ddplint.analysis.records import excludes
from ddplint.analysis.syntax import alternatives, argument, dotted_name, int_value, string_value

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.records import Binding, CallSite, FunctionInfo, Scope

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
    # When the trail went cold at a parameter that no call in this file passes: its function,
    # and the parameter's name.
    parameter_of: Optional["FunctionInfo"] = None
    parameter: Optional[str] = None
    # An element picked out of a container by a computed key (`{0: "cuda:0", ...}[rank]`): the
    # key expression and the scope it is evaluated in. The element is one of several.
    selected_by: Optional[tuple[cst.BaseExpression, "Scope"]] = None

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
        if isinstance(expr, cst.Subscript) and self._item_sources(expr, scope, via, depth, seen, out, arms):
            return
        out.append(Source(expr, scope, via))

    def _item_sources(self, expr: cst.Subscript, scope, via, depth, seen, out, arms) -> bool:
        """`loaders["train"]`, `loaders[0]`: the element of a literal container (or a
        `d["train"] = ...` assignment) the subscript selects; every element when the key is not
        a literal. False (the subscript stays a leaf) unless every container is known."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return False
        key = _literal_key(expr.slice[0].slice.value)
        containers: list[Source] = []
        self._sources(expr.value, scope, via, depth + 1, seen, containers, arms)
        owner = dotted_name(expr.value)
        items = [b for b in scope.lookup(owner) if b.kind == "item"] if owner else []
        found: list[tuple[cst.BaseExpression, "Scope", tuple]] = [
            (b.value, b.scope, b.arms) for b in items if key is _ANY or b.item == key
        ]
        for container in containers:
            elements = _elements(container.node, key)
            if elements is None:
                if not items:
                    return False
                continue  # `d = {}` (or built elsewhere) then filled by `d["k"] = v`
            found.extend((element, container.scope, ()) for element in elements)
        if not found:
            return False
        picked: list[Source] = []
        for value, value_scope, value_arms in found:
            self._sources(value, value_scope, via, depth + 1, seen, picked, value_arms or arms)
        if key is _ANY:
            index = (expr.slice[0].slice.value, scope)
            picked = [dataclasses.replace(source, selected_by=source.selected_by or index) for source in picked]
        out.extend(picked)
        return True

    def _local_returns(self, call: cst.Call) -> list[tuple[cst.BaseExpression, "Scope", tuple]]:
        site = self.call_site(call)
        if site is None:
            return []
        return [
            (value, f.scope, arms)
            for f, _ in self.facts.functions_called_by(site)
            for value, arms in f.returns
        ]

    def bindings_for(self, expr: cst.BaseExpression, scope: "Scope", arms: tuple = ()) -> list["Binding"]:
        """The assignments a name or attribute chain may hold here: those of exactly its dotted
        name (`args.seed` is never the local `seed`), outside the other arm of an `if` around the
        use, that reach the use in program order."""
        key = dotted_name(expr)
        found = (scope.lookup(key) or self.facts.inherited_bindings(scope, key)) if key else []
        bindings = [b for b in found if b.kind != "item"]
        visible = [b for b in bindings if not excludes(arms, b.arms)]
        bindings = visible or bindings
        if bindings:
            # In program order: `model(x)` before `model = DDP(model)` is the plain model.
            bindings = self.facts.reaching(bindings, expr)
        return bindings

    def _name_sources(self, expr, scope, via, depth, seen, out, arms=()) -> None:
        key = dotted_name(expr)
        bindings = self.bindings_for(expr, scope, arms)
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
        if function is None or not sites:
            # Called from elsewhere (another module, a framework, a callback): the default value
            # says nothing about what callers pass.
            out.append(Source(None, scope, via, parameter_of=function, parameter=binding.key))
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
        # `a, b = (x, y) if cond else (z, w)`: each alternative is unpacked
        candidates = [(option, s, arms) for candidate, s, arms in candidates for option in alternatives(candidate)]
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
            if base.node is target and node.attr.value in _NEVER_THE_HOLDER:
                continue  # `loader.dataset.ignore_index` is the loader's data, not the loader
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
        if node is None:
            return None
        if isinstance(node, cst.Attribute):
            return self._attribute_feeds(node, source.scope, target, depth)
        # Inside a known wrapper (`enumerate(loader)`, `prepare(loader)`) only a positive answer
        # counts: an untraceable argument of a known call does not make the call the target.
        return any(self._feeds(inner, source.scope, target, depth + 1) for inner in contained_values(node))


_ANY = object()  # a subscript whose key is not a literal: any element
# Attributes that DataLoaders and samplers keep for what they draw from: never the object itself
# (a loop over `zip(losses, ...)` where the losses were built from `loader.dataset.ignore_index`
# does not iterate the loader).
_NEVER_THE_HOLDER = frozenset({"dataset"})


def _literal_key(node: cst.BaseExpression):
    text = string_value(node)
    if text is not None:
        return text
    number = int_value(node)
    return number if number is not None else _ANY


def _elements(node: Optional[cst.CSTNode], key) -> Optional[list[cst.BaseExpression]]:
    """The elements of a literal container that `container[key]` may be; None when `node` is
    not a literal container."""
    if isinstance(node, cst.Dict):
        pairs = [(string_value(e.key), e.value) for e in node.elements if isinstance(e, cst.DictElement)]
        if len(pairs) != len(node.elements):
            return None  # `{**base, ...}`: unknown keys
        return [value for name, value in pairs if key is _ANY or name == key]
    if isinstance(node, cst.Call) and dotted_name(node.func) == "dict":
        if not all(arg.keyword is not None for arg in node.args):
            return None  # `dict(other)`, `dict(**base)`: unknown keys
        return [arg.value for arg in node.args if arg.keyword is not None and (key is _ANY or arg.keyword.value == key)]
    if isinstance(node, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return None
        values = [e.value for e in node.elements]
        if key is _ANY:
            return values
        if isinstance(key, int) and -len(values) <= key < len(values):
            return [values[key]]
        return []
    return None


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
        for entry in node.elements:
            if isinstance(entry, cst.DictElement):
                yield entry.value
    elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        yield node.elt
        if isinstance(node, cst.GeneratorExp):
            yield node.for_in.iter  # `(x for x in loader)`: a lazy pass over what it iterates
    elif isinstance(node, cst.DictComp):
        yield node.value
    elif isinstance(node, cst.Attribute):
        yield node.value
    elif isinstance(node, cst.Subscript):
        yield node.value
