-- Keys drawn per request from a Zipf distribution (s = 1) over a file of keys ranked by traffic, and
-- the request mix of mixed.lua. Arguments: the file of keys, one a line, most frequent first; N, the
-- seeded ids 1..N. Nothing is primed: a rarely seen key pays its lookup and count as it would.
local keys, cdf, count, i = {}, {}, 10000, 0
local body = '{"name":"Bench","categoryId":42,"status":"available"}'

function init(args)
  local total = 0
  for line in io.lines(args[1]) do
    if #line > 0 then
      keys[#keys + 1] = "Bearer " .. line
      total = total + 1 / #keys
      cdf[#keys] = total
    end
  end
  count = tonumber(args[2]) or count
  math.randomseed(os.time())
end

local function draw()
  local target, low, high = math.random() * cdf[#cdf], 1, #cdf
  while low < high do
    local middle = math.floor((low + high) / 2)
    if cdf[middle] < target then low = middle + 1 else high = middle end
  end
  return keys[low]
end

function request()
  i = i + 1
  local headers = { Authorization = draw() }
  local kind = i % 8
  if kind == 7 then
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", "/v1/pets", headers, body)
  elseif kind == 3 then
    return wrk.format("GET", "/v1/pets?status=available&limit=100", headers)
  elseif kind == 1 or kind == 4 or kind == 6 then
    return wrk.format("GET", "/v1/pets/" .. (i % count + 1), headers)
  else
    return wrk.format("GET", "/v1/pets?limit=20", headers)
  end
end
