-- POST /api/v1/entries under wrk: wrk ... -s bench/post.lua URL -- KEY GROUP_ID [PER_THREAD]
-- PER_THREAD (optional, 0 = no limit): each of wrk's threads stops after that many answers.
local limit, seen = 0, 0

function init(args)
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
   wrk.headers["X-Api-Key"] = args[1]
   wrk.body = '{"student_name": "Bench Writer", "group_id": ' .. args[2] ..
              ', "description": "Lesson notes written under load: fractions and a short quiz."}'
   limit = tonumber(args[3] or "0")
end

function response(status, headers, body)
   seen = seen + 1
   if limit > 0 and seen >= limit then
      wrk.thread:stop()
   end
end
