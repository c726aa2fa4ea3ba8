-- Many keys and a mix of requests. Arguments: N, the seeded ids 1..N; the key set's kind; a file of
-- API keys, one a line. `tail` draws each request's key from a Zipf distribution (s = 1) by rank, the
-- file listing the most frequent first; the others use the keys round robin. Of every 8 requests, 3
-- list 20 pets, 3 get one pet, 1 lists 100 available pets and 1 adds a pet; the kind shifts by one
-- each time the keys wrap around, so each key sends every kind of request over time.
local count, zipf, keys, cdf, i = 10000, false, {}, {}, 0
local body = '{"name":"Bench","categoryId":42,"status":"available"}'

function init(args)
  count, zipf = tonumber(args[1]) or count, args[2] == "tail"
  for line in io.lines(args[3]) do
    if #line > 0 then
      keys[#keys + 1] = "Bearer " .. line
      cdf[#keys] = (cdf[#keys - 1] or 0) + 1 / #keys
    end
  end
  math.randomseed(os.time())
end

local function key()
  if not zipf then return keys[i % #keys + 1] end
  local target, low, high = math.random() * cdf[#cdf], 1, #cdf
  while low < high do
    local middle = math.floor((low + high) / 2)
    if cdf[middle] < target then low = middle + 1 else high = middle end
  end
  return keys[low]
end

function request()
  i = i + 1
  local headers = { Authorization = key() }
  local kind = (i + math.floor(i / #keys)) % 8
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
