"""Loading a recipe from a file, a module or an installed package's entry point.

``load_recipe(ref)`` accepts, tried in this order:

1. a file path (``examples/demo.py``, or ``examples/demo.py:make_recipe`` for another function);
2. ``package.module:function``;
3. the name of an entry point in the group ``pi_recipes.recipes`` (``demo = my_pkg.demo:recipe``);
4. ``package.module`` exposing ``recipe``.

Every failure is a :class:`RecipeLoadError` (a ``UsageError``) naming the file and line when
there is one, and saying what was expected.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from interactions import UsageError
from recipes._api import RecipeFunction, build_recipe
from recipes._recipe import Recipe

__all__ = ["ENTRY_POINT_GROUP", "RecipeLoadError", "load_recipe"]

ENTRY_POINT_GROUP = "pi_recipes.recipes"
_DEFAULT_FUNCTION = "recipe"
_OWN_DIR = Path(__file__).resolve().parent


class RecipeLoadError(UsageError):
    """A recipe could not be loaded. ``ref`` is what was asked; ``path``/``line`` where it
    went wrong, when known."""

    def __init__(
        self, message: str, *, ref: str, path: str | None = None, line: int | None = None
    ) -> None:
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(f"{where}{message}")
        self.ref = ref
        self.path = path
        self.line = line


def load_recipe(ref: str) -> Recipe:
    """Load the recipe ``ref`` names (see the module docstring) and run its function.

    Raises :class:`RecipeLoadError` when nothing matches, the code does not import, the function
    is missing or not callable, or the function fails (a bad registration included).
    """
    target, _, func_name = ref.rpartition(":") if _has_function_suffix(ref) else (ref, "", "")
    func_name = func_name or _DEFAULT_FUNCTION
    if target.endswith(".py") or "/" in target or "\\" in target or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise RecipeLoadError("no such recipe file", ref=ref, path=target)
        module = _import_file(path, ref)
        return _run(_function(module, func_name, ref, str(path)), ref, path.stem, str(path))
    if ":" in ref:
        if not _is_dotted_name(target) or not func_name.isidentifier():
            raise RecipeLoadError(
                "expected package.module:function or path/to/file.py[:function]", ref=ref
            )
        module = _import_module(target, ref)
        return _run(_function(module, func_name, ref, module.__file__), ref, target, None)
    entry_point = _entry_point(ref)
    if entry_point is not None:
        try:
            loaded = entry_point.load()
        except (Exception, SystemExit) as exc:  # a sys.exit() in it is its failure too
            raise _from_exception(exc, ref, f"entry point {ref!r} ({entry_point.value})") from exc
        return _run(loaded, ref, ref, None)
    if not _is_dotted_name(ref):
        raise RecipeLoadError(
            "expected a recipe file (path.py[:function]), a module:function reference, "
            f"or the name of an entry point in the group {ENTRY_POINT_GROUP!r}",
            ref=ref,
        )
    module = _import_module(ref, ref)
    return _run(_function(module, func_name, ref, module.__file__), ref, ref, None)


def _has_function_suffix(ref: str) -> bool:
    head, sep, tail = ref.rpartition(":")
    return bool(sep) and tail.isidentifier() and len(head) > 1  # not a drive letter (C:)


def _is_dotted_name(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def _import_file(path: Path, ref: str) -> ModuleType:
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    name = f"_pi_recipe_{resolved.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise RecipeLoadError("not a loadable Python file", ref=ref, path=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses look their module up while it runs
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise RecipeLoadError(
            f"syntax error: {exc.msg}", ref=ref, path=str(path), line=exc.lineno
        ) from exc
    except (Exception, SystemExit) as exc:  # a sys.exit() in it is its failure too
        del sys.modules[name]
        raise _from_exception(exc, ref, "importing the recipe failed", str(path)) from exc
    return module


def _import_module(name: str, ref: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise RecipeLoadError(
                f"no module named {exc.name!r}; expected a recipe file, module:function or an "
                f"entry point name in the group {ENTRY_POINT_GROUP!r}",
                ref=ref,
            ) from exc
        raise _from_exception(exc, ref, f"importing {name!r} failed") from exc
    except SyntaxError as exc:
        raise RecipeLoadError(
            f"syntax error: {exc.msg}", ref=ref, path=exc.filename, line=exc.lineno
        ) from exc
    except (Exception, SystemExit) as exc:  # a sys.exit() in it is its failure too
        raise _from_exception(exc, ref, f"importing {name!r} failed") from exc


def _function(module: ModuleType, name: str, ref: str, path: str | None) -> RecipeFunction:
    fn = getattr(module, name, None)
    if fn is None:
        raise RecipeLoadError(
            f"no function {name!r}: define `def {name}(api: RecipeAPI) -> None` that registers "
            "the recipe's tools and agents",
            ref=ref,
            path=path,
        )
    if not callable(fn):
        raise RecipeLoadError(f"{name!r} is not a function", ref=ref, path=path)
    return fn  # type: ignore[no-any-return]


def _entry_point(name: str) -> importlib.metadata.EntryPoint | None:
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name == name:
            return entry_point
    return None


def _run(fn: object, ref: str, name: str, path: str | None) -> Recipe:
    if not callable(fn):
        raise RecipeLoadError(f"{fn!r} is not a recipe function", ref=ref, path=path)
    try:
        return build_recipe(fn, name=name)
    except (Exception, SystemExit) as exc:  # a sys.exit() in it is its failure too
        raise _from_exception(exc, ref, "the recipe function failed", path) from exc


def _from_exception(
    exc: BaseException, ref: str, what: str, path: str | None = None
) -> RecipeLoadError:
    """An error pointing at the deepest frame of ``path`` (or of the traceback) that failed."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    shown = None
    if path is not None:
        resolved = str(Path(path).resolve())
        own = [f for f in frames if str(Path(f.filename).resolve()) == resolved]
        frames, shown = (own, path) if own else (frames, None)
    else:  # the recipe author's frames, not ours
        frames = [f for f in frames if Path(f.filename).resolve().parent != _OWN_DIR] or frames
    frame = frames[-1] if frames else None
    return RecipeLoadError(
        f"{what}: {type(exc).__name__}: {exc}",
        ref=ref,
        path=shown or (frame.filename if frame else path),
        line=frame.lineno if frame else None,
    )
