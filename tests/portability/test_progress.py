"""Progress bars: only inside a command's ``progress_bars()`` block, only on long runs, only at a terminal."""

from __future__ import annotations

import io
import sys

import pytest

from nekomem.portability import PROGRESS_MIN_ITEMS, progress, progress_bars


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def at_terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    # In the test's body: pytest puts its own capture on sys.stderr when the call phase starts.
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    return screen


def test_a_long_run_of_a_command_at_a_terminal_shows_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = at_terminal(monkeypatch)
    items = list(range(PROGRESS_MIN_ITEMS))
    with progress_bars():
        assert list(progress(items, total=len(items), desc="facts.json")) == items
    assert "facts.json" in terminal.getvalue()


@pytest.mark.parametrize("total", [PROGRESS_MIN_ITEMS - 1, PROGRESS_MIN_ITEMS])
def test_no_bar_outside_a_command_or_on_a_short_run(monkeypatch: pytest.MonkeyPatch, total: int) -> None:
    terminal = at_terminal(monkeypatch)
    items = list(range(total))
    assert list(progress(items, total=total)) == items  # a web request: never a bar
    with progress_bars():
        assert list(progress(items[:10], total=10)) == items[:10]
    assert terminal.getvalue() == ""


def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    items = list(range(PROGRESS_MIN_ITEMS))
    with progress_bars():
        assert list(progress(items, total=len(items), desc="facts.json")) == items
    assert capsys.readouterr().err == ""
