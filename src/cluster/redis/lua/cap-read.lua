--[[
  The shared provider cap's one consistent look: the stored state, the active jobs, and the cluster's time
  (Redis's clock, so every gateway measures windows and holds on one clock).

  Input:
    KEYS[1] the cap state ('crew:<name>:provider-cap')
    KEYS[2] BullMQ's active list ('crew:<name>:active')

  Output:
    {state ('' = none), active jobs, now (ms)}
]]
local t = redis.call('TIME')
return {redis.call('GET', KEYS[1]) or '', redis.call('LLEN', KEYS[2]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
