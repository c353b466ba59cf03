"""Types of the C extension robodyn._fastcall (src/robodyn/_fastcall.c)."""

from collections.abc import Callable
from typing import Any

class Caller:
    """A compiled batch routine on one state, called without ctypes; anything else goes to ``fallback`` where
    one is given, else ``NotImplemented`` unless ``strict`` (then ValueError)."""

    def __init__(self, *, address: int, k: Any, inputs: int, n: int, size: int, empty: Callable[..., Any],
                 shape: tuple[int, ...], convert: Callable[[Any], Any], strict: bool, keep: object,
                 name: str, lengths: tuple[int, ...] | None = None,
                 fallback: Callable[..., Any] | None = None) -> None: ...
    @property
    def __wrapped__(self) -> Callable[..., Any]: ...
    def __call__(self, *arrays: Any) -> Any: ...
