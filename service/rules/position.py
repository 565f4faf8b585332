"""Position export/import (``mexican-train-position/1``, docs/rules.md §14) with §9 checks.

Besides the core fields, an export carries extension fields so a mid-turn state (after a double,
after a draw, during an opening chain) round-trips exactly: ``status``, ``seed``,
``deal_secret``, ``starter``, ``turn_state`` ``{drawn, tiles_played, must_follow}`` and
``winners``. Import accepts documents without them: ``status`` defaults to ``in_round``, the turn
state to the start of a turn, ``starter`` to null (the next ``from_hand`` engine search
then starts at seat 0) and ``seed`` to a fresh random seed with a fresh ``deal_secret``. A
``consecutive_marks`` field (older documents) is accepted and ignored: whether a round is
blocked follows from the position itself (rule 8).
"""

from __future__ import annotations

from typing import Any

from service.rules.engine import winners
from service.rules.errors import InvalidPosition, InvalidRules
from service.rules.options import (
    MAX_NAME_LENGTH,
    MAX_PLAYERS_ANY,
    MIN_PLAYERS,
    Rules,
    resolve_rules,
    valid_name,
)
from service.rules.rng import MAX_SEED, SECRET_BYTES, random_secret, random_seed, valid_secret
from service.rules.state import GameState, next_end
from service.rules.tiles import Tile, full_set, parse_tile
from service.rules.vocabulary import MEXICAN, Opening, Preset, Status

FORMAT = "mexican-train-position/1"


def export_position(state: GameState) -> dict[str, Any]:
    """The full position of ``state`` (hidden tiles included: for the host only)."""
    n = state.n_players
    trains: dict[str, Any] = {str(s): list(map(list, state.trains[s])) for s in range(n)}
    trains[MEXICAN] = list(map(list, state.trains[n])) or None
    return {
        "format": FORMAT,
        "players": list(state.players),
        "rules": state.rules.to_json(),
        "round": state.round,
        "engine": state.engine,
        "turn": state.turn,
        "opened": list(state.opened),
        "hands": [list(map(list, hand)) for hand in state.hands],
        "boneyard": list(map(list, state.boneyard)),
        "trains": trains,
        "marked": list(state.marked),
        "open_doubles": [state.train_id(t) for t in state.open_doubles],
        "scores": [list(s) for s in state.scores],
        "status": state.status,
        "seed": state.seed,
        "deal_secret": state.deal_secret,
        "starter": state.starter,
        "turn_state": {
            "drawn": state.drawn,
            "tiles_played": state.tiles_played,
            "must_follow": None if state.must_follow is None else state.train_id(state.must_follow),
        },
        "winners": None if state.winners is None else list(state.winners),
    }


def _fail(reason: str) -> InvalidPosition:
    return InvalidPosition(f"invalid position: {reason}")


def _bools(doc: dict[str, Any], key: str, n: int) -> list[bool]:
    value = doc.get(key)
    if (
        not isinstance(value, list)
        or len(value) != n
        or not all(isinstance(v, bool) for v in value)
    ):
        raise _fail(f"'{key}' must be a list of {n} booleans, one per seat")
    return list(value)


def _tiles(value: Any, where: str, top: int) -> list[Tile]:
    if not isinstance(value, list):
        raise _fail(f"{where} must be a list of tiles")
    out = []
    for item in value:
        try:
            tile = parse_tile(item)
        except ValueError as err:
            raise _fail(f"{where}: {err}") from None
        if max(tile) > top:
            raise _fail(f"{where}: tile {tile} is not in a double-{top} set")
        out.append(Tile(item[0], item[1]))
    return out


def _chain(engine: int, tiles: list[Tile], chicken: bool, tid: str) -> tuple[list[Tile], int, int]:
    """Orient and check one train; return (oriented tiles, open end, pending follow count)."""
    end, pending = engine, 0
    oriented: list[Tile] = []
    for i, tile in enumerate(tiles):
        if end not in tile:
            what = "the engine" if i == 0 else f"tile {i}"
            raise _fail(f"train {tid}: tile {tile} does not connect to {what} (needs a {end})")
        placed = tile.oriented(end)
        oriented.append(placed)
        end, pending = next_end(end, pending, placed, chicken)
    return oriented, end, pending


