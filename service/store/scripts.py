"""Lua scripts, run atomically by Redis. Each is registered once per client (EVALSHA).

Every key a script touches arrives in ``KEYS`` (cluster-safe: all share the game's hash tag).
"""

from __future__ import annotations

# Records are appended a thousand at a time: Lua's unpack fails past about 8,000 values, and a
# script that fails midway keeps what it wrote before (a version without its records).

# The due set (KEYS: the game's, keys.due_key; the game's id is the member): when the server
# owes the game a change (a bot's move or a deal now, a turn clock, a fill), written by the
# same script as the change, so that no lost write after it (the work queue's) can leave a
# stored change that nobody will look at (service/store/due.py). ARGV: the time in ms, or ''
# when the server owes the game nothing.
_SET_DUE = """
local function set_due(key, game, due)
  if due == '' then redis.call('ZREM', key, game) else redis.call('ZADD', key, due, game) end
end
"""

# KEYS[1] = game hash  KEYS[2] = game log  KEYS[3] = the game's due set (above)
# ARGV[1] = TTL seconds (the caller's choice: short for a game never dealt)
# ARGV[2] = the game's id  ARGV[3] = its due time (above)
# ARGV[4] = n, the number of hash field/value pairs that follow
# ARGV[5 .. 4+2n] = the game's fields  ARGV[5+2n ..] = the first log records
# The version is the number of records. Returns 1 when created, 0 when the id is taken.
CREATE_GAME = (
    _SET_DUE
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local last = 4 + 2 * tonumber(ARGV[4])
local version = #ARGV - last
redis.call('HSET', KEYS[1], 'v', version, unpack(ARGV, 5, last))
for i = last + 1, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
set_due(KEYS[3], ARGV[2], ARGV[3])
return 1
"""
)

# KEYS[1] = game hash  KEYS[2] = the game's due set  ARGV[1] = the game's id
# ARGV[2] = the version the caller read  ARGV[3] = the due time it found (as above)
# Sets the game's due time unless a change was stored since the read (that change set its
# own); a game gone leaves the set. Returns 1 when set.
SET_DUE = (
    _SET_DUE
    + """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
if cur ~= ARGV[2] then return 0 end
set_due(KEYS[2], ARGV[1], ARGV[3])
return 1
"""
)

# KEYS[1] = game hash  KEYS[2] = game log  KEYS[3] = the game's wake-up channel
# (keys.wakeup_channel)  KEYS[4] = the game's presence hash  KEYS[5] = the game's due set
# (above)  KEYS[6] = idempotency key (when ARGV[5] is not 0)  then, optionally, a one-time
# ticket the change spends (a transfer's): set to ``spent`` (transfers.SPENT) with its TTL
# kept, if it still exists
# ARGV[1] = expected version  ARGV[2] = TTL seconds (as above)  ARGV[3] = n field/value pairs
# ARGV[4] = response kept under the idempotency key  ARGV[5] = its TTL seconds (0: no key)
# ARGV[6] = the most entries the game's log may hold
# ARGV[7] = the presence field the change marks ('' for none)  ARGV[8] = its time (ms)
# ARGV[9] = how long the presence hash outlives that mark (seconds)
# ARGV[10] = the game's due time after the change (above)
# ARGV[11 .. 10+2n] = fields to set (the state at least)  ARGV[11+2n ..] = records to append
# Returns {1, new version} applied (the version grows by the number of records); {0, current
# version} the version moved on (lost race or stale If-Match); {-1} the game is gone; {2, kept
# response} a request with the same Idempotency-Key applied first; {3, current version} the log
# would grow past its cap. Nothing is written unless {1, ...}.
# A change that sets the seat token digests (field ``t``, 32 bytes a seat) drops the presence
# fields of every seat whose digest it changes (``r<seat>``, ``t<seat>:<stream>``): a seat's
# new occupant, or its bot, is not present because the one before was. The change's own mark
# is written after, so a seat taken by the request that marks it stays marked.
# An applied change is published (SPUBLISH: a sharded channel, heard on the game's shard only)
# as ``"<game id> <version> "`` followed by the change's log records, each as
# ``<length>:<bytes>`` (service/store/wakeup.py reads it): readers that hold the game's log up
# to the change append them without reading the log. The log stays the truth; a lost message
# costs a reader a delay, never an entry.
COMPARE_AND_SET = (
    _SET_DUE
    + """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {-1} end
local idem = ARGV[5] ~= '0' and KEYS[6] or nil
local spends = KEYS[idem and 7 or 6]
if idem then
  local kept = redis.call('GET', idem)
  if kept then return {2, kept} end
end
if cur ~= ARGV[1] then return {0, tonumber(cur)} end
local last = 10 + 2 * tonumber(ARGV[3])
local new = tonumber(cur) + #ARGV - last
if new > tonumber(ARGV[6]) then return {3, tonumber(cur)} end
local seats
for i = 11, last - 1, 2 do
  if ARGV[i] == 't' then seats = ARGV[i + 1] end
end
local before = seats and redis.call('HGET', KEYS[1], 't')
redis.call('HSET', KEYS[1], 'v', new, unpack(ARGV, 11, last))
for i = last + 1, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
if idem then
  redis.call('SET', idem, ARGV[4], 'EX', ARGV[5])
end
if spends then
  redis.call('SET', spends, 'spent', 'KEEPTTL', 'XX')
end
if seats then
  local changed = {}
  for s = 0, math.floor(#seats / 32) - 1 do
    local at = s * 32 + 1
    if not before or string.sub(before, at, at + 31) ~= string.sub(seats, at, at + 31) then
      changed[s] = true
    end
  end
  for _, field in ipairs(redis.call('HKEYS', KEYS[4])) do
    local seat = string.match(field, '^[rt](%d+)')
    if seat and changed[tonumber(seat)] then redis.call('HDEL', KEYS[4], field) end
  end
end
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[7], ARGV[8])
  redis.call('EXPIRE', KEYS[4], ARGV[9])
end
local game = string.sub(KEYS[1], 5, -2)
set_due(KEYS[5], game, ARGV[10])
local wakeup = {game, ' ', new, ' '}
for i = last + 1, #ARGV do
  table.insert(wakeup, #ARGV[i] .. ':')
  table.insert(wakeup, ARGV[i])
end
redis.call('SPUBLISH', KEYS[3], table.concat(wakeup))
return {1, new}
"""
)

# KEYS[1] = game hash  ARGV[1] = the field of who claims its rematch (``rc:<who>``)
# ARGV[2] = 1 when the claim closes with the window (a seat's), 0 if never (the table's)
# Returns 1 the first time, 0 after, -2 for a first claim after the window closed (the seat is
# open in the next game), -1 when the game is gone: HSETNX alone would then make a hash of
# that one field, with no expiry.
CLAIM_REMATCH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if ARGV[2] == '1' and redis.call('HEXISTS', KEYS[1], 'rx') == 1 then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
  return -2
end
return redis.call('HSETNX', KEYS[1], ARGV[1], 1)
"""

# KEYS[1] = game hash
# Closes the claims of the game's rematch (the next game opens the seats nobody claimed) and
# returns the hash's fields, the claims among them; nothing for a game gone (no key is made).
CLOSE_REMATCH_CLAIMS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HSET', KEYS[1], 'rx', 1)
return redis.call('HKEYS', KEYS[1])
"""

# KEYS[1] = game hash  ARGV[1] = the ratings a rater read for the game's seats (JSON)
# Keeps the first rater's ratings as the game's basis (field "rb") and returns the basis kept;
# nothing for a game gone (no key is made).
KEEP_RATING_BASIS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], 'rb', ARGV[1])
return redis.call('HGET', KEYS[1], 'rb')
"""

# KEYS[1] = a request counter  ARGV[1] = window seconds  ARGV[2] = the request's cost (1 unless
# it does the work of several, as samples do)
# Returns {requests counted in the current window, seconds until it ends}. One atomic step, so a
# counter never lives without its expiry (a fixed window from the first request). The seconds
# are rounded up from PTTL (TTL rounds to the nearest): they become Retry-After, and a client
# that waits that long must find the window over.
COUNT_REQUEST = """
local n = redis.call('INCRBY', KEYS[1], ARGV[2] or 1)
local ms = redis.call('PTTL', KEYS[1])
if ms < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ms = tonumber(ARGV[1]) * 1000
end
return {n, math.ceil(ms / 1000)}
"""

# KEYS[1] = game hash  KEYS[2] = the game's presence hash
# ARGV[1] = the caller's token digest  ARGV[2] = now (ms)
# ARGV[3] = how long the presence hash outlives the mark (seconds)
# Marks the seat whose token digest this is (its field ``r<seat>``), read with the game in the
# same pipeline: the caller does not know its seat before the read. A host's, a table's or a
# stranger's digest marks nothing. Digests, not tokens, are compared: equal prefixes tell
# nothing of a token. Returns the seat marked, or -1.
MARK_SEAT_SEEN = """
local seats = redis.call('HGET', KEYS[1], 't')
if not seats then return -1 end
local size = #ARGV[1]
if size == 0 then return -1 end
for i = 0, math.floor(#seats / size) - 1 do
  if string.sub(seats, i * size + 1, (i + 1) * size) == ARGV[1] then
    redis.call('HSET', KEYS[2], 'r' .. i, ARGV[2])
    redis.call('EXPIRE', KEYS[2], ARGV[3])
    return i
  end
end
return -1
"""

# KEYS[1] = the due-time sorted set  KEYS[2] = the job stream
# ARGV[1] = now (ms)  ARGV[2] = at most this many  ARGV[3] = the stream's approximate length cap
# Moves every game whose due time has come into the job stream, in one atomic step (a game is
# never both due and queued, nor dropped between the two). Returns how many moved.
PROMOTE_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, game in ipairs(due) do
  redis.call('ZREM', KEYS[1], game)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'g', game)
end
return #due
"""

# KEYS[1] = the first job stream  KEYS[2] = the due-time sorted set
# ARGV[1] = the stream's approximate length cap  ARGV[2 ..] = pairs: a game found in neither
# stream, and the time (ms) the server owed it a change since (from the games' due sets)
# The sweep's hand-over: queues each game not due by that time in the sorted set. The streams
# are read once a sweep by its caller (service/store/work.py), not here once per batch.
# Returns the games queued.
QUEUE_MISSING = """
local out = {}
for i = 2, #ARGV, 2 do
  local game = ARGV[i]
  local at = redis.call('ZSCORE', KEYS[2], game)
  if not at or tonumber(at) > tonumber(ARGV[i + 1]) then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'g', game)
    table.insert(out, game)
  end
