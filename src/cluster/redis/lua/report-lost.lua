--[[
  Reports a run 'lost' to its origin once, whichever gateway finds it and however (the detector or BullMQ's
  stalled check): claims the run (SET NX PX) and appends the 'ended' message to the origin's outcome stream
  in one step, so a claim is never left without its report. With a holder named (the detector), only while
  the job is still active, held by that gateway (BullMQ's 'pb') and without its lock: a gateway that still
  renews its locks is alive, however late its registry entry.

  Input:
    KEYS[1] the claim ('crew:<name>:lost:<run id>')
    KEYS[2] the origin's outcome stream ('crew:<name>:gw:<origin>:out')
    KEYS[3] the job's hash ('crew:<name>:<run id>')
    KEYS[4] the job's lock ('crew:<name>:<run id>:lock')
    KEYS[5] the active list ('crew:<name>:active')

    ARGV[1]  the holder ('' = no conditions)
    ARGV[2]  who found it and how (the claim's value)
    ARGV[3]  the claim's span (ms)
    ARGV[4]  the stream's approximate length bound
    ARGV[5]  the run id (the job id)
    ARGV[6…] the message's fields

  Output:
    1 when it reported, 0 when the run was claimed already or the holder still holds it
]]
if ARGV[1] ~= '' then
  if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
  if redis.call('HGET', KEYS[3], 'pb') ~= ARGV[1] then return 0 end
  if not redis.call('LPOS', KEYS[5], ARGV[5]) then return 0 end
end
if not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', unpack(ARGV, 6))
return 1
