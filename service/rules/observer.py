"""Who sees what: one typed view of a game for one audience, and all that is shown from it.

The audience is a :class:`Role`: the host (every hidden tile: its events are whole), one seat
(its own hand and its own drawn tiles), or the public (the table and the hand sizes, never a
hidden tile; the table token observes as the public does). A :class:`View` holds exactly what
its audience sees, so what is derived from it cannot show more:

- the game view JSON of the API (:meth:`View.to_json`, :func:`game_view`);
- the events of a change as a reader sees them (:func:`visible_events`), and the key that lets
  every reader of one audience share one rendering of a log entry (:func:`audience`);
- the input of the bots and of the sampler (a seat's view: :func:`seat_view`), which never see
  another hand, the boneyard's order or the seed (the seed fixes every deal);
- a seat's own legal moves on its turn (:func:`turn_moves`), which its answers carry.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.rules.engine import legal_moves
from service.rules.events import Event, TileDrawn
from service.rules.options import Rules, resolve_rules
from service.rules.state import GameState
from service.rules.tiles import Move, Tile, full_set
from service.rules.vocabulary import MEXICAN, Role, RoleKind, Status

__all__ = [
    "View",
    "audience",
    "game_view",
    "observe",
    "score_view",
    "seat_view",
    "turn_moves",
    "visible_events",
]

_WAITING_DEAL = Status.WAITING_DEAL
#: The audience keys of :func:`audience` that are not a seat number (the seat on turn's is
#: ``(TURN_AUDIENCE, seat)``).
HOST_AUDIENCE, PUBLIC_AUDIENCE, TURN_AUDIENCE = "host", "public", "turn"
_HOST = RoleKind.HOST


@dataclass(frozen=True, slots=True)
class View:
    """What ``role`` sees of a game. Trains are oriented from the engine out; index ``P`` is
    the Mexican train; ``ends`` are the trains' open ends (the engine's number for an empty
    one); ``hand`` is the seat's own, empty for any other audience."""

    role: Role
    players: tuple[str, ...]
    rules: Rules
    status: Status
    round: int  # 0 before the first deal
    engine: int | None
    turn: int | None
    starter: int | None
    hand: tuple[Tile, ...]
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    trains: tuple[tuple[Tile, ...], ...]
    ends: tuple[int, ...]
    marked: tuple[bool, ...]
    opened: tuple[bool, ...]
    open_doubles: tuple[int, ...]  # train indices, oldest first
    scores: tuple[tuple[int, ...], ...]  # per finished round, per seat (public)
    drawn: bool
    tiles_played: int
    must_follow: int | None
    winners: tuple[int, ...] | None

    @property
    def seat(self) -> int:
        """The seat whose view this is (bots and samplers only see seats' views)."""
        seat = self.role.seat
        if seat is None:
            raise ValueError(f"the view of {self.role} has no seat")
        return seat

    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def dealt(self) -> bool:
        return self.status != _WAITING_DEAL

    def train_id(self, index: int) -> str:
        return MEXICAN if index == len(self.players) else str(index)

    def in_opening(self) -> bool:
        """Whether the seat has yet to finish its opening turn of this round."""
        return not self.opened[self.seat]

    def unseen(self) -> list[Tile]:
        """The tiles the seat cannot see, in canonical order (the engine is on the table)."""
        if self.engine is None:
            return []
        seen = set(self.hand)
        seen.add(Tile(self.engine, self.engine))
        for train in self.trains:
            seen.update(tile.normal for tile in train)
        return [tile for tile in full_set(self.rules.set) if tile not in seen]

    def to_json(self) -> dict[str, Any]:
        """The game view of the API (docs/api.md §6) minus ``game_id`` and ``version``."""
        view: dict[str, Any] = {
            "status": self.status,
            "round": max(self.round, 1),
            "rounds": self.rules.rounds,
            "engine": self.engine,
            "turn": self.turn,
            "starter": self.starter if self.dealt else None,
            "players": self._players_json(),
            "trains": self._trains_json() if self.dealt else [],
            "open_doubles": [self.train_id(t) for t in self.open_doubles],
            "boneyard_size": self.boneyard_size,
            "rules": self.rules.to_json(),
            "turn_state": {
                "drawn": self.drawn,
                "tiles_played": self.tiles_played,
                "must_follow": None
                if self.must_follow is None
                else self.train_id(self.must_follow),
            },
            "winners": None if self.winners is None else list(self.winners),
        }
        if self.role.seat is not None:
            view["hand"] = list(map(list, self.hand))
        return view

    def _players_json(self) -> list[dict[str, Any]]:
        return [
            {
                "seat": s,
                "name": self.players[s],
                "hand_size": self.hand_sizes[s],
                "score": sum(self.scores[s]),
                "marked": self.marked[s],
                "opened": self.opened[s],
            }
            for s in range(len(self.players))
        ]

    def _trains_json(self) -> list[dict[str, Any]]:
        n = len(self.players)
        return [
            {
                "id": self.train_id(t),
                "owner": None if t == n else t,
                "tiles": list(map(list, tiles)),
                "open_end": self.ends[t],
                "marked": False if t == n else self.marked[t],
                "started": bool(tiles),
            }
            for t, tiles in enumerate(self.trains)
        ]

    @classmethod
    def from_json(
        cls,
        view: Mapping[str, Any],
        seat: int | None = None,
        scores: Sequence[Sequence[int]] | None = None,
    ) -> View:
        """The view behind a game view JSON, as a client (an HTTP bot) reads it. ``seat``
        defaults to the seat on turn when the JSON holds a hand (a bot is asked on its turn).

        The game view carries totals, not per-round scores: pass them when known (the score
        view has them). Without them each total stands as the first finished round, the rest
        zero; that changes nothing within a round."""
        players = view["players"]
        n = len(players)
        status = Status(view["status"])
        rnd = 0 if status == _WAITING_DEAL else int(view["round"])
        ids = {str(s): s for s in range(n)} | {MEXICAN: n}
        trains: list[tuple[Tile, ...]] = [()] * (n + 1)
        engine = view.get("engine")
        ends = [0 if engine is None else int(engine)] * (n + 1)
        for train in view.get("trains") or []:
            trains[ids[train["id"]]] = tuple(Tile(int(a), int(b)) for a, b in train["tiles"])
            ends[ids[train["id"]]] = int(train["open_end"])
        ts = view.get("turn_state") or {}
        follow, winners, hand = ts.get("must_follow"), view.get("winners"), view.get("hand")
        role = (
            Role.PUBLIC
            if hand is None
            else Role.of_seat(int(view["turn"]) if seat is None else seat)
        )
        return cls(
            role=role,
            players=tuple(p["name"] for p in players),
            rules=resolve_rules(view["rules"]["preset"], view["rules"]["options"], n),
            status=status,
            round=rnd,
            engine=engine,
            turn=view.get("turn"),
            starter=view.get("starter"),
            hand=tuple(sorted(Tile.of(int(a), int(b)) for a, b in hand or [])),
            hand_sizes=tuple(int(p["hand_size"]) for p in players),
            boneyard_size=int(view["boneyard_size"]),
            trains=tuple(trains),
            ends=tuple(ends),
            marked=tuple(bool(p["marked"]) for p in players),
            opened=tuple(bool(p["opened"]) for p in players),
            open_doubles=tuple(ids[t] for t in view.get("open_doubles") or []),
            scores=_scores(players, status, rnd, scores),
            drawn=bool(ts.get("drawn", False)),
            tiles_played=int(ts.get("tiles_played", 0)),
            must_follow=None if follow is None else ids[follow],
            winners=None if winners is None else tuple(winners),
        )


