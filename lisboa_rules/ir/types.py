"""The types of the values of the effect language and of the IR."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VType:
    """A value's type: int, bool, text, none, a kind id (`noble`, `seat`, `card`), player,
    list[T] or map[K, T] (`full`: every key is always there)."""

    name: str
    args: tuple[VType, ...] = ()
    optional: bool = False
    full: bool = True

    def __str__(self) -> str:
        inner = f"[{', '.join(str(a) for a in self.args)}]" if self.args else ""
        return f"{self.name}{inner}{'?' if self.optional else ''}"


INT = VType("int")
BOOL = VType("bool")
TEXT = VType("text")
NONE = VType("none")
ANY = VType("any")
EFFECTS = VType("effects")  # a bundle of effects of a row ({reis: 3}), for an `apply` step


def list_of(t: VType) -> VType:
    return VType("list", (t,))
