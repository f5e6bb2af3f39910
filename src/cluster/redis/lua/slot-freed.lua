--[[
  A job ended on this gateway and its provider slot is free: while jobs wait, wakes workers blocked on
  BullMQ's marker (a blocked worker pops one member; score 0 = look now). BullMQ's own '0' wakes one; while
  gateways wait for a slot, every gateway's worker gets a marker too ('slot:<gateway>' for each waiter and
  each gateway in the registry), so the waiter whose turn it is asks at once, whichever worker Redis serves
  first, rather than at its next poll. At most one member per gateway name: nothing grows.

  Input:
    KEYS[1] the waiters ('crew:<name>:slot-waiters')
    KEYS[2] BullMQ's wait list ('crew:<name>:wait')
    KEYS[3] BullMQ's marker set ('crew:<name>:marker')
    KEYS[4] the registry ('crew:<name>:gateways')

  Output:
    the markers added
]]
if redis.call('LLEN', KEYS[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[3], 0, '0')
local waiters = redis.call('ZRANGE', KEYS[1], 0, -1)
if #waiters == 0 then return 1 end
local woken = {}
for _, gateway in ipairs(waiters) do woken[gateway] = true end
for _, gateway in ipairs(redis.call('HKEYS', KEYS[4])) do woken[gateway] = true end
local added = 1
for gateway in pairs(woken) do
  redis.call('ZADD', KEYS[3], 0, 'slot:' .. gateway)
  added = added + 1
end
return added
