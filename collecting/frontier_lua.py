"""The frontier's steps as Lua scripts (:mod:`collecting.frontier`): each runs atomically on
the Redis server, whatever the number of workers."""

#: An admitted page will have no result: its budget slot goes to the next URL
#: waiting past the budget, or back to the budget. KEYS as :data:`CLAIM`'s.
GIVE_SLOT = """
local next_entry = redis.call('LPOP', KEYS[3])
if next_entry then
  redis.call('RPUSH', KEYS[4], next_entry)
else
  redis.call('HINCRBY', KEYS[2], 'admitted', -1)
end
"""

ADMIT = """
-- KEYS: seen, queue, meta, overflow, skipped; ARGV: budget (0: none), how many entries, then
-- (key, entry) pairs, then (key, after its fetch: 1|0) pairs of URLs refused. A refused URL is
-- a skip once (the skipped set), and not at all when it was admitted, unless it is refused
-- after its fetch was tried (then it was).
local budget = tonumber(ARGV[1])
local last = 2 + 2 * tonumber(ARGV[2])
local admitted = tonumber(redis.call('HGET', KEYS[3], 'admitted') or '0')
local new = 0
for i = 3, last, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    if budget == 0 or admitted < budget then
      redis.call('RPUSH', KEYS[2], ARGV[i + 1])
      admitted = admitted + 1
      new = new + 1
    else
      redis.call('RPUSH', KEYS[4], ARGV[i + 1])
    end
  end
end
redis.call('HSET', KEYS[3], 'admitted', admitted)
local skipped = {}
for i = last + 1, #ARGV, 2 do
  if (ARGV[i + 1] == '1' or redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 0)
      and redis.call('SADD', KEYS[5], ARGV[i]) == 1 then
    skipped[#skipped + 1] = (i - last - 1) / 2
  end
end
return {new, skipped}
"""

LEASE = """
-- KEYS: queue, leases; ARGV: how many, lease ms
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms)
for _, entry in ipairs(expired) do
  redis.call('ZREM', KEYS[2], entry)
  redis.call('LPUSH', KEYS[1], entry)
end
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local entry = redis.call('LPOP', KEYS[1])
  if not entry then break end
  redis.call('ZADD', KEYS[2], ms + tonumber(ARGV[2]), entry)
  taken[#taken + 1] = entry
end
return taken
"""

RENEW = """
-- KEYS: leases; ARGV: lease ms, entries…
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', ms + tonumber(ARGV[1]), ARGV[i])
end
return 1
"""

GIVE_BACK = """
-- KEYS: leases, queue; ARGV: entries. Only entries still leased go back (not acknowledged
-- ones, nor ones whose lease expired and went back already).
for i = #ARGV, 1, -1 do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[2], ARGV[i])
  end
end
return 1
"""

CLAIM = """
-- KEYS: claims, meta, overflow, queue; ARGV: the page's own key, then its other addresses
-- A page is a duplicate when one of its addresses belongs to another page already; then it
-- gives its budget slot back and claims nothing.
local own = ARGV[1]
for i = 1, #ARGV do
  local owner = redis.call('HGET', KEYS[1], ARGV[i])
  if owner and owner ~= own then
    redis.call('HINCRBY', KEYS[2], 'duplicates', 1)
""" + GIVE_SLOT + """
    return owner
  end
end
for i = 1, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], own)
end
return false
"""

RELEASE = """
-- KEYS: claims, meta, overflow, queue (as CLAIM's)
""" + GIVE_SLOT + """
return 1
"""

STATE = """
-- KEYS: queue, leases, meta
local meta = redis.call('HMGET', KEYS[3], 'admitted', 'duplicates', 'seeded', 'cancelled')
return {redis.call('LLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]),
        meta[1] or '0', meta[2] or '0', meta[3] or '', meta[4] or ''}
"""

DRAIN = """
-- KEYS: overflow, leases, queue; ARGV: how many at most. Takes entries for good: first those
-- past the budget, then the leased, then the queued; answers {past the budget, the others}.
local n = tonumber(ARGV[1])
local past = redis.call('LPOP', KEYS[1], n) or {}
n = n - #past
local left = {}
if n > 0 then
  left = redis.call('ZRANGE', KEYS[2], 0, n - 1)
  if #left > 0 then
    redis.call('ZREM', KEYS[2], unpack(left))
  end
  n = n - #left
end
if n > 0 then
  for _, entry in ipairs(redis.call('LPOP', KEYS[3], n) or {}) do
    left[#left + 1] = entry
  end
end
return {past, left}
"""
