"""Which values a function's callers hand one of its parameters, and so which arms of an `if` on
that parameter the ranks of a distributed run can take.

`def evaluate(self, model, trt_file=None): if trt_file is not None: ... torch.load(trt_file)`:
whether the arm runs in a rank is decided by the callers. When every call of the function in the
project leaves the parameter at its None default, passes None, passes a value the caller only
makes on the single-process path (`if args.trt: assert not distributed; trt_file = ...`), or
runs in no rank itself, the arm never runs in a rank. Likewise a parameter handed on
(`def load(path, map_location=None): torch.load(path, map_location=map_location)`) is None in
every rank when no caller gives it a value there.

The callers are found by the function's name: every call in the project of something by that
name (`evaluate(...)`, `evaluator.evaluate(...)`), whatever object it goes through, counts as a
call of it. That takes in more calls than the real ones, never fewer, so it can only keep an arm
as possibly taken. The answer is "taken" (nothing concluded) when a call passes `*args` /
`**kwargs`, when the name is also used other than in a call (a callback, a table of hooks:
callers this cannot see), when a value comes from the caller's own parameter, when the project
has no call of it at all (an entry point, a library's public API) or too many modules to read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterator, Optional

import libcst as cst

from ddplint.analysis.syntax import double_star_args, has_star_args, is_false, is_none, walk
from ddplint.analysis.torch_api import TYPING_CAST

if TYPE_CHECKING:
    from ddplint.analysis.facts import CallSite, FunctionInfo, ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.project import ProjectIndex

_MAX_CALLER_MODULES = 24  # beyond this many modules naming the function, nothing is concluded
_MAX_DEPTH = 4  # callers followed back at most this many times


def arm_untaken_in_ranks(model: "ModuleModel", site: "CallSite") -> bool:
    """The call sits in an arm of `if p is not None:` / `if p:` / `else:` of `if p is None:`,
    `p` a parameter of the enclosing function that it never rebinds, and no caller in the
    project passes `p` a value that is not None in a rank."""
    facts = model.facts
    function = facts.function_of(site.context.scope)
    if function is None:
        return False
    for branch, in_body in site.context.branches:
        if not isinstance(branch, cst.If):
            continue
        tested = _parameter_tested(branch.test)
        if tested is None or tested[1] != in_body:
            continue  # this arm may run with the parameter None
        name, _, truth = tested
        if name in function.params and not _rebinds(function, name) and _never_given_in_a_rank(model, function, name, truth):
            return True
    return False


def parameter_none_in_ranks(model: "ModuleModel", site: "CallSite", value: cst.BaseExpression) -> bool:
    """The value is a parameter of the function around the call (`map_location` handed on by
    `def load(path, map_location=None)`), never rebound there, and every call of that function in
    the project leaves it at its None default or passes None wherever the call runs in a rank."""
    facts = model.facts
    function = facts.function_of(site.context.scope)
    if function is None or not isinstance(value, cst.Name) or value.value not in function.params:
        return False
    return not _rebinds(function, value.value) and _never_given_in_a_rank(model, function, value.value)


def _parameter_tested(test: cst.BaseExpression) -> Optional[tuple[str, bool, bool]]:
    """(p, arm, by truth) for a test on a plain name whose arm `arm` (True: the body) runs only
    when p is not None: `p is not None` and `p` (body), `p is None` and `not p` (orelse). By
    truth (`p`, `not p`): the arm needs p true, so a False default keeps it from running too."""
    if isinstance(test, cst.Name):
        return test.value, True, True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and isinstance(test.expression, cst.Name):
        return test.expression.value, False, True
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and is_none(test.comparisons[0].comparator)
    ):
        operator = test.comparisons[0].operator
        if isinstance(operator, cst.IsNot):
            return test.left.value, True, False
        if isinstance(operator, cst.Is):
            return test.left.value, False, False
    return None


def _rebinds(function: "FunctionInfo", name: str) -> bool:
    """The function assigns the parameter anywhere in its body (then the test may see another
    value than the caller's)."""
    for node in walk(function.node.body):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.AsName)):
            target = getattr(node, "target", None) or getattr(node, "name", None)
            if target is not None and any(isinstance(n, cst.Name) and n.value == name for n in walk(target)):
                return True
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return True
    return False


