"""A deliberately naive second reading of docs/rules.md sections 5-7, for differential tests.

It works on an exported position document only (no engine internals, no caches, no indices):
it rebuilds every train's open end from the tiles and scans the whole hand for each train.
"""

from __future__ import annotations

from typing import Any


def _train_state(engine: int, tiles: list[list[int]], chicken: bool) -> tuple[int, bool]:
    """(pip a new tile must bear, whether the train ends on an unsatisfied double)."""
    end = engine
    i = 0
    while i < len(tiles):
        a, b = tiles[i]
        end = b
        if a == b:
            followers = tiles[i + 1 : i + (4 if chicken else 2)]
            need = 3 if chicken else 1
            if len(followers) < need:
                return a, True  # open: the next tile (or toe) must bear a
            end = followers[-1][1]
            i += need
        i += 1
    return end, False


def reference_moves(doc: dict[str, Any]) -> set[tuple[str, tuple[int, int] | None, str | None]]:
    opts = doc["rules"]["options"]
    seat = doc["turn"]
    n = len(doc["players"])
    ids = [str(s) for s in range(n)] + ["mexican"]
    trains = {tid: doc["trains"][tid] or [] for tid in ids}
    state = {tid: _train_state(doc["engine"], trains[tid], opts["chicken_foot"]) for tid in ids}
    hand = [tuple(sorted(t)) for t in doc["hands"][seat]]
    ts = doc["turn_state"]

    def plays(allowed: list[str]) -> set[tuple[str, tuple[int, int] | None, str | None]]:
        return {("play", t, tid) for tid in allowed for t in hand if state[tid][0] in t}

    own = str(seat)
    if not doc["opened"][seat]:
        found = plays([own])
        if ts["tiles_played"]:
            return found | {("end_turn", None, None)}
        if found:
            return found
        mode = opts["opening_no_play"]
        can_draw = bool(doc["boneyard"]) and (
            mode == "draw_until" or (mode == "draw_one" and not ts["drawn"])
        )
        return {("draw", None, None)} if can_draw else {("mark", None, None)}
    if ts["must_follow"] is not None and opts["double_follow"] == "satisfy":
        allowed = [ts["must_follow"]]
    elif ts["must_follow"] is None and doc["open_doubles"]:
        allowed = [doc["open_doubles"][0]]
    else:
        allowed = [own] + [str(s) for s in range(n) if doc["marked"][s] and s != seat]
        own_play = any(state[own][0] in t for t in hand)
        if trains["mexican"] or not opts["mexican_needs_own_blocked"] or not own_play:
            allowed.append("mexican")
    found = plays(allowed)
    if found:
        return found
    if not ts["drawn"] and doc["boneyard"]:
        return {("draw", None, None)}
    return {("mark", None, None)}
