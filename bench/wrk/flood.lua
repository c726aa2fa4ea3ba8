-- Requests without a key, each from the next of N client addresses (X-Forwarded-For, 10.0.0.0/8), and
-- the statuses counted. Argument: N.
local addresses, i = 500000, 0
-- Global, so that done() can read each thread's copy.
statuses = {}
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  addresses = tonumber(args[1]) or addresses
end

function request()
  local n = i % addresses
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