def _scores(
    players: Sequence[Mapping[str, Any]],
    status: Status,
    rnd: int,
    scores: Sequence[Sequence[int]] | None,
) -> tuple[tuple[int, ...], ...]:
    if scores is None:
        finished = rnd - 1 if status == Status.IN_ROUND else rnd
        scores = [[int(p["score"])] + [0] * (finished - 1) if finished else [] for p in players]
    return tuple(tuple(int(x) for x in s) for s in scores)


def observe(state: GameState, role: Role) -> View:
    """What ``role`` sees of ``state``: the one place a hand is taken into a view."""
    seat = role.seat
    own = seat is not None and 0 <= seat < state.n_players
    return View(
        role=role if own or seat is None else Role.PUBLIC,
        players=tuple(state.players),
        rules=state.rules,
        status=state.status,
        round=state.round,
        engine=state.engine,
        turn=state.turn,
        starter=state.starter,
        hand=tuple(state.hands[seat]) if own and seat is not None else (),
        hand_sizes=tuple(map(len, state.hands)),
        boneyard_size=len(state.boneyard),
        trains=tuple(map(tuple, state.trains)),
        ends=tuple(state.ends),
        marked=tuple(state.marked),
        opened=tuple(state.opened),
        open_doubles=tuple(state.open_doubles),
        scores=tuple(map(tuple, state.scores)),
        drawn=state.drawn,
        tiles_played=state.tiles_played,
        must_follow=state.must_follow,
        winners=None if state.winners is None else tuple(state.winners),
    )


