"""The repository stands on its own: no tracked file names a path outside it, every relative
link of the README and of ``docs/`` resolves (anchors included), the deterministic-deal test
vectors of ``docs/rules.md`` are what the engine computes, and no doc advises a webhook setting
that opens every port of a host; and what the docs say of the API holds to the OpenAPI document
and the Python client: api.md's answers and problem statuses, live.md's log actions, bots.md's
list of the client's calls; and the settings tables (api.md §14, deploy/README.md) name what the
code reads, nothing else, with the code's defaults.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from mexican_train_client import Client

from service.rules import Status, apply, deal, legal_moves, new_game, score_view
from service.rules.rng import SecretStream, SplitMix64
from tests.spec_check import Checker

ROOT = Path(__file__).resolve().parent.parent

# Absolute paths of one machine: a working tree, a home directory. Legitimate absolute paths
# (/usr/bin/chromium, /etc/ssl, /proc, /tmp, /sys/fs/cgroup, URL paths like /api/v1) do not match.
_ABSOLUTE = re.compile(
    r"(?<![\w.~/-])/(?:work|home|root|Users)(?=/|\s|$|[\"'`)\]])"  # a work tree, a home
    r"|(?<![^\s\"'`(=:])~/"  # a home directory, written with a tilde
)
# A run of "../" at the start of a path (".../x" and "a/../b" are not relative paths).
_PARENT = re.compile(r"(?<![^\s\"'`(=:\[<])((?:\.\./)+)([^\s\"'`)\]>]*)")
_LICENCE = re.compile(r"(LICEN[CS]E|COPYING|NOTICE)(\.\w+)?", re.IGNORECASE)

# Markdown links and images, inline ``[text](target "title")`` and reference ``[id]: target``.
_INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,}).*?^\1\2\s*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def tracked_files(root: Path = ROOT) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
    ).stdout
    return [name for name in out.decode().split("\0") if name]


def vendored_dirs(files: list[str]) -> set[str]:
    """Folders below the root that carry their own licence: third-party code kept verbatim."""
    return {
        str(Path(name).parent)
        for name in files
        if _LICENCE.fullmatch(Path(name).name) and str(Path(name).parent) != "."
    }


def own_text_files(root: Path, files: list[str]) -> dict[str, str]:
    """The text of every tracked file the project writes (vendored and binary files aside)."""
    vendored = vendored_dirs(files)
    texts = {}
    for name in files:
        path = Path(name)
        if any(str(parent) in vendored for parent in path.parents) or name.endswith(".map"):
            continue
        try:
            texts[name] = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or deleted in the working tree
    return texts


def outside_paths(root: Path, name: str, text: str) -> list[str]:
    """Each mention in ``text`` (of the tracked file ``name``) of a path outside ``root``."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in _ABSOLUTE.finditer(line):
            found.append(f"{name}:{lineno}: absolute path {line[m.start() : m.start() + 40]!r}")
        for m in _PARENT.finditer(line):
            target = ((root / name).parent / (m.group(1) + m.group(2))).resolve()
            if not target.is_relative_to(root.resolve()):
                found.append(f"{name}:{lineno}: {m.group(0)!r} leaves the repository")
    return found


