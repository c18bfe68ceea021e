"""Schema tests: schemathesis (PyPI) generates requests for every operation of the
gateway's own OpenAPI document (/openapi.json, generated from the code) and checks
every answer against it: no server error, a declared status code, the declared
content type and a body matching the declared schema. Signed operations are sent
signed with a real key (so they get past authentication and reach the handlers)."""

import hashlib
import hmac
import time
from urllib.parse import urlencode

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.checks import not_a_server_error

from stack import KEYS, Stack


@pytest.fixture(scope="module")
def stack():
    s = Stack(weight=10_000_000).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def api_schema(stack):
    return schemathesis.openapi.from_url(stack.base + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


def sign(case):
    names = {p.name for p in case.operation.query}
    headers = {p.name for p in case.operation.headers}
    key, secret = KEYS[1]
    if "X-MBX-APIKEY" in headers:
        case.headers = dict(case.headers or {})
        case.headers["X-MBX-APIKEY"] = key
    if "signature" in names:
        q = {k: v for k, v in (case.query or {}).items() if k not in ("signature", "timestamp", "recvWindow")}
        q["timestamp"] = str(int(time.time() * 1000))
        payload = urlencode(q, doseq=True)
        q["signature"] = hmac.new(secret.encode(), payload.encode(), hashlib.sha256).hexdigest()
        case.query = q


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms(case):
    sign(case)
    case.call_and_validate(
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )


def test_the_document_covers_every_rest_route(api_schema):
    paths = set(api_schema.raw_schema["paths"])
    for p in ("/api/v3/order", "/api/v3/depth", "/api/v3/klines", "/api/v3/account", "/api/v3/userDataStream",
              "/api/v3/ticker/24hr", "/api/v3/openOrders", "/api/v3/allOrders", "/api/v3/myTrades",
              "/api/v3/orderList/oco", "/api/v3/orderList/oto", "/api/v3/orderList/otoco", "/api/v3/orderList",
              "/api/v3/openOrderList", "/api/v3/allOrderList"):
        assert p in paths
