from typing import Literal

AttachmentStatus = Literal["failed", "ready"]

ATTACHMENT_STATUS_VALUES: set[AttachmentStatus] = {
    "failed",
    "ready",
}


def check_attachment_status(value: str) -> AttachmentStatus:
    if value in ATTACHMENT_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ATTACHMENT_STATUS_VALUES!r}"
    )
