"""docs/openapi/v1.yaml against the server: the operations under /api/v1 are exactly the routes
of jr_routes_v1 (21 of them) and a HEAD for each GET; each path's x-allow is the server's
Allow; the document is a structurally valid OpenAPI 3.1 document whose
$refs resolve and whose examples match their schemas; and real answers of every /api/v1
operation, successes and errors, validate against the schema the document declares for that
operation and status (JSON Schema 2020-12)."""

import copy
import re

import pytest
import yaml
from jsonschema import Draft202012Validator

from harness import REPO, assert_json, random_ip, uniq

SPEC_PATH = REPO / "docs" / "openapi" / "v1.yaml"
ROUTES_C = REPO / "mod_journal" / "core" / "jr_routes.c"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
RATE_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy")
NO_SUCH_ID = 9_000_000_000_000


# ---- the document -----------------------------------------------------------------------------
def load_spec():
    with open(SPEC_PATH, encoding="utf-8") as f:
        return yaml.safe_load(f)


SPEC = load_spec()


def v1_route_table():
    """(METHOD, /path/{param}) of every entry of jr_routes_v1 in jr_routes.c."""
    src = ROUTES_C.read_text(encoding="utf-8")
    m = re.search(r"jr_routes_v1\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    assert m, "jr_routes_v1 not found in jr_routes.c"
    routes = re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"', m.group(1))
    return [(meth, re.sub(r":(\w+)", r"{\1}", path)) for meth, path in routes]


def v1_operations(spec=SPEC):
    """(METHOD, path) -> operation object, for every operation under /api/v1."""
    ops = {}
    for path, item in spec["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for meth in METHODS:
            if meth in item:
                ops[(meth.upper(), path)] = item[meth]
    return ops


def pointer(doc, ref):
    """The object a local reference ("#/a/b") points to; KeyError when it does not exist."""
    assert ref.startswith("#/"), f"only local references are used: {ref}"
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[part]
    return node


def walk_refs(node, where="#"):
    """Yields (location, $ref value) for every $ref in the document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield where, v
            else:
                yield from walk_refs(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_refs(v, f"{where}/{i}")


def inline(node, doc=SPEC, depth=0):
    """A copy of a schema with every $ref replaced by its target (siblings of $ref are kept by
    wrapping the target in allOf). The document has no recursive schemas."""
    assert depth < 50, "reference cycle"
    if isinstance(node, dict):
        if "$ref" in node:
            target = inline(pointer(doc, node["$ref"]), doc, depth + 1)
            rest = {k: inline(v, doc, depth + 1) for k, v in node.items() if k != "$ref"}
            return {"allOf": [target], **rest} if rest else target
        return {k: inline(v, doc, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [inline(v, doc, depth + 1) for v in node]
    return node


def deref(node, doc=SPEC):
    """A response, parameter or header object, following one $ref."""
    return pointer(doc, node["$ref"]) if isinstance(node, dict) and "$ref" in node else node


def response_of(method, path, status):
    op = SPEC["paths"][path][method.lower()]
    responses = op["responses"]
    assert str(status) in responses, \
        f"{method} {path} does not declare the status {status} (declared: {sorted(responses)})"
    return deref(responses[str(status)])


def response_schema(method, path, status):
    resp = response_of(method, path, status)
    content = resp.get("content", {})
    assert "application/json" in content, f"{method} {path} {status}: no application/json body"
    return inline(content["application/json"]["schema"])


def validate(schema, instance, what):
    errors = sorted(Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(e.path))
    assert not errors, f"{what}: the body does not match its schema:\n" + "\n".join(
        f"  at {'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:10]) + \
        f"\nbody: {str(instance)[:800]}"


def with_head(routes):
    """The routes and, for each GET, its HEAD (the server answers HEAD wherever GET)."""
    return set(routes) | {("HEAD", path) for meth, path in routes if meth == "GET"}


def allow_of(routes, path):
    """The server's Allow for a path: its methods in route order, HEAD right after GET."""
    methods = []
    for meth, p in routes:
        if p == path:
            methods += [meth, "HEAD"] if meth == "GET" else [meth]
    return ", ".join(methods)


# ---- (a) route table == the document ----------------------------------------------------------
def test_v1_routes_equal_openapi_operations():
    routes = v1_route_table()
    assert len(routes) == len(set(routes)), f"duplicate routes in jr_routes_v1: {routes}"
    assert len(routes) == 21, f"jr_routes_v1 has {len(routes)} routes: {routes}"
    gets = [r for r in routes if r[0] == "GET"]
    documented = set(v1_operations())
    assert len(documented) == 21 + len(gets), sorted(documented)
    expected = with_head(routes)
    assert expected == documented, (
        f"only in jr_routes.c: {sorted(expected - documented)}; "
        f"only in v1.yaml: {sorted(documented - expected)}")
    for path in {p for _, p in routes}:
        assert SPEC["paths"][path].get("x-allow") == allow_of(routes, path), path


def test_every_v1_path_is_under_the_v1_tag():
    for (meth, path), op in v1_operations().items():
        assert op.get("tags") == ["v1"], f"{meth} {path}: tags {op.get('tags')}"


def test_key_management_paths_are_kept():
    ops = {(m.upper(), p) for p, item in SPEC["paths"].items() if p.startswith("/api/api-keys")
           for m in METHODS if m in item}
    routes = [("GET", "/api/api-keys"), ("POST", "/api/api-keys"),
              ("GET", "/api/api-keys/meta"), ("GET", "/api/api-keys/{id}"),
              ("PUT", "/api/api-keys/{id}"), ("DELETE", "/api/api-keys/{id}"),
              ("POST", "/api/api-keys/{id}/rotate")]
    assert ops == with_head(routes)
    for path in {p for _, p in routes}:
        assert SPEC["paths"][path].get("x-allow") == allow_of(routes, path), path
    for p, item in SPEC["paths"].items():
        if p.startswith("/api/api-keys"):
            for m in METHODS:
                if m in item:
                    assert item[m]["tags"] == ["key-management"], (m, p)


# ---- (b) structure ----------------------------------------------------------------------------
def test_openapi_31_structure():
    assert SPEC["openapi"] == "3.1.0"
    assert SPEC["info"]["title"] and SPEC["info"]["version"]
    assert isinstance(SPEC["paths"], dict) and SPEC["paths"]
    tags = {t["name"] for t in SPEC.get("tags", [])}
    schemes = set(SPEC["components"]["securitySchemes"])
    op_ids = []
    for path, item in SPEC["paths"].items():
        assert path.startswith("/"), path
        path_params = {p["name"] for p in map(deref, item.get("parameters", []))
                       if p["in"] == "path"}
        for meth in METHODS:
            if meth not in item:
                continue
            op = item[meth]
            where = f"{meth.upper()} {path}"
            assert isinstance(op.get("operationId"), str) and op["operationId"], where
            op_ids.append(op["operationId"])
            assert isinstance(op.get("responses"), dict) and op["responses"], where
            for status, resp in op["responses"].items():
                assert re.fullmatch(r"[1-5][0-9][0-9]|[1-5]XX|default", str(status)), (where,
                                                                                      status)
                assert "description" in deref(resp), (where, status)
            for tag in op.get("tags", []):
                assert tag in tags, (where, tag)
            for req in op.get("security", SPEC.get("security", [])):
                assert set(req) <= schemes, (where, req)
            params = path_params | {p["name"] for p in map(deref, op.get("parameters", []))
                                    if p["in"] == "path"}
            assert params == set(re.findall(r"\{(\w+)\}", path)), (where, params)
            for p in map(deref, op.get("parameters", [])):
                assert p["in"] in ("query", "header", "path", "cookie"), (where, p)
                assert "schema" in p, (where, p["name"])
                if p["in"] == "path":
                    assert p.get("required") is True, (where, p["name"])
    assert len(op_ids) == len(set(op_ids)), f"duplicate operationIds: {sorted(op_ids)}"


def test_every_ref_resolves():
    refs = list(walk_refs(SPEC))
    assert refs
    for where, ref in refs:
        try:
            pointer(SPEC, ref)
        except (KeyError, TypeError, IndexError):
            pytest.fail(f"{where}: $ref {ref} does not resolve")


def test_component_schemas_are_valid_2020_12():
    for name, schema in SPEC["components"]["schemas"].items():
        Draft202012Validator.check_schema(inline(schema))
    required = {"LessonReport", "LessonReportCreate", "Stats", "QueueCounts", "Ok", "OkCount",
                "Error"}
    assert required <= set(SPEC["components"]["schemas"])


def test_examples_match_their_schemas():
    checked = 0
    for path, item in SPEC["paths"].items():
        for meth in METHODS:
            if meth not in item:
                continue
            op = item[meth]
            bodies = [("request", op["requestBody"])] if "requestBody" in op else []
            bodies += [(status, deref(r)) for status, r in op["responses"].items()]
            for label, holder in bodies:
                media = holder.get("content", {}).get("application/json")
                if not media or "schema" not in media:
                    continue
                schema = inline(media["schema"])
                examples = [media["example"]] if "example" in media else []
                examples += [deref(e)["value"] for e in media.get("examples", {}).values()]
                for ex in examples:
                    validate(schema, ex, f"example of {meth.upper()} {path} {label}")
                    checked += 1
    assert checked > 20


# Answers that always carry the rate-limit headers: they come after the key and the rate limit.
RATE_GUARANTEED = ("200", "201", "304", "400", "404", "405", "409", "412", "413", "415", "422",
                   "429")


def test_v1_rate_limit_headers_are_required_where_guaranteed():
    def check(resp, where):
        headers = resp.get("headers", {})
        if status in RATE_GUARANTEED:
            for name in RATE_HEADERS:
                assert name in headers and deref(headers[name]).get("required") is True, \
                    (where, name)
        elif status == "403":  # a missing scope has them, a banned IP not
            for name in RATE_HEADERS:
                assert name in headers and not deref(headers[name]).get("required"), \
                    (where, name)
        elif status in ("401", "503"):
            assert not set(RATE_HEADERS) & set(headers), where

    for (meth, path), op in v1_operations().items():
        for status, resp in op["responses"].items():
            check(deref(resp), f"{meth} {path} {status}")
    status = "405"
    check(SPEC["components"]["responses"]["MethodNotAllowed"], "MethodNotAllowed")
    # Key management answers to a session: no rate-limit headers are promised there.
    for path, item in SPEC["paths"].items():
        if path.startswith("/api/api-keys"):
            for meth in METHODS:
                for status, resp in item.get(meth, {}).get("responses", {}).items():
                    headers = deref(resp).get("headers", {})
                    assert not any(deref(h).get("required") for n, h in headers.items()
                                   if n.startswith("RateLimit-")), (meth, path, status)


def test_head_operations_mirror_their_get():
    for (meth, path), op in v1_operations().items():
        if meth != "HEAD":
            continue
        get = SPEC["paths"][path]["get"]
        assert set(op["responses"]) == set(get["responses"]), path
        assert op.get("parameters") == get.get("parameters"), path
        assert op.get("tags") == get.get("tags") and op.get("security") == get.get("security")
        for status, resp in op["responses"].items():
            assert "content" not in deref(resp), (path, status)
            assert deref(resp).get("headers", {}) == \
                deref(get["responses"][status]).get("headers", {}), (path, status)


def test_v1_operations_declare_their_errors():
    for (meth, path), op in v1_operations().items():
        if meth == "HEAD":  # test_head_operations_mirror_their_get
            continue
        statuses = set(op["responses"])
        where = f"{meth} {path}"
        success = {s for s in statuses if s.startswith("2")}
        assert len(success) == 1, (where, statuses)
        # 400: every operation refuses a query parameter it does not read.
        assert {"400", "401", "403", "429", "503"} <= statuses, (where, statuses)
        if "{id}" in path:
            assert "404" in statuses, where
        ok_schema = deref(op["responses"][success.pop()])["content"]["application/json"]
        if ok_schema["schema"].get("$ref", "").endswith("List"):
            # Lists validate limit and offset (400) and declare both parameters.
            assert "400" in statuses, where
            names = {deref(p)["name"] for p in op.get("parameters", [])}
            assert {"limit", "offset"} <= names, (where, names)
        if "requestBody" in op:
            assert {"400", "413", "415"} <= statuses, where
            schema = deref(op["requestBody"]["content"]["application/json"]["schema"])
            assert schema.get("additionalProperties") is False, where
        for status in statuses:
            resp = deref(op["responses"][status])
            if status == "304":  # Not Modified has no body by definition
                assert "content" not in resp, (where, status)
                assert set(RATE_HEADERS) <= set(resp.get("headers", {})), (where, status)
                continue
            schema = resp.get("content", {}).get("application/json", {}).get("schema")
            assert schema is not None, (where, status)
            if status >= "400":
                assert schema == {"$ref": "#/components/schemas/Error"}, (where, status)
            if status[0] == "2" or status in ("400", "403", "404", "409", "429"):
                assert set(RATE_HEADERS) <= set(resp.get("headers", {})), (where, status)
    assert "409" in SPEC["paths"]["/api/v1/lesson-reports"]["post"]["responses"]


def test_lesson_report_create_bounds():
    body = SPEC["components"]["schemas"]["LessonReportCreate"]
    assert body["additionalProperties"] is False
    assert set(body["required"]) == {"group_id", "lesson_date", "text"}
    assert body["properties"]["text"]["maxLength"] == 20000
    assert body["properties"]["topic"]["maxLength"] == 300
    report = SPEC["components"]["schemas"]["LessonReport"]
    assert "topic_position" in report["required"]


# ---- (c) real answers against the declared schemas ---------------------------------------------
class Checker:
    """Sends requests to /api/v1 and validates every answer against v1.yaml."""

    def __init__(self, server):
        self.server = server
        self.seen = set()  # (METHOD, path template, status)

    def call(self, method, template, status, key=None, path_args=None, json=None, params=None,
             ip=None, headers=None):
        path = template.format(**(path_args or {}))
        h = dict(headers or {})
        if key is not None:
            h["X-Api-Key"] = key
        r = self.server.api(method, path, headers=h, json=json, params=params, ip=ip)
        body = assert_json(r, status)
        validate(response_schema(method, template, status), body,
                 f"{method} {path} -> {status}")
        self.check_headers(r, response_of(method, template, status), f"{method} {path}")
        self.seen.add((method, template, status))
        return body

    @staticmethod
    def check_headers(r, response, where):
        """The headers a response object declares: required ones present, numbers numeric."""
        status = r.status_code
        for name, header in response.get("headers", {}).items():
            if name.startswith("RateLimit-") or name == "Retry-After" or \
                    deref(header).get("required"):
                assert name in r.headers, f"{where} -> {status}: no {name} header"
                if name.startswith("RateLimit-") and name != "RateLimit-Policy" or \
                        name == "Retry-After":
                    assert re.fullmatch(r"[0-9]+", r.headers[name]), (name, r.headers[name])
        if status == 401:
            assert "RateLimit-Limit" not in r.headers, "a 401 carries no rate-limit headers"

    def head(self, template, status, key, path_args=None, params=None):
        """A HEAD: the declared status and headers, no body."""
        path = template.format(**(path_args or {}))
        r = self.server.api("HEAD", path, headers={"X-Api-Key": key}, params=params)
        assert r.status_code == status, f"HEAD {path}: {r.status_code}"
        assert r.content == b"", f"HEAD {path}: a body"
        self.check_headers(r, response_of("HEAD", template, status), f"HEAD {path}")
        self.seen.add(("HEAD", template, status))


@pytest.fixture
def world(server):
    """A branch with a group, a module, a student, and keys: read+write, read only."""
    adm = server.admin_token
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    module = assert_json(server.api("POST", "/api/modules", token=adm, json={
        "name": uniq("Module"), "lessons_count": 8, "description": "schema check"}), 201)
    assert_json(server.api("POST", "/api/students", token=adm, json={
        "name": uniq("Student"), "group_id": group["id"]}), 201)

    def key(scopes, **fields):
        body = {"name": uniq("oaskey"), "scopes": scopes, "rate_limit_per_min": 10000}
        body.update(fields)
        return assert_json(server.api("POST", "/api/api-keys", token=adm, json=body), 201)["key"]

    return {"branch": branch, "group": group, "module": module,
            "rw": key(["read", "write"]), "ro": key(["read"]),
            "scoped": key(["read", "write"], branch_ids=[branch["id"]]), "key": key}


def test_every_v1_operation_answers_as_declared(server, world):
    c = Checker(server)
    rw, scoped = world["rw"], world["scoped"]
    gid, bid = world["group"]["id"], world["branch"]["id"]

    me = c.call("GET", "/api/v1/me", 200, key=scoped)
    assert me["user"]["role"] == "tutor" and me["user"]["branch_ids"] == [bid]
    me = c.call("GET", "/api/v1/me", 200, key=rw)  # unrestricted: branch_ids null
    assert me["user"]["role"] == "admin" and me["user"]["branch_ids"] is None
    assert me["key"]["branch_ids"] is None
    c.call("GET", "/api/v1/branches", 200, key=rw, params={"limit": 5})
    c.call("GET", "/api/v1/groups", 200, key=scoped, params={"branch_id": bid})
    c.call("GET", "/api/v1/students", 200, key=scoped, params={"group_id": gid})
    c.call("GET", "/api/v1/modules", 200, key=rw, params={"search": world["module"]["name"]})

    entry = c.call("POST", "/api/v1/entries", 201, key=scoped, json={
        "student_name": uniq("Pupil"), "group_id": gid, "description": "schema check",
        "module_id": world["module"]["id"]})
    eid = {"id": entry["id"]}
    listed = c.call("GET", "/api/v1/entries", 200, key=scoped, params={"group_id": gid})
    assert [e["id"] for e in listed["items"]] == [entry["id"]]
    c.call("GET", "/api/v1/entries/{id}", 200, key=scoped, path_args=eid)
    c.call("PUT", "/api/v1/entries/{id}", 200, key=scoped, path_args=eid,
           json={"description": "changed", "module_id": None})
    c.call("POST", "/api/v1/entries/{id}/ai/recheck", 200, key=scoped, path_args=eid)
    c.call("GET", "/api/v1/entries/{id}/files", 200, key=scoped, path_args=eid)

    first = c.call("POST", "/api/v1/lesson-reports", 201, key=scoped, json={
        "group_id": gid, "lesson_date": "2026-03-02", "lesson_time": "09:15",
        "text": "Kinematics.", "topic": "Module: kinematics 1/8"})
    assert first["topic_position"] == "first"
    report = c.call("POST", "/api/v1/lesson-reports", 201, key=rw, json={
        "group_id": gid, "lesson_date": "2026-03-09", "text": "Friction.",
        "topic": "Module: friction 8/8"})
    assert report["topic_position"] == "last" and report["lesson_time"] is None
    listed = c.call("GET", "/api/v1/lesson-reports", 200, key=scoped,
                    params={"group_id": gid, "date_from": "2026-03-01", "date_to": "2026-03-09"})
    assert [r["id"] for r in listed["items"]] == [report["id"], first["id"]]
    rid = {"id": report["id"]}
    c.call("GET", "/api/v1/lesson-reports/{id}", 200, key=scoped, path_args=rid)

    stats = c.call("GET", "/api/v1/stats", 200, key=scoped)
    assert stats["branches"] == 1 and stats["groups"] == 1 and stats["students"] == 1
    assert stats["entries"] == 1 and stats["lesson_reports"] == 2
    c.call("GET", "/api/v1/stats", 200, key=rw)
    c.call("POST", "/api/v1/ai/wake", 200, key=scoped)
    c.call("POST", "/api/v1/photo-jobs/wake", 200, key=scoped)
    ai = c.call("POST", "/api/v1/ai/requeue-failed", 200, key=scoped)
    photo = c.call("POST", "/api/v1/photo-jobs/requeue-failed", 200, key=scoped)
    assert ai["count"] == 0 and photo["count"] == 0  # nothing failed in this fresh branch

    for template, args in (("/api/v1/me", None), ("/api/v1/branches", None),
                           ("/api/v1/groups", None), ("/api/v1/students", None),
                           ("/api/v1/modules", None), ("/api/v1/entries", None),
                           ("/api/v1/entries/{id}", eid), ("/api/v1/entries/{id}/files", eid),
                           ("/api/v1/lesson-reports", None),
                           ("/api/v1/lesson-reports/{id}", rid), ("/api/v1/stats", None)):
        c.head(template, 200, scoped, path_args=args)

    c.call("DELETE", "/api/v1/lesson-reports/{id}", 200, key=scoped, path_args=rid)
    c.call("DELETE", "/api/v1/entries/{id}", 200, key=scoped, path_args=eid)
    c.head("/api/v1/entries/{id}", 404, scoped, path_args=eid)

    successes = {(m, p) for m, p, s in c.seen if s < 300}
    assert successes == set(v1_operations()), sorted(set(v1_operations()) - successes)


def test_error_answers_match_the_error_schema(server, world):
    c = Checker(server)
    rw, ro, scoped = world["rw"], world["ro"], world["scoped"]
    gid = world["group"]["id"]
    ip = random_ip()

    # 401: no key, and a key that does not exist (from an address of its own).
    c.call("GET", "/api/v1/stats", 401, ip=ip)
    c.call("POST", "/api/v1/lesson-reports", 401, ip=ip,
           json={"group_id": gid, "lesson_date": "2026-04-01", "text": "x"})
    c.call("GET", "/api/v1/lesson-reports", 401, ip=ip,
           headers={"Authorization": "Bearer wsk_" + "0" * 49})

    # 403: a read-only key on mutations.
    for method, template in (("POST", "/api/v1/ai/wake"), ("POST", "/api/v1/photo-jobs/wake"),
                             ("POST", "/api/v1/ai/requeue-failed"),
                             ("POST", "/api/v1/photo-jobs/requeue-failed"),
                             ("POST", "/api/v1/lesson-reports")):
        c.call(method, template, 403, key=ro, ip=ip,
               json={"group_id": gid, "lesson_date": "2026-04-01", "text": "x"})

    # 404: unknown entry and lesson report.
    missing = {"id": NO_SUCH_ID}
    for method, template in (("GET", "/api/v1/entries/{id}"),
                             ("PUT", "/api/v1/entries/{id}"),
                             ("DELETE", "/api/v1/entries/{id}"),
                             ("POST", "/api/v1/entries/{id}/ai/recheck"),
                             ("GET", "/api/v1/entries/{id}/files"),
                             ("GET", "/api/v1/lesson-reports/{id}"),
                             ("DELETE", "/api/v1/lesson-reports/{id}")):
        c.call(method, template, 404, key=rw, path_args=missing,
               json={"description": "x"} if method == "PUT" else None)

    # 400: validation of bodies and query parameters.
    base = {"group_id": gid, "lesson_date": "2026-04-02", "text": "x"}
    for body in ({**base, "topic": "t" * 301}, {**base, "text": "t" * 20001},
                 {**base, "lesson_date": "2026-02-30"}, {**base, "lesson_time": "24:00"},
                 {**base, "ai_status": "done"}, {"lesson_date": "2026-04-02", "text": "x"},
                 {**base, "group_id": NO_SUCH_ID}):
        c.call("POST", "/api/v1/lesson-reports", 400, key=rw, json=body)
    c.call("GET", "/api/v1/lesson-reports", 400, key=rw, params={"date_from": "2026-13-01"})
    c.call("GET", "/api/v1/lesson-reports", 400, key=rw, params={"group_id": "x"})
    c.call("GET", "/api/v1/entries", 400, key=rw, params={"limit": 0})
    c.call("POST", "/api/v1/entries", 400, key=rw, json={"group_id": gid})
    # The boundaries themselves are accepted.
    ok = c.call("POST", "/api/v1/lesson-reports", 201, key=rw,
                json={**base, "topic": "é" * 300, "text": "é" * 20000})
    assert len(ok["topic"]) == 300 and len(ok["text"]) == 20000

    # 409: a second report of the group on the same date (also through another key).
    c.call("POST", "/api/v1/lesson-reports", 409, key=scoped,
           json={**base, "lesson_time": "18:00", "text": "again"})

    # 404 after deletion; the date is free again.
    c.call("DELETE", "/api/v1/lesson-reports/{id}", 200, key=rw, path_args={"id": ok["id"]})
    c.call("GET", "/api/v1/lesson-reports/{id}", 404, key=rw, path_args={"id": ok["id"]})
    c.call("POST", "/api/v1/lesson-reports", 201, key=rw, json=base)

    assert {s for _, _, s in c.seen} >= {400, 401, 403, 404, 409}


def test_rate_limited_answer_matches_its_schema(server, world):
    c = Checker(server)
    key = world["key"](["read"], rate_limit_per_min=1)
    c.call("GET", "/api/v1/stats", 200, key=key)
    c.call("GET", "/api/v1/stats", 429, key=key)
    r = server.api("GET", "/api/v1/lesson-reports", headers={"X-Api-Key": key})
    assert r.status_code == 429 and re.fullmatch(r"[0-9]+", r.headers.get("Retry-After", ""))


def test_restricted_key_sees_only_its_branches_in_stats_and_reports(server, world):
    """Stats and lesson reports of a key restricted to a branch do not include other
    branches (spec 4.1 rule 2); its requeue answers 200 with a numeric count."""
    c = Checker(server)
    other_branch = server.create_branch()
    other_group = server.create_group(other_branch["id"])
    other = c.call("POST", "/api/v1/lesson-reports", 201, key=world["rw"], json={
        "group_id": other_group["id"], "lesson_date": "2026-05-01", "text": "elsewhere"})
    scoped = world["scoped"]
    listed = c.call("GET", "/api/v1/lesson-reports", 200, key=scoped,
                    params={"group_id": other_group["id"]})
    assert listed["items"] == [] and listed["total"] == 0
    c.call("GET", "/api/v1/lesson-reports/{id}", 404, key=scoped, path_args={"id": other["id"]})
    c.call("DELETE", "/api/v1/lesson-reports/{id}", 404, key=scoped,
           path_args={"id": other["id"]})
    c.call("POST", "/api/v1/lesson-reports", 400, key=scoped, json={
        "group_id": other_group["id"], "lesson_date": "2026-05-02", "text": "x"})
    stats = c.call("GET", "/api/v1/stats", 200, key=scoped)
    assert stats["branches"] == 1
    assert isinstance(c.call("POST", "/api/v1/ai/requeue-failed", 200, key=scoped)["count"], int)
    c.call("DELETE", "/api/v1/lesson-reports/{id}", 200, key=world["rw"],
           path_args={"id": other["id"]})


def test_inline_resolver_keeps_siblings():
    schema = inline({"$ref": "#/components/schemas/Id", "description": "x"})
    assert schema == {"allOf": [copy.deepcopy(SPEC["components"]["schemas"]["Id"])],
                      "description": "x"}


def test_other_methods_answer_405_with_the_declared_allow(server, world):
    """Every path of the document: a method outside its x-allow is 405, Allow is x-allow, and
    the answer matches MethodNotAllowed (/api/v1) or KeyMethodNotAllowed (key management);
    the key-management lists answer HEAD as declared."""
    c = Checker(server)
    for path, item in SPEC["paths"].items():
        v1 = path.startswith("/api/v1/")
        if not v1 and not path.startswith("/api/api-keys"):
            continue
        allowed = item["x-allow"].split(", ")
        method = next(m for m in ("PUT", "POST", "DELETE", "PATCH") if m not in allowed)
        url = path.replace("{id}", "1")
        h = {"X-Api-Key": world["rw"]} if v1 else {"X-Auth-Token": server.admin_token}
        r = server.api(method, url, headers=h, json={})
        name = "MethodNotAllowed" if v1 else "KeyMethodNotAllowed"
        declared = SPEC["components"]["responses"][name]
        body = assert_json(r, 405)
        validate(inline(declared["content"]["application/json"]["schema"]), body,
                 f"{method} {url}")
        assert body["code"] == "method_not_allowed", body
        assert r.headers.get("Allow") == item["x-allow"], (method, url, r.headers.get("Allow"))
        c.check_headers(r, declared, f"{method} {url}")
        if not v1 and "head" in item and "{id}" not in path:  # v1: in the test above
            r = server.api("HEAD", url, headers=h)
            assert r.status_code == 200 and r.content == b"", (url, r.status_code)


def test_every_operation_declaring_400_refuses_an_unknown_parameter(server, world):
    """A query parameter an operation does not read is 400 on every /api/v1 operation (each
    declares it), HEAD included; a malformed Idempotency-Key is 400 on the POSTs of key
    management."""
    c = Checker(server)
    for (meth, path), op in v1_operations().items():
        url = path.replace("{id}", str(NO_SUCH_ID))
        if meth == "HEAD":
            c.head(path, 400, world["rw"], path_args={"id": NO_SUCH_ID},
                   params={"no_such_parameter": "1"})
            continue
        body = c.call(meth, path, 400, key=world["rw"], path_args={"id": NO_SUCH_ID},
                      params={"no_such_parameter": "1"},
                      json={} if meth in ("POST", "PUT") else None)
        assert body["code"] == "unknown_parameter" and body["param"] == "no_such_parameter", \
            (meth, url, body)
    assert {(m, p) for m, p, s in c.seen if s == 400} == set(v1_operations())
    for path in ("/api/api-keys", "/api/api-keys/{id}/rotate"):
        r = server.api("POST", path.replace("{id}", str(NO_SUCH_ID)), token=server.admin_token,
                       headers={"Idempotency-Key": "two words"}, json={})
        body = assert_json(r, 400)
        validate(response_schema("POST", path, 400), body, f"POST {path}")
        assert body["param"] == "Idempotency-Key", body
