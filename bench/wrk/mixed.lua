-- Many keys and a mix of requests. Arguments: a file of API keys, one a line, used round robin;
-- and N, the seeded ids 1..N. Of every 8 requests, 3 list 20 pets, 3 get one pet, 1 lists 100
-- available pets and 1 adds a pet. The kind shifts by one each time the keys wrap around, so each
-- key sends every kind of request over time.
local keys, count, i = {}, 10000, 0
local body = '{"name":"Bench","categoryId":42,"status":"available"}'

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then keys[#keys + 1] = "Bearer " .. line end
  end
  count = tonumber(args[2]) or count
end

function request()
  i = i + 1
  local headers = { Authorization = keys[i % #keys + 1] }
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
