"""Lua scripts, run atomically by Redis. Each is registered once per client (EVALSHA).

Every key a script touches arrives in ``KEYS`` (cluster-safe: all share the game's hash tag).
"""

from __future__ import annotations

#: Every applied change publishes ``"<game id> <version> "`` here, followed by the change's log
#: records, each as ``<length>:<bytes>`` (service/store/wakeup.py reads it): readers that hold
#: the game's log up to the change append them without reading the log. The log stays the
#: truth; a lost message costs a reader a delay, never an entry.
WAKEUP_CHANNEL = "mt:wakeup"

# KEYS[1] = game hash  KEYS[2] = game log
# ARGV[1] = TTL seconds (the caller's choice: short for a game never dealt)
# ARGV[2] = n, the number of hash field/value pairs that follow
# ARGV[3 .. 2+2n] = the game's fields  ARGV[3+2n ..] = the first log records
# The version is the number of records. Returns 1 when created, 0 when the id is taken.
CREATE_GAME = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local last = 2 + 2 * tonumber(ARGV[2])
local version = #ARGV - last
redis.call('HSET', KEYS[1], 'v', version, unpack(ARGV, 3, last))
redis.call('RPUSH', KEYS[2], unpack(ARGV, last + 1))
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
"""

# KEYS[1] = game hash  KEYS[2] = game log  KEYS[3] = idempotency key (optional)
# ARGV[1] = expected version  ARGV[2] = TTL seconds (as above)  ARGV[3] = n field/value pairs
# ARGV[4] = response kept under KEYS[3]  ARGV[5] = its TTL seconds
# ARGV[6 .. 5+2n] = fields to set (the state at least)  ARGV[6+2n ..] = records to append
# Returns {1, new version} applied (the version grows by the number of records); {0, current
# version} the version moved on (lost race or stale If-Match); {-1} the game is gone; {2, kept
# response} a request with the same Idempotency-Key applied first: nothing is written.
COMPARE_AND_SET = (
    """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {-1} end
if KEYS[3] then
  local kept = redis.call('GET', KEYS[3])
  if kept then return {2, kept} end
end
if cur ~= ARGV[1] then return {0, tonumber(cur)} end
local last = 5 + 2 * tonumber(ARGV[3])
local new = tonumber(cur) + #ARGV - last
redis.call('HSET', KEYS[1], 'v', new, unpack(ARGV, 6, last))
if #ARGV > last then redis.call('RPUSH', KEYS[2], unpack(ARGV, last + 1)) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
if KEYS[3] then
  redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[5])
end
local wakeup = {string.sub(KEYS[1], 5, -2), ' ', new, ' '}
for i = last + 1, #ARGV do
  table.insert(wakeup, #ARGV[i] .. ':')
  table.insert(wakeup, ARGV[i])
end
redis.call('PUBLISH', '"""
    + WAKEUP_CHANNEL
    + """', table.concat(wakeup))
return {1, new}
"""
)

# KEYS[1] = a request counter  ARGV[1] = window seconds
# Returns {requests counted in the current window, seconds until it ends}. One atomic step, so a
# counter never lives without its expiry (a fixed window from the first request).
COUNT_REQUEST = """
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
"""