def _default_is_none(function: "FunctionInfo", name: str, false_counts: bool = False) -> bool:
    """The parameter defaults to None (or, `false_counts`, to False)."""
    p = function.node.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.name.value == name:
            return param.default is not None and _untaking(param.default, false_counts)
    return False


def _untaking(value: cst.CSTNode, false_counts: bool) -> bool:
    return is_none(value) or (false_counts and is_false(value))


def method_never_called(model: "ModuleModel", function: "FunctionInfo") -> bool:
    """A method of a plain class (no base class: no framework calls it back) that nothing in the
    project calls or names: its code never runs, whoever builds the class."""
    if function.class_name is None or function.name.startswith("__") or model.facts.project is None:
        return False
    info = model.facts.classes.get(function.class_name)
    if info is None or any(not (isinstance(base.value, cst.Name) and base.value.value == "object") for base in info.node.bases):
        return False
    modules = modules_naming(model, function.name)
    return modules is not None and not any(True for module in modules for _ in _calls_by_name(module.facts, function.name))


def passed_values(
    model: "ModuleModel", function: "FunctionInfo", name: str, index: Optional["ProjectIndex"] = None
) -> Optional[list[tuple["ModuleModel", "CallSite", Optional[cst.BaseExpression]]]]:
    """(caller's module, call, value passed for the parameter `name`, None when left to its
    default) for every call of the function in the project, found by its name; None when
    nothing can be concluded (see the module's docstring), or when the project calls it nowhere."""
    # A constructor is called by its class's name (`Net(depth, re_train=True)`), with self bound.
    constructor = function.name == "__init__" and function.class_name is not None
    called_as = function.class_name if function.name == "__init__" and function.class_name is not None else function.name
    modules = modules_naming(model, called_as, index)
    if modules is None:
        return None
    found = []
    for module in modules:
        for site in _calls_by_name(module.facts, called_as):
            if has_star_args(site.node) or double_star_args(site.node):
                return None
            binds_self = constructor or _binds_self(function, site.node)
            found.append((module, site, function.param_for(site.node, binds_self).get(name)))
    return found or None


def _binds_self(function: "FunctionInfo", call: cst.Call) -> bool:
    """`obj.method(x)` hands `obj` to the first parameter; `Class.method(obj, x)`, a static
    method and a plain function call do not."""
    func = call.func
    if function.class_name is None or not isinstance(func, cst.Attribute):
        return False
    if isinstance(func.value, cst.Name) and func.value.value == function.class_name:
        return False
    return not any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.node.decorators
    )


def only_instances_of(
    model: "ModuleModel",
    value: cst.BaseExpression,
    site: "CallSite",
    is_class: Callable[[AbstractSet[str]], bool],
    index: Optional["ProjectIndex"] = None,
    depth: int = 0,
) -> bool:
    """Every value the expression may have at the call `site` is an instance of a class the
    qualified names of which `is_class` accepts: made by calling the class, declared by
    `typing.cast(T, ...)` or by the annotation of the parameter it comes from, or passed for that
    parameter by every caller in the project as such an instance."""
    facts = model.facts
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, cst.Call):
        names = facts.qualified_names(value.func)
        if TYPING_CAST in names and value.args:
            return is_class(facts.qualified_names(value.args[0].value))
        return is_class(names)
    if not isinstance(value, cst.Name):
        return False
    sources = model.flow.sources(value, site.context.scope, site.context.branches)
    if not sources:
        return False
    for source in sources:
        if source.parameter_of is not None:
            if not _parameter_instances_of(model, source.parameter_of, value.value, is_class, index, depth):
                return False
        elif not isinstance(source.node, cst.BaseExpression) or source.node is value:
            return False
        elif not only_instances_of(model, source.node, site, is_class, index, depth + 1):
            return False
    return True


def _parameter_instances_of(
    model: "ModuleModel",
    function: "FunctionInfo",
    name: str,
    is_class: Callable[[AbstractSet[str]], bool],
    index: Optional["ProjectIndex"],
    depth: int,
) -> bool:
    """The parameter is annotated with such a class, or every caller passes such an instance."""
    facts = model.facts
    p = function.node.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.name.value == name and param.annotation is not None:
            if is_class(facts.qualified_names(param.annotation.annotation)):
                return True
    index = facts.project.index if facts.project is not None else index
    values = passed_values(model, function, name, index)
    return values is not None and all(
        value is not None and only_instances_of(module, value, call, is_class, index, depth + 1)
        for module, call, value in values
    )