end
return out
"""

# KEYS[1] = a lease  ARGV[1] = its owner
# Releases the lease only if this owner still holds it (one that expired and was taken by
# another worker is that worker's now). Returns 1 if released.
RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS[1] = a lease  ARGV[1] = its owner  ARGV[2] = its time to live (ms)
# Takes the lease, or holds it on for that long if this owner holds it already (in one step: a
# lease that ran out and was taken by another worker is not prolonged for that one). Returns 1
# if this owner holds it now.
HOLD_LEASE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""

# KEYS[1] = what one client address holds of one kind, open streams say (a sorted set: id ->
# time taken, ms)  ARGV[1] = now (ms)  ARGV[2] = the most an address may hold  ARGV[3] = the
# longest one is held (ms): an older member is one whose process died without giving it back
# ARGV[4] = this one's id
# Returns 1 and holds a slot, or 0 when the address holds ARGV[2] already.
TAKE_ADDRESS_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS[1] = a player's hash  KEYS[2] = the rated games it counts (same slot)
# ARGV[1] = the game  ARGV[2], ARGV[3] = the new mu and sigma  ARGV[4] = 1 for a win, else 0
# ARGV[5] = the rated games the player had at the read of the rating the new one comes from
# Applies the game's result once: 1 when applied, 0 when this game is counted already, -1 when
# another game counted since that read (the new rating would overwrite that game's part).
RATE_PLAYER = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'g') or '0') ~= tonumber(ARGV[5]) then return -1 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'mu', ARGV[2], 'sigma', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'g', 1)
redis.call('HINCRBY', KEYS[1], 'w', ARGV[4])
return 1
"""

