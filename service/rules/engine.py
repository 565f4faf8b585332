"""The rules: new_game, deal, legal_moves, apply, scoring (docs/rules.md §§2-8).

``apply`` works in two phases: it first checks the move against the legal-move list (computed
once per state and cached until the next change), and only then mutates, so a refused move
leaves the state exactly as it was.

Decisions where common rules are silent (docs/rules.md §11 lists them all):
- ``set_aside`` starter draw: seats draw in seat order from seat 0; if the boneyard runs dry while
  players are still tied, a player who could not draw counts as lowest, and if the boneyard is
  already empty the lowest tied seat starts.
- A double played as the last tile of an opening chain creates no follow obligation (rule 7
  applies after the opening turn); it stays open.
- With ``hand_size: 1`` a ``from_hand`` starter may be dealt the engine as their only tile:
  placing it empties their hand, which counts as going out on their opening turn.
- In ``double_follow: any``, the follow tile may go on any train the player could play on at the
  start of a turn (own, Mexican, marked trains), including any double played earlier this turn.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping, Sequence
from typing import Any

from service.rules.errors import IllegalMove, InvalidMove, InvalidRules, RuleCode
from service.rules.events import Event
from service.rules.options import (
    MAX_NAME_LENGTH,
    MAX_PLAYERS_ANY,
    MIN_PLAYERS,
    resolve_rules,
    valid_name,
)
from service.rules.rng import MAX_SEED, Shuffler, deal_stream, random_secret, random_seed
from service.rules.state import GameState, next_end
from service.rules.tiles import (
    DRAW,
    END_TURN,
    MARK,
    MAX_PIP,
    Move,
    Tile,
    _play_move,
    full_set,
)
from service.rules.vocabulary import (
    MEXICAN,
    Action,
    DoubleFollow,
    EngineSource,
    Opening,
    OpeningNoPlay,
    Preset,
    RoundOverReason,
    Status,
)

__all__ = [
    "Event",
    "apply",
    "chain_begun",
    "deal",
    "hand_points",
    "in_opening_turn",
    "legal_moves",
    "new_game",
    "oldest_open_double",
    "own_double_to_follow",
    "round_blocked",
    "winners",
]

# Members the hot paths compare against, bound once (a global is faster than an enum attribute).
_IN_ROUND = Status.IN_ROUND
_PLAY = Action.PLAY
_DRAW = Action.DRAW
_MARK = Action.MARK
_NO_PLAY_MARK = OpeningNoPlay.MARK
_DRAW_UNTIL = OpeningNoPlay.DRAW_UNTIL
_SATISFY = DoubleFollow.SATISFY
_SINGLE = Opening.SINGLE


# --------------------------------------------------------------------------- game setup


def new_game(
    players: Sequence[str],
    preset: str = Preset.STANDARD,
    options: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> GameState:
    """A new game waiting for its first deal. ``seed=None``: the server picks the randomness, a
    random seed and a 128-bit deal secret (a chosen seed alone fixes every deal).

    >>> state = new_game(["ann", "bo", "cy"], seed=42)
    >>> str(state.status), state.rules.set, state.rules.hand_size, state.round
    ('waiting_deal', 9, 15, 0)
    >>> new_game(["ann"])
    Traceback (most recent call last):
    ...
    service.rules.errors.InvalidRules: a game has 2 to 14 players, not 1
    """
    if isinstance(players, str) or not isinstance(players, Sequence):
        raise InvalidRules("players must be a list of names")
    names = list(players)
    if not all(valid_name(p) for p in names):
        raise InvalidRules(f"every player name must be 1 to {MAX_NAME_LENGTH} printable characters")
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS_ANY:
        raise InvalidRules(
            f"a game has {MIN_PLAYERS} to {MAX_PLAYERS_ANY} players, not {len(names)}"
        )
    rules = resolve_rules(preset, options, len(names))
    if seed is None:
        return GameState(names, rules, random_seed(), random_secret())
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise InvalidRules(f"seed must be an integer 0..{MAX_SEED}, not {seed!r}")
    return GameState(names, rules, seed)


# A deal: every hand, the boneyard (drawn from its start), the starter, and the setup events.
_Dealt = tuple[list[list[Tile]], list[Tile], int, list[Event]]


def deal(state: GameState) -> list[Event]:
    """Deal the next round (docs/rules.md §4), including the automatic engine search
    (``from_hand``) or highest-draw starter selection (``set_aside``).

    >>> state = new_game(["ann", "bo"], seed=1)
    >>> deal(state)[0]
    {'type': 'round_started', 'round': 1, 'engine': 9, 'starter': 1}
    >>> str(state.status), state.turn, [len(hand) for hand in state.hands]
    ('in_round', 1, [15, 14])
    """
    if state.status == Status.IN_ROUND:
        raise IllegalMove(
            "a round is in progress; it must end before the next deal",
            code=RuleCode.ROUND_IN_PROGRESS,
        )
    if state.status == Status.GAME_OVER:
        raise IllegalMove("the game is over; every round has been played", code=RuleCode.GAME_OVER)
    r = state.round + 1
    engine = state.rules.set - (r - 1)
    rng = deal_stream(state.seed, r, state.deal_secret)
    if state.rules.engine_source == EngineSource.FROM_HAND:
        hands, boneyard, starter, setup = _deal_from_hand(state, rng, r, engine)
    else:
        hands, boneyard, starter, setup = _deal_set_aside(state, rng, engine)
    _start_round(state, r, engine, starter, hands, boneyard)
    events: list[Event] = [
        {"type": "round_started", "round": r, "engine": engine, "starter": starter},
        *setup,
    ]
    if not state.hands[starter]:
        # hand_size 1 and the starter was dealt the engine: placing it emptied their hand, so
        # they have gone out on their opening turn (rule 5's opening_out_waits decides when the
        # round ends).
        if state.rules.opening_out_waits:
            _end_turn(state, starter, events)
        else:
            _round_over(state, RoundOverReason.OUT, events)
    return events


def _deal_from_hand(state: GameState, rng: Shuffler, r: int, engine: int) -> _Dealt:
    """Shuffle the whole set and deal; whoever holds the engine places it and starts."""
    n, h = state.n_players, state.rules.hand_size
    engine_tile = Tile(engine, engine)
    tiles = full_set(state.rules.set)
    rng.shuffle(tiles)
    hands = [tiles[s * h : (s + 1) * h] for s in range(n)]
    boneyard = tiles[n * h :]
    setup: list[Event] = []
    holder = next((s for s in range(n) if engine_tile in hands[s]), None)
    if holder is None:
        # Players draw in turn until the engine appears (round 1 from seat 0, later rounds
        # from the seat after the previous starter); drawn tiles stay in the drawer's hand.
        s = 0 if r == 1 or state.starter is None else (state.starter + 1) % n
        while True:
            tile = boneyard.pop(0)
            hands[s].append(tile)  # sorted by _start_round
            setup.append({"type": "tile_drawn", "seat": s, "tile": tile.to_json()})
            if tile == engine_tile:
                holder = s
                break
            s = (s + 1) % n
    hands[holder].remove(engine_tile)
    setup.append({"type": "engine_placed", "seat": holder, "tile": [engine, engine]})
    return hands, boneyard, holder, setup


def _deal_set_aside(state: GameState, rng: Shuffler, engine: int) -> _Dealt:
    """Deal without the engine; the highest tile turned up from the boneyard starts (ties draw
    again), and those tiles are shuffled back in."""
    n, h = state.n_players, state.rules.hand_size
    tiles = full_set(state.rules.set)
    tiles.remove(Tile(engine, engine))
    rng.shuffle(tiles)
    hands = [tiles[s * h : (s + 1) * h] for s in range(n)]
    boneyard = tiles[n * h :]
    setup: list[Event] = [{"type": "engine_placed", "seat": None, "tile": [engine, engine]}]
    contenders = list(range(n))
    turned_up: list[Tile] = []
    while True:
        results: dict[int, int] = {}
        for s in contenders:
            if boneyard:
                tile = boneyard.pop(0)
                turned_up.append(tile)
                results[s] = tile.pips
                setup.append({"type": "starter_draw", "seat": s, "tile": tile.to_json()})
            else:
                results[s] = -1
        top = max(results.values())
        contenders = [s for s in contenders if results[s] == top]
        if len(contenders) == 1 or not boneyard:
            break
    boneyard.extend(turned_up)
    rng.shuffle(boneyard)
    setup.append({"type": "boneyard_shuffled", "boneyard_size": len(boneyard)})
    return hands, boneyard, contenders[0], setup


def _start_round(
    state: GameState,
    r: int,
    engine: int,
    starter: int,
    hands: list[list[Tile]],
    boneyard: list[Tile],
) -> None:
    n = state.n_players
    state.round = r
    state.engine = engine
    state.starter = starter
    state.turn = starter
    state.status = Status.IN_ROUND
    state.hands = [sorted(hand) for hand in hands]
    state.reindex()
    state.boneyard = boneyard
    state.trains = [[] for _ in range(n + 1)]
    state.ends = [engine] * (n + 1)
    state.pending = [0] * (n + 1)
    state.marked = [False] * n
    state.opened = [False] * n
    state.open_doubles = []
    state.forget_legal()
    _reset_turn(state)


def _reset_turn(state: GameState) -> None:
    state.tiles_played = 0
    state.drawn = False
    state.must_follow = None


# --------------------------------------------------------------------------- legal moves


# --------------------------------------------------------------------------- named predicates


def in_opening_turn(state: GameState, seat: int) -> bool:
    """Rule 5: ``seat`` has yet to end its opening turn of this round (its own train only; open
    doubles elsewhere are not its duty yet)."""
    return not state.opened[seat]


def chain_begun(state: GameState, seat: int) -> bool:
    """Rule 5: an opening chain with a tile laid: only more of it, or ``end_turn``."""
    return not state.opened[seat] and state.tiles_played > 0


def own_double_to_follow(state: GameState) -> int | None:
    """Rule 7, ``double_follow: satisfy``: the train of the double just played, which must take
    the next tile; None when no such duty holds."""
    if state.rules.double_follow == _SATISFY:
        return state.must_follow
    return None


def oldest_open_double(state: GameState) -> int | None:
    """Rule 7: the train of the oldest open double, which a turn that begins with open doubles
    must satisfy before anything else; None when there is none (or a double of this turn is
    being followed)."""
    if state.must_follow is None and state.open_doubles:
        return state.open_doubles[0]
    return None


def legal_moves(state: GameState, seat: int) -> list[Move]:
    """Every legal move of ``seat`` now; ``[]`` when it is not that seat's turn or no round runs.

    >>> state = new_game(["ann", "bo"], seed=1)
    >>> legal_moves(state, 1)  # nothing is dealt yet
    []
    >>> _ = deal(state)
    >>> [str(move) for move in legal_moves(state, 1)]  # an opening turn: its own train only
    ['play [0,9] on train 1', 'play [5,9] on train 1', 'play [7,9] on train 1']
    >>> legal_moves(state, 0)
    []
    """
    if seat != state.turn or state.status != _IN_ROUND:
        return []
    # GameState.legal inlined: this runs once per move of every roll-out.
    legal = state._legal
    if legal is None:
        legal = state._legal = _generate(state)
    return legal[:]


def _generate(state: GameState) -> list[Move]:
    """The legal moves of the seat on turn (the caller checked that a round runs). The
    named predicates (``in_opening_turn``, ``own_double_to_follow``, ``oldest_open_double``)
    are inlined: calls are most of the cost of so short a function."""
    seat: int = state.turn  # type: ignore[assignment]  # a seat while a round runs
    if not state.opened[seat]:
        return _opening_moves(state, seat)
    follow = state.must_follow
    if follow is not None and state.rules.double_follow == _SATISFY:
        moves = _train_plays(state, seat, follow)
    elif follow is None and state.open_doubles:
        moves = _train_plays(state, seat, state.open_doubles[0])  # marked or not
    else:
        moves = _open_train_plays(state, seat)
    if moves:
        return moves
    if not state.drawn and state.boneyard:
        return [DRAW]
    return [MARK]


def _train_plays(state: GameState, seat: int, t: int) -> list[Move]:
    get = _MEXICAN_GET if t == len(state.players) else _TRAIN_GET[t]
    return list(map(get, state.index[seat][state.ends[t]]))


def _opening_moves(state: GameState, seat: int) -> list[Move]:
    """Rule 5: plays on the own train; ``end_turn`` once a chain is begun; else draw or mark
    as ``opening_no_play`` says."""
    moves = list(map(_TRAIN_GET[seat], state.index[seat][state.ends[seat]]))
    if state.tiles_played:  # chain_begun
        moves.append(END_TURN)
        return moves
    if moves:
        return moves
    mode = state.rules.opening_no_play
    if mode != _NO_PLAY_MARK and state.boneyard and (mode == _DRAW_UNTIL or not state.drawn):
        return [DRAW]
    return [MARK]


def _open_train_plays(state: GameState, seat: int) -> list[Move]:
    """Plays on the trains ``seat`` may use in a later turn (rule 6): its own, the marked
    ones in seat order, then the Mexican train."""
    n = len(state.players)
    by_pip, ends = state.index[seat], state.ends
    own = by_pip[ends[seat]]
    moves = list(map(_TRAIN_GET[seat], own)) if own else []
    marked = state.marked
    if True in marked:
        for t, m in enumerate(marked):  # a plain loop: cheaper than a comprehension's frame
            if m and t != seat:
                tiles = by_pip[ends[t]]
                if tiles:  # most ends fit nothing: no map object for them
                    moves += map(_TRAIN_GET[t], tiles)
    if state.trains[n] or not own or not state.rules.mexican_needs_own_blocked:
        tiles = by_pip[ends[n]]
        if tiles:
            moves += map(_MEXICAN_GET, tiles)
    return moves


# Every play move object, made once: [train index][tile] for seat trains, and the Mexican train.
_ALL_TILES = full_set(MAX_PIP)
_TRAIN_MOVES: list[dict[Tile, Move]] = [
    {tile: _play_move(tile, str(t)) for tile in _ALL_TILES} for t in range(MAX_PLAYERS_ANY)
]
_MEXICAN_MOVES: dict[Tile, Move] = {tile: _play_move(tile, MEXICAN) for tile in _ALL_TILES}
# Their look-ups, bound once: move generation maps them over a hand's tiles in C.
_TRAIN_GET = [table.__getitem__ for table in _TRAIN_MOVES]
_MEXICAN_GET = _MEXICAN_MOVES.__getitem__
# Every tile in both orientations, made once: a play turns its tile without building one.
_ORIENTED: list[list[Tile]] = [[Tile(a, b) for b in range(MAX_PIP + 1)] for a in range(MAX_PIP + 1)]
_SIMPLE_ACTIONS = (Action.DRAW, Action.MARK, Action.END_TURN)
# Seat train id -> index (a validated play names an existing train).
_SEAT_TRAINS: dict[str, int] = {str(t): t for t in range(MAX_PLAYERS_ANY)}


# --------------------------------------------------------------------------- apply


def apply(state: GameState, seat: int, move: Move) -> list[Event]:
    """Apply ``seat``'s ``move``; return the events. Validates fully before mutating: a refused
    move raises and leaves the state as it was.

    >>> state = new_game(["ann", "bo"], seed=1)
    >>> _ = deal(state)
    >>> apply(state, 1, legal_moves(state, 1)[0])  # the tile, turned to fit the train
    [{'type': 'tile_played', 'seat': 1, 'tile': [9, 0], 'train': '1'}]
    >>> apply(state, 0, Move("mark"))
    Traceback (most recent call last):
    ...
    service.rules.errors.IllegalMove: it is seat 1's turn, not seat 0's
    """
    # The state changes below (or the move is refused): the cached legal list goes either way.
    legal = state._legal
    state._legal = None
    # Fast path: the cached legal list belongs to the seat on turn (it is dropped on every
    # change), and a listed move is well-formed by construction; continue with the listed
    # (canonical) object itself, found by identity first (moves are interned), as equal next.
    if legal is not None and seat == state.turn:
        for listed in legal:
            if listed is move:
                break
        else:
            try:
                move = legal[legal.index(move)]
            except ValueError:
                move = _validate(state, seat, move, legal)
    else:
        move = _validate(state, seat, move, None)
    action = move.action

    # ---- validated: mutate from here on
    if action == _PLAY:
        train = move.train
        assert move.tile is not None and train is not None
        index = len(state.players) if train == MEXICAN else _SEAT_TRAINS[train]
        return _do_play(state, seat, move.tile, index, train)
    events: list[Event] = []
    if action == _DRAW:
        tile = state.boneyard.pop(0)
        insort(state.hands[seat], tile)  # hands stay sorted: stable views and move order
        by_pip = state.index[seat]
        insort(by_pip[tile.a], tile)
        if tile.b != tile.a:
            insort(by_pip[tile.b], tile)
        state.drawn = True
        events.append({"type": "tile_drawn", "seat": seat, "tile": [tile.a, tile.b]})
    elif action == _MARK:
        if not state.marked[seat]:
            state.marked[seat] = True
            events.append({"type": "marker_placed", "seat": seat})
        _end_turn(state, seat, events, after_mark=True)
    else:
        _end_turn(state, seat, events)
    return events


def _validate(state: GameState, seat: int, move: Move, legal: list[Move] | None) -> Move:
    """Full checks of a move (slow path): malformed first, then legality. Returns the move in
    its canonical (interned, normalised) form, or raises without touching the state."""
    if not isinstance(move, Move):
        raise InvalidMove("a move must be a Move object")
    action = move.action
    if action == _PLAY:
        tile = move.tile
        if not isinstance(tile, Tile) or not isinstance(move.train, str):
            raise InvalidMove("a play needs a tile and a train id")
        if max(tile) > state.rules.set or min(tile) < 0:
            raise InvalidMove(
                f"{tile} is not in a double-{state.rules.set} set", code=RuleCode.TILE_NOT_IN_SET
            )
        if state.train_index(move.train) is None:
            raise InvalidMove(
                f"there is no train {move.train!r}; trains are the seat numbers "
                f"0..{state.n_players - 1} and 'mexican'",
                code=RuleCode.UNKNOWN_TRAIN,
            )
        move = _play_move(Tile.of(tile.a, tile.b), move.train)
    elif action not in _SIMPLE_ACTIONS:
        raise InvalidMove(f"unknown action {action!r}")
    if state.status == Status.GAME_OVER:
        raise IllegalMove("the game is over", code=RuleCode.GAME_OVER)
    if state.status != _IN_ROUND:
        raise IllegalMove(
            "no round is running; the host must deal", code=RuleCode.ROUND_NOT_RUNNING
        )
    if seat != state.turn:
        raise IllegalMove(
            f"it is seat {state.turn}'s turn, not seat {seat}'s", code=RuleCode.NOT_YOUR_TURN
        )
    if legal is None:
        legal = _generate(state)
    if move not in legal:
        raise IllegalMove(_explain(state, seat, move, legal))
    return move


def _do_play(state: GameState, seat: int, tile: Tile, t: int, tid: str) -> list[Event]:
    a, b = tile
    state.hands[seat].remove(tile)
    by_pip = state.index[seat]
    by_pip[a].remove(tile)
    if b != a:
        by_pip[b].remove(tile)
    ends = state.ends
    if a != ends[t]:  # orient: the matching end touches the train
        a, b = b, a
        tile = _ORIENTED[a][b]
    state.trains[t].append(tile)
    events: list[Event] = [{"type": "tile_played", "seat": seat, "tile": [a, b], "train": tid}]
    state.tiles_played += 1
    if t == seat and state.marked[seat]:
        state.marked[seat] = False
        events.append({"type": "marker_removed", "seat": seat})
    rules = state.rules
    pending = state.pending
    follows = pending[t]  # tiles the double at the train's end still needed
    double = a == b
    if double or follows:
        ends[t], pending[t] = next_end(ends[t], follows, tile, rules.chicken_foot)
    else:  # the common case of next_end: a plain tile on a plain end
        ends[t] = b
    if follows == 1:
        state.open_doubles.remove(t)
        events.append({"type": "double_satisfied", "seat": seat, "train": tid})
    if double:
        state.open_doubles.append(t)
        events.append({"type": "double_opened", "seat": seat, "train": tid, "tile": [a, a]})
    opening = not state.opened[seat]
    state.must_follow = None
    if not state.hands[seat]:
        if opening and rules.opening_out_waits:
            _end_turn(state, seat, events)  # the round ends once everybody has opened
        else:
            _round_over(state, RoundOverReason.OUT, events)
    elif opening:
        if rules.opening == _SINGLE:
            _end_turn(state, seat, events)
    elif double:
        state.must_follow = t
        state.drawn = False  # each double brings its own single draw
    elif rules.opening_out_waits and not all(state.hands):
        _end_turn(state, seat, events)  # the round may end now
    else:  # _end_turn's common case, inline: a later turn's tile, nobody out
        nxt = seat + 1
        if nxt == len(state.players):
            nxt = 0
        state.turn = nxt
        state.tiles_played = 0
        state.drawn = False
        events.append({"type": "turn_passed", "seat": nxt})
    return events


def _end_turn(state: GameState, seat: int, events: list[Event], after_mark: bool = False) -> None:
    state.opened[seat] = True
    n = len(state.players)
    if state.rules.opening_out_waits and not all(state.hands) and all(state.opened):
        _round_over(state, RoundOverReason.OUT, events)
        return
    # A round someone went out of in an opening turn ends once all have opened, blocked or not.
    if after_mark and not state.boneyard and all(state.hands) and round_blocked(state):
        _round_over(state, RoundOverReason.BLOCKED, events)
        return
    nxt = (seat + 1) % n
    state.turn = nxt
    state.tiles_played = 0  # _reset_turn, inline: this runs on almost every move
    state.drawn = False
    state.must_follow = None
    events.append({"type": "turn_passed", "seat": nxt})


# --------------------------------------------------------------------------- blocked rounds


def round_blocked(state: GameState) -> bool:
    """Rule 8: with the boneyard empty, whether no player could play a tile on any turn to
    come. Players who could not play if their turn began now will mark on it, so their trains
    count as marked, until that changes nothing; a player whose next turn is an opening turn
    without a play counts as able if they could play on the turn after it (opened, own train
    marked). Marks only open trains, so the fixpoint is reached in at most P rounds.
    """
    n = state.n_players
    marked = list(state.marked)
    while True:
        stuck = [s for s in range(n) if not marked[s] and not _could_play_now(state, s, marked)]
        if not stuck:
            break
        for s in stuck:
            marked[s] = True
    return not any(_could_play_later(state, s, marked) for s in range(n))


def _could_play_now(state: GameState, seat: int, marked: list[bool]) -> bool:
    """Whether ``seat`` could play a tile if its turn began now (an opening turn: own train)."""
    if not state.opened[seat]:
        return bool(state.index[seat][state.ends[seat]])
    return _later_turn_play(state, seat, marked)


def _could_play_later(state: GameState, seat: int, marked: list[bool]) -> bool:
    """Whether ``seat`` can ever play: now, or after an opening turn it must mark on."""
    return _could_play_now(state, seat, marked) or _later_turn_play(state, seat, marked)


def _later_turn_play(state: GameState, seat: int, marked: list[bool]) -> bool:
    """A play at the start of a later turn (rules 6-7), with ``marked`` as the markers."""
    by_pip, ends, n = state.index[seat], state.ends, state.n_players
    if state.open_doubles:  # the oldest open double first, whoever's train it is on
        return bool(by_pip[ends[state.open_doubles[0]]])
    if by_pip[ends[seat]]:
        return True
    if any(marked[t] and by_pip[ends[t]] for t in range(n) if t != seat):
        return True
    # The own train has no play, so the Mexican train is open even where the tournament's
    # mexican_needs_own_blocked holds.
    return bool(by_pip[ends[n]])


# --------------------------------------------------------------------------- scoring


def hand_points(state: GameState, seat: int) -> int:
    """Pips left in a hand; the double-blank counts ``double_blank_points`` (rule 8).

    >>> state = new_game(["ann", "bo"], seed=1)
    >>> _ = deal(state)
    >>> hand_points(state, 1) == sum(tile.a + tile.b for tile in state.hands[1])
    True
    """
    blank = state.rules.double_blank_points
    return sum(
        blank if tile.a == 0 and tile.b == 0 else tile.a + tile.b for tile in state.hands[seat]
    )


def _round_over(state: GameState, reason: RoundOverReason, events: list[Event]) -> None:
    n = state.n_players
    out = [s for s in range(n) if not state.hands[s]]
    scores = [hand_points(state, s) for s in range(n)]
    for s in range(n):
        state.scores[s].append(scores[s])
    totals = state.totals()
    state.turn = None
    _reset_turn(state)
    events.append(
        {
            "type": "round_over",
            "round": state.round,
            "reason": reason,
            "out": out,
            "scores": scores,
            "totals": totals,
        }
    )
    if state.round >= state.rules.rounds:
        state.status = Status.GAME_OVER
        state.winners = winners(state.scores)
        events.append({"type": "game_over", "winners": state.winners, "totals": totals})
    else:
        state.status = Status.ROUND_OVER


def winners(scores: list[list[int]]) -> list[int]:
    """Lowest total; then most zero rounds; then lowest single non-zero round; then shared.

    >>> winners([[10, 0], [5, 5], [0, 10]])  # tied totals: seats 0 and 2 went out once
    [0, 2]
    >>> winners([[10, 0], [0, 12]])
    [0]
    """

    def key(rounds: list[int]) -> tuple[int, int, int]:
        nonzero = [x for x in rounds if x]
        return (sum(rounds), -(len(rounds) - len(nonzero)), min(nonzero) if nonzero else 0)

    keys = [key(rounds) for rounds in scores]
    best = min(keys)
    return [s for s, k in enumerate(keys) if k == best]


# --------------------------------------------------------------------------- explanations


def _explain(state: GameState, seat: int, move: Move, legal: list[Move]) -> str:
    """Why a well-formed move is not legal now: one human sentence (error path only)."""
    if move.action == Action.PLAY:
        return _explain_play(state, seat, move)
    rules = state.rules
    if move.action != Action.END_TURN and chain_begun(state, seat):
        return (
            "after the first tile of your opening turn you may only add tiles to your own "
            "train or end_turn"
        )
    if any(m.action == Action.PLAY for m in legal):
        return f"you have a legal play, so you must play, not {move.action}"
    if move.action == Action.DRAW:
        if not state.boneyard:
            return "the boneyard is empty"
        if in_opening_turn(state, seat) and rules.opening_no_play == OpeningNoPlay.MARK:
            return (
                "with opening_no_play 'mark' a player who cannot start their train marks "
                "without drawing"
            )
        return "you have already drawn this turn"
    if move.action == Action.MARK:
        return "you must draw before you mark while the boneyard has tiles"
    return "end_turn only ends an opening-turn chain after at least one tile"


def _explain_play(state: GameState, seat: int, move: Move) -> str:
    tile, tid = move.tile, move.train
    assert tile is not None and tid is not None
    t = state.train_index(tid)
    assert t is not None
    if tile not in state.hands[seat]:
        return f"you do not hold {tile}"
    refusal = _train_refusal(state, seat, t, tid)
    if refusal:
        return refusal
    end = state.ends[t]
    if end not in tile:
        if not state.trains[t]:
            return f"{tile} cannot start train {tid}: its first tile must bear the engine {end}"
        return f"{tile} does not match train {tid}, whose open end is {end}"
    if chain_begun(state, seat) and state.rules.opening == Opening.SINGLE:
        return "a single opening turn is exactly one tile"
    return f"{move} is not legal now"


def _train_refusal(state: GameState, seat: int, t: int, tid: str) -> str | None:
    """Why ``seat`` may not play on train ``t`` at all now, or None when it may."""
    rules = state.rules
    n = state.n_players
    if in_opening_turn(state, seat):
        if t != seat:
            return "during your opening turn you may only play on your own train"
    elif (follow := own_double_to_follow(state)) is not None:
        if t != follow:
            return f"you must follow the double you just played on train {state.train_id(follow)}"
    elif (oldest := oldest_open_double(state)) is not None and t != oldest:
        return f"the double on train {state.train_id(oldest)} is open and must be satisfied first"
    elif t != seat and t != n and not state.marked[t]:
        return f"train {tid} belongs to seat {t} and carries no marker"
    elif t == n and not state.trains[n] and rules.mexican_needs_own_blocked:
        end = state.ends[seat]
        if any(end in x for x in state.hands[seat]):
            return (
                "the Mexican train may only be started by a player who has no play "
                "on their own train"
            )
    return None
