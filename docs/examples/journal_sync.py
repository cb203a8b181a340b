#!/usr/bin/env python3
"""A small client of the journal's /api/v1 (Python standard library only).

It keeps a local copy of the journal entries a key can see, up to date with cursors and
updated_since (deletions included), honours the rate limit (RateLimit-* and Retry-After) and
retries a POST with one Idempotency-Key, so a retry never creates a second entry.

    python3 journal_sync.py https://journal.example.org "$KEY" state.json

state.json keeps the entries and the cursor to resume from; run it again to fetch what changed.
See docs/integrators.md ("Lists", "Retrying safely").
"""

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

SINCE_EVER = "1970-01-01T00:00:00Z"


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__(f"{status} {body.get('code')}: {body.get('error')}")
        self.status, self.body = status, body


class Client:
    def __init__(self, base, key, retries=5, timeout=30, sleep=time.sleep):
        self.base, self.key = base.rstrip("/"), key
        self.retries, self.timeout, self.sleep = retries, timeout, sleep
        self.open = urllib.request.urlopen  # replaceable in tests

    def request(self, method, path, params=None, body=None, idempotency_key=None):
        """One call, repeated after 429 (Retry-After), 503 and network failures. A POST is
        repeated with the same Idempotency-Key, so it takes effect once."""
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = {"X-Api-Key": self.key, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with self.open(req, timeout=self.timeout) as r:
                    self._pace(r.headers)
                    return json.loads(r.read() or b"null")
            except urllib.error.HTTPError as e:
                answer = json.loads(e.read() or b"{}")
                wait = self._retry_after(e.code, e.headers, answer, attempt)
                if wait is None or attempt == self.retries:
                    raise ApiError(e.code, answer) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.retries:
                    raise
                wait = min(2 ** attempt, 30)
            self.sleep(wait)
        raise AssertionError("not reached")

    @staticmethod
    def _retry_after(status, headers, answer, attempt):
        """Seconds to wait before a retry, or None when retrying cannot help."""
        if status == 429 or (status == 409 and answer.get("code") == "idempotency_key_in_use"):
            return int(headers.get("Retry-After") or 1)
        if status >= 500:
            return min(2 ** attempt, 30)
        return None

    def _pace(self, headers):
        """Spends the rest of the window instead of running into 429."""
        if headers.get("RateLimit-Remaining") == "0":
            self.sleep(int(headers.get("RateLimit-Reset") or 1))

    def create_entry(self, student_name, group_id, description="", idempotency_key=None):
        return self.request("POST", "/api/v1/entries", body={
            "student_name": student_name, "group_id": group_id, "description": description},
            idempotency_key=idempotency_key)

    def sync_entries(self, state, limit=500):
        """Applies every change since state["cursor"] (or since ever) to state["entries"]:
        records by id, tombstones remove. Returns the number of items applied."""
        entries = state.setdefault("entries", {})
        cursor, applied = state.get("cursor"), 0
        while True:
            params = {"limit": limit}
            if cursor:
                params["cursor"] = cursor
            else:
                params.update(updated_since=SINCE_EVER, include_deleted=1)
            page = self.request("GET", "/api/v1/entries", params=params)
            for item in page["items"]:
                if "deleted_at" in item:
                    entries.pop(str(item["id"]), None)
                else:
                    entries[str(item["id"])] = item
                applied += 1
            cursor = page["next_cursor"]
            if not page["has_more"]:
                state["cursor"] = cursor
                return applied


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2
    base, key, path = argv[1:]
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except FileNotFoundError:
        state = {}
    n = Client(base, key).sync_entries(state)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(state, f)
    print(f"{n} changes applied, {len(state['entries'])} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
