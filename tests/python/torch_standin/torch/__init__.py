"""A stand-in for torch, for loading OpenCompass's configs and code in CI without the real
package: nothing here runs a model. Every attribute is a class that accepts anything, and every
`torch.*` submodule imports as an empty module of the same kind.

Put the directory holding this package first on PYTHONPATH. Tools that look for torch through
package metadata (transformers) still find none, so they do not try to use it.
"""

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+standin"


class _AnyType(type):
    """Attribute access on the class itself yields the class again, so `torch.nn.Module`,
    `torch.Tensor | None` and `torch.dtype[...]` all work in annotations and base lists."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything

    def __getitem__(cls, item):
        return Anything

    def __or__(cls, other):
        return Anything

    def __ror__(cls, other):
        return Anything


class Anything(metaclass=_AnyType):
    """Constructs from any arguments; calls and attributes give more of the same; false."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Anything()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()

    def __bool__(self):
        return False


class _StandinModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything


class _Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every `torch.*` module and makes it a stand-in module."""

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torch."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StandinModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Submodules())

# No devices: runners that count GPUs find none.
cuda = _StandinModule("torch.cuda")
cuda.__path__ = []
cuda.is_available = lambda: False
cuda.device_count = lambda: 0
sys.modules["torch.cuda"] = cuda


def __getattr__(name):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return Anything
