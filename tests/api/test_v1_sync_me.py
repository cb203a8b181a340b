"""/api/v1/me names the organisation's time zone and time format (date filters count days in
that zone), docs/integrators.md "GET /api/v1/me"."""

from harness import assert_json, uniq


def me(srv, key):
    return assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}), 200)


def test_me_names_the_time_zone_and_format(fresh_server):
    srv = fresh_server()
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                              json={"name": uniq("me"), "scopes": ["read"]}), 201)["key"]
    assert me(srv, key)["organisation"] == {"timezone": "UTC", "time_format": "24h"}
    assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token,
                        json={"timezone": "America/Sao_Paulo", "time_format": "12h"}), 200)
    body = me(srv, key)
    assert body["organisation"] == {"timezone": "America/Sao_Paulo", "time_format": "12h"}
    assert set(body) == {"user", "key", "organisation"}