def strip_code(markdown: str) -> str:
    """Markdown without fenced code blocks and code spans (their text is not links)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", markdown))


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts by its text
    text = text.replace("`", "").strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_FENCE.sub("", markdown)):
        slug = github_slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(root: Path, name: str, files: list[str]) -> list[str]:
    """Relative links of the markdown file ``name`` whose file or heading does not exist."""
    text = (root / name).read_text(encoding="utf-8")
    prose = strip_code(text)
    targets = _INLINE_LINK.findall(prose) + _REF_LINK.findall(prose)
    tracked = set(files)
    folders = {str(parent) for f in files for parent in Path(f).parents}
    problems = []
    for target in targets:
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
            continue  # http:, https:, mailto:: not a file of this repository
        path_part, _, anchor = target.partition("#")
        if path_part:
            resolved = ((root / name).parent / path_part).resolve()
            if not resolved.is_relative_to(root.resolve()):
                problems.append(f"{name}: {target} leaves the repository")
                continue
            rel = str(resolved.relative_to(root.resolve()))
            if rel not in tracked and rel not in folders:
                problems.append(f"{name}: {target} is not a file of the repository")
                continue
        else:
            rel = name
        if (
            anchor
            and rel.endswith(".md")
            and anchor not in anchors((root / rel).read_text(encoding="utf-8"))
        ):
            problems.append(f"{name}: {target} names no heading of {rel}")
    return problems


def markdown_docs(files: list[str]) -> list[str]:
    return [f for f in files if f == "README.md" or re.fullmatch(r"docs/.+\.md", f)]


# --------------------------------------------------------------------------- the repository


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    files = tracked_files()
    found = [
        problem
        for name, text in own_text_files(ROOT, files).items()
        for problem in outside_paths(ROOT, name, text)
    ]
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_readme_and_docs_links_resolve() -> None:
    files = tracked_files()
    docs = markdown_docs(files)
    assert "README.md" in docs and "docs/rules.md" in docs and "docs/api.md" in docs
    problems = [p for name in docs for p in broken_links(ROOT, name, files)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_s13_documented_deal_vectors_match_the_engine() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    vectors = re.findall(r"^seed (\d+), round (\d+): (\S+)\s+(.+)$", text, re.MULTILINE)
    assert len(vectors) >= 3
    for seed, rnd, what, values in vectors:
        rng = SplitMix64.for_round(int(seed), int(rnd))
        numbers = [int(v, 0) for v in values.split()]
        if what == "state":
            assert [rng.state] == numbers
        elif what == "next()":
            assert [rng.next() for _ in numbers] == numbers
        else:
            n = int(re.fullmatch(r"below\((\d+)\)", what).group(1))  # type: ignore[union-attr]
            assert [rng.below(n) for _ in numbers] == numbers


def test_s13_documented_deal_secret_vectors_match_the_engine() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    vectors = re.findall(
        r"^seed (\d+), secret ([0-9a-f]{32}), round (\d+): (\S+)\s+(.+)$", text, re.MULTILINE
    )
    assert len(vectors) >= 2
    for seed, secret, rnd, what, values in vectors:
        stream = SecretStream(int(seed), secret, int(rnd))
        numbers = [int(v, 0) for v in values.split()]
        if what == "next()":
            assert [stream.next() for _ in numbers] == numbers
        else:
            n = int(re.fullmatch(r"below\((\d+)\)", what).group(1))  # type: ignore[union-attr]
            assert [stream.below(n) for _ in numbers] == numbers


# --------------------------------------------------------------------------- the checks fail


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git repository to run the checks against."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## 2. Two things (`x_y`)\n")
    (tmp_path / "Dockerfile").write_text("FROM python\n")
    return tmp_path


def _add(repo: Path, name: str, text: str) -> list[str]:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return tracked_files(repo)


def test_outside_paths_are_found_and_legitimate_paths_are_not(repo: Path) -> None:
    # Built from pieces, so that this file does not name such paths itself.
    home, work, up, tilde = "/" + "home/ann/x", "/" + "work/shared/RULES.md", "../" * 2, "~" + "/"
    bad = f"see {work}\nopen('{home}')\n[rules]({up}shared/RULES.md)\nfrom {tilde}notes\n"
    good = (
        "/usr/bin/chromium /etc/ssl/certs /proc/self /tmp/x /var/lib /sys/fs/cgroup/cpu.max\n"
        "GET /api/v1/games/<id>/play https://example.com/home/page .../games/<id>\n"
        "`../Dockerfile` s.replace(/~/g, '~0') </root>\n"
    )
    files = _add(repo, "deploy/README.md", bad + good)
    texts = own_text_files(repo, files)
    found = outside_paths(repo, "deploy/README.md", texts["deploy/README.md"])
    assert [f.split(":")[:2] for f in found] == [["deploy/README.md", str(n)] for n in (1, 2, 3, 4)]


def test_vendored_code_is_not_checked(repo: Path) -> None:
    files = _add(repo, "static/ui/bundle.js", "x='/" + "home/ci/build'")
    files = _add(repo, "static/ui/LICENSE", "Apache-2.0")
    assert "static/ui/bundle.js" not in own_text_files(repo, files)


def test_broken_links_and_anchors_are_found(repo: Path) -> None:
    text = (
        "[ok](docs/guide.md) [ok](docs/guide.md#2-two-things-x_y) [ok](Dockerfile) [ok](docs)\n"
        "[ok](#readme) [web](https://example.com/x.md) ![img](docs/missing.png)\n"
        "[gone](docs/nothing.md) [bad anchor](docs/guide.md#3-three) [up](../x.md)\n"
        "`[code](not/checked.md)`\n\n```\n[block](not/checked.md)\n```\n\n# Readme\n"
    )
    files = _add(repo, "README.md", text)
    problems = broken_links(repo, "README.md", files)
    assert sorted(p.split(": ")[1].split(" ")[0] for p in problems) == [
        "../x.md",
        "docs/guide.md#3-three",
        "docs/missing.png",
        "docs/nothing.md",
    ]


def test_github_slugs() -> None:
    assert github_slug("4. Starting a round (option `engine_source`)") == (
        "4-starting-a-round-option-engine_source"
    )
    assert github_slug("3. Versions, ETag, If-Match, If-None-Match") == (
        "3-versions-etag-if-match-if-none-match"
    )
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


# ------------------------------------------------------------------------ what the docs advise

_ALLOW_HOSTS = re.compile(r"WEBHOOK_ALLOW_HOSTS=([^\s`]+)")


def webhook_hosts_without_port(text: str) -> list[str]:
    """Each host a ``WEBHOOK_ALLOW_HOSTS=...`` of ``text`` allows without a port: a bare host
    lets a webhook reach its every port, the Redis beside the receiver included."""
    return [
        host
        for setting in _ALLOW_HOSTS.findall(text)
        for host in setting.split(",")
        if not re.search(r":(\d+|<[^>]+>)$", host)
    ]


def test_webhook_hosts_without_port_are_found() -> None:
    text = (
        "run `WEBHOOK_ALLOW_HOSTS=127.0.0.1 make run`\n"
        "WEBHOOK_ALLOW_HOSTS=127.0.0.1:8080,[::1]:9000,localhost:<port> make run\n"
        "WEBHOOK_ALLOW_HOSTS=hooks.internal:443,10.0.0.7\n"
    )
    assert webhook_hosts_without_port(text) == ["127.0.0.1", "10.0.0.7"]


def test_docs_allow_webhook_hosts_one_port_at_a_time() -> None:
    files = tracked_files()
    found = [
        f"{name}: WEBHOOK_ALLOW_HOSTS allows every port of {host}"
        for name, text in own_text_files(ROOT, files).items()
        if name.endswith(".md")
        for host in webhook_hosts_without_port(text)
    ]
    assert not found, "\n".join(found)


# ---------------------------------------------------- the docs, the OpenAPI document, the client

_OPERATION = re.compile(r"^### [\d.]+ `(GET|POST|PUT|DELETE) (/[^`]+)`", re.MULTILINE)
_JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.MULTILINE | re.DOTALL)


def documented_answers(text: str) -> list[tuple[str, str, str]]:
    """(method, path, JSON text) of each ```json block under an endpoint's heading of api.md
    §5: the answer of that endpoint, as the server sent it."""
    headings = [(m.start(), m.group(1), m.group(2)) for m in _OPERATION.finditer(text)]
    found = []
    for block in _JSON_BLOCK.finditer(text):
        before = [h for h in headings if h[0] < block.start()]
        next_section = text.rfind("\n## ", 0, block.start())
        if before and before[-1][0] > next_section:
            found.append((before[-1][1], before[-1][2], block.group(1)))
    return found


def test_api_md_answers_parse_and_fit_the_openapi_document() -> None:
    """Every answer api.md §5 shows in full is JSON a client could have received: no field the
    document does not declare, none it requires missing, every value of its declared type."""
    checker = Checker()
    answers = documented_answers((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(answers) >= 5
    problems = []
    for method, path, body in answers:
        url = path.replace("{id}", "G")
        op = checker.operation(method, url)
        assert op is not None, f"{method} {path} is no operation of the document"
        status = min(int(s) for s in op["responses"] if s.startswith("2"))
        try:
            value = json.loads(body)
        except json.JSONDecodeError as err:
            problems.append(f"{method} {path}: not JSON ({err})")
            continue
        media = checker.media(method, url, status, "application/json")
        assert isinstance(media, dict), media
        problems += checker.errors(media["schema"], value, f"{method} {path}")
    assert not problems, "\n".join(problems)


_CREATED_WITH = re.compile(r"created with `(\{.*?\})`", re.DOTALL)


def test_api_md_score_example_is_the_game_the_engine_plays() -> None:
    """api.md §5.6 shows the score of a game it names (the creation body; every seat plays the
    first move its legal moves list): the engine, rule 8's blocked rounds included, plays that
    game to exactly that answer, version and winners included."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index("### 5.6 ") : text.index("### 5.7 ")]
    created = _CREATED_WITH.search(section)
    shown = _JSON_BLOCK.search(section)
    assert created is not None and shown is not None
    body = json.loads(created.group(1))
    answer = json.loads(shown.group(1))
    state = new_game(body["players"], body.get("preset", "standard"), body.get("options"),
                     body["seed"])  # fmt: skip
    version = 1  # the creation; then one per deal and one per move
    while state.status != Status.GAME_OVER:
        deal(state)
        version += 1
        while state.status == Status.IN_ROUND:
            assert state.turn is not None
            apply(state, state.turn, legal_moves(state, state.turn)[0])
            version += 1
    played = json.loads(json.dumps(score_view(state)))
    assert answer == {"game_id": answer["game_id"], "version": version, **played}


def test_bots_md_names_every_call_of_the_python_client() -> None:
    """docs/bots.md lists the client's calls; one missing there is one a bot's author never
    hears of."""
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    section = text[text.index("## The Python client") :]
    section = section[: section.index("\n## ")]
    named = {re.sub(r"\(.*", "", span) for span in re.findall(r"`([^`]+)`", section)}
    calls = {
        name
        for name, value in vars(Client).items()
        if callable(value) and not name.startswith("_") and name not in ("close", "request")
    }
    assert calls - named == set()


def test_live_md_names_every_action_a_log_entry_records() -> None:
    """live.md §1 lists what an entry's ``action`` may be besides a move: every change the
    OpenAPI document's ``LogAction`` names, so a reader of the log meets none unannounced."""
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    schemas = spec["components"]["schemas"]
    kinds = {
        action
        for ref in schemas["LogAction"]["oneOf"]
        if ref["$ref"] != "#/components/schemas/Move"
        for action in schemas[ref["$ref"].rsplit("/", 1)[1]]["properties"]["action"]["enum"]
    }
    assert {"create", "deal", "transfer", "rematch"} <= kinds
    text = (ROOT / "docs" / "live.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `action` |"))
    assert {kind for kind in kinds if f'"action": "{kind}"' not in row} == set()


def test_api_md_problems_of_each_endpoint_are_the_documents() -> None:
    """The ``Problems:`` line of each endpoint of api.md §5 names exactly the error statuses
    the OpenAPI document gives that operation."""
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    headings = list(_OPERATION.finditer(text))
    assert len(headings) >= 5
    differ = []
    for n, heading in enumerate(headings):
        end = headings[n + 1].start() if n + 1 < len(headings) else len(text)
        chapter_end = text.find("\n## ", heading.start())
        section = text[heading.start() : end if chapter_end == -1 else min(end, chapter_end)]
        problems = re.search(r"^Problems: (.*?)(?:\n\n|\Z)", section, re.MULTILINE | re.DOTALL)
        assert problems, f"{heading.group(0)}: no Problems line"
        method, path = heading.group(1).lower(), heading.group(2).replace("{id}", "{game_id}")
        documented = {s for s in spec["paths"][path][method]["responses"] if s[0] in "45"}
        named = set(re.findall(r"`(\d{3})", problems.group(1)))
        if named != documented:
            differ.append(
                f"{heading.group(0)}: says {sorted(named)}, the document {sorted(documented)}"
            )
    assert not differ, "\n".join(differ)


#: How the service, its worker, its gunicorn configuration and ``make run`` read a setting from
#: the environment (``request.environ`` is the WSGI request's, not a setting).
_ENV_READ = re.compile(
    r"""(?:os\.environ|\benv)(?:\.get|\.setdefault)?[\[(]\s*["']([A-Z][A-Z0-9_]+)["']"""
    r"""|_setting\(\s*"([A-Z][A-Z0-9_]+)\""""
)
#: A default written where a setting is read: ``_setting("X", 2``, ``environ.get("X", "a")``,
#: ``environ.get("X") or 0`` / ``or NAME`` / ``or None``; a computed one (``2 * cpus``) is not.
_ENV_DEFAULT = re.compile(
    r"""_setting\(\s*"(?P<a>[A-Z][A-Z0-9_]+)",\s*(?P<av>\w+)\s*[,)]"""
    r"""|(?:os\.environ|\benv)\.get\(\s*["'](?P<b>[A-Z][A-Z0-9_]+)["'],\s*["'](?P<bv>[^"']*)["']\)"""
    r"""|(?:os\.environ|\benv)\.get\(\s*["'](?P<c>[A-Z][A-Z0-9_]+)["']\)\s*or\s*(?P<cv>\w+)(?![\w(.\["'])"""
)
#: A setting's default as the docs write it: a bool's word, nothing's word.
_DOC_WORDS = {True: ("on", "1"), False: ("off", "0"), None: ("(none)", "unset")}


def _setting_sources() -> list[Path]:
    examples = ROOT / "service" / "tournament" / "examples"  # a bot's own, not the service's
    sources = [p for p in (ROOT / "service").rglob("*.py") if examples not in p.parents]
    return [*sources, ROOT / "deploy" / "gunicorn.conf.py", ROOT / "devstack" / "serve.py"]


def _constant(path: Path, name: str) -> Any:
    """The value of ``name`` in ``path``: a module-level literal there, or one it imports."""
    if name == "None" or name.isdigit():
        return None if name == "None" else int(name)
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
            module = "." * node.level + (node.module or "")
            return getattr(importlib.import_module(module, package or None), name)
    raise AssertionError(f"{path.name}: no value for {name}")


def settings_read() -> dict[str, set[Any]]:
    """Each setting the code reads, with the defaults written where it is read (none when it is
    computed); ``service/api/config.py``'s DEFAULTS included."""
    from service.api.config import DEFAULTS

    read: dict[str, set[Any]] = {name: {value} for name, value in DEFAULTS.items()}
    for path in _setting_sources():
        text = path.read_text()
        for found in _ENV_READ.findall(text):
            read.setdefault(next(name for name in found if name), set())
        for m in _ENV_DEFAULT.finditer(text):
            name = m["a"] or m["b"] or m["c"]
            raw = m["bv"] if m["b"] else _constant(path, m["av"] or m["cv"])
            read[name].add(int(raw) if isinstance(raw, str) and raw.isdigit() else raw)
    return read


def documented_settings(text: str, heading: str) -> dict[str, str]:
    """The default cell of each variable in the table under ``heading`` of ``text``; a row
    naming several variables gives each its own part of a cell split at its commas."""
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    documented: dict[str, str] = {}
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        names = re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0])
        parts = re.split(r",\s*(?![^(]*\))", cells[1]) if len(names) > 1 else [cells[1]]
        for i, name in enumerate(names):
            documented[name] = parts[i] if len(parts) == len(names) else cells[1]
    return documented


