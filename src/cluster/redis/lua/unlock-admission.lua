--[[
  Releases the cluster's admission lock, only if this gateway still holds it (its token).

  Input:
    KEYS[1] the admission lock ('crew:<name>:admit')

    ARGV[1] the token this gateway set it to

  Output:
    1 when released, 0 when the lock had expired or another gateway holds it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
