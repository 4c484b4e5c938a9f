-- wrk script: GET $ATLAS_WRK_PATH (default /api/search?q=) followed by each line of the file named
-- by $ATLAS_QUERIES in turn, percent-encoded. The requests are formatted once, when a thread starts,
-- so that wrk, which shares the machine's cores with the server, spends as little as it can on
-- each one. Each thread starts at a different offset.
local reqs = {}
local counter = 0

local function encode(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 17)
end

function init(args)
  local path = os.getenv("ATLAS_WRK_PATH") or "/api/search?q="
  local f = assert(io.open(os.getenv("ATLAS_QUERIES") or "queries.txt", "r"))
  for line in f:lines() do
    if #line > 0 then reqs[#reqs + 1] = wrk.format("GET", path .. encode(line)) end
  end
  f:close()
  n = #reqs
  i = (offset or 0) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
