"""The problem codes clients branch on are one vocabulary: ``service/api/codes.py``'s Problem.
Every member is in docs/api.md's table (§9) with its status, every code the table names is a
member with that status, the engine's codes are members, and nginx's own problem bodies
(deploy/nginx.conf) use members too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from service.api.codes import BY_STATUS, Problem
from service.rules.errors import RuleCode

ROOT = Path(__file__).resolve().parent.parent.parent
ROW = re.compile(r"^\| (\d{3}) \| `([a-z_]+)` \|", re.M)


def documented() -> set[tuple[int, str]]:
    text = (ROOT / "docs" / "api.md").read_text()
    section = text[text.index("## 9. Problems") : text.index("## 10.")]
    return {(int(status), code) for status, code in ROW.findall(section)}


def test_every_problem_is_documented_with_its_status() -> None:
    rows = documented()
    missing = [(p.status, p.value) for p in Problem if (p.status, p.value) not in rows]
    assert not missing, f"add them to docs/api.md §9: {missing}"


def test_every_documented_code_is_a_problem_with_that_status() -> None:
    by_code = {p.value: p.status for p in Problem}
    strays = [(status, code) for status, code in documented() if by_code.get(code) != status]
    assert not strays, f"not members of Problem (or another status): {strays}"


def test_the_engine_codes_and_the_framework_statuses_are_problems() -> None:
    assert {code.value for code in RuleCode} <= {p.value for p in Problem}
    assert all(problem.status == status for status, problem in BY_STATUS.items())


def test_nginx_answers_only_problems_of_the_vocabulary() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    bodies = re.findall(r'"status":(\d{3}),"detail":"[^"]*","code":"([a-z_]+)"', conf)
    assert len(bodies) >= 7
    assert all(Problem(code).status == int(status) for status, code in bodies), bodies


def test_the_frameworks_own_codes_are_never_raised_by_the_service() -> None:
    """docs/api.md §9: "A status the web framework raises by itself gets the code of its row
    above; the service's own endpoints answer with the other codes." So no module of the
    service names one of those framework rows' members (BY_STATUS maps them)."""
    text = (ROOT / "docs" / "api.md").read_text()
    framework_rows = re.findall(r"^\| \d{3} \| `([a-z_]+)` \| the web framework's own", text, re.M)
    assert framework_rows, "docs/api.md §9 names the web framework's own codes"
    reserved = {Problem(code).name for code in framework_rows}
    named = [
        f"{path.relative_to(ROOT)}:{node.lineno} Problem.{node.attr}"
        for path in sorted((ROOT / "service").rglob("*.py"))
        if path.name != "codes.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Problem"
        and node.attr in reserved
    ]
    assert not named, "answer a code of the service's own (docs/api.md §9):\n" + "\n".join(named)
