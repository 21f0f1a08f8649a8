"""A schemathesis run of the server's OpenAPI schema: generated requests, positive and
negative, against the real app on a real socket, with zero server errors.

Bounded in time: a fixed number of examples per operation, derandomized (the same run
every time), no example database. The two SSE endpoints are left out (an endless stream
is not a response a fuzzer can read; the stream tests cover them).
"""

from __future__ import annotations

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode

from tests.server.conftest import Served

EXAMPLES = 8


def test_generated_requests_never_get_a_server_error(served: Served) -> None:
    team = served.client.create_team("turns")  # something for the generated ids to miss
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if not result.ok().path.endswith("events")
    ]
    assert len(operations) >= 15
    failures: list[str] = []
    statuses: list[int] = []
    for operation in operations:
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        )

        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def run(case: schemathesis.Case) -> None:
            response = case.call(base_url=served.url, timeout=60)
            statuses.append(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.text[:200]}")
            case.validate_response(response, checks=[not_a_server_error])

        run()
    assert failures == []
    assert len(statuses) >= 2 * len(operations)  # every operation was exercised
    assert any(400 <= s < 500 for s in statuses) and any(s < 300 for s in statuses)
    assert httpx.get(f"{served.url}/teams/{team.team_id}").status_code == 200
