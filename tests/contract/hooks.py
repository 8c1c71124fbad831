"""Schemathesis hooks for cinch's contract test.

A valid Idempotency-Key the fuzzer draws is made unique per request: drawn
keys repeat ("0", "A", ...), and a key reused with another body is rightly a
422, which says nothing about the request itself. Keys that break the rule
are left as drawn, so that their rejection is still checked.

Hypothesis describes a filtered strategy by parsing the source of its lambda;
on CPython 3.11 that parse of schemathesis' largest module can fail with
"AST constructor recursion depth mismatch" (a CPython bug, seen on Debian's
3.11.2 as on 3.11.5-3.11.7). The description is only a label, so a failed
parse gives a generic one instead of stopping the operation's tests.
"""

import re
import uuid

import schemathesis
from hypothesis.internal import lambda_sources

_describe_lambda = lambda_sources.lambda_description


def _lambda_description_or_label(f):
    try:
        return _describe_lambda(f)
    except SystemError:
        return "lambda: <source not parsed>"


lambda_sources.lambda_description = _lambda_description_or_label

KEY = re.compile(r"^[!-~]([ -~]{0,253}[!-~])?$")


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name, value in list(headers.items()):
        if name.lower() == "idempotency-key" and isinstance(value, str) and KEY.match(value):
            headers[name] = f"contract-{uuid.uuid4()}"
