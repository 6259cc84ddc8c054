-- The load benchmark's request mix for wrk (Benchmarks/Load/run.sh):
--   wrk ... --latency -s mix.lua http://127.0.0.1:PORT -- IDS_FILE WRITE_PERCENT SEED
-- IDS_FILE holds the seeded todos' ids, one a line. Each request is a write with probability WRITE_PERCENT %, else
-- a read. A read is GET /todos/:id of a random seeded todo (3 in 4) or GET /todos?completed=true, the page of the
-- seeded todos marked completed (1 in 4). A write is, with equal odds, POST /todos (a new todo), PATCH /todos/:id
-- (a random seeded todo's title) or DELETE /todos/:id of a todo this thread created (a create when it has none), so
-- the table keeps about its seeded size however fast a server is. done() prints one parseable line, "RESULT k=v …"
-- (latencies in microseconds, errors as wrk counts them: status errors are responses with a status >= 400).
local threads = {}

function setup(thread)
  thread:set("thread_number", #threads + 1)
  table.insert(threads, thread)
end

local ids = {}
local created = {}
local write_percent = 20
local counter = 0
local json = { ["Content-Type"] = "application/json" }
reads, pages, creates, updates, deletes = 0, 0, 0, 0, 0

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    if #line > 0 then ids[#ids + 1] = line end
  end
  file:close()
  assert(#ids > 0, "no ids in " .. args[1])
  write_percent = tonumber(args[2])
  math.randomseed(tonumber(args[3] or "1") * 1000 + (thread_number or 1))
end

local function create()
  counter = counter + 1
  creates = creates + 1
  return wrk.format("POST", "/todos", json, '{"title":"load todo ' .. counter .. '"}')
end

function request()
  if math.random(100) <= write_percent then
    local kind = math.random(3)
    if kind == 1 then
      return create()
    elseif kind == 2 then
      counter = counter + 1
      updates = updates + 1
      return wrk.format("PATCH", "/todos/" .. ids[math.random(#ids)], json, '{"title":"updated ' .. counter .. '"}')
    elseif #created > 0 then
      deletes = deletes + 1
      return wrk.format("DELETE", "/todos/" .. table.remove(created))
    else
      return create()
    end
  elseif math.random(4) == 1 then
    pages = pages + 1
    return wrk.format("GET", "/todos?completed=true")
  else
    reads = reads + 1
    return wrk.format("GET", "/todos/" .. ids[math.random(#ids)])
  end
end

function response(status, headers, body)
  if status == 201 then
    local id = body:match('"id"%s*:%s*"([0-9A-Fa-f%-]+)"')
    if id then created[#created + 1] = id end
  end
end

function done(summary, latency, requests)
  local counts = { reads = 0, pages = 0, creates = 0, updates = 0, deletes = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(counts) do counts[name] = counts[name] + (thread:get(name) or 0) end
  end
  local errors = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d status_errors=%d connect_errors=%d read_errors=%d write_errors=%d "
      .. "timeouts=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.1f reads=%d pages=%d creates=%d "
      .. "updates=%d deletes=%d\n",
    summary.requests, summary.duration, errors.status, errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    counts.reads, counts.pages, counts.creates, counts.updates, counts.deletes))
end