def _never_given_in_a_rank(model: "ModuleModel", function: "FunctionInfo", name: str, false_counts: bool = False) -> bool:
    """No caller gives the parameter a value in a rank: None (or, `false_counts`, False)."""
    values = passed_values(model, function, name)
    if values is None:
        return False
    for module, site, value in values:
        if not module.where.call_in_a_rank(site):
            continue  # this caller runs in one process (the launcher, the single-process path)
        if value is None:
            if not _default_is_none(function, name, false_counts):
                return False
        elif not _none_in_a_rank(module, site, value, false_counts):
            return False
    return True


def _none_in_a_rank(model: "ModuleModel", site: "CallSite", value: cst.BaseExpression, false_counts: bool = False) -> bool:
    """The value a caller passes is None (or, `false_counts`, False) wherever the call runs in a
    rank: None itself, the single-process arm of a conditional, or a name whose every other
    value is made where no rank runs."""
    facts = model.facts
    if _untaking(value, false_counts) or model.where.value_on_single_process_path(value):
        return True
    if not isinstance(value, cst.Name):
        return False
    sources = model.flow.sources(value, site.context.scope, site.context.branches)
    if not sources:
        return False
    for source in sources:
        node = source.node
        if node is None or source.parameter_of is not None:
            return False  # the trail went cold, or a caller outside this module gives it
        if _untaking(node, false_counts) or model.where.value_on_single_process_path(node):
            continue
        context = facts.context_of_value(node)
        if context is None or model.where.in_a_rank(context):
            return False
    return True


def modules_naming(model: "ModuleModel", name: str, index: Optional["ProjectIndex"] = None) -> Optional[list["ModuleModel"]]:
    """The model of this module and of every other project module whose text names `name` (a
    call, or any other use); None when one of them uses it other than in a call or in its `def`,
    cannot be read, or there are too many. `index`: the project, for a module read through it
    (which has no view of the project of its own)."""
    facts = model.facts
    if facts.project is not None:
        index, here = facts.project.index, facts.project.path
        index.reads_the_project(here)  # the answer changes when another module does
    elif index is not None:
        here = index.path_of(model)
    if index is None:
        return None
    needle = name.encode()
    word = re.compile(rb"\b" + re.escape(needle) + rb"\b")
    naming = []
    for path in sorted(index.files - {here}):
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if needle in data and word.search(data):  # the plain search first: ~20x cheaper, most modules end there
            naming.append(path)
            if len(naming) > _MAX_CALLER_MODULES:
                return None  # before any of them is parsed: most names this common end here
    modules = [model]
    for path in naming:
        other = index.module_model(path)
        if other is None:
            return None
        modules.append(other)
    if any(_named_outside_calls(module.facts, name) for module in modules):
        return None
    return modules


def _named_outside_calls(facts: "ModuleFacts", name: str) -> bool:
    """The module uses the name other than as the called function of a call or the name of a
    `def` / `class` (a callback handed on, a table of functions, a re-export)."""
    allowed: set[int] = set()
    for node in walk(facts.module):
        if isinstance(node, cst.Call):
            func = node.func
            allowed.add(id(func.attr if isinstance(func, cst.Attribute) else func))
            if isinstance(func, cst.Name) and func.value == "super" and node.args:
                allowed.add(id(node.args[0].value))  # `super(Net, self).__init__()`: no hand-off
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):  # its definition (a class: its constructor's)
            allowed.add(id(node.name))
        elif isinstance(node, cst.ImportAlias) and isinstance(node.name, cst.Name) and node.name.value == name:
            if node.asname is not None:
                return True  # `from helpers import evaluate as run_eval`: called by another name
            allowed.add(id(node.name))
    for node in walk(facts.module):
        if isinstance(node, cst.Name) and node.value == name and id(node) not in allowed:
            return True
    return False


def _calls_by_name(facts: "ModuleFacts", name: str) -> Iterator["CallSite"]:
    for site in facts.calls:
        func = site.node.func
        called = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if called == name:
            yield site
