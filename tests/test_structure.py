"""The code's shape, checked from its syntax tree: short functions, and packages that depend
only on what the layering allows (rules <- store <- api; bots on rules alone)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ROOT / "service"
MAX_FUNCTION_LINES = 60


def _modules(package: str) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports (relative imports resolved), with its line."""
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_function_in_service_is_longer_than_60_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
        f"({node.end_lineno - node.lineno + 1} lines)"
        for path, tree in _modules("service")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


@pytest.mark.parametrize(
    ("package", "allowed", "why"),
    [
        ("service.rules", lambda name: not _within(name, "service"), "the engine is pure"),
        (
            "service.bots",
            lambda name: (
                _within(name, "service.rules") or name.partition(".")[0] in sys.stdlib_module_names
            ),
            "strategies see the rules and the standard library only",
        ),
        (
            "service.seating",
            lambda name: (
                _within(name, "service.rules")
                or _within(name, "service.bots")
                or name.partition(".")[0] in sys.stdlib_module_names
            ),
            "seating decides over the rules and the bot strategies alone",
        ),
        (
            "service.store",
            lambda name: not _within(name, "service.api"),
            "the store knows nothing of HTTP",
        ),
    ],
)
def test_package_imports_follow_the_layers(
    package: str, allowed: Callable[[str], bool], why: str
) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, tree in _modules(package)
        for line, name in _imports(path, tree)
        if not _within(name, package) and not allowed(name)
    ]
    assert not bad, f"{package}: {why}:\n" + "\n".join(bad)


def test_the_import_check_sees_relative_and_absolute_imports() -> None:
    tree = ast.parse("from ..api import app\nimport requests\nfrom . import keys\n")
    fake = ROOT / "service" / "store" / "example.py"
    assert [name for _, name in _imports(fake, tree)] == [
        "service.api",
        "requests",
        "service.store",
    ]


# Views reach a game only through the game transaction; these views touch the store for what is
# no game's change, and say why.
STORE_ALLOWED_VIEWS = {
    "service/api/health/resources.py": "readiness pings Redis itself",
}
STORE_MODULES = ("service.store", "service.api.store_access")
STORE_HELPERS = ("service.store.tokens",)  # secrets and digests: no Redis


def _view_modules() -> Iterator[tuple[Path, ast.Module]]:
    for path, tree in _modules("service.api"):
        if path.name == "resources.py":
            yield path, tree


def test_views_reach_the_store_only_through_the_transaction() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, tree in _view_modules()
        if str(path.relative_to(ROOT)) not in STORE_ALLOWED_VIEWS
        for line, name in _imports(path, tree)
        if any(_within(name, m) for m in STORE_MODULES)
        and not any(_within(name, h) for h in STORE_HELPERS)
    ]
    assert not bad, "views go through service/api/transaction.py:\n" + "\n".join(bad)
    assert all((ROOT / path).exists() for path in STORE_ALLOWED_VIEWS)


def test_the_transaction_is_the_only_writer_of_games() -> None:
    """``.save(`` and ``.create(`` of the store are called in the transaction module alone."""
    writers = []
    for path, tree in _modules("service"):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"save", "create"}
                and isinstance(node.func.value, ast.Call)
                and getattr(node.func.value.func, "id", None) == "store"
            ):
                writers.append(str(path.relative_to(ROOT)))
    assert set(writers) == {"service/api/transaction.py"}, writers


def test_no_request_control_flow_in_flask_g() -> None:
    """``flask.g`` carries no flags between the steps of a request: it holds only what the
    after-request hooks write into the answer (its cache policy; the limits it was counted
    against, for the RateLimit headers; the request id and start time of the log line)."""
    users = [
        str(path.relative_to(ROOT))
        for path, tree in _modules("service")
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module == "flask"
        and any(alias.name == "g" for alias in node.names)
    ]
    assert users == [
        "service/api/caching.py",
        "service/api/limits.py",
        "service/api/observability.py",
    ], users


