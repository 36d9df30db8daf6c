"""The test suite itself: every test can fail, and none times the machine instead of the product.

Read from the source (AST) of every ``test_*.py`` under the test paths; nothing is imported.
Three rules, each with the fix in its failure message:

1. **A test checks something.** A test function (``test_*``) contains an ``assert``, or calls
   ``pytest.raises``/``pytest.fail``/``pytest.warns``, or calls a helper whose name (leading
   underscores aside) starts with ``assert_``/``assertX``, ``expect``/``expect_``, ``check_``,
   ``wait_`` or ``verify_`` (helpers that raise when the behaviour is wrong). A test that only
   runs code passes whatever the code returns.
2. **No sub-second wall-clock bound.** A comparison of a time-like name (``elapsed``,
   ``duration``, ``seconds``, ``took``, ``latency``, ``wall``, ``*_s``, ``*_ms``: anything that
   measures how long something took) against a literal of one second or less (or a module
   constant bound to one) fails on a busy machine without the product being wrong. Test the
   behaviour; timing claims belong in ``tests/bench/``, and "does not hang" takes a bound of
   several seconds.
3. **No fixed sleep as synchronisation.** ``time.sleep(<literal>)`` or
   ``asyncio.sleep(<literal>)`` written in a test's own body, outside any loop, waits a guessed
   time for something to happen. Poll the condition instead (``exocortex.testing.wait``). A sleep
   inside a loop (a polling loop) or inside a helper function is allowed, and so is
   ``sleep(0)``, which only yields to other tasks.
4. **No wait loop swallows every error.** In test code (test modules, ``conftest.py`` and the
   ``exocortex.testing`` helpers), a ``try`` inside a loop whose handler catches everything
   (bare ``except``, ``Exception``, ``BaseException``) only to ``pass``, ``continue`` or sleep
   hides the real failure until a later, misleading one. Catch only the expected "not yet"
   errors and name the last one in the timeout message
   (``exocortex.testing.wait.until(..., retry_on=...)``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_TREES = ("libs", "services", "gateway", "mcp-adapter", "tests")
SKIP_DIRS = {".venv", "node_modules", "bench", "__pycache__", ".git"}

# Helpers that raise when the behaviour is wrong (leading underscores aside): ``assert_*`` and
# ``assertEqual``-style methods (``mock.assert_called_once_with``), Playwright's ``expect``,
# ``expect_*``, ``check_*``, ``wait_*`` and ``verify_*``.
CHECK_HELPER = re.compile(r"^(assert(_|[A-Z])|expect(_|$)|check_|wait_|verify_)")
PYTEST_CHECKS = {"raises", "fail", "warns", "deprecated_call"}
TIME_LIKE = re.compile(
    r"(elapsed|duration|seconds|took|latency|wall|(^|_)(s|ms|secs)$)", re.IGNORECASE
)
SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    test: str
    what: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} {self.test}: {self.what}"


def suite_files() -> list[Path]:
    found: list[Path] = []
    for tree in TEST_TREES:
        for path in sorted((ROOT / tree).rglob("test_*.py")):
            if SKIP_DIRS.isdisjoint(path.relative_to(ROOT).parts):
                found.append(path)
    return found


def collect_tests(module: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level test functions and test methods of ``Test*`` classes."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.name.startswith("test")
                ):
                    yield item


def called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def checks_something(test: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            if CHECK_HELPER.match(called_name(node).lstrip("_")):
                return True
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "pytest"
                and func.attr in PYTEST_CHECKS
            ):
                return True
    return False


def module_numbers(module: ast.Module) -> dict[str, float]:
    """Module constants bound to a number literal (``LIMIT = 0.5``)."""
    numbers: dict[str, float] = {}
    for node in module.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            number = literal_number(value, {})
            if number is not None:
                numbers[target.id] = number
    return numbers


def literal_number(node: ast.expr, constants: dict[str, float]) -> float | None:
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def time_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return bool(TIME_LIKE.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(TIME_LIKE.search(node.attr))
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return bool(TIME_LIKE.search(key.value))
        return time_like(node.value)
    if isinstance(node, ast.Call):
        return called_name(node) in {"perf_counter", "monotonic", "time"} or any(
            time_like(arg) for arg in node.args
        )
    if isinstance(node, ast.BinOp):
        return time_like(node.left) or time_like(node.right)
    return False


def sub_second_bounds(
    test: ast.FunctionDef | ast.AsyncFunctionDef, constants: dict[str, float]
) -> Iterator[ast.Compare]:
    """``measured < literal`` (or ``literal > measured``) with the literal under one second."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for left, op, right in zip(operands, node.ops, operands[1:], strict=False):
            if isinstance(op, ast.Lt | ast.LtE):
                measured, bound = left, right
            elif isinstance(op, ast.Gt | ast.GtE):
                measured, bound = right, left
            else:
                continue
            limit = literal_number(bound, constants)
            if limit is not None and 0 < limit <= 1 and time_like(measured):
                yield node