# A seek bucket's lists of ids, kept as " <id> <id> " (an id holds no space): the list without
# ``id``, or nil when it does not hold it.
_WITHOUT = """
local function without(list, id)
  local from, to = string.find(list, ' ' .. id .. ' ', 1, true)
  if not from then return nil end
  return string.sub(list, 1, from) .. string.sub(list, to + 1)
end
"""

# KEYS[1] = a seek bucket's tables by creation time  KEYS[2] = each table's claimed seats, and
# (field "<table>|p") the players seated by seeks as " <id> <id> " (an id holds no space),
# (field "<table>|c") the claims made there as " <claim> <claim> ", and (field "claim:<claim>")
# each claim as "<table> <seat> <1 if the table is new, else 0>"
# ARGV[1] = a fresh game id  ARGV[2] = seats a table has  ARGV[3] = now (ms)
# ARGV[4] = the seeker's player id, or "" (anonymous)  ARGV[5] = the bucket's lifetime (seconds)
# ARGV[6] = the claim's id (one per request and attempt; no space)
# ARGV[7..] = the ids of the same seek's other attempts
# The seat of the next seeker: the first free seat of the oldest table with one (a table is
# dropped from the bucket once its last seat is claimed), else seat 0 of a new table named
# ARGV[1]. Returns {game id, seat, 1 if the table is new}, or {game id, -1, 0} when that table
# already seats the player. One script, so concurrent seeks are served one after another and
# no table is ever given more seekers than seats, nor a player twice. A table whose seats are
# all claimed keeps its counts until it is closed (CLOSE_SEEK_TABLE: its last seat taken, or
# its open seats given to bots), so that a claim not taken can be given back (GIVE_BACK_SEAT).
# A claim already made under ARGV[6] is answered again, unchanged: redis-py sends a script
# again after a connection broke, maybe after Redis ran it, and a client retries a seek with
# the same Idempotency-Key; run twice, the claim would hold a second seat, or find its own
# seeker seated and refuse it. A claim made under one of ARGV[7..] is this seek's too (a
# retry starts again at its first attempt, and the claim that ran late may be a later one's):
# it is answered, and kept under ARGV[6] from then on.
# Every script that adds to a bucket holds both its keys for the bucket's lifetime from then
# (the game TTL: a table lives that long after its last change, and each change of a table
# with a seat open renews its bucket too, KEEP_SEEK_BUCKET): a
# bucket is named by its seek's options, of which there are very many, and one whose last
# table expired unclaimed would otherwise keep its keys for ever.
CLAIM_SEEK_SEAT = (
    _WITHOUT
    + """
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
local made = redis.call('HGET', KEYS[2], 'claim:' .. ARGV[6])
for i = 7, #ARGV do
  if made then break end
  made = redis.call('HGET', KEYS[2], 'claim:' .. ARGV[i])
  if made then
    local game = string.match(made, '^(%S+) ')
    redis.call('HDEL', KEYS[2], 'claim:' .. ARGV[i])
    redis.call('HSET', KEYS[2], 'claim:' .. ARGV[6], made)
    local left = without(redis.call('HGET', KEYS[2], game .. '|c') or ' ', ARGV[i])
    if left then redis.call('HSET', KEYS[2], game .. '|c', left .. ARGV[6] .. ' ') end
  end
end
if made then
  local game, seat, new = string.match(made, '^(%S+) (%d+) (%d)$')
  return {game, tonumber(seat), tonumber(new)}
end
local size = tonumber(ARGV[2])
local player = ARGV[4]
local function claim(game, seat, new)
  redis.call('HSET', KEYS[2], 'claim:' .. ARGV[6], game .. ' ' .. seat .. ' ' .. new)
  local claims = redis.call('HGET', KEYS[2], game .. '|c') or ' '
  redis.call('HSET', KEYS[2], game .. '|c', claims .. ARGV[6] .. ' ')
  return {game, seat, new}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)
if oldest[1] then
  local game = oldest[1]
  local seated = redis.call('HGET', KEYS[2], game .. '|p') or ' '
  if player ~= '' and string.find(seated, ' ' .. player .. ' ', 1, true) then
    return {game, -1, 0}
  end
  local seat = redis.call('HINCRBY', KEYS[2], game, 1) - 1
  if player ~= '' then redis.call('HSET', KEYS[2], game .. '|p', seated .. player .. ' ') end
  if seat + 1 >= size then redis.call('ZREM', KEYS[1], game) end
  return claim(game, seat, 0)
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], 1)
if player ~= '' then redis.call('HSET', KEYS[2], ARGV[1] .. '|p', ' ' .. player .. ' ') end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return claim(ARGV[1], 0, 1)
"""
)