def import_position(doc: Any) -> GameState:
    """Build a state from a position; ``InvalidPosition`` with a reason for any broken invariant.

    The checks run in document order (players, rules, seed, status, scores, ...), so the reason
    names the first broken field."""
    if not isinstance(doc, dict):
        raise _fail("a position is a JSON object")
    if doc.get("format") != FORMAT:
        raise _fail(f"'format' must be {FORMAT!r}")
    players = _players(doc)
    n = len(players)
    seed, secret = _seed_and_secret(doc)
    state = GameState(players, _rules(doc, n), seed, secret)
    state.status = _status(doc)
    state.scores = _scores(doc, n, state.rules)
    state.starter = _starter(doc, n)
    if state.status == Status.WAITING_DEAL:
        _check_undealt(doc, state)
        return state
    _round_and_engine(doc, state)
    state.opened = _bools(doc, "opened", n)
    state.marked = _bools(doc, "marked", n)
    _hands_and_boneyard(doc, state)
    _trains(doc, state)
    _tiles_once(state)
    _open_doubles(doc, state)
    if state.status != Status.IN_ROUND:
        if doc.get("turn") is not None:
            raise _fail(f"no player has the turn when the status is {state.status}")
        if state.status == Status.GAME_OVER:
            state.winners = winners(state.scores)
        return state
    _turn(doc, state)
    _turn_state(doc, state)
    return state


def _players(doc: dict[str, Any]) -> list[str]:
    players = doc.get("players")
    if (
        not isinstance(players, list)
        or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS_ANY
        or not all(valid_name(p) for p in players)
    ):
        raise _fail(
            f"'players' must be a list of {MIN_PLAYERS} to {MAX_PLAYERS_ANY} names of 1 to "
            f"{MAX_NAME_LENGTH} printable characters"
        )
    return list(players)


def _rules(doc: dict[str, Any], n: int) -> Rules:
    spec = doc.get("rules")
    if not isinstance(spec, dict) or not isinstance(spec.get("options", {}), dict):
        raise _fail('\'rules\' must be {"preset": name, "options": {...}}')
    try:
        return resolve_rules(spec.get("preset", Preset.STANDARD), spec.get("options") or {}, n)
    except InvalidRules as err:
        raise _fail(f"rules: {err}") from None


def _seed_and_secret(doc: dict[str, Any]) -> tuple[int, str | None]:
    """The position's seed and deal secret; without a seed the server picks the randomness
    (a fresh seed and secret), with a seed alone the deals follow from it."""
    seed, secret = doc.get("seed"), doc.get("deal_secret")
    if seed is None:
        if secret is not None:
            raise _fail("a 'deal_secret' goes with the 'seed' it was drawn with")
        return random_seed(), random_secret()
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise _fail(f"'seed' must be an integer 0..{MAX_SEED}")
    if secret is not None and not valid_secret(secret):
        raise _fail(f"'deal_secret' must be {2 * SECRET_BYTES} lowercase hex digits or null")
    return seed, secret


def _status(doc: dict[str, Any]) -> Status:
    status = doc.get("status", Status.IN_ROUND)
    if not isinstance(status, str) or status not in _STATUSES:
        raise _fail(f"'status' must be one of {', '.join(Status)}")
    return _STATUSES[status]


_STATUSES: dict[str, Status] = {status.value: status for status in Status}


def _scores(doc: dict[str, Any], n: int, rules: Rules) -> list[list[int]]:
    """One list per seat, one score per finished round, each at most every pip of the set."""
    scores = doc.get("scores")
    top = rules.max_round_score
    if (
        not isinstance(scores, list)
        or len(scores) != n
        or not all(isinstance(s, list) and len(s) <= rules.rounds for s in scores)
        or not all(type(x) is int and 0 <= x <= top for s in scores for x in s)
    ):
        raise _fail(
            f"'scores' must be {n} lists (one per seat) of at most {rules.rounds} round scores, "
            f"each an integer 0..{top} (every pip of the set)"
        )
    if len({len(s) for s in scores}) > 1:
        raise _fail("every seat's 'scores' list must have the same length")
    return [list(s) for s in scores]