# --------------------------------------------------------------------------- one vocabulary

#: Where a closed vocabulary's words are written out: the vocabularies themselves, and the API's
#: example documents (shown as JSON in the docs).
VOCABULARY_MODULES = {
    "service/rules/vocabulary.py",
    "service/rules/errors.py",
    "service/api/codes.py",
    "service/api/examples.py",
}
CODE_TAKERS = {"ApiError", "problem"}  # their first argument is a problem
RULE_ERRORS = {"RulesError", "InvalidRules", "InvalidPosition", "InvalidMove", "IllegalMove"}


def _strings(tree: ast.Module) -> Iterator[ast.Constant]:
    """String constants other than docstrings."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def test_no_bare_problem_code_outside_the_vocabulary() -> None:
    bare = []
    for path, tree in _modules("service"):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            args = [*node.args[:1]] if _name(node.func) in CODE_TAKERS else []
            if _name(node.func) in RULE_ERRORS:
                args = [k.value for k in node.keywords if k.arg == "code"]
            bare += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for arg in args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str | int)
            ]
    assert not bare, "name a Problem (service/api/codes.py) or a RuleCode:\n" + "\n".join(bare)


def test_no_preset_literal_outside_the_vocabulary() -> None:
    from service.rules import Preset

    presets = {preset.value for preset in Preset}
    bare = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}"
        for path, tree in _modules("service")
        if str(path.relative_to(ROOT)) not in VOCABULARY_MODULES
        for node in _strings(tree)
        if node.value in presets
    ]
    assert not bare, "use Preset:\n" + "\n".join(bare)


# --------------------------------------------------------------------------- one observer

OBSERVER = "service/rules/observer.py"
REDACTING = {"game_view", "seat_view", "observe", "visible_events", "audience", "score_view"}
#: Modules outside the engine that may touch hands, and why.
HANDS_ALLOWED = {
    "service/api/examples.py": "example documents of the API's answers",
    "service/bots/hard.py": "plays out worlds it sampled from its own view",
}


def test_the_observer_alone_makes_what_an_audience_sees() -> None:
    """Views, events as a reader sees them and the bots' input come from the observer: it is
    the only module that defines them, and outside the engine no module reads a hand of the
    state (the hidden tiles) or writes a view's ``hand`` itself."""
    defined = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path, tree in _modules("service")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and node.name in REDACTING
        and str(path.relative_to(ROOT)) != OBSERVER
    ]
    assert not defined, defined
    peeks = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for package in ("service.api", "service.bots", "service.seating", "service.worker")
        for path, tree in _modules(package)
        if str(path.relative_to(ROOT)) not in HANDS_ALLOWED
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in {"hands", "boneyard"})
        or (
            isinstance(node, ast.Dict)
            and any(isinstance(k, ast.Constant) and k.value == "hand" for k in node.keys)
        )
    ]
    assert not peeks, "hidden tiles read outside the engine and its observer:\n" + "\n".join(peeks)


def test_bots_take_the_observers_view() -> None:
    for path, tree in _modules("service.bots"):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "choose":
                view = node.args.args[1].annotation
                assert isinstance(view, ast.Name) and view.id == "View", path


# --------------------------------------------------------------------------- rooms

TOP_LEVEL = ("service", "devstack", "bench", "tests")


@pytest.mark.parametrize(
    ("package", "forbidden", "why"),
    [
        ("service", ("devstack", "bench", "tests"), "the shipped package holds no dev tooling"),
        ("devstack", ("bench", "tests"), "the development stack serves tests and benches alike"),
        ("bench", ("tests",), "benchmarks start servers through devstack, not the tests"),
    ],
)
def test_rooms_import_downwards_only(package: str, forbidden: tuple[str, ...], why: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, tree in _modules(package)
        for line, name in _imports(path, tree)
        if any(_within(name, f) for f in forbidden)
    ]
    assert not bad, f"{why}:\n" + "\n".join(bad)


