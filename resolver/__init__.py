"""ReasonScape: procedural reasoning evaluations, from generated problems to ranked models.

Importing the package is cheap on purpose: entry scripts and the bootstrap helpers
import submodules only when they need them.
"""
__version__ = "0.1.0"


def lazy_exports(package: str, homes: dict, modules, namespace: dict):
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose public names load
    on first use: ``homes`` maps a name to the submodule defining it, ``modules`` names the
    submodules themselves. Keeps ``import resolver.<package>`` cheap (docs/architecture.md)."""
    from importlib import import_module

    def __getattr__(name: str):
        if name in modules:
            return import_module(f"{package}.{name}")
        if name in homes:
            value = getattr(import_module(f"{package}.{homes[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