def _said(value: Any) -> tuple[str, ...]:
    if isinstance(value, bool) or value is None:
        return _DOC_WORDS[value]
    return _DOC_WORDS[None] if value == "" else (str(value),)


def default_mismatch(name: str, cell: str, defaults: set[Any]) -> str | None:
    """Why the documented ``cell`` is not the code's default, or None: its first word (a
    parenthesis and what follows ``;`` aside) is a default of the code, and every other default
    the code has (another pool's) is written in it too."""
    plain = cell.replace("`", "").strip()
    head = re.sub(r"\s*\(.*?\)", "", plain.split(";")[0]).strip()
    first = plain.split()[0] if plain.startswith("(") else (head.split() or [""])[0]
    if defaults and not any(first in _said(value) for value in defaults):
        return f"{name}: documented {cell!r}, the code's default {sorted(map(repr, defaults))}"
    for value in defaults:
        if not any(
            re.search(rf"(?<![\w.]){re.escape(word)}(?![\w.])", plain) for word in _said(value)
        ):
            return f"{name}: documented {cell!r} leaves out the code's default {value!r}"
    return None


def test_default_mismatches_are_found() -> None:
    assert default_mismatch("A", "604800 (7 days)", {604800}) is None
    assert default_mismatch("A", "`0` (off); compose: `60`", {0}) is None
    assert default_mismatch("A", "off; gunicorn: on", {False}) is None
    assert default_mismatch("A", "(none)", {None, ""}) is None
    assert default_mismatch("A", "two per CPU", set()) is None
    assert default_mismatch("A", "8000 (streams pool: 8001)", {8000, 8001}) is None
    assert default_mismatch("A", "8000", {8000, 8001}) is not None
    assert default_mismatch("A", "60", {30}) is not None
    assert default_mismatch("A", "on", {False}) is not None


