--[[
  Compare-and-set of the shared provider cap's state, applied to the queue in the same step: BullMQ's global
  concurrency (the field Queue.setGlobalConcurrency sets), the hold (the rate-limit key Queue.rateLimit
  sets, never shortened), and a marker that wakes idle workers when the cap rose.

  Input:
    KEYS[1] the cap state ('crew:<name>:provider-cap')
    KEYS[2] BullMQ's meta hash ('crew:<name>:meta')
    KEYS[3] its rate-limit key ('crew:<name>:limiter')
    KEYS[4] its marker set ('crew:<name>:marker')

    ARGV[1] the expected state ('' = none)
    ARGV[2] the new state
    ARGV[3] the cap
    ARGV[4] the hold (ms; 0 = none)
    ARGV[5] the hold mark

  Output:
    1 when written, 0 when the state had changed
]]
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
local before = tonumber(redis.call('HGET', KEYS[2], 'concurrency') or '0')
local cap = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'concurrency', cap)
if cap > before then redis.call('ZADD', KEYS[4], 0, '0') end
local hold = tonumber(ARGV[4])
if hold > 0 then
  local held = tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[5])
  if not held or redis.call('PTTL', KEYS[3]) < hold then
    redis.call('SET', KEYS[3], ARGV[5], 'PX', hold)
  end
end
return 1
