"""Which checkpoint files hold CPU tensors (DDP008).

`torch.load` restores each tensor onto the device it was saved from, so a file written from CPU
tensors loads onto the CPU whoever reads it: no rank lands on GPU 0. A file's device is known
when the project writes it under a literal file name (`torch.save(state, ".../model_final.pth")`)
and every value saved there lives on the CPU:

- a CPU copy (`x.cpu()`, `x.to("cpu")`, `x.numpy()`, `x.tolist()`) and what keeps its device
  (`x.cpu().detach()`, `x.cpu().clone()`);
- the state of a module moved to the CPU before (`net.cpu()` ... `net.state_dict()`,
  `net.module.state_dict()`);
- a tensor a factory makes without a `device` (`torch.zeros(n, 2)`), an element of a CPU value;
- a dict, list or tuple of such values, also one filled item by item (`state = {}` ...
  `state["epoch"] = epoch`), and a comprehension whose every element is a CPU copy
  (`{k: v.cpu() for k, v in net.state_dict().items()}`);
- a plain Python value, which holds no tensor at all: a string (`f"{name}_state_dict.pt"`), a
  number, a parameter annotated `int`, `float`, `str` or `bool` that the function never rebinds.

`None` says nothing either way (`memory_bank = None` before it is built), nor does what the same
file's own load returned (a cache read back and written again).

A file whose name a function of the module makes (`root / scheduler_file_name(ctx)`) is known by
what every `torch.save` in the project that writes under a name from that function saves: when
each saves the state of a learning-rate scheduler (`sched.state_dict()`, the scheduler known from
a call of its class, `typing.cast` or an annotation, here or in every caller that hands it in:
analysis/caller_values.py), the file holds Python numbers and no tensor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Optional

import libcst as cst

from ddplint.analysis.caller_values import modules_naming, only_instances_of
from ddplint.analysis.reaching import order
from ddplint.analysis.syntax import argument, dotted_name, is_none, string_value, walk
from ddplint.analysis.torch_api import (
    CPU_COPY_METHODS,
    CPU_DEFAULT_TENSOR_FACTORIES,
    CPU_MOVES,
    LR_SCHEDULER_FACTORIES,
    LR_SCHEDULER_MODULE,
    SAME_DEVICE_METHODS,
    TORCH_FROM_NUMPY,
    TORCH_SAVE,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import CallSite, ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import Scope

_MAX_DEPTH = 6


def file_names(path: Optional[cst.BaseExpression]) -> set[str]:
    """The literal file names (`name.ext`) written in a path expression; in an f-string, with
    `{}` for each value (`f"{out}/memory_{kind}.pth"` -> `memory_{}.pth`). A name that is only
    values and an extension (`f"{name}.pth"`) names no file in particular and is left out."""
    if path is None:
        return set()
    names = set()
    for node in walk(path):
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            text = string_value(node)
        elif isinstance(node, cst.FormattedString):
            text = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts)
        else:
            continue
        name = text.rsplit("/", 1)[-1] if text else ""
        if "." in name and name.split(".", 1)[0].replace("{}", ""):
            names.add(name)
    return names


def path_names(model: "ModuleModel", site: "CallSite", path: Optional[cst.BaseExpression]) -> set[str]:
    """The literal file names a call's path argument is built from: written in it, or in the
    values its names get (`save_pth = osp.join(respth, "model_final.pth")` ... `torch.load(save_pth)`)."""
    names = file_names(path)
    if names or not isinstance(path, (cst.Name, cst.Attribute)):
        return names
    for source in model.flow.sources(path, site.context.scope, site.context.branches):
        if isinstance(source.node, cst.BaseExpression) and source.node is not path:
            names |= file_names(source.node)
    return names


def loaded_names(model: "ModuleModel", load: "CallSite") -> set[str]:
    return path_names(model, load, argument(load.node, "f", 0))


def saves_of(model: "ModuleModel", names: set[str]) -> list["CallSite"]:
    """The `torch.save` calls of a file that write under one of these file names."""
    facts = model.facts
    return [
        save for save in facts.calls_named(TORCH_SAVE)
        if not names.isdisjoint(path_names(model, save, argument(save.node, "f", 1)))
    ]


def saves_cpu_tensors(model: "ModuleModel", save: "CallSite", reading: Optional[cst.Call] = None) -> bool:
    """Every value the `torch.save` call may write lives on the CPU (and at least one is
    known). `reading`: a load of the same file, whose result counts as neither."""
    saved = argument(save.node, "obj", 0)
    if saved is None:
        return False
    verdict = _on_cpu(model, saved, save, reading, 0)
    return verdict is True


def _on_cpu(
    model: "ModuleModel", node: cst.BaseExpression, save: "CallSite", reading: Optional[cst.Call], depth: int
) -> Optional[bool]:
    """True: on the CPU; False: maybe not; None: says nothing (None, the file's own load)."""
    facts = model.facts
    if depth > _MAX_DEPTH:
        return False
    if is_none(node) or node is reading:
        return None
    if _plain_value(node) or _plain_parameter(save.context.scope, node):
        return True  # no tensor: loads on no device
    if isinstance(node, (cst.Dict, cst.List, cst.Tuple)):
        return _all_on_cpu(model, _elements(node), save, reading, depth)
    if isinstance(node, (cst.DictComp, cst.ListComp, cst.GeneratorExp)):
        return _comprehension_on_cpu(node)
    if isinstance(node, cst.Subscript):  # an element of a CPU tensor or of a dict of them
        return _on_cpu(model, node.value, save, reading, depth + 1)
    if isinstance(node, (cst.Name, cst.Attribute)):
        sources = model.flow.sources(node, save.context.scope, save.context.branches)
        if not sources or any(s.node is None for s in sources):
            return False
        values = [s.node for s in sources if s.node is not node and isinstance(s.node, cst.BaseExpression)]
        if len(values) != len(sources):
            return False
        return _all_on_cpu(model, values + _filled_items(save.context.scope, node), save, reading, depth)
    if isinstance(node, cst.Call) and _factory_on_cpu(facts, node):
        return True
    if _is_cpu_copy(node):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method, owner = node.func.attr.value, node.func.value
        if method in SAME_DEVICE_METHODS:
            return _on_cpu(model, owner, save, reading, depth + 1)
        if method == "state_dict" and _moved_to_cpu_before(facts, owner, save):
            return True
    return False


def _comprehension_on_cpu(node: "cst.DictComp | cst.ListComp | cst.GeneratorExp") -> bool:
    """`{k: v.cpu() for k, v in model.state_dict().items()}`: every element is a CPU copy made
    in the comprehension. The names it binds are not followed (the save's scope does not see
    them), so an element that is not itself a copy (`v.detach()`, `v`) may be on a GPU."""
    element = node.value if isinstance(node, cst.DictComp) else node.elt
    return _is_cpu_copy(element)


def _is_cpu_copy(node: cst.BaseExpression) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.numpy()`, `x.tolist()`, or such a copy kept on its device
    (`x.cpu().clone()`)."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return False
    method, owner = node.func.attr.value, node.func.value
    if method in CPU_COPY_METHODS or (method == "to" and node.args and string_value(node.args[0].value) == "cpu"):
        return True
    return method in SAME_DEVICE_METHODS and _is_cpu_copy(owner)


def maps_to_cpu(model: "ModuleModel", location: Optional[cst.BaseExpression], site: "CallSite") -> bool:
    """A `map_location` that puts every tensor on the CPU: `"cpu"`, `torch.device("cpu")`,
    `lambda storage, loc: storage` (the storage as deserialised, on the CPU), or a name all of
    whose values are such."""
    facts = model.facts
    if location is None:
        return False
    if string_value(location) == "cpu":
        return True
    if isinstance(location, cst.Call) and "torch.device" in facts.qualified_names(location.func):
        first = location.args[0].value if len(location.args) == 1 else None
        return first is not None and string_value(first) == "cpu"
    if isinstance(location, cst.Lambda):
        params = location.params.params
        return bool(params) and isinstance(location.body, cst.Name) and location.body.value == params[0].name.value
    if isinstance(location, cst.Name):
        sources = model.flow.sources(location, site.context.scope, site.context.branches)
        values = [s.node for s in sources if isinstance(s.node, cst.BaseExpression) and s.node is not location]
        return bool(values) and len(values) == len(sources) and all(
            not isinstance(v, cst.Name) and maps_to_cpu(model, v, site) for v in values
        )
    return False


def loads_numpy_arrays(model: "ModuleModel", load: "CallSite") -> bool:
    """The loaded value, or an element of it, is handed to `torch.from_numpy` in the same
    function (`bounds = torch.load(p)` ... `torch.from_numpy(bounds[k])`): the file holds NumPy
    arrays, which load on no device."""
    facts = model.facts
    for call in facts.calls_named(TORCH_FROM_NUMPY):
        if call.context.scope is not load.context.scope:
            continue
        value = argument(call.node, "ndarray", 0)
        while isinstance(value, cst.Subscript):
            value = value.value
        if value is load.node:
            return True
        if isinstance(value, cst.Name) and any(
            source.node is load.node for source in model.flow.sources(value, call.context.scope, call.context.branches)
        ):
            return True
    return False


def _factory_on_cpu(facts: "ModuleFacts", call: cst.Call) -> bool:
    """`torch.zeros(n, 2)`, `torch.from_numpy(array)`: a tensor made without a `device` is made on
    the CPU."""
    if facts.qualified_names(call.func).isdisjoint(CPU_DEFAULT_TENSOR_FACTORIES):
        return False
    return all(arg.keyword is None or arg.keyword.value != "device" for arg in call.args)


def _all_on_cpu(
    model: "ModuleModel", values: list, save: "CallSite", reading: Optional[cst.Call], depth: int
) -> Optional[bool]:
    verdicts = [_on_cpu(model, value, save, reading, depth + 1) for value in values]
    if any(v is False for v in verdicts):
        return False
    return True if any(v is True for v in verdicts) else None


def _plain_value(node: cst.BaseExpression) -> bool:
    """A string (also an f-string) or a number written in the code."""
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float))


def _plain_parameter(scope: "Scope", node: cst.BaseExpression) -> bool:
    """A parameter annotated with a plain Python type (`epoch: int = None`) and never rebound:
    whatever the callers pass, the author declared it holds no tensor."""
    if not isinstance(node, cst.Name):
        return False
    bindings = scope.lookup(node.value)
    return bool(bindings) and all(
        b.kind == "param" and isinstance(b.node, cst.Param) and _plain_annotation(b.node.annotation) for b in bindings
    )


def _plain_annotation(annotation: Optional[cst.Annotation]) -> bool:
    """`int`, `str`, `float`, `bool`, or `Optional[...]` of one of them."""
    if annotation is None:
        return False
    node = annotation.annotation
    if isinstance(node, cst.Subscript) and dotted_name(node.value) in ("Optional", "typing.Optional") and len(node.slice) == 1:
        index = node.slice[0].slice
        node = index.value if isinstance(index, cst.Index) else node
    return isinstance(node, cst.Name) and node.value in _PLAIN_TYPES


_PLAIN_TYPES = frozenset({"int", "str", "float", "bool"})


def _filled_items(scope: "Scope", node: cst.BaseExpression) -> list:
    """The values a dict gets item by item (`state["epoch"] = epoch`) under this name."""
    key = dotted_name(node)
    return [b.value for b in scope.lookup(key) if b.kind == "item" and b.value is not None] if key else []


def _elements(node: cst.BaseExpression) -> list:
    if isinstance(node, cst.Dict):
        return [e.value for e in node.elements if isinstance(e, cst.DictElement)] + [
            e.value for e in node.elements if isinstance(e, cst.StarredDictElement)
        ]
    return [e.value for e in node.elements] if isinstance(node, (cst.List, cst.Tuple)) else []


def _moved_to_cpu_before(facts: "ModuleFacts", owner: cst.BaseExpression, save: "CallSite") -> bool:
    """`net.cpu()` (or `net.to("cpu")`) as a statement of the same function, before the save,
    for the module whose state is saved (`net.state_dict()`, `net.module.state_dict()`)."""
    root = _root_name(owner)
    if root is None:
        return False
    for call in facts.calls:
        if call.context.scope is not save.context.scope or not isinstance(call.node.func, cst.Attribute):
            continue
        func = call.node.func
        moves = func.attr.value in CPU_MOVES or (
            func.attr.value == "to" and call.node.args and string_value(call.node.args[0].value) == "cpu"
        )
        if moves and _root_name(func.value) == root and _is_statement(call) and order(call.context.path, save.context.path) == "before":
            return True
    return False


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """`net` for `net`, `net.module`: the object whose state is saved (`.module` of a wrapper)."""
    while isinstance(node, cst.Attribute) and node.attr.value == "module":
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _is_statement(call: "CallSite") -> bool:
    """The call is a whole expression statement (`net.cpu()`), its result unused: it moves the
    object in place."""
    if not call.context.path:
        return False
    body, index = call.context.path[-1]
    statement = body[index]
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and statement.body[0].value is call.node
    )


def saved_without_tensors(model: "ModuleModel", load: "CallSite") -> bool:
    """The load's file name is made by a top-level function of this module, and every
    `torch.save` of the project that writes under a name that function makes saves a
    learning-rate scheduler's state: no tensor in the file."""
    facts = model.facts
    makers = _name_makers(facts, argument(load.node, "f", 0))
    if not makers:
        return False
    saves = []
    for maker in makers:
        modules = modules_naming(model, maker)
        if modules is None:
            return False
        saves += [
            (module, save) for module in modules for save in module.facts.calls_named(TORCH_SAVE)
            if maker in _called_names(argument(save.node, "f", 1))
        ]
    return bool(saves) and all(_saves_scheduler_state(module, save, facts) for module, save in saves)


def loaded_into_lr_scheduler(model: "ModuleModel", load: "CallSite") -> bool:
    """The load's result goes straight into a learning-rate scheduler
    (`sched.load_state_dict(torch.load(path))`, `sched` only ever a torch LR scheduler): a
    scheduler's state holds no tensor, so there is nothing to map."""
    facts = model.facts
    for site in facts.calls:
        func = site.node.func
        if site.name != "load_state_dict" or not isinstance(func, cst.Attribute):
            continue
        state = argument(site.node, "state_dict", 0)
        if state is load.node:
            index = facts.project.index if facts.project is not None else None
            return only_instances_of(model, func.value, site, _is_lr_scheduler_class, index)
    return False


def _name_makers(facts: "ModuleFacts", path: Optional[cst.BaseExpression]) -> set[str]:
    """Top-level functions of this module called in the path expression."""
    top_level = {f.name for f in facts.functions if f.class_name is None and f.scope.parent is facts.module_scope}
    return _called_names(path) & top_level


def _called_names(path: Optional[cst.BaseExpression]) -> set[str]:
    if path is None:
        return set()
    return {node.func.value for node in walk(path) if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)}


def _saves_scheduler_state(module: "ModuleModel", save: "CallSite", origin: "ModuleFacts") -> bool:
    """`torch.save(sched.state_dict(), ...)` with `sched` only ever a torch LR scheduler."""
    saved = argument(save.node, "obj", 0)
    if not (isinstance(saved, cst.Call) and isinstance(saved.func, cst.Attribute) and saved.func.attr.value == "state_dict"):
        return False
    index = origin.project.index if origin.project is not None else None
    return only_instances_of(module, saved.func.value, save, _is_lr_scheduler_class, index)


def _is_lr_scheduler_class(names: AbstractSet[str]) -> bool:
    return bool(names) and all(name.startswith(LR_SCHEDULER_MODULE + ".") or name in LR_SCHEDULER_FACTORIES for name in names)
