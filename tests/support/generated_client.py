"""A Python client generated from the API's OpenAPI document by ``openapi-python-client``, as a
new user would make one (tests/test_generated_client.py): built into a directory, imported
from there without installing it, its operations called by ``operationId``, and each parsed
answer checked against the types the generated models declare.

The generated models do not check what they read (``from_dict`` assigns whatever the answer
holds, and drops the keys it does not know), so :func:`problems` does: a value of another type
than the document says is a disagreement between the document and the code, and so is a key
of the answer that the parsed model does not give back (``to_dict``).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import attrs

#: The generator, from the environment running the tests (``openapi-python-client``).
GENERATOR = [sys.executable, "-m", "openapi_python_client"]


def generate(arguments: list[str], directory: Path) -> None:
    """``openapi-python-client ARGUMENTS`` run in ``directory``, failing on any warning of
    the generator (a part of the document it could not read is left out of the client)."""
    # the generator formats its output with ruff (its post hooks): the environment's own
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([*GENERATOR, *arguments, "--fail-on-warning"], cwd=directory, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"the client did not build:\n{run.stdout}\n{run.stderr}"
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr


@contextmanager
def imported(directory: Path, name: str) -> Iterator[types.ModuleType]:
    """The package ``name`` generated under ``directory``, imported (and forgotten
    afterwards)."""
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))
        for module in [module for module in sys.modules if module.split(".")[0] == name]:
            del sys.modules[module]


def snake(operation_id: str) -> str:
    """The name the generator gives an operation's module (``listCollections`` →
    ``list_collections``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def operation_ids(document: dict[str, Any]) -> set[str]:
    """Every ``operationId`` of the document."""
    return {operation["operationId"] for item in document["paths"].values()
            for method, operation in item.items() if method != "parameters"}


class Caller:
    """Calls the generated client's operations by ``operationId``: each answer must have the
    status expected and be parsed into the model expected, with no :func:`problems`; which
    operations were called is kept (:attr:`called`)."""

    def __init__(self, package: types.ModuleType, client: Any):
        self.package, self.client = package, client
        self.modules = {path.stem: importlib.import_module(
                            f"{package.__name__}.api.{path.parent.name}.{path.stem}")
                        for path in Path(package.__file__).parent.glob("api/*/*.py")
                        if path.stem != "__init__"}
        self.called: set[str] = set()

    def __call__(self, operation_id: str, expected: type, code: int = 200, /, *,
                 client: Any = None, **arguments: Any) -> Any:
        """``operation_id`` called with ``arguments`` (the generated function's own, such as
        ``body`` or ``status``): its answer, of status ``code``, parsed as ``expected``."""
        module = self.modules.get(snake(operation_id))
        assert module is not None, f"the generated client has no operation {operation_id}"
        answer = module.sync_detailed(client=client or self.client, **arguments)
        assert answer.status_code == HTTPStatus(code), (
            operation_id, answer.status_code, answer.content[:2000])
        assert isinstance(answer.parsed, expected), (operation_id, type(answer.parsed))
        if attrs.has(type(answer.parsed)):  # a model (an export is a text)
            assert_parsed(answer.parsed, json.loads(answer.content), self.package, operation_id)
        self.called.add(operation_id)
        return answer.parsed

    def model(self, name: str) -> type:
        return getattr(self.package.models, name)


def assert_parsed(parsed: Any, raw: Any, package: types.ModuleType, where: str) -> None:
    """``parsed`` (a generated model) read all of ``raw`` (the answer's JSON), each value of
    the type its model declares."""
    found = problems(parsed, package, where)
    assert not found, "\n".join(found)
    assert parsed.to_dict() == raw, f"{where}: the answer has what its model does not read"


def problems(value: Any, package: types.ModuleType, where: str) -> list[str]:
    """What of ``value`` (a parsed answer: models, lists, scalars) is not of the type the
    generated code declares for it, each with its path."""
    found: list[str] = []
    _check(value, type(value), where, found, _names(package))
    return found


def _names(package: types.ModuleType) -> dict[str, Any]:
    """What the generated annotations name: the models (imported only for type checkers in
    each module) and the package's ``Unset``."""
    types_module = importlib.import_module(f"{package.__name__}.types")
    return {**vars(package.models), "Unset": types_module.Unset, "Any": Any}


def _check(value: Any, hint: Any, where: str, found: list[str], names: dict[str, Any]) -> None:
    origin = get_origin(hint)
    if hint is Any:
        return
    if origin in (Union, types.UnionType):
        for option in get_args(hint):
            trial: list[str] = []
            _check(value, option, where, trial, names)
            if not trial:
                return
        found.append(f"{where}: {value!r:.200} is none of {hint}")
    elif hint is None or hint is type(None):
        if value is not None:
            found.append(f"{where}: {value!r:.200} is not null")
    elif origin is list:
        if not isinstance(value, list):
            found.append(f"{where}: {value!r:.200} is not a list")
            return
        for index, item in enumerate(value):
            _check(item, get_args(hint)[0], f"{where}[{index}]", found, names)
    elif origin is dict:
        if not isinstance(value, dict):
            found.append(f"{where}: {value!r:.200} is not an object")
            return
        for key, item in value.items():
            _check(item, get_args(hint)[1], f"{where}.{key}", found, names)
    elif isinstance(hint, type) and attrs.has(hint):
        if not isinstance(value, hint):
            found.append(f"{where}: {value!r:.200} is not a {hint.__name__}")
            return
        _check_model(value, where, found, names)
    elif hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            found.append(f"{where}: {value!r:.200} is not an integer")
    elif hint is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            found.append(f"{where}: {value!r:.200} is not a number")
    elif isinstance(hint, type):  # str, bool, an enumeration, Unset
        if not isinstance(value, hint):
            found.append(f"{where}: {value!r:.200} is not a {hint.__name__}")
    else:
        found.append(f"{where}: cannot check the type {hint!r}")


def _check_model(value: Any, where: str, found: list[str], names: dict[str, Any]) -> None:
    cls = type(value)
    module = sys.modules[cls.__module__]
    hints = get_type_hints(cls, globalns={**vars(module), **names})
    for field in attrs.fields(cls):
        _check(getattr(value, field.name), hints[field.name], f"{where}.{field.name}", found,
               names)
