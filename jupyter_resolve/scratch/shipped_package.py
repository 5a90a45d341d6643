"""Runs inside a scratch kernel that cannot import kernel_tools (an image without our package):
the bootstrap sends this module's source and the package's files, and ``ship`` makes the package
importable from memory. Nothing is written to the kernel's disk. Standard library only, and no
import of jupyter_resolve: this text is executed in the kernel, in a namespace of its own.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

# Where the shipped files seem to live (tracebacks, ``__file__``); no such folder exists.
ROOT = "/<kernel_tools shipped by jupyter-resolve>"


class ShippedPackage(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """A flat package (``name`` and its modules, no subpackages) served from ``files``."""

    def __init__(self, name: str, files: dict[str, str]) -> None:
        self.name = name
        self.files = files
        self.folder = os.path.join(ROOT, name)

    def _filename(self, fullname: str) -> str | None:
        if fullname == self.name:
            return "__init__.py"
        parent, _, leaf = fullname.rpartition(".")
        if parent == self.name and f"{leaf}.py" in self.files:
            return f"{leaf}.py"
        return None

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        filename = self._filename(fullname)
        if filename is None:
            return None
        spec = importlib.util.spec_from_loader(
            fullname,
            self,
            origin=os.path.join(self.folder, filename),
            is_package=fullname == self.name,
        )
        if spec is not None:
            spec.has_location = True  # sets __file__, which schemas.py reads its JSON beside
        return spec

    def get_source(self, fullname: str) -> str | None:
        filename = self._filename(fullname)
        return None if filename is None else self.files[filename]

    def exec_module(self, module: ModuleType) -> None:
        source = self.get_source(module.__name__)
        if source is None:
            raise ImportError(f"{module.__name__} was not shipped", name=module.__name__)
        exec(compile(source, str(module.__file__), "exec"), module.__dict__)

    def get_data(self, path: str) -> bytes:
        """A shipped file by the path beside the modules (``builtin-tools.json``)."""
        folder, filename = os.path.split(path)
        if folder != self.folder or filename not in self.files:
            raise OSError(f"{path} was not shipped")
        return self.files[filename].encode("utf-8")


def ship(name: str, files: dict[str, str]) -> None:
    """Make package ``name`` importable from ``files`` (file name → text), ahead of any other
    finder, so a half-installed copy in the kernel's environment is not mixed in."""
    for fullname in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[fullname]
    sys.meta_path.insert(0, ShippedPackage(name, files))
