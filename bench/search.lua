-- wrk script: GET /api/search, rotating through the queries of the file named by $ATLAS_QUERIES
-- (one query per line), percent-encoded. Each thread starts at a different offset.
local queries = {}
local counter = 0

local function encode(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 17)
end

function init(args)
  local f = assert(io.open(os.getenv("ATLAS_QUERIES") or "queries.txt", "r"))
  for line in f:lines() do
    if #line > 0 then queries[#queries + 1] = encode(line) end
  end
  f:close()
  i = offset or 0
end

function request()
  i = i + 1
  local path = os.getenv("ATLAS_WRK_PATH") or "/api/search?q="
  return wrk.format("GET", path .. queries[(i % #queries) + 1])
end
