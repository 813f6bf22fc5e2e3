"""User-defined ops: Python files that declare ops with the same ``@op`` as the built-ins.

A plugin is a ``.py`` file that imports ``op``, ``Port``, ``Category`` (from
``hexscope.engine.ops.registry``) and declares numpy kernels, passing ``user=True`` so that
no hexagon_nn op id is needed::

    @op("Scale2_f", Category.USER, inputs=(Port("x", DType.FLOAT32),),
        outputs=(Port("y", DType.FLOAT32),), user=True)
    def scale2_f(ctx, x):
        \"\"\"Doubles every element.\"\"\"
        return (x.array * 2,)

Loading is all or nothing: a file that fails (syntax error, exception, duplicate op name)
registers no op and raises :class:`~hexscope.engine.errors.PluginError` naming the file
and line. Every op a plugin declares is marked ``user`` and records where it was declared.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import importlib.util
import inspect
import os
import stat
import sys
import traceback
from pathlib import Path

from hexscope.engine.dtypes import DType
from hexscope.engine.errors import PluginError
from hexscope.engine.ops.registry import REGISTRY, Category, OpRegistry, OpSpec, Port


def default_plugin_dir() -> Path:
    """Where the app looks for plugins: ``$XDG_CONFIG_HOME/hexscope/plugins``.

    ``XDG_CONFIG_HOME`` defaults to ``~/.config`` when unset or empty.
    """
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hexscope" / "plugins"


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    return f"hexscope_plugin_{path.stem}_{digest}"


def _failure_line(exc: BaseException, path: Path) -> int | None:
    """The last line of ``path`` in the traceback (the declaration that failed)."""
    if isinstance(exc, SyntaxError) and exc.filename == str(path):
        return exc.lineno
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename) == path:
            line = frame.lineno
    return line


def _mark_user(spec: OpSpec, path: Path) -> OpSpec:
    kernel = spec.kernel
    code = getattr(kernel, "__code__", None)
    line = code.co_firstlineno if code is not None else 0
    return dataclasses.replace(spec, user=True, source=spec.source or f"{path}:{line}")


def load_plugin(path: str | os.PathLike[str], registry: OpRegistry = REGISTRY
                ) -> list[OpSpec]:
    """Run a plugin file and return the ops it declared (now in ``registry``, marked user).

    Raises
    ------
    PluginError
        The file is missing, has a syntax error, raises while running, or declares an op
        whose name is already taken. Nothing it declared stays registered.
    """
    path = _resolved(Path(path))
    before = set(registry.names())
    name = _module_name(path)
    try:
        # bytes, as Python's own import reads them: a UTF-8 BOM or a coding line is honoured
        code = compile(_read_regular(path), str(path), "exec")
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None:
            raise ImportError(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(code, module.__dict__)  # noqa: S102 - running the user's plugin is the point
        added = [n for n in registry.names() if n not in before]
        for op_name in added:
            _check_declaration(registry.get(op_name))
    except BaseException as exc:  # noqa: BLE001 - any failure must roll back and be named
        _roll_back(registry, before, name)
        if isinstance(exc, KeyboardInterrupt):
            raise
        line = _failure_line(exc, path)
        where = f"{path}:{line}" if line is not None else str(path)
        raise PluginError(f"plugin {where}: {type(exc).__name__}: {_message(exc)}") from None
    specs = [registry.register(_mark_user(registry.get(n), path), replace=True) for n in added]
    return specs


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):     # a symlink loop: RuntimeError before Python 3.13
        raise PluginError(f"plugin {path}: a symbolic link loop (the link points back to "
                          "itself)") from None


def _read_regular(path: Path) -> bytes:
    """The file's bytes; a FIFO (which would block for ever), a folder or a device is
    refused."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return path.read_bytes()


