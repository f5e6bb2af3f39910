--[[
  After a gateway's worker asked BullMQ for a job (its ask granted by slot-ask.lua): with a job it was
  served and leaves the waiters; without one while jobs wait (the slot went meanwhile, or a hold) it waits,
  keeping its first-wait time; with none waiting it waits for nothing and leaves.

  Input:
    KEYS[1] the waiters ('crew:<name>:slot-waiters')
    KEYS[2] their leases ('crew:<name>:slot-leases')
    KEYS[3] BullMQ's wait list ('crew:<name>:wait')

    ARGV[1] the gateway
    ARGV[2] 1 when it took a job, 0 when not
    ARGV[3] a waiter's lease (ms)

  Output:
    1 when it waits, 0 when not
]]
if ARGV[2] == '0' and redis.call('LLEN', KEYS[3]) > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[1], 'NX', now, ARGV[1])
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 0