def _starter(doc: dict[str, Any], n: int) -> int | None:
    starter = doc.get("starter")
    if starter is not None and (type(starter) is not int or not 0 <= starter < n):
        raise _fail(f"'starter' must be a seat 0..{n - 1} or null")
    return starter


def _check_undealt(doc: dict[str, Any], state: GameState) -> None:
    """A game waiting for its first deal: no round, no scores, nothing on the table."""
    if doc.get("round", 0) != 0 or state.scores[0]:
        raise _fail("a game waiting for its first deal has round 0 and no scores")
    trains = doc.get("trains") or {}
    placed = [doc.get("boneyard"), *(doc.get("hands") or [])]
    placed += list(trains.values()) if isinstance(trains, dict) else [trains]
    if any(placed) or doc.get("turn") is not None or doc.get("engine") is not None:
        raise _fail("a game waiting for its first deal has no tiles dealt, engine or turn")


def _round_and_engine(doc: dict[str, Any], state: GameState) -> None:
    """The round number agrees with the status and the finished rounds; the engine with both."""
    rules, status = state.rules, state.status
    rnd = doc.get("round")
    if type(rnd) is not int or not 1 <= rnd <= rules.rounds:
        raise _fail(f"'round' must be an integer 1..{rules.rounds}")
    state.round = rnd
    finished = len(state.scores[0])
    expected_finished = rnd - 1 if status == Status.IN_ROUND else rnd
    if finished != expected_finished:
        raise _fail(
            f"'scores' must hold {expected_finished} finished round(s) for a {status} game in "
            f"round {rnd}, not {finished}"
        )
    if status == Status.GAME_OVER and rnd != rules.rounds:
        raise _fail("a finished game has played every round")
    if status == Status.ROUND_OVER and rnd == rules.rounds:
        raise _fail("after the last round the status is game_over, not round_over")
    engine = doc.get("engine")
    expected_engine = rules.set - (rnd - 1)
    if engine != expected_engine or type(engine) is not int:
        raise _fail(f"round {rnd} uses engine {expected_engine}, not {engine!r}")
    state.engine = engine


def _hands_and_boneyard(doc: dict[str, Any], state: GameState) -> None:
    n, top = state.n_players, state.rules.set
    hands = doc.get("hands")
    if not isinstance(hands, list) or len(hands) != n:
        raise _fail(f"'hands' must be a list of {n} hands, one per seat")
    state.hands = [
        sorted(x.normal for x in _tiles(h, f"hand {s}", top)) for s, h in enumerate(hands)
    ]
    state.reindex()
    state.boneyard = [x.normal for x in _tiles(doc.get("boneyard"), "boneyard", top)]


def _trains(doc: dict[str, Any], state: GameState) -> None:
    """Every train, oriented and checked tile by tile, with its open end and follow count."""
    trains_doc = doc.get("trains")
    ids = _train_ids(state)
    if not isinstance(trains_doc, dict) or set(trains_doc) != set(ids):
        raise _fail(f"'trains' must have exactly the keys {', '.join(ids)}")
    assert state.engine is not None
    for t, tid in enumerate(ids):
        raw = trains_doc[tid]
        if raw is None and tid == MEXICAN:
            raw = []
        tiles = _tiles(raw, f"train {tid}", state.rules.set)
        state.trains[t], state.ends[t], state.pending[t] = _chain(
            state.engine, tiles, state.rules.chicken_foot, tid
        )


def _train_ids(state: GameState) -> list[str]:
    return [str(s) for s in range(state.n_players)] + [MEXICAN]


def _tiles_once(state: GameState) -> None:
    """Every tile of the set (engine included) is in exactly one place."""
    assert state.engine is not None
    ids = _train_ids(state)
    seen: dict[Tile, str] = {Tile(state.engine, state.engine): "the centre"}
    places = [(f"hand {s}", h) for s, h in enumerate(state.hands)]
    places.append(("the boneyard", state.boneyard))
    places += [(f"train {ids[t]}", tr) for t, tr in enumerate(state.trains)]
    for where, tiles in places:
        for tile in tiles:
            key = tile.normal
            if key in seen:
                raise _fail(f"tile {key} is both in {seen[key]} and in {where}")
            seen[key] = where
    top = state.rules.set
    missing = [t for t in full_set(top) if t not in seen]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise _fail(f"{len(missing)} tile(s) of the double-{top} set are nowhere: {shown}")


