--[[
  Counts the cluster queue for admission, in one step: the waiting jobs by kind (BullMQ's job name), the
  active ones, and the provider cap now (BullMQ's global concurrency; 0 = none set).

  Input:
    KEYS[1] the wait list ('crew:<name>:wait')
    KEYS[2] the active list ('crew:<name>:active')
    KEYS[3] the queue's meta hash (its 'concurrency' field)

    ARGV[1] the job key prefix ('crew:<name>:')

  Output:
    {single, wave, active, cap}
]]
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local single, wave = 0, 0
for _, id in ipairs(ids) do
  local name = redis.call('HGET', ARGV[1] .. id, 'name')
  if name == 'single' then single = single + 1 elseif name == 'wave' then wave = wave + 1 end
end
return {single, wave, redis.call('LLEN', KEYS[2]), tonumber(redis.call('HGET', KEYS[3], 'concurrency') or '0')}
