--[[
  Whether a gateway's worker may take a provider slot now (docs/decisions.md, fair provider slots): only
  while fewer gateways wait for one ahead of it than slots are free, so a gateway that has been waiting is
  served before one that has not (the one that just freed a slot). Refused, the gateway joins the waiters
  (keeping its first-wait time) and its lease is renewed. Lapsed waiters (a gateway that died or stopped
  asking) are dropped first. Without a cap (BullMQ's global concurrency unset) every ask is granted.

  Input:
    KEYS[1] the waiters, by first-wait time ('crew:<name>:slot-waiters')
    KEYS[2] their leases, by expiry ('crew:<name>:slot-leases')
    KEYS[3] BullMQ's active list ('crew:<name>:active')
    KEYS[4] BullMQ's meta hash ('crew:<name>:meta', its 'concurrency' field)

    ARGV[1] the gateway asking
    ARGV[2] a waiter's lease (ms)

  Output:
    1 when it may take a slot (and is not among the waiters), 2 when it may and is, 0 when it waits
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('ZREM', KEYS[1], lapsed)
  redis.call('ZREM', KEYS[2], lapsed)
end
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
local granted = rank and 2 or 1
local cap = redis.call('HGET', KEYS[4], 'concurrency')
if not cap then return granted end
local free = tonumber(cap) - redis.call('LLEN', KEYS[3])
local ahead = rank or redis.call('ZCARD', KEYS[1])
if ahead < free then return granted end
redis.call('ZADD', KEYS[1], 'NX', now, ARGV[1])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
-- Every entry's lease is as long, so the last one renewed outlives the rest: an idle cluster leaves nothing.
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 0
