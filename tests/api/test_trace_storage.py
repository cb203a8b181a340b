"""The module's locations have no files behind them: its map_to_storage hook claims them, so
httpd neither walks the directories (nor reads .htaccess files) for /api nor answers TRACE
there with its echo of the request's headers."""

import pytest

from harness import assert_error

SECRET_KEY = "wsk_" + "S" * 49
SECRET_COOKIE = "session=cookie-secret-31f9"
SECRET_TOKEN = "f" * 64


def trace(srv, path):
    return srv.http.request("TRACE", srv.base_url + path, timeout=30,
                            headers={"X-Api-Key": SECRET_KEY, "Cookie": SECRET_COOKIE,
                                     "X-Auth-Token": SECRET_TOKEN})


def allow_set(r):
    return {m.strip().upper() for m in r.headers.get("Allow", "").split(",") if m.strip()}


def assert_trace_refused(r, allowed):
    assert_error(r, 405, "TRACE")
    assert allowed <= allow_set(r), f"Allow {r.headers.get('Allow')!r} lacks {allowed}"
    assert "TRACE" not in allow_set(r)
    for secret in (SECRET_KEY, SECRET_COOKIE, SECRET_TOKEN):
        assert secret not in r.text, f"the answer echoes a credential: {r.text[:300]!r}"
        assert all(secret not in v for v in r.headers.values()), r.headers


@pytest.fixture(scope="module")
def trace_on_server():
    """TraceEnable On, explicitly: httpd would echo TRACE requests everywhere."""
    from harness import Server
    srv = Server(extra_conf="TraceEnable On", label="trace")
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
        problems = srv.new_log_problems()
        srv.cleanup()
    assert not problems, problems


@pytest.mark.parametrize("path,allowed", [
    ("/api/v1/me", {"GET", "HEAD", "POST", "PUT", "DELETE"}),
    ("/api/v1/no-such-thing", {"GET", "HEAD", "POST", "PUT", "DELETE"}),
    ("/api/auth/login", {"POST"}),
    ("/api/groups/1", {"GET", "HEAD", "PUT", "DELETE"}),
    ("/api/no-such-thing", {"GET", "HEAD", "POST", "PUT", "DELETE"}),
    ("/api", {"GET", "HEAD", "POST", "PUT", "DELETE"}),
])
def test_trace_is_405_json_even_with_trace_enable_on(trace_on_server, path, allowed):
    assert_trace_refused(trace(trace_on_server, path), allowed)


def test_trace_with_a_valid_key_is_405_too(trace_on_server):
    srv = trace_on_server
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token,
                json={"name": "trace-key", "scopes": ["read"]})
    assert r.status_code == 201, r.text
    key = r.json()["key"]
    r = srv.http.request("TRACE", srv.base_url + "/api/v1/me", headers={"X-Api-Key": key},
                         timeout=30)
    assert_error(r, 405)
    assert key not in r.text


def test_trace_outside_the_module_follows_trace_enable(trace_on_server, server):
    # The test server says TraceEnable On: httpd echoes outside the module's locations...
    r = trace_on_server.http.request("TRACE", trace_on_server.base_url + "/elsewhere",
                                     timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("message/http"), r
    # ... while the generated configuration turns TRACE off.
    r = server.http.request("TRACE", server.base_url + "/elsewhere",
                            headers={"Cookie": SECRET_COOKIE}, timeout=30)
    assert r.status_code == 405, f"{r.status_code} {r.text[:300]}"
    assert SECRET_COOKIE not in r.text


def test_generated_config_turns_trace_off_and_overrides_none(server):
    conf = server.conf_file.read_text()
    assert "\nTraceEnable Off\n" in conf
    directory_blocks = conf.count("<Directory ")
    assert directory_blocks >= 2
    assert conf.count("AllowOverride None") == directory_blocks, conf


def test_no_directory_walk_for_api(fresh_server):
    """A broken .htaccess in the DocumentRoot, with overrides allowed, breaks every request
    that httpd maps to a directory: the module's requests never get there."""
    srv = fresh_server(start=False)
    (srv.conf_d / "extra.conf").write_text(
        f'<Directory "{srv.doc_root}">\n    AllowOverride All\n</Directory>\n')
    (srv.doc_root / ".htaccess").write_text("ThisIsNotADirective on\n")
    srv.start()
    srv.allowed_log_patterns.append(r"\[core:alert\] .*/htdocs/\.htaccess: Invalid command "
                                    r"'ThisIsNotADirective', perhaps misspelled")
    r = srv.api("GET", "/api/health")
    assert r.status_code == 200, f"{r.status_code} {r.text[:300]}"
    srv.login(srv.admin_username, srv.admin_password)
    # Outside the module the walk runs and trips over the file, as it should.
    r = srv.http.get(srv.base_url + "/index.html", timeout=30)
    assert r.status_code == 500, r.status_code