def test_settings_are_read_where_found_with_their_defaults() -> None:
    text = """os.environ.get("AA", "x") + env.get('BB') or 2 + _setting("CC", 20, minimum=0)
    _setting("DD", 2 * cpus()) + os.environ.get("EE") or f"{x}" + os.environ.get("FF") or None"""
    reads = {next(n for n in found if n) for found in _ENV_READ.findall(text)}
    assert reads == {"AA", "BB", "CC", "DD", "EE", "FF"}
    defaults = {
        m["a"] or m["b"] or m["c"]: m["av"] or m["bv"] or m["cv"]
        for m in _ENV_DEFAULT.finditer(text)
    }
    assert defaults == {"AA": "x", "BB": "2", "CC": "20", "FF": "None"}


API_SETTINGS, DEPLOY_SETTINGS = "## 14. Settings", "## Settings (environment)"


def test_every_setting_is_documented_with_its_default() -> None:
    """Each environment variable the service, the worker, gunicorn.conf.py or ``make run`` reads
    has a row in docs/api.md §14 whose default is the code's: an operator finds every knob
    there, as it behaves."""
    documented = documented_settings((ROOT / "docs" / "api.md").read_text(), API_SETTINGS)
    read = settings_read()
    missing = sorted(set(read) - set(documented))
    assert not missing, f"settings missing from docs/api.md §14: {missing}"
    assert all(documented[name] for name in read), "every row names its default"
    wrong = [default_mismatch(name, documented[name], read[name]) for name in sorted(read)]
    assert not any(wrong), "\n".join(filter(None, wrong))