def _open_doubles(doc: dict[str, Any], state: GameState) -> None:
    ids = _train_ids(state)
    open_doubles = doc.get("open_doubles")
    if not isinstance(open_doubles, list) or not all(isinstance(x, str) for x in open_doubles):
        raise _fail("'open_doubles' must be a list of train ids, oldest first")
    if len(set(open_doubles)) != len(open_doubles) or not set(open_doubles) <= set(ids):
        raise _fail("'open_doubles' must name distinct, existing trains")
    actual = {ids[t] for t in range(len(ids)) if state.pending[t]}
    if set(open_doubles) != actual:
        raise _fail(
            f"'open_doubles' lists {sorted(open_doubles)} but the trains ending on an open "
            f"double are {sorted(actual)}"
        )
    state.open_doubles = [ids.index(x) for x in open_doubles]


def _turn(doc: dict[str, Any], state: GameState) -> None:
    """A round in progress: the seat on turn holds tiles, and nobody is out unless waiting."""
    n = state.n_players
    turn = doc.get("turn")
    if type(turn) is not int or not 0 <= turn < n:
        raise _fail(f"'turn' must be a seat 0..{n - 1}")
    state.turn = turn
    if not state.hands[turn]:
        raise _fail(f"seat {turn} has the turn but no tiles: the round would be over")
    waiting = state.rules.opening_out_waits and not all(state.opened)
    for s in range(n):
        if not state.hands[s] and not (waiting and state.opened[s]):
            raise _fail(f"seat {s} has no tiles left, so the round would be over")
    if not all(state.hands):
        _opening_lap(state)


def _opening_lap(state: GameState) -> None:
    """A seat out in its opening turn waits for the others' (rule 5): the round is in its
    opening lap, whose seats yet to open are the seat on turn and the next ones clockwise, so
    the turn never comes round to a seat without tiles."""
    n, turn = state.n_players, state.turn
    assert turn is not None
    yet = state.opened.count(False)
    if any(state.opened[(turn + i) % n] for i in range(yet)):
        raise _fail(
            "a seat went out in its opening turn, so the seats yet to open must be the seat on "
            "turn and the next ones, clockwise"
        )


def _turn_state(doc: dict[str, Any], state: GameState) -> None:
    """Mid-turn facts: drawn, tiles played, and the double the player must follow."""
    assert state.turn is not None
    ids = _train_ids(state)
    ts = doc.get("turn_state") or {}
    if not isinstance(ts, dict):
        raise _fail("'turn_state' must be an object")
    drawn = ts.get("drawn", False)
    played = ts.get("tiles_played", 0)
    follow = ts.get("must_follow")
    most = state.rules.tiles
    if not isinstance(drawn, bool) or type(played) is not int or not 0 <= played <= most:
        raise _fail(
            f"'turn_state' needs drawn (boolean) and tiles_played (an integer 0..{most}, the "
            "set's size)"
        )
    opening = not state.opened[state.turn]
    if played and opening and state.rules.opening == Opening.SINGLE:
        raise _fail("a single opening turn ends after its tile")
    if follow is not None:
        if follow not in ids or not state.pending[ids.index(follow)] or opening or not played:
            raise _fail("'must_follow' names the train of a double the player just played")
        state.must_follow = ids.index(follow)
    elif played and not opening:
        raise _fail(
            "after the opening turn, a turn with a tile played is over unless it was a double"
        )
    state.drawn = drawn
    state.tiles_played = played


def check_invariants(state: GameState) -> None:
    """Raise ``InvalidPosition`` unless ``state`` keeps docs/rules.md §9 (tests, debugging)."""
    copy = import_position(export_position(state))
    if (copy.ends, copy.pending) != (state.ends, state.pending):
        raise _fail("cached train ends disagree with the trains")
    if copy.index != state.index or any(h != sorted(h) for h in state.hands):
        raise _fail("the hand index disagrees with the hands")
