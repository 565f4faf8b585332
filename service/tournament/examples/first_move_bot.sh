#!/usr/bin/env bash
# The smallest complete bot: plays one seat by posting the first legal move, until the game ends.
# usage: SEAT_TOKEN=... [HOST_TOKEN=...] first_move_bot.sh SERVER GAME_ID   (needs curl and jq)
# With HOST_TOKEN it also deals each round. Any language works the same way: GET legal-moves,
# POST one of the listed move objects verbatim to /moves.
# The tokens come from the environment and reach curl as header files, never as arguments: a
# command line is readable by every user of the machine (ps, /proc/<pid>/cmdline).
set -euo pipefail
if [ $# -ne 2 ] || [ -z "${SEAT_TOKEN:-}" ]; then
  echo "usage: SEAT_TOKEN=... [HOST_TOKEN=...] $0 SERVER GAME_ID" >&2
  exit 2
fi
S=$1 G=$2
# printf is a builtin: the token it prints is in no process's arguments.
bearer() { printf 'Authorization: Bearer %s\n' "$1"; }
while :; do
  status=$(curl -sf "$S/api/v1/games/$G" | jq -r .status)
  case $status in
    game_over)
      curl -sf "$S/api/v1/games/$G/score" | jq -c '{totals, winners}'
      exit 0 ;;
    waiting_deal|round_over)
      # 409 when another client dealt first: harmless, look again.
      if [ -n "${HOST_TOKEN:-}" ]; then
        curl -s -o /dev/null -X POST "$S/api/v1/games/$G/deal" -H @<(bearer "$HOST_TOKEN")
      fi
      sleep 0.1; continue ;;
  esac
  listed=$(curl -sf "$S/api/v1/games/$G/legal-moves" -H @<(bearer "$SEAT_TOKEN"))
  move=$(jq -c '.moves[0] // empty' <<<"$listed")
  if [ -z "$move" ]; then sleep 0.1; continue; fi   # not our turn
  version=$(jq -r .version <<<"$listed")
  # If-Match: act only on the state we looked at (412 otherwise: just look again).
  # Idempotency-Key: a retry of this exact request would apply once.
  curl -s -o /dev/null -w "%{http_code} $move\n" -X POST "$S/api/v1/games/$G/moves" -H @<(bearer "$SEAT_TOKEN") \
    -H 'Content-Type: application/json' -H "If-Match: \"$version\"" \
    -H "Idempotency-Key: \"$(cat /proc/sys/kernel/random/uuid)\"" -d "$move"
done
