"""Lua scripts, run atomically by Redis. Each is registered once per client (EVALSHA).

Every key a script touches arrives in ``KEYS`` (cluster-safe: all share the game's hash tag).
"""

from __future__ import annotations

# KEYS[1] = game hash
# ARGV[1] = engine state bytes  ARGV[2] = host token hash  ARGV[3] = seat token hashes
# ARGV[4] = TTL seconds (the caller's choice: short for a game never dealt)
# Returns 1 when created, 0 when the id is taken (the caller draws a new id).
CREATE_GAME = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 's', ARGV[1], 'h', ARGV[2], 't', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# KEYS[1] = game hash  KEYS[2] = idempotency key (optional)
# ARGV[1] = expected version  ARGV[2] = new engine state bytes  ARGV[3] = TTL seconds (as above)
# ARGV[4] = response kept under KEYS[2]  ARGV[5] = its TTL seconds
# Returns {1, new version} applied; {0, current version} the version moved on (lost race or
# stale If-Match); {-1} the game is gone; {2, kept response} a request with the same
# Idempotency-Key applied first (a concurrent retry): nothing is written.
COMPARE_AND_SET = """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {-1} end
if KEYS[2] then
  local kept = redis.call('GET', KEYS[2])
  if kept then return {2, kept} end
end
if cur ~= ARGV[1] then return {0, tonumber(cur)} end
local new = tonumber(cur) + 1
redis.call('HSET', KEYS[1], 'v', new, 's', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if KEYS[2] then
  redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[5])
end
return {1, new}
"""

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
