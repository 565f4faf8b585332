"""The players resource's access to the store (players are no game: no game transaction)."""

from __future__ import annotations

from service.bots.registry import BOTS
from service.store.hooks import MAX_HOOKS, Hook, HookEvent
from service.store.players import Player, PlayerKind, bot_player_id

__all__ = [
    "HookEvent",
    "Player",
    "PlayerKind",
    "bot_player_id",
    "calling_player",
    "create_player",
    "find_player",
    "leaderboard",
    "register_webhook",
    "remove_webhook",
    "webhooks",
]

from ..codes import Problem
from ..config import settings
from ..limits import AddressCap, take_address_slot
from ..problems import ApiError, RateLimitPolicy
from ..store_access import store
from ..web import UNAUTHORIZED_HEADERS, bearer_token, missing_token
from ..webhook_urls import REGISTRATION_LOOKUP_SECONDS, LookupsBusy, allowed_hosts, refusal

#: A registration whose lookup did not end in time is tried again after this many seconds.
LOOKUP_RETRY_SECONDS = round(REGISTRATION_LOOKUP_SECONDS)


def create_player(name: str) -> tuple[Player, str]:
    return store().players.create(name)


def find_player(player_id: str) -> Player:
    found = store().players.get(player_id)
    level = player_id.removeprefix("bot-")
    if found is None and player_id == bot_player_id(level) and level in BOTS:
        found = store().players.ensure_bot(level)
    if found is None:
        raise ApiError(Problem.PLAYER_NOT_FOUND, f"There is no player {player_id!r}.")
    return found


def calling_player(player_id: str | None = None) -> Player:
    """The player of the request's player token (401 without one, 403 for another player)."""
    token = bearer_token()
    if token is None:
        raise missing_token("Send the player token as a bearer token.")
    found = store().players.identify(token)
    if found is None:
        raise ApiError(
            Problem.INVALID_TOKEN, "The token is no player's.", headers=UNAUTHORIZED_HEADERS
        )
    if player_id is not None and found.player_id != player_id:
        raise ApiError(Problem.NOT_THIS_PLAYER, "This token is another player's.")
    return found


def leaderboard(kind: PlayerKind, limit: int) -> list[Player]:
    return store().players.leaderboard(kind, limit)


def register_webhook(player: Player, url: str, events: list[HookEvent]) -> Hook:
    """A new webhook of ``player``, once its URL passes the policy (service/api/webhook_urls)."""
    why = _refusal(player, url)
    if why is not None:
        raise ApiError(Problem.WEBHOOK_URL_NOT_ALLOWED, why)
    hook = store().hooks.register(player.player_id, url, events)
    if hook is None:
        raise ApiError(
            Problem.TOO_MANY_WEBHOOKS, f"A player has at most {MAX_HOOKS} webhooks: remove one."
        )
    return hook


def _refusal(player: Player, url: str) -> str | None:
    """Why the policy refuses ``url``; a 503 when its name was not looked up in time. The check
    holds one of the caller's address's ``WEBHOOK_LOOKUPS_PER_ADDRESS`` slots (429 when all are
    held): it may hold its server thread for REGISTRATION_LOOKUP_SECONDS."""
    values = settings()
    limit = AddressCap(
        RateLimitPolicy.WEBHOOK_LOOKUPS,
        "webhook registrations waiting for their URL's check",
        values.webhook_lookups_per_address,
        LOOKUP_RETRY_SECONDS + 60,
        LOOKUP_RETRY_SECONDS,
    )
    release = take_address_slot(store().webhook_lookup_slots, limit)
    try:
        return refusal(url, allowed_hosts(values.webhook_allow_hosts), player.player_id)
    except (TimeoutError, LookupsBusy) as err:
        raise ApiError(
            Problem.WEBHOOK_LOOKUP_TIMEOUT,
            f"The URL's host name was not looked up in time: {err}. Try again later.",
            headers={"Retry-After": str(LOOKUP_RETRY_SECONDS)},
        ) from None
    finally:
        release()


def webhooks(player: Player) -> list[Hook]:
    return store().hooks.of_player(player.player_id)


def remove_webhook(player: Player, hook_id: str) -> None:
    if not store().hooks.remove(player.player_id, hook_id):
        raise ApiError(Problem.WEBHOOK_NOT_FOUND, f"This player has no webhook {hook_id!r}.")
