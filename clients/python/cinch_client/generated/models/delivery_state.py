from typing import Literal

DeliveryState = Literal["delivered", "failed", "pending"]

DELIVERY_STATE_VALUES: set[DeliveryState] = {
    "delivered",
    "failed",
    "pending",
}


def check_delivery_state(value: str) -> DeliveryState:
    if value in DELIVERY_STATE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DELIVERY_STATE_VALUES!r}"
    )