def is_literal_sleep(node: ast.AST) -> bool:
    if isinstance(node, ast.Await):
        node = node.value
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value
    if not (isinstance(owner, ast.Name) and (owner.id, node.func.attr) in SLEEPS):
        return False
    if len(node.args) != 1:
        return False
    arg = node.args[0]
    return isinstance(arg, ast.Constant) and isinstance(arg.value, int | float) and arg.value > 0


def fixed_sleeps(test: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Sleeps of a literal in the test's own statements, outside loops and nested functions."""

    def visit(statements: list[ast.stmt]) -> Iterator[ast.AST]:
        for statement in statements:
            if isinstance(
                statement,
                ast.For | ast.AsyncFor | ast.While | ast.FunctionDef | ast.AsyncFunctionDef,
            ):
                continue
            if isinstance(statement, ast.ClassDef | ast.Lambda):
                continue
            if isinstance(statement, ast.Expr) and is_literal_sleep(statement.value):
                yield statement
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(statement, field, None)
                if isinstance(block, list):
                    yield from visit([s for s in block if isinstance(s, ast.stmt)])
                    for handler in block:
                        if isinstance(handler, ast.ExceptHandler):
                            yield from visit(handler.body)
            if isinstance(statement, ast.Match):
                for case in statement.cases:
                    yield from visit(case.body)

    yield from visit(test.body)


CATCH_ALL = {"Exception", "BaseException"}


def helper_files() -> list[Path]:
    """Test code other than test modules: conftest files and the shared test helpers."""
    found = [
        path
        for tree in TEST_TREES
        for path in sorted((ROOT / tree).rglob("conftest.py"))
        if SKIP_DIRS.isdisjoint(path.relative_to(ROOT).parts)
    ]
    return found + sorted((ROOT / "libs" / "testing" / "src").rglob("*.py"))


def catches_everything(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(name, ast.Name) and name.id in CATCH_ALL for name in names)


def ignores(statement: ast.stmt) -> bool:
    """A handler statement that drops the error: ``pass``, ``continue`` or a sleep (a handler
    that re-raises, records the error or leaves the loop does not swallow it)."""
    if isinstance(statement, ast.Pass | ast.Continue):
        return True
    if isinstance(statement, ast.Expr):
        call = statement.value.value if isinstance(statement.value, ast.Await) else statement.value
        return isinstance(call, ast.Call) and called_name(call) == "sleep"
    return False


def swallowing_loops(module: ast.Module) -> Iterator[tuple[ast.ExceptHandler, str]]:
    """Catch-all handlers that drop the error, inside a loop, with the enclosing function."""
    for function in ast.walk(module):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for loop in ast.walk(function):
            if not isinstance(loop, ast.For | ast.AsyncFor | ast.While):
                continue
            for handler in ast.walk(loop):
                if (
                    isinstance(handler, ast.ExceptHandler)
                    and catches_everything(handler)
                    and all(ignores(statement) for statement in handler.body)
                ):
                    yield handler, function.name


def swallowed() -> list[Violation]:
    found: set[Violation] = set()
    for path in suite_files() + helper_files():
        module = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for handler, function in swallowing_loops(module):
            found.add(
                Violation(
                    path,
                    handler.lineno,
                    function,
                    "a wait loop swallows every error: catch only the expected 'not yet' "
                    "errors and name the last one on timeout (exocortex.testing.wait.until/"
                    "until_async with retry_on=...)",
                )
            )
    return sorted(found, key=str)


def violations() -> list[Violation]:
    found: list[Violation] = []
    for path in suite_files():
        module = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        constants = module_numbers(module)
        for test in collect_tests(module):
            if not checks_something(test):
                found.append(
                    Violation(
                        path,
                        test.lineno,
                        test.name,
                        "checks nothing: add an assert of the behaviour it names (or "
                        "pytest.raises, or call an assert_/expect_/check_/wait_ helper)",
                    )
                )
            for compare in sub_second_bounds(test, constants):
                found.append(
                    Violation(
                        path,
                        compare.lineno,
                        test.name,
                        f"wall-clock bound of a second or less `{ast.unparse(compare)}`: "
                        "assert the behaviour instead (a timing claim belongs in tests/bench/; "
                        "'does not hang' takes a bound of several seconds)",
                    )
                )
            for sleep in fixed_sleeps(test):
                found.append(
                    Violation(
                        path,
                        sleep.lineno,
                        test.name,
                        f"fixed sleep `{ast.unparse(sleep)}` as synchronisation: wait for the "
                        "condition with exocortex.testing.wait.until/until_async (a polled "
                        "condition, a generous timeout, a message saying what did not happen)",
                    )
                )
    return found


def test_the_scan_sees_the_suite() -> None:
    files = suite_files()
    assert len(files) > 100, f"only {len(files)} test files found under {TEST_TREES}"
    assert any(path.name == "test_suite_integrity.py" for path in files)


def test_every_test_can_fail_and_none_times_the_machine() -> None:
    found = violations() + swallowed()
    assert not found, f"{len(found)} test(s) break the suite's rules (see this module):\n" + (
        "\n".join(str(v) for v in found)
    )


def test_a_catch_all_in_a_wait_loop_is_caught() -> None:
    module = ast.parse(
        """
def wait_for_it():
    for _ in range(10):
        try:
            return probe()
        except Exception:
            pass
        try:
            return probe()
        except ValueError:
            pass
        try:
            return probe()
        except BaseException:
            cleanup()
            raise
        try:
            return probe()
        except:
            time.sleep(0.1)
"""
    )
    found = [(h.lineno, name) for h, name in swallowing_loops(module)]
    assert found == [(6, "wait_for_it"), (19, "wait_for_it")]


def test_the_rules_catch_what_they_name() -> None:
    source = """
import asyncio, time
LIMIT = 0.5
def test_nothing():
    run()
def test_fast():
    elapsed = time.monotonic() - start
    assert elapsed < LIMIT
    assert report["seconds"] < 0.2
async def test_sleepy():
    await asyncio.sleep(1.5)
    while not done():
        await asyncio.sleep(0.1)
    assert done()
def test_fine():
    wait_until(done)
    time.sleep(0)
def test_only_named_like_a_check():
    expected_rows()
    assertion_text()
def test_playwright_and_mock():
    expect(page).to_be_visible()
    handler.assert_called_once_with(1)
"""
    module = ast.parse(source)
    constants = module_numbers(module)
    tests = {t.name: t for t in collect_tests(module)}
    assert not checks_something(tests["test_nothing"])
    assert checks_something(tests["test_fine"])
    assert not checks_something(tests["test_only_named_like_a_check"])
    assert checks_something(tests["test_playwright_and_mock"])
    assert len(list(sub_second_bounds(tests["test_fast"], constants))) == 2
    assert [ast.unparse(s) for s in fixed_sleeps(tests["test_sleepy"])] == [
        "await asyncio.sleep(1.5)"
    ]
    assert not list(fixed_sleeps(tests["test_fine"]))
