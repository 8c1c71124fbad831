"""Schemathesis hooks for cinch's contract test.

A valid Idempotency-Key the fuzzer draws is made unique per request: drawn
keys repeat ("0", "A", ...), and a key reused with another body is rightly a
422, which says nothing about the request itself. Keys that break the rule
are left as drawn, so that their rejection is still checked.
"""

import re
import uuid

import schemathesis

KEY = re.compile(r"^[!-~]([ -~]{0,253}[!-~])?$")


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name, value in list(headers.items()):
        if name.lower() == "idempotency-key" and isinstance(value, str) and KEY.match(value):
            headers[name] = f"contract-{uuid.uuid4()}"
