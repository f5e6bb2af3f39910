--[[
  The failure detector's look (docs/decisions.md, dead-gateway detection in cluster mode): the active jobs
  held by a gateway not alive by the registry whose locks have lapsed and that nobody has reported lost yet.
  Read-only; reporting one is report-lost.lua's (which checks the same again, atomically). A job whose lock
  is held has a live holder (BullMQ renews it every half lock), however old or absent the holder's entry.

  Input:
    KEYS[1] the active list ('crew:<name>:active')

    ARGV[1]  the job key prefix ('crew:<name>:')
    ARGV[2]  the lost-claim prefix ('crew:<name>:lost:')
    ARGV[3…] the gateways alive by the registry

  Output:
    id, holder (BullMQ's 'pb') and data of each such job, flat
]]
local alive = {}
for i = 3, #ARGV do alive[ARGV[i]] = true end
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. id
  local holder = redis.call('HGET', key, 'pb')
  if holder and not alive[holder] and redis.call('EXISTS', key .. ':lock') == 0
    and redis.call('EXISTS', ARGV[2] .. id) == 0 then
    table.insert(out, id)
    table.insert(out, holder)
    table.insert(out, redis.call('HGET', key, 'data') or '')
  end
end
return out
