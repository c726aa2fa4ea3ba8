-- Requests without a key, each from the next of N client addresses (X-Forwarded-For, 10.0.0.0/8), and
-- the statuses counted. Arguments: N; the requests a second to send (0: each connection's next as soon
-- as its last is answered); the number of the first address (0).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } flood_timespec;
int clock_gettime(int clock, flood_timespec *time);
]]
local CLOCK_MONOTONIC, time = 1, ffi.new("flood_timespec")
local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, time)
  return tonumber(time.tv_sec) * 1000 + tonumber(time.tv_nsec) / 1e6
end

local addresses, first, i = 500000, 0, 0
local per_second, started, scheduled = 0, nil, 0
-- Global, so that done() can read each thread's copy.
statuses = {}
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  addresses = tonumber(args[1]) or addresses
  per_second = tonumber(args[2]) or 0
  first = tonumber(args[3]) or 0
  -- wrk asks delay() before each request only when it is defined.
  if per_second <= 0 then delay = nil end
end

-- Each request is due at its own instant on a fixed schedule, whenever the last one was answered.
function delay()
  local now = now_ms()
  started = started or now
  local due = started + scheduled * 1000 / per_second
  scheduled = scheduled + 1
  return math.max(0, due - now)
end

function request()
  local n = first + i % addresses
  i = i + 1
  local from = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  return wrk.format("GET", "/v1/pets", { ["X-Forwarded-For"] = from })
end

function response(status)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency)
  local merged, counts = {}, {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      merged[status] = (merged[status] or 0) + count
    end
  end
  for status, count in pairs(merged) do
    counts[#counts + 1] = string.format('"%d":%d', status, count)
  end
  io.write(string.format('FLOOD_RESULT {"requests":%d,"durationUs":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, table.concat(counts, ",")))
end
