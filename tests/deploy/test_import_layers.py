"""Libraries never import applications, and applications not each other, read from the import
graph of every hand-written module.

Lint bans the same imports (libs/ruff.toml), but a module that the root's per-file-ignores lift
TID251 for (a repository, core/db, the bus) is not checked there; here every library module is,
including imports inside functions and ``importlib.import_module("exocortex.<app>")``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# An application is a process of its own: each service, the gateway, the MCP adapter and exo.
APPLICATION_ROOTS = [
    *sorted((ROOT / "services").glob("*/src/exocortex")),
    ROOT / "gateway" / "src" / "exocortex",
    ROOT / "mcp-adapter" / "src" / "exocortex",
]
LIBRARY_ROOTS = sorted((ROOT / "libs").glob("*/src/exocortex"))


def packages(roots: list[Path]) -> set[str]:
    return {f"exocortex.{p.name}" for root in roots for p in root.iterdir() if p.is_dir()}


APPLICATIONS = packages(APPLICATION_ROOTS)


def imported_modules(source: str) -> Iterator[tuple[int, str]]:
    """Every absolute module a source imports, with its line: import statements anywhere in
    the file, and string arguments of ``import_module`` / ``__import__``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                name in {"import_module", "__import__"}
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                yield node.lineno, first.value


def application_imports(
    source: str, where: str, applications: set[str] = APPLICATIONS
) -> list[str]:
    """``where:line imports module`` for each of ``applications`` a source imports."""
    found: dict[int, str] = {}
    for line, module in imported_modules(source):
        if any(module == app or module.startswith(f"{app}.") for app in applications):
            found.setdefault(line, module)  # `from a.b import c`: name a.b, not a.b.c too
    return [f"{where}:{line} imports {module}" for line, module in sorted(found.items())]


def test_the_applications_are_found() -> None:
    # A moved or renamed application must not silently drop out of the check.
    assert {"exocortex.gateway", "exocortex.mcp", "exocortex.retrieval"} <= APPLICATIONS
    assert {"exocortex.core", "exocortex.testing", "exocortex.api"} <= packages(LIBRARY_ROOTS)


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import exocortex.gateway.app\n"
        "from exocortex.cli.main import app\n"
        "from exocortex import retrieval\n"
        "def later():\n"
        "    import importlib\n"
        "    importlib.import_module('exocortex.mcp.server')\n"
        "from exocortex.core import bus\n"
    )
    assert application_imports(source, "x.py") == [
        "x.py:1 imports exocortex.gateway.app",
        "x.py:2 imports exocortex.cli.main",
        "x.py:3 imports exocortex.retrieval",
        "x.py:6 imports exocortex.mcp.server",
    ]


def test_no_library_imports_an_application() -> None:
    violations = []
    for root in LIBRARY_ROOTS:
        for path in sorted(root.rglob("*.py")):
            where = str(path.relative_to(ROOT))
            violations += application_imports(path.read_text(encoding="utf-8"), where)
    assert not violations, "libraries import applications:\n" + "\n".join(violations)


# `exo mcp` serves the MCP adapter from the exo process itself (stdio for a local agent).
MAY_IMPORT = {"exocortex.cli": {"exocortex.mcp"}}


def test_no_application_imports_another() -> None:
    violations = []
    for root in APPLICATION_ROOTS:
        for package in sorted(p for p in root.iterdir() if p.is_dir()):
            own = f"exocortex.{package.name}"
            others = APPLICATIONS - {own} - MAY_IMPORT.get(own, set())
            for path in sorted(package.rglob("*.py")):
                where = str(path.relative_to(ROOT))
                violations += application_imports(path.read_text(encoding="utf-8"), where, others)
    assert not violations, "applications import each other:\n" + "\n".join(violations)
