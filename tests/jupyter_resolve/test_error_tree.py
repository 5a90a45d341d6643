"""One error tree (issue 45.6): every exception class jupyter_resolve defines derives from
``contracts.errors.ResolveError`` (with a builtin second base where a caller catches
``ValueError``, ``OSError`` ...), and ``contracts/errors.py``'s docstring draws each of them.

Read from the source with ``ast`` (nothing of the package is imported): each class's bases are
followed through the module's own classes and its imports to a builtin or a foreign class, which
is imported to ask whether it is an exception. :data:`OUTSIDE` names the only classes let off.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from dataclasses import dataclass, field
from pathlib import Path

import jupyter_resolve
from jupyter_resolve.contracts import errors

PACKAGE = Path(jupyter_resolve.__file__).parent
ROOT = ("jupyter_resolve.contracts.errors", "ResolveError")

OUTSIDE = {
    # sent as source to the user's kernel, where nothing of the package can be imported; caught
    # inside it, they never leave it
    ("jupyter_resolve.notebook.inspector", "TimeLimit"),
    ("jupyter_resolve.notebook.inspector", "TooLarge"),
    # a KeyboardInterrupt, as IPython shows an interrupt: as an Exception, every
    # ``except Exception`` on its way would swallow the person's interrupt
    ("jupyter_resolve.magics.watch", "RunInterrupted"),
}

Ref = tuple[str, str, str]  # ("package" | "builtin" | "foreign", module, name)


@dataclass
class Module:
    name: str
    classes: dict[str, list[ast.expr]] = field(default_factory=dict)
    imported: dict[str, tuple[str, str | None]] = field(
        default_factory=dict
    )  # local -> (mod, attr)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read(root: Path) -> dict[str, Module]:
    """Every module under ``root`` (a package folder): its classes' bases and its imports."""
    modules: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(root, path)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        module = modules[name] = Module(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                module.classes[node.name] = list(node.bases)
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    module.imported[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    module.imported[local] = ((alias.asname and alias.name) or local, None)
    return modules


class Tree:
    def __init__(self, modules: dict[str, Module]) -> None:
        self.modules = modules

    def resolve(self, module: str, expr: ast.expr, seen: int = 0) -> Ref | None:
        """What a base expression of a class in ``module`` names (None: not a class we know)."""
        if isinstance(expr, ast.Name):
            return self._name(module, expr.id, seen)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            target = self.modules[module].imported.get(expr.value.id)
            if target is not None:  # a module imported as a name, or from its package
                source = target[0] if target[1] is None else f"{target[0]}.{target[1]}"
                return self._in(source, expr.attr, seen)
        return None  # Generic[T], a call ...: not an exception base here

    def _name(self, module: str, name: str, seen: int) -> Ref | None:
        here = self.modules.get(module)
        if here is not None and name in here.classes:
            return ("package", module, name)
        if here is not None and name in here.imported:
            source, attr = here.imported[name]
            return self._in(source, attr or name, seen) if attr else None
        if isinstance(getattr(builtins, name, None), type):
            return ("builtin", "builtins", name)
        return None

    def _in(self, module: str, name: str, seen: int) -> Ref | None:
        if module in self.modules and seen < 20:  # a re-export is followed to the class
            return self._name(module, name, seen + 1)
        return ("foreign", module, name)

    def bases(self, ref: Ref) -> list[Ref]:
        kind, module, name = ref
        if kind != "package":
            return []
        found = [self.resolve(module, b) for b in self.modules[module].classes[name]]
        return [b for b in found if b is not None]

    def is_exception(self, ref: Ref) -> bool:
        kind, module, name = ref
        if kind == "package":
            return any(self.is_exception(b) for b in self.bases(ref))
        try:
            value = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return False
        return isinstance(value, type) and issubclass(value, BaseException)

    def in_tree(self, ref: Ref, root: tuple[str, str] = ROOT) -> bool:
        if ref[1:] == root:
            return True
        return any(self.in_tree(b, root) for b in self.bases(ref))

    def exceptions(self) -> list[Ref]:
        return [
            ("package", module.name, name)
            for module in self.modules.values()
            for name in module.classes
            if self.is_exception(("package", module.name, name))
        ]

    def outside(self) -> list[str]:
        return sorted(
            f"{module}.{name}"
            for _, module, name in self.exceptions()
            if (module, name) not in OUTSIDE and not self.in_tree(("package", module, name))
        )


def test_every_exception_class_is_in_the_one_tree() -> None:
    tree = Tree(read(PACKAGE))
    assert len(tree.exceptions()) > 30  # the walk finds them: ResolveError's tree and beyond
    assert tree.outside() == [], (
        "derive these from jupyter_resolve.contracts.errors.ResolveError (or one of its "
        "classes), with the builtin they are now as a second base where a caller catches it"
    )


def test_the_docstring_draws_every_class_of_the_tree() -> None:
    tree = Tree(read(PACKAGE))
    drawn = errors.__doc__ or ""
    missing = sorted(
        f"{module}.{name}"
        for _, module, name in tree.exceptions()
        if tree.in_tree(("package", module, name)) and f" {name} " not in f" {drawn} "
    )
    assert missing == [], "contracts/errors.py's docstring tree does not name these"


def test_the_walk_finds_a_class_outside_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "jupyter_resolve"
    (root / "contracts").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "contracts" / "__init__.py").write_text("")
    (root / "contracts" / "errors.py").write_text(
        "class ResolveError(Exception): ...\nclass BadRequest(ResolveError): ...\n"
    )
    (root / "edge.py").write_text(
        "import json\n"
        "from typing import Generic, TypeVar\n"
        "from .contracts.errors import BadRequest\n"
        "from .contracts import errors as e\n"
        "T = TypeVar('T')\n"
        "class Fine(BadRequest, ValueError): ...\n"
        "class AlsoFine(e.ResolveError): ...\n"
        "class Stray(ValueError): ...\n"
        "class Foreign(json.JSONDecodeError): ...\n"
        "class Child(Stray): ...\n"
        "class Plain(Generic[T]): ...\n"
    )
    tree = Tree(read(root))
    found = {name for _, module, name in tree.exceptions() if module == "jupyter_resolve.edge"}
    assert found == {"Fine", "AlsoFine", "Stray", "Foreign", "Child"}
    assert tree.outside() == [
        "jupyter_resolve.edge.Child",
        "jupyter_resolve.edge.Foreign",
        "jupyter_resolve.edge.Stray",
    ]
