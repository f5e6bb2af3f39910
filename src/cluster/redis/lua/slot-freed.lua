--[[
  A job ended on this gateway and its provider slot is free: while jobs wait, wakes the workers blocked on
  BullMQ's marker, one marker for each waiting gateway and BullMQ's own '0' (a blocked worker pops one
  member; score 0 = look now), so the gateway waiting longest asks at once rather than at its next poll.
  At most one member per gateway name: nothing grows.

  Input:
    KEYS[1] the waiters ('crew:<name>:slot-waiters')
    KEYS[2] BullMQ's wait list ('crew:<name>:wait')
    KEYS[3] BullMQ's marker set ('crew:<name>:marker')

  Output:
    the markers added
]]
if redis.call('LLEN', KEYS[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[3], 0, '0')
local added = 1
for _, waiter in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  redis.call('ZADD', KEYS[3], 0, 'slot:' .. waiter)
  added = added + 1
end
return added