def _role_of(seat: int | None) -> Role:
    return Role.PUBLIC if seat is None or type(seat) is not int else Role.of_seat(seat)


def seat_view(state: GameState, seat: int) -> View:
    """What ``seat`` can see of ``state`` (the bots' and the sampler's input)."""
    return observe(state, Role.of_seat(seat))


def game_view(state: GameState, seat: int | None) -> dict[str, Any]:
    """The API's game view minus ``game_id``/``version``; ``hand`` only for a valid ``seat``.

    >>> from service.rules import new_game
    >>> view = game_view(new_game(["ann", "bo"], seed=1), None)
    >>> str(view["status"]), [p["name"] for p in view["players"]], "hand" in view
    ('waiting_deal', ['ann', 'bo'], False)
    """
    return observe(state, _role_of(seat)).to_json()


def turn_moves(state: GameState, role: Role) -> list[Move] | None:
    """The moves ``role`` may make now: a seat's legal moves while it is its turn in a running
    round, so that its client needs no second request; None for anyone else, the host too.

    >>> from service.rules import deal, new_game
    >>> state = new_game(["ann", "bo"], seed=1)
    >>> turn_moves(state, Role.of_seat(1)) is None  # nothing is dealt yet
    True
    >>> _ = deal(state)
    >>> moves = turn_moves(state, Role.of_seat(state.turn))
    >>> moves == legal_moves(state, state.turn), turn_moves(state, Role.HOST)
    (True, None)
    """
    seat = role.seat
    if seat is None or state.status is not Status.IN_ROUND or state.turn != seat:
        return None
    return legal_moves(state, seat)


def score_view(state: GameState) -> dict[str, Any]:
    """Per-round scores, totals, zero-round counts and the winners once the game is over
    (public: every reader sees the same)."""
    totals = state.totals()
    return {
        "status": state.status,
        "round": max(state.round, 1),
        "rounds": state.rules.rounds,
        "players": [
            {
                "seat": s,
                "name": state.players[s],
                "rounds": list(state.scores[s]),
                "total": totals[s],
                "zero_rounds": sum(1 for x in state.scores[s] if x == 0),
            }
            for s in range(state.n_players)
        ],
        "totals": totals,
        "winners": None if state.winners is None else list(state.winners),
    }


def visible_events(events: list[Event], seat: int | Role | None) -> list[Event]:
    """The events as a seat (or role) may see them: the host sees them whole; anyone else
    sees no tile another seat drew.

    >>> drawn = [{"type": "tile_drawn", "seat": 0, "tile": [3, 5]}]
    >>> visible_events(drawn, 1), visible_events(drawn, 0) == drawn
    ([{'type': 'tile_drawn', 'seat': 0}], True)
    """
    role = seat if isinstance(seat, Role) else _role_of(seat)
    if role.is_host:
        return events
    out: list[Event] = []
    for event in events:
        if event["type"] == "tile_drawn" and event["seat"] != role.seat:
            hidden: TileDrawn = {"type": "tile_drawn", "seat": event["seat"]}
            event = hidden
        out.append(event)
    return out


def audience(role: Role, drawers: frozenset[int], turn: int | None = None) -> Hashable:
    """Readers with the same key are shown the same of an entry whose ``drawers`` drew in it
    and after which it is ``turn``'s turn, so one rendering serves them all: the host, the seat
    on turn (its legal moves), a seat that drew, everyone else. Asked for every reader of every
    entry: plain comparisons only."""
    seat = role.seat
    if seat is None:
        return HOST_AUDIENCE if role.kind is _HOST else PUBLIC_AUDIENCE
    if seat == turn:
        return (TURN_AUDIENCE, seat)
    return seat if seat in drawers else PUBLIC_AUDIENCE