# KEYS[1], KEYS[2] = as above  ARGV[1] = a table of the bucket
# Takes the table out of the bucket (its open seats go to bots): no seek claims one after this,
# and its claims are forgotten (a seek retried under one is given a seat anew).
# Returns the seats claimed so far (0 when it was not in the bucket any more).
CLOSE_SEEK_TABLE = """
local claimed = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local claims = redis.call('HGET', KEYS[2], ARGV[1] .. '|c') or ''
for id in string.gmatch(claims, '%S+') do redis.call('HDEL', KEYS[2], 'claim:' .. id) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1], ARGV[1] .. '|p', ARGV[1] .. '|c')
return claimed
"""

# KEYS[1], KEYS[2] = as above  ARGV[1] = a claim's id  ARGV[2] = the bucket's lifetime
# The seat of that claim, which its seeker did not take (its request failed), is claimable
# again, and its table back in its bucket, first in line (its seekers wait there), unless the
# table was closed meanwhile. The claim is gone with it, so that a give-back sent again (a
# connection broke after Redis ran it) lowers the count once. Returns 1 when given back.
GIVE_BACK_SEAT = (
    _WITHOUT
    + """
local field = 'claim:' .. ARGV[1]
local made = redis.call('HGET', KEYS[2], field)
if not made then return 0 end
local game = string.match(made, '^(%S+) ')
redis.call('HDEL', KEYS[2], field)
local left = without(redis.call('HGET', KEYS[2], game .. '|c') or ' ', ARGV[1])
if left then redis.call('HSET', KEYS[2], game .. '|c', left) end
redis.call('HINCRBY', KEYS[2], game, -1)
redis.call('ZADD', KEYS[1], 'NX', 0, game)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""
)

# KEYS[1], KEYS[2] = as above  ARGV[1] = a table of the bucket  ARGV[2] = its seats taken
# ARGV[3] = the bucket's lifetime
# A table that left the bucket full has a seat open again (taken by a seek whose request
# failed): it is back, first in line, with its taken seats claimed. A table still in the
# bucket is left as it is: its count holds claims not yet taken. Returns 1 when put back.
REOPEN_SEEK_TABLE = """
if redis.call('HGET', KEYS[2], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], 'NX', 0, ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
"""

# KEYS[1], KEYS[2] = as above  ARGV[1] = the bucket's lifetime
# Holds the bucket's keys that long from now (those still there): a table of the bucket with
# a seat open changed, and it lives that long after its change, renewed in its own slot.
KEEP_SEEK_BUCKET = """
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
"""

# KEYS[1], KEYS[2] = as above  ARGV[1] = a table of the bucket  ARGV[2] = a player id
# Takes the player out of the table's seated players: its seek was given a seat there but did
# not take it (the seat went to someone else, or the seek failed), so it may seek again.
FORGET_SEEKER = (
    _WITHOUT
    + """
local field = ARGV[1] .. '|p'
local seated = redis.call('HGET', KEYS[2], field)
if not seated then return 0 end
local left = without(seated, ARGV[2])
if not left then return 0 end
redis.call('HSET', KEYS[2], field, left)
return 1
"""
)

# KEYS[1] = keys.LOBBY_UNSORTED  KEYS[2] = keys.LOBBY_KINDS  KEYS[3..] = every sorted set that
# lists a table of one kind (keys.lobby_key, one per combination of filters: one slot)
# ARGV[1] = that kind  ARGV[2..] = pairs of a table of that kind and its listing time
# Lists the tables in every set of their kind at once, so that no listing with any filter sees
# one and another misses it; a table listed without its kind is listed with it.
LIST_TABLES = """
for i = 2, #ARGV, 2 do
  local game = ARGV[i]
  redis.call('ZREM', KEYS[1], game)
  redis.call('HSET', KEYS[2], game, ARGV[1])
  for k = 3, #KEYS do redis.call('ZADD', KEYS[k], ARGV[i + 1], game) end
end
return 1
"""

# KEYS[1], KEYS[2] = as above  KEYS[3..] = every sorted set that lists a table of the kind
# ARGV[1] (keys.LOBBY alone when ARGV[1] is '': tables whose kind was not known)
# ARGV[2..] = tables seen listed as of that kind (or of none)
# Takes each table out of every set that lists it. One listed as of another kind since it was
# seen (listed meanwhile) is left as it is and returned: its sets are not among KEYS.
DELIST_TABLES = """
local other = {}
for i = 2, #ARGV do
  local game = ARGV[i]
  local kind = redis.call('HGET', KEYS[2], game) or ''
  if kind == ARGV[1] then
    redis.call('ZREM', KEYS[1], game)
    redis.call('HDEL', KEYS[2], game)
    for k = 3, #KEYS do redis.call('ZREM', KEYS[k], game) end
  else
    table.insert(other, game)
  end
end
return other
"""

# KEYS[1] = keys.LOBBY (every listed table)  KEYS[2] = keys.LOBBY_ROUND (where the next read
# starts, by rank)  ARGV[1] = how many
# The next tables of a round of the whole lobby, oldest first; the round starts over from the
# oldest (its key deleted) once a read finds fewer than it asked for.
LOBBY_ROUND = """
local at = tonumber(redis.call('GET', KEYS[2]) or '0')
local count = tonumber(ARGV[1])
local found = redis.call('ZRANGE', KEYS[1], at, at + count - 1)
if #found < count then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], at + count)
end
return found
"""

# A player's new webhook, unless the player has ARGV[3] already: the count and the write in one
# script, so concurrent registrations never pass the cap. KEYS[1]: the player's hooks hash;
# ARGV: the hook's id, its JSON, the cap. Returns 1 when written, 0 at the cap.
REGISTER_HOOK = """
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# KEYS[1] = deliveries by due time  KEYS[2] = each delivery's JSON (one slot)
# ARGV[1] = now (ms)  ARGV[2] = how many  ARGV[3] = a lease (ms)
# The deliveries due now, each put back due after the lease: a sender that dies with one
# leaves it to be taken again, and two senders never hold one at once. Returns each one's id
# and JSON, in turn.
TAKE_DUE_DELIVERIES = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[3]), id)
  local job = redis.call('HGET', KEYS[2], id)
  if job then
    table.insert(out, id)
    table.insert(out, job)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""
