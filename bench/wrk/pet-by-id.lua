-- GET /v1/pets/{id}, cycling through the seeded ids 1..N (N is the first script argument).
local count, id = 10000, 0

function init(args)
  count = tonumber(args[1]) or count
end

function request()
  id = id % count + 1
  return wrk.format("GET", "/v1/pets/" .. id)
end
