#!/usr/bin/env bash
# The smallest complete bot: plays one seat by posting the first legal move, until the game ends.
# usage: SEAT_TOKEN=... [HOST_TOKEN=...] first_move_bot.sh SERVER GAME_ID   (needs curl and jq)
# With HOST_TOKEN it also deals each round. Any language works the same way: the seat's view
# carries its `legal_moves` on its turn, and so does the answer to its move while the turn goes
# on; POST one of them verbatim to /moves. Between its turns it waits on a long-poll of the log,
# so it makes about one request per change of the game, never a poll loop.
# The tokens come from the environment and reach curl as header files, never as arguments: a
# command line is readable by every user of the machine (ps, /proc/<pid>/cmdline).
set -euo pipefail
if [ $# -ne 2 ] || [ -z "${SEAT_TOKEN:-}" ]; then
  echo "usage: SEAT_TOKEN=... [HOST_TOKEN=...] $0 SERVER GAME_ID" >&2
  exit 2
fi
S=$1 G=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# printf is a builtin: the token it prints is in no process's arguments.
bearer() { printf 'Authorization: Bearer %s\n' "$1"; }

# call METHOD PATH TOKEN_VARIABLE [curl arguments]: the answer's status in $code, its body in
# $body (the token is named, not passed, so that it is in no argument list). A 429
# or a 503 is waited out (Retry-After) and sent again as it was, Idempotency-Key included, so a
# write whose answer was lost applies once; so is a request that got no answer, 5 times at most.
call() {
  local method=$1 path=$2 who=$3 unanswered=0
  shift 3
  while :; do
    code=$(curl -s -o "$work/body" -D "$work/headers" -w '%{http_code}' -X "$method" \
      -H @<(bearer "${!who}") "$@" "$S$path") || code=000
    case $code in
      429|503) sleep "$(retry_after)" ;;
      000)
        unanswered=$((unanswered + 1))
        if [ $unanswered -ge 5 ]; then echo "$S does not answer" >&2; exit 1; fi
        sleep 1 ;;
      *) body=$(cat "$work/body"); return ;;
    esac
  done
}

# The seconds an answer's Retry-After asks for (1 when it names none).
retry_after() {
  awk 'tolower($1) == "retry-after:" {s = $2 + 0} END {print (s > 0 ? s : 1)}' "$work/headers"
}

key() { printf 'Idempotency-Key: "%s"\n' "$(cat /proc/sys/kernel/random/uuid)"; }

# The seat's view: status, version and, on its turn, legal_moves.
look() {
  call GET "/api/v1/games/$G" SEAT_TOKEN
  if [ "$code" != 200 ]; then echo "GET game: $code $body" >&2; exit 1; fi
  view=$body
}

# Until the game changes after $version (at most 30 s). An entry after which it is this seat's
# turn carries its legal_moves: that is the next view, with no look. Other entries are waited
# past, unless a round ended (look again: to deal, or to see the game over).
wait_change() {
  call GET "/api/v1/games/$G/events?after=$version&wait=30" SEAT_TOKEN
  if [ "$code" != 200 ]; then look; return; fi   # e.g. 409 after_ahead_of_log: start afresh
  local last ended
  last=$(jq -c '.entries[-1] // empty' <<<"$body")
  ended=$(jq '[.entries[].events[].type] | any(. == "round_over" or . == "game_over")' <<<"$body")
  if [ -z "$last" ] || [ "$ended" = true ]; then look; return; fi
  view=$(jq -c '{status: "in_round", version, legal_moves}' <<<"$last")
}

look
while :; do
  status=$(jq -r .status <<<"$view")
  version=$(jq -r .version <<<"$view")
  case $status in
    game_over)
      call GET "/api/v1/games/$G/score" SEAT_TOKEN
      jq -c '{totals, winners}' <<<"$body"
      exit 0 ;;
    waiting_deal|round_over)
      if [ -n "${HOST_TOKEN:-}" ]; then
        # 412 or 409 when another client dealt first: harmless, look again.
        call POST "/api/v1/games/$G/deal" HOST_TOKEN -H "If-Match: \"$version\"" -H "$(key)"
        look
      else
        wait_change
      fi
      continue ;;
  esac
  move=$(jq -c '.legal_moves[0] // empty' <<<"$view")
  if [ -z "$move" ]; then wait_change; continue; fi   # not our turn
  # If-Match: act only on the state we looked at (412 otherwise: look again).
  # Idempotency-Key: a retry of this exact request applies once.
  call POST "/api/v1/games/$G/moves" SEAT_TOKEN -H 'Content-Type: application/json' \
    -H "If-Match: \"$version\"" -H "$(key)" -d "$move"
  echo "$code $move"
  if [ "$code" = 200 ]; then view=$body; else look; fi
done
