-- wrk script: POSTs Meilisearch-style searches built from the lines of the file named by
-- $ATLAS_QUERIES: with ATLAS_MULTI=1 one query a request to /indexes/pages/search, with
-- ATLAS_MULTI=2 two queries (a line and the next) a request to /multi-search. The requests are
-- formatted once, when a thread starts. Each thread starts at a different offset.
local reqs = {}
local counter = 0

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end) .. '"'
end

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 17)
end

function init(args)
  local lines = {}
  local f = assert(io.open(os.getenv("ATLAS_QUERIES") or "queries.txt", "r"))
  for line in f:lines() do
    if #line > 0 then lines[#lines + 1] = line end
  end
  f:close()
  local multi = tonumber(os.getenv("ATLAS_MULTI") or "1")
  local headers = { ["Content-Type"] = "application/json" }
  for k = 1, #lines do
    local body
    if multi == 1 then
      body = '{"q":' .. quote(lines[k]) .. ',"limit":10}'
      reqs[#reqs + 1] = wrk.format("POST", "/indexes/pages/search", headers, body)
    else
      local other = lines[k % #lines + 1]
      body = '{"queries":[{"indexUid":"pages","q":' .. quote(lines[k]) .. ',"limit":10},' ..
             '{"indexUid":"pages","q":' .. quote(other) .. ',"limit":10}]}'
      reqs[#reqs + 1] = wrk.format("POST", "/multi-search", headers, body)
    end
  end
  n = #reqs
  i = (offset or 0) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
