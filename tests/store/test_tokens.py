"""Public ids are safe on a command line: none starts with "-", which a command line (argparse,
getopt) reads as an option; the example bots take a game id as an argument."""

from __future__ import annotations

from service.store.keys import GAME_ID_RE
from service.store.players import new_player_id
from service.store.tokens import OPTION_LEAD, new_game_id

#: token_urlsafe leads with "-" one time in 64: 10,000 draws would show it about 156 times.
DRAWS = 10_000


def test_no_game_or_player_id_starts_with_a_dash() -> None:
    games = [new_game_id() for _ in range(DRAWS)]
    players = [new_player_id() for _ in range(DRAWS)]
    assert not [made for made in games + players if made.startswith(OPTION_LEAD)]
    assert all(GAME_ID_RE.fullmatch(made) and len(made) == 12 for made in games)
    # Every other character stays possible in the lead: the ids lose no more than that one.
    assert len({made[0] for made in games}) == 63
