#!/usr/bin/env bash
# The smallest complete bot: plays one seat by posting the first legal move, until the game ends.
# usage: first_move_bot.sh SERVER GAME_ID SEAT_TOKEN [HOST_TOKEN]   (needs curl and jq)
# With HOST_TOKEN it also deals each round. Any language works the same way: GET legal-moves,
# POST one of the listed move objects verbatim to /moves.
set -euo pipefail
S=$1 G=$2 T=$3 H=${4:-}
auth=(-H "Authorization: Bearer $T")
while :; do
  status=$(curl -sf "$S/api/v1/games/$G" | jq -r .status)
  case $status in
    game_over)
      curl -sf "$S/api/v1/games/$G/score" | jq -c '{totals, winners}'
      exit 0 ;;
    waiting_deal|round_over)
      # 409 when another client dealt first: harmless, look again.
      [ -n "$H" ] && curl -s -o /dev/null -X POST "$S/api/v1/games/$G/deal" -H "Authorization: Bearer $H"
      sleep 0.1; continue ;;
  esac
  listed=$(curl -sf "$S/api/v1/games/$G/legal-moves" "${auth[@]}")
  move=$(jq -c '.moves[0] // empty' <<<"$listed")
  if [ -z "$move" ]; then sleep 0.1; continue; fi   # not our turn
  version=$(jq -r .version <<<"$listed")
  # If-Match: act only on the state we looked at (412 otherwise: just look again).
  # Idempotency-Key: a retry of this exact request would apply once.
  curl -s -o /dev/null -w "%{http_code} $move\n" -X POST "$S/api/v1/games/$G/moves" "${auth[@]}" \
    -H 'Content-Type: application/json' -H "If-Match: \"$version\"" \
    -H "Idempotency-Key: \"$(cat /proc/sys/kernel/random/uuid)\"" -d "$move"
done
