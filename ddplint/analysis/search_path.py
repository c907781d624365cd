"""Folders a module puts on `sys.path` for the scripts beside it: the `_init_paths.py` habit of
research code (`sys.path.insert(0, osp.join(osp.dirname(__file__), "..", "lib"))`, then
`import _init_paths` and `from dataset import make_loader` in tools/train.py). The project index
resolves imports from those folders too, so a factory in lib/dataset/ is followed.

Read with `ast` from the module's text, never run: only paths built from the module's own
location and literal parts are understood (`os.path.join`, `dirname`, `abspath`, `realpath`,
`normpath`, and module-level names holding them); anything else adds nothing.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

# os.path functions that keep a path's meaning (for a path already absolute).
_SAME_PATH = frozenset({"abspath", "realpath", "normpath"})


def added_folders(source: bytes, path: str) -> list[str]:
    """The absolute folders that the module at `path` inserts into or appends to sys.path at
    import time (at its top level, directly or through a helper it defines for that)."""
    if b"sys.path" not in source:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    here = os.path.dirname(os.path.abspath(path))
    names: dict[str, str] = {}  # module-level variable -> the folder it holds
    adders = _path_adding_functions(tree)
    out: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            value = _folder(statement.value, here, names)
            if value is not None:
                names[statement.targets[0].id] = value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            added = _added_by_call(statement.value, adders)
            folder = _folder(added, here, names) if added is not None else None
            if folder is not None:
                out.append(os.path.normpath(folder))
    return out


def _path_adding_functions(tree: ast.Module) -> set[str]:
    """Top-level functions that put their first parameter on sys.path (`def add_path(p):
    if p not in sys.path: sys.path.insert(0, p)`)."""
    out = set()
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef) or not function.args.args:
            continue
        parameter = function.args.args[0].arg
        for node in ast.walk(function):
            added = _added_by_call(node, set()) if isinstance(node, ast.Call) else None
            if isinstance(added, ast.Name) and added.id == parameter:
                out.add(function.name)
    return out


def _added_by_call(call: ast.Call, adders: set[str]) -> Optional[ast.expr]:
    """What `sys.path.insert(i, x)` / `sys.path.append(x)` / `add_path(x)` adds: `x`."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in adders and call.args:
        return call.args[0]
    if not (isinstance(func, ast.Attribute) and _dotted(func.value) == "sys.path"):
        return None
    if func.attr == "insert" and len(call.args) == 2:
        return call.args[1]
    if func.attr == "append" and len(call.args) == 1:
        return call.args[0]
    return None


def _folder(expr: ast.expr, here: str, names: dict[str, str]) -> Optional[str]:
    """The absolute path `expr` stands for, given the module's folder `here`; None if unknown."""
    if isinstance(expr, ast.Name):
        return names.get(expr.id)
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute) or expr.keywords:
        return None
    function, args = expr.func.attr, expr.args
    if function == "dirname" and len(args) == 1:
        if _is_file_of_module(args[0]):
            return here
        inner = _folder(args[0], here, names)
        return os.path.dirname(inner) if inner is not None else None
    if function in _SAME_PATH and len(args) == 1:
        return _folder(args[0], here, names)
    if function == "join" and args:
        base = _folder(args[0], here, names)
        parts = [arg.value for arg in args[1:] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        if base is None or len(parts) != len(args) - 1:
            return None
        return os.path.normpath(os.path.join(base, *parts))
    return None


def _is_file_of_module(expr: ast.expr) -> bool:
    """`__file__`, or `abspath(__file__)` / `realpath(__file__)`."""
    if isinstance(expr, ast.Name):
        return expr.id == "__file__"
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _SAME_PATH
        and len(expr.args) == 1
        and _is_file_of_module(expr.args[0])
    )


def _dotted(expr: ast.expr) -> Optional[str]:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner is not None else None
    return None
