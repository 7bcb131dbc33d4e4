from __future__ import annotations

from nekomem.language.normalize import to_simplified, to_traditional


def test_to_traditional_writes_simplified_han_in_traditional_and_leaves_other_text() -> None:
    assert to_traditional("养了一只橘猫") == "養了一隻橘貓"
    assert to_simplified(to_traditional("养了一只橘猫")) == "养了一只橘猫"
    assert to_traditional("cat 猫") == "cat 貓"
    assert to_traditional("cat") == "cat"