def _all_modules() -> Iterator[tuple[Path, ast.Module]]:
    for package in TOP_LEVEL:
        yield from _modules(package)


def test_one_gunicorn_launcher_and_one_wait_loop() -> None:
    """gunicorn is started in devstack/gunicorn.py alone; readiness is waited for with
    devstack.managed.wait_until, not with a loop of one's own."""
    launchers = {
        str(path.relative_to(ROOT))
        for path, tree in _all_modules()
        for node in _strings(tree)
        if node.value == "gunicorn" and isinstance(node, ast.Constant) and _in_command(tree, node)
    }
    assert launchers == {"devstack/gunicorn.py"}, launchers
    loops = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, tree in _all_modules()
        if str(path.relative_to(ROOT)) not in POLLING_ALLOWED
        for node in ast.walk(tree)
        if isinstance(node, ast.While) and _polls_readiness(node)
    ]
    assert not loops, "wait with devstack.managed.wait_until:\n" + "\n".join(loops)


#: Loops that poll a probe for another purpose than waiting until it answers, and why.
POLLING_ALLOWED = {
    "devstack/managed.py": "the one wait loop",
    "tests/cluster/test_failover.py": "records readiness all through a failover",
    "tests/e2e/test_e2e.py": "waits until nginx sends traffic to a restarted instance",
}


def _in_command(tree: ast.Module, constant: ast.Constant) -> bool:
    """Whether ``constant`` sits in a list literal beside ``"-m"`` (a command line)."""
    return any(
        isinstance(node, ast.List)
        and constant in node.elts
        and any(isinstance(e, ast.Constant) and e.value == "-m" for e in node.elts)
        for node in ast.walk(tree)
    )


def _polls_readiness(loop: ast.While) -> bool:
    names = {getattr(n, "attr", None) or getattr(n, "id", None) for n in ast.walk(loop)}
    texts = [n.value for n in ast.walk(loop) if isinstance(n, ast.Constant)]
    return "sleep" in names and any(
        isinstance(t, str) and t.endswith(("/healthz", "/readyz")) for t in texts
    )


def test_each_name_says_one_thing() -> None:
    """Seating is not the web page, the log API is not the engine's events, and one name is
    one function."""
    assert not (SERVICE / "table").exists() and (SERVICE / "seating").is_dir()
    assert not (SERVICE / "api" / "events").exists() and (SERVICE / "api" / "gamelog").is_dir()
    assert not (SERVICE / "launch").exists()
    names: dict[str, list[str]] = {}
    for path, tree in _modules("service"):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                names.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: where for name, where in names.items() if len(where) > 1 and name in SHARED}
    assert not twice, twice


#: Public function names that must exist once in service/ (they named two things before).
SHARED = {"advance", "server_turns", "next_end", "stream", "deal", "apply"}


CLIENT_PACKAGE = ROOT / "clients" / "python" / "src" / "mexican_train_client"


def _client_requirements() -> set[str]:
    """The import names of the distributions the client's pyproject.toml declares."""
    project = tomllib.loads((CLIENT_PACKAGE.parents[1] / "pyproject.toml").read_text())
    return {
        re.split(r"[^A-Za-z0-9_.-]", req, maxsplit=1)[0].lower()
        for req in project["project"]["dependencies"]
    }


def test_the_python_client_imports_the_standard_library_and_what_it_declares_alone() -> None:
    """The client is its own distribution: it must run without the service installed, on what
    its own pyproject.toml installs."""
    allowed = {*sys.stdlib_module_names, "mexican_train_client", *_client_requirements()}
    bad = []
    for path in sorted(CLIENT_PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            bad += [
                f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"
                for name in names
                if name.partition(".")[0] not in allowed
            ]
    assert CLIENT_PACKAGE.is_dir() and not bad, bad
