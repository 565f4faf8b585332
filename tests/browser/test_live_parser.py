"""The web table's reader of the events stream (live.js, ``Live.read``) against the
text/event-stream rules, run in node: chunks are cut where a network may cut them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

TABLE = Path(__file__).resolve().parents[2] / "service/api/static/table"

# For each stream (a list of chunks) given, feeds its chunks to Live.read and prints the
# versions of the entries it dispatched.
SCRIPT = """
globalThis.window = { addEventListener() {}, removeEventListener() {} };
const { Live } = await import("./live.js");
const encoder = new TextEncoder();
const results = [];
for (const texts of JSON.parse(process.argv[2])) {
  const seen = [];
  const live = new Live("g", null, { onEntry: (e) => seen.push(e.version), onState() {} });
  live.control = {};
  live.watch = () => {};
  const chunks = texts.map((text) => encoder.encode(text));
  const read = async () =>
    chunks.length ? { value: chunks.shift(), done: false } : { done: true };
  await live.read({ getReader: () => ({ read }) }, live.control);
  results.push(seen);
}
console.log(JSON.stringify(results));
"""


def entries_read(tmp_path: Path, streams: list[list[str]]) -> list[list[int]]:
    for name in ("live.js", "api.js"):
        shutil.copy(TABLE / name, tmp_path / name)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "run.mjs").write_text(SCRIPT)
    done = subprocess.run(
        ["node", "run.mjs", json.dumps(streams)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    seen: list[list[int]] = json.loads(done.stdout)
    return seen


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_crlf_cut_between_its_cr_and_its_lf_ends_one_line_not_two(tmp_path: Path) -> None:
    # A proxy may send CRLF line ends, and a read may end on the CR: the LF that starts the next
    # read is not an empty line of its own, which would end the message after `event: entry`
    # and send its data as a plain 'message', which the table ignores.
    entry = '{"version": 7, "events": []}'
    whole = f"event: entry\r\nid: 7\r\ndata: {entry}\r\n\r\n"
    cut = whole.index("\r") + 1
    assert entries_read(tmp_path, [[whole], [whole[:cut], whole[cut:]]]) == [[7], [7]]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_every_cut_of_a_stream_reads_the_same_entries(tmp_path: Path) -> None:
    # LF, CRLF and CR line ends, a comment, a multi-line data field, a multi-byte character.
    stream = (
        "retry: 1000\n\n: keep-alive\n\n"
        'event: entry\nid: 1\ndata: {"version": 1,\ndata: "note": "é"}\n\n'
        'event: entry\r\ndata: {"version": 2}\r\n\r\n'
        'event: entry\rdata: {"version": 3}\r\r'
    )
    cuts = [[stream]] + [[stream[:i], stream[i:]] for i in range(1, len(stream))]
    read = entries_read(tmp_path, cuts)
    assert [cut for cut, seen in zip(cuts, read, strict=True) if seen != [1, 2, 3]] == []


# A stream answered `held_ms` ago (Live.read's `since`) after `failures` drops in a row, whose
# body then ends with no more bytes: the failure count Live keeps for its next backoff.
HELD = """
globalThis.window = { addEventListener() {}, removeEventListener() {} };
const { Live } = await import("./live.js");
const [failures, heldMs] = JSON.parse(process.argv[2]);
const live = new Live("g", null, { onEntry() {}, onState() {} });
live.control = {};
live.watch = () => {};
live.failures = failures;
const read = async () => ({ done: true });
await live.read({ getReader: () => ({ read }) }, live.control, Date.now() - heldMs);
console.log(JSON.stringify(live.failures));
"""


def failures_after(tmp_path: Path, failures: int, held_ms: int) -> int:
    for name in ("live.js", "api.js"):
        shutil.copy(TABLE / name, tmp_path / name)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "held.mjs").write_text(HELD)
    done = subprocess.run(
        ["node", "held.mjs", json.dumps([failures, held_ms])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    left: int = json.loads(done.stdout)
    return left


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_stream_held_steady_then_ended_by_the_server_starts_the_backoff_over(
    tmp_path: Path,
) -> None:
    # Held 6 s (past STEADY_MS) and ended without a byte since its first (a server draining
    # on a rollout before its first keep-alive): it worked, as one that brought a keep-alive.
    assert failures_after(tmp_path, 3, 6000) == 0
    # Ended at once: the backoff goes on where it was.
    assert failures_after(tmp_path, 3, 0) == 3
