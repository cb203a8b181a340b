-- The mixed load under wrk: half list pages, a quarter searches (one that matches, one that
-- matches nothing, in turn), a quarter new entries, in a fixed rotation in each of wrk's threads.
--   wrk ... -s bench/mixed.lua BASE_URL -- KEY GROUP_ID MATCH_TERM
local key, group, match
local n = 0

function init(args)
   key, group, match = args[1], args[2], args[3]
end

function request()
   n = n + 1
   local h = { ["X-Api-Key"] = key }
   local turn = n % 8
   if turn == 1 or turn == 5 then
      h["Content-Type"] = "application/json"
      return wrk.format("POST", "/api/v1/entries", h,
         '{"student_name": "Mixed Writer", "group_id": ' .. group ..
         ', "description": "Written during the mixed load: ratio and a quiz."}')
   elseif turn == 3 then
      return wrk.format("GET", "/api/v1/entries?limit=50&search=" .. match, h)
   elseif turn == 7 then
      return wrk.format("GET", "/api/v1/entries?limit=50&search=zzznomatch", h)
   end
   return wrk.format("GET", "/api/v1/entries?limit=50", h)
end
