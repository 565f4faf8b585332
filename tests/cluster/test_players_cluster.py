"""The players' loop on a 3-master Redis Cluster: the live tests of tests/players/ that need
only a running stack, re-run unchanged on gunicorn and the background worker with
``REDIS_CLUSTER=1``. A seek bucket, a player, the webhook deliveries' queue, the lobby and each
game live in slots of their own, so every script and pipeline that spans them is exercised where
a single server would hide a cross-slot command. (The tests that refuse a Redis user commands,
or read a game's keys with a single-node client, stay on one server.)"""

from collections.abc import Iterator

import pytest

from devstack.gunicorn import start_gunicorn
from devstack.redis_cluster import LocalRedisCluster
from tests.players.conftest import ENV
from tests.players.test_bad_input import test_a_refused_url_is_never_called  # noqa: F401
from tests.players.test_lobby import (  # noqa: F401
    test_a_bad_seek_is_refused_and_seats_nobody,
    test_a_player_is_never_seated_twice_at_one_seek_table,
    test_a_public_table_is_listed_until_its_seats_are_filled,
    test_a_seek_retried_with_its_idempotency_key_gets_its_first_seat,
    test_open_seats_go_to_bots_after_the_wait_and_the_game_starts,
)
from tests.players.test_presence import (  # noqa: F401
    test_a_request_makes_its_seat_present_for_the_window,
    test_presence_messages_on_sse_have_no_id,
)
from tests.players.test_ratings import (  # noqa: F401
    test_a_dealt_rated_game_reopens_no_seat_so_no_second_account_reads_its_hand,
    test_a_rated_game_needs_a_player_or_a_bot_in_every_seat,
    test_a_rated_game_rates_every_seat_once_as_openskill_does,
    test_a_seat_of_a_rated_game_reopened_before_the_deal_is_joined_by_a_player_only,
    test_the_leaderboards_list_people_and_bots_apart,
)
from tests.players.test_rematch import (  # noqa: F401
    test_a_dealing_rematch_a_seat_did_not_claim_waits_for_it_to_be_taken,
    test_a_finished_games_stream_ends_with_204_once_the_wait_is_over,
    test_a_long_poll_on_a_finished_game_waits_for_its_rematch,
    test_a_rematch_asked_with_a_stale_if_match_makes_nothing,
    test_a_rematch_with_a_body_is_refused_and_makes_nothing,
    test_a_seat_nobody_claims_becomes_open,
    test_every_seat_claims_its_place_and_watchers_see_the_rematch,
    test_no_rematch_before_the_end_nor_without_a_seat,
    test_two_first_calls_at_once_make_one_rematch,
)
from tests.players.test_webhooks import (  # noqa: F401
    hooks,
    test_a_failed_delivery_is_retried_with_backoff,
    test_a_player_and_a_webhook_retried_with_their_idempotency_key_are_made_once,
    test_a_seat_change_while_the_turn_stays_sends_no_your_turn,
    test_game_over_and_rematch_reach_every_players_webhook,
    test_only_the_player_manages_its_webhooks,
    test_your_turn_is_signed_and_tells_no_secret,
)


@pytest.fixture(scope="module")
def server(own_cluster: LocalRedisCluster) -> Iterator[str]:
    """The stack on a cluster of this module's own: its worker takes due seeks, clocks and
    deliveries by the real time, which the session cluster's live server would race for."""
    env = {**ENV, "REDIS_CLUSTER": "1"}
    with start_gunicorn(own_cluster.url, workers=2, env=env) as base:
        yield base