def _message(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when the plugin's exception cannot even say what it is."""
    try:
        return str(exc)
    except BaseException as inner:  # noqa: BLE001 - a broken __str__ is the plugin's bug
        return f"(its message cannot be shown: {type(inner).__name__})"


class DeclarationError(ValueError):
    """An op a plugin declared that no graph could use (named with the op)."""


def _check_declaration(spec: OpSpec) -> None:
    """What ``@op`` itself lets through: a name a graph file cannot hold, ports that are not
    Ports, a category that is not one, a kernel that cannot take its inputs."""
    if not spec.name or not spec.name.isprintable() or spec.name != spec.name.strip() \
            or any(c.isspace() for c in spec.name):
        raise DeclarationError(f"op name {spec.name!r} must be one word of printable "
                               "characters")
    if not isinstance(spec.category, Category):
        raise DeclarationError(f"op {spec.name}: category {spec.category!r} is not a "
                               "Category")
    for kind, ports in (("input", spec.inputs), ("output", spec.outputs)):
        for port in (*ports.head, *(ports.repeat.ports if ports.repeat else ()), *ports.tail):
            if not isinstance(port, Port):
                raise DeclarationError(f"op {spec.name}: {kind} {port!r} is not a Port")
            if port.dtype is not None and not isinstance(port.dtype, DType):
                raise DeclarationError(f"op {spec.name}: {kind} port {port.name} has type "
                                       f"{port.dtype!r}, not a DType")
    if spec.kernel is not None:
        _check_kernel(spec)


def _check_kernel(spec: OpSpec) -> None:
    if not callable(spec.kernel):
        raise DeclarationError(f"op {spec.name}: the kernel is not callable")
    try:
        signature = inspect.signature(spec.kernel)
    except (TypeError, ValueError):
        return          # a builtin or C function: nothing to check
    least, _ = spec.inputs.arity
    try:
        signature.bind(None, *([None] * least))       # ctx, then the required inputs
    except TypeError as exc:
        raise DeclarationError(f"op {spec.name}: the kernel cannot take ctx and its {least} "
                               f"required input(s): {exc}") from None


def loaded_plugins(registry: OpRegistry = REGISTRY) -> dict[str, list[str]]:
    """The plugin files whose ops are registered, each with its op names (for --verbose and
    Help ▸ About)."""
    found: dict[str, list[str]] = {}
    for spec in sorted(registry.specs(), key=lambda s: s.name):
        if spec.user and spec.source:
            found.setdefault(spec.source.rsplit(":", 1)[0], []).append(spec.name)
    return found


def _roll_back(registry: OpRegistry, before: set[str], module_name: str) -> None:
    for op_name in [n for n in registry.names() if n not in before]:
        registry.unregister(op_name)
    sys.modules.pop(module_name, None)


def unload_plugin(specs: list[OpSpec], registry: OpRegistry = REGISTRY) -> None:
    """Remove the ops a plugin registered (e.g. before loading an edited version)."""
    for spec in specs:
        if spec.name in registry:
            registry.unregister(spec.name)


def load_plugins_from(folder: str | os.PathLike[str] | None = None,
                      registry: OpRegistry = REGISTRY,
                      errors: list[PluginError] | None = None) -> list[OpSpec]:
    """Load every ``*.py`` in ``folder`` (default :func:`default_plugin_dir`), sorted by name.

    Files whose name starts with ``_`` are skipped, and a missing folder loads nothing; so
    is a file whose ops are registered already (the command line loads the bundled plugins
    at every start), as :func:`load_standard_plugins` does. A failing file raises its
    PluginError, unless ``errors`` is given: then the error is appended there and the other
    files still load.
    """
    base = Path(folder) if folder is not None else default_plugin_dir()
    loaded: list[OpSpec] = []
    for path in plugin_files(base, errors):
        if _already_loaded(path, registry):
            continue
        try:
            loaded += load_plugin(path, registry)
        except PluginError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return loaded


def plugin_files(folder: Path, errors: list[PluginError] | None = None) -> list[Path]:
    """The ``*.py`` files of ``folder``, sorted, without those starting with ``_``; a missing
    folder has none. A folder that cannot be read (permissions, a file in its place) raises
    PluginError, or is reported in ``errors`` and skipped."""
    try:
        if not folder.is_dir():
            if folder.exists():
                raise NotADirectoryError(errno.ENOTDIR, "not a folder")
            return []
        return sorted(p for p in folder.iterdir()
                      if p.suffix == ".py" and not p.name.startswith("_"))
    except OSError as exc:
        error = PluginError(f"plugins folder {folder} cannot be read: "
                            f"{exc.strerror or exc}; its plugins are skipped")
        if errors is None:
            raise error from None
        errors.append(error)
        return []


def bundled_plugin_dir() -> Path:
    """The plugins that ship with Hexscope (``resources/plugins``: example user ops)."""
    from importlib.resources import files

    return Path(str(files("hexscope.resources") / "plugins"))


def load_standard_plugins(extra: list[str | os.PathLike[str]] | None = None,
                          errors: list[PluginError] | None = None) -> list[OpSpec]:
    """What the app and the command line load at start: the bundled plugins, the user's
    plugin folder, then ``extra`` files. A file whose ops are already registered is skipped,
    so calling this twice is harmless. Failures go to ``errors`` (or raise when it is None)
    and never stop the other files."""
    files = [p for folder in (bundled_plugin_dir(), default_plugin_dir())
             for p in plugin_files(folder, errors)]
    files += [Path(p) for p in extra or []]
    loaded: list[OpSpec] = []
    for path in files:
        if _already_loaded(path):
            continue
        try:
            loaded += load_plugin(path)
        except PluginError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return loaded


def _already_loaded(path: Path, registry: OpRegistry = REGISTRY) -> bool:
    try:
        prefix = f"{Path(path).resolve()}:"
    except (OSError, RuntimeError):     # a symlink loop: load_plugin names it
        return False
    return any(spec.user and spec.source.startswith(prefix) for spec in registry.specs())