def test_every_documented_setting_is_read_with_that_default() -> None:
    """No row of docs/api.md §14 or deploy/README.md names a variable nothing reads, and
    deploy/README.md's defaults are the code's too."""
    read = settings_read()
    for path, heading in (("docs/api.md", API_SETTINGS), ("deploy/README.md", DEPLOY_SETTINGS)):
        documented = documented_settings((ROOT / path).read_text(), heading)
        unread = sorted(set(documented) - set(read))
        assert not unread, f"{path} documents settings nothing reads: {unread}"
        wrong = [default_mismatch(name, documented[name], read[name]) for name in documented]
        assert not any(wrong), f"{path}:\n" + "\n".join(filter(None, wrong))


def _schema(name: str) -> dict[str, Any]:
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    schema: dict[str, Any] = spec["components"]["schemas"][name]
    return schema


def test_players_md_names_every_field_of_a_seek_and_a_leaderboard_item() -> None:
    """players.md tells a seek's body and a leaderboard's items field by field, as the
    OpenAPI document declares them: a field it leaves out is one a client never hears of."""
    text = (ROOT / "docs" / "players.md").read_text(encoding="utf-8")
    seek = text[text.index("Quick play seats") :]
    seek = seek[: seek.index("```")]
    named = set(re.findall(r"`(\w+)`", seek))
    assert set(_schema("Seek")["properties"]) - named == set()
    item = re.search(r'"players": \[\{("player_id".*?)\}', text)
    assert item is not None
    listed = set(re.findall(r'"(\w+)"', item.group(1)))
    assert listed == set(_schema("PlayerRecord")["properties"])


