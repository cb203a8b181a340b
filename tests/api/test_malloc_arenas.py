"""JournalMallocArenas bounds glibc's malloc arenas in each httpd child.

glibc gives a thread its own arena when it first allocates, up to 8 per core, and every arena
but the main one is a 64 MiB reservation of its own (a "heap"): rw pages in use followed by an
inaccessible rest, aligned to 64 MiB. Counting those reservations in /proc/PID/maps counts the
arenas a child made. The test server's children run 64 threads each, so without a limit a child
makes as many arenas as glibc allows.
"""

import concurrent.futures
import os

import pytest
import requests

import harness
from diagnostics import children_of

HEAP = 64 << 20

pytestmark = pytest.mark.skipif(
    harness.SANITIZE, reason="AddressSanitizer replaces malloc: glibc's arenas are not in use")


def arena_heaps(pid):
    """How many 64 MiB arena reservations the process maps."""
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            anonymous = len(fields) < 6 and fields[4] == "0"
            maps.append((start, end, fields[1], anonymous))
    heaps = 0
    for i, (start, end, perms, anonymous) in enumerate(maps):
        if not anonymous or start % HEAP or not perms.startswith("rw"):
            continue
        # The used part, then (unless the heap is full) the reserved rest right after it.
        top = end
        if i + 1 < len(maps) and maps[i + 1][0] == end and maps[i + 1][2].startswith("---"):
            top = maps[i + 1][1]
        heaps += top - start == HEAP
    return heaps


def httpd_children(srv):
    exe = os.readlink(f"/proc/{srv.pid}/exe")
    kids = []
    for pid in children_of(srv.pid):
        try:
            if os.readlink(f"/proc/{pid}/exe") == exe:
                kids.append(pid)
        except OSError:
            continue
    return kids


def busy_children(srv):
    """Requests from many clients at once, so that every child runs many threads."""
    key = srv.create_api_key(["read"], 10000)

    def one(_):
        return requests.get(srv.base_url + "/api/v1/entries?limit=50", headers={"X-Api-Key": key},
                            timeout=harness.HTTP_TIMEOUT).status_code

    with concurrent.futures.ThreadPoolExecutor(48) as pool:
        assert set(pool.map(one, range(600))) == {200}
    kids = httpd_children(srv)
    assert kids, "no httpd child to look at"
    return {pid: arena_heaps(pid) for pid in kids}


def test_children_keep_to_two_arenas_by_default(fresh_server):
    srv = fresh_server()
    heaps = busy_children(srv)
    # Two arenas: the main one (in the program break, not a reservation) and one more.
    assert all(n <= 1 for n in heaps.values()), heaps


def test_zero_leaves_mallocs_default(fresh_server):
    srv = fresh_server(extra_conf="JournalMallocArenas 0")
    heaps = busy_children(srv)
    assert max(heaps.values()) > 1, heaps
