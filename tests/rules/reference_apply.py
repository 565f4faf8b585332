"""A deliberately naive second reading of what a move does (docs/rules.md sections 5-8).

It works on exported position documents only: given the position before a move and the move,
it writes the position after it (turn, opened, markers, hands, boneyard, trains, open doubles,
turn state, the end of the round and its scores), without any engine code. Whether a mark
blocks the round is found by simply playing the laps to come: each seat plays if the naive
reading of legal moves finds a play, else marks.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.rules.reference import _train_state, reference_moves

Doc = dict[str, Any]
FRESH_TURN = {"drawn": False, "tiles_played": 0, "must_follow": None}


def reference_apply(before: Doc, move: dict[str, Any]) -> Doc:
    """The position after the seat on turn makes ``move`` (a move object)."""
    doc = copy.deepcopy(before)
    seat = doc["turn"]
    action = move["action"]
    if action == "play":
        _play(doc, seat, move["tile"], move["train"])
    elif action == "draw":
        doc["hands"][seat].append(doc["boneyard"].pop(0))
        doc["turn_state"]["drawn"] = True
    elif action == "mark":
        doc["marked"][seat] = True
        _end_turn(doc, seat, after_mark=True)
    else:
        _end_turn(doc, seat)
    return doc


def _play(doc: Doc, seat: int, tile: list[int], tid: str) -> None:
    opts = doc["rules"]["options"]
    opening = not doc["opened"][seat]
    train = doc["trains"][tid] or []
    end, _ = _train_state(doc["engine"], train, opts["chicken_foot"])
    a, b = tile if tile[0] == end else (tile[1], tile[0])
    doc["hands"][seat].remove(sorted(tile))
    doc["trains"][tid] = [*train, [a, b]]
    doc["turn_state"]["tiles_played"] += 1
    if tid == str(seat):
        doc["marked"][seat] = False
    _, still_open = _train_state(doc["engine"], doc["trains"][tid], opts["chicken_foot"])
    if not still_open and tid in doc["open_doubles"]:
        doc["open_doubles"].remove(tid)
    if a == b:
        doc["open_doubles"].append(tid)
    doc["turn_state"]["must_follow"] = None
    if not doc["hands"][seat]:
        if opening and opts["opening_out_waits"]:
            _end_turn(doc, seat)
        else:
            _round_over(doc)
    elif opening:
        if opts["opening"] == "single":
            _end_turn(doc, seat)
    elif a == b:
        doc["turn_state"]["must_follow"] = tid
        doc["turn_state"]["drawn"] = False
    else:
        _end_turn(doc, seat)


def _end_turn(doc: Doc, seat: int, after_mark: bool = False) -> None:
    doc["opened"][seat] = True
    someone_out = not all(doc["hands"])
    if doc["rules"]["options"]["opening_out_waits"] and someone_out and all(doc["opened"]):
        _round_over(doc)
        return
    doc["turn"] = (seat + 1) % len(doc["players"])
    doc["turn_state"] = dict(FRESH_TURN)
    if after_mark and not doc["boneyard"] and not someone_out and not _anyone_plays(doc):
        _round_over(doc)


def _anyone_plays(doc: Doc) -> bool:
    """Whether any seat plays in the next two laps if each plays when it can, else marks."""
    doc = copy.deepcopy(doc)
    n = len(doc["players"])
    for _ in range(2 * n):
        seat = doc["turn"]
        if any(m[0] == "play" for m in reference_moves(doc)):
            return True
        doc["marked"][seat] = doc["opened"][seat] = True
        doc["turn"] = (seat + 1) % n
    return False


def _round_over(doc: Doc) -> None:
    blank = doc["rules"]["options"]["double_blank_points"]
    for seat, hand in enumerate(doc["hands"]):
        doc["scores"][seat].append(sum(blank if t == [0, 0] else t[0] + t[1] for t in hand))
    last = doc["round"] == doc["rules"]["options"]["rounds"]
    doc["status"] = "game_over" if last else "round_over"
    doc["turn"] = None
    doc["turn_state"] = dict(FRESH_TURN)
    if last:
        doc["winners"] = _winners(doc["scores"])


def _winners(scores: list[list[int]]) -> list[int]:
    """Lowest total; then most rounds scored 0; then the lowest non-zero round; then shared."""

    def rank(seat: int) -> tuple[int, int, int]:
        rounds = scores[seat]
        return (sum(rounds), -rounds.count(0), min([x for x in rounds if x] or [0]))

    best = min(map(rank, range(len(scores))))
    return [seat for seat in range(len(scores)) if rank(seat) == best]