_GRANT = re.compile(r"`(GET|POST|PUT|DELETE) (/api/v1/[^`]+)`")


def token_grants(text: str) -> dict[tuple[str, str], str]:
    """api.md §2's table: (method, path) of each endpoint it names in full, and the tokens it
    takes."""
    section = text[text.index("## 2. Identities") : text.index("## 3. ")]
    grants = {}
    for row in section.splitlines():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if row.startswith("| `") and len(cells) == 2:
            for method, path in _GRANT.findall(cells[0]):
                grants[(method.lower(), path.replace("{id}", "{game_id}"))] = cells[1]
    return grants


def test_openapi_summaries_name_the_tokens_api_md_grants() -> None:
    """An operation whose summary says who alone may call it (``Host only: ...``) says what
    api.md §2 grants: a client reading /docs is not told a token it holds will not do."""
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    grants = token_grants((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    differ, checked = [], 0
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            summary = operation.get("summary", "") if isinstance(operation, dict) else ""
            said = re.match(r"([\w ]+?) only:", summary)
            if said is None:
                continue
            checked += 1
            granted = grants.get((method, path))
            if granted != said.group(1).lower():
                differ.append(f"{method.upper()} {path}: {said.group(0)!r}, api.md: {granted!r}")
    assert checked >= 5
    assert not differ, "\n".join(differ)


def test_players_md_gives_both_rematch_answers_field_by_field() -> None:
    """A seat's and the table token's rematch answers, as players.md gives them, are the
    OpenAPI document's SeatRematch and TableRematch."""
    text = (ROOT / "docs" / "players.md").read_text(encoding="utf-8")
    section = text[text.index("## Rematch") : text.index("## Presence")]
    shapes = [
        set(re.findall(r'"(\w+)"', shape))
        for shape in re.findall(r"`(?:\d{3} )?\{(\"[^`]*?)\}`", section)
    ]
    for name in ("SeatRematch", "TableRematch"):
        assert set(_schema(name)["properties"]) in shapes, name
