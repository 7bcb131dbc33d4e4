"""Stored text in every script the companion's users write shows as glyphs in the memory browser, not
as tofu: Han (Simplified and Traditional), kana, Hangul and Cyrillic, in a real headless Chromium with
the browser's own font stack (``.ci/run`` installs the CJK fonts when they are missing)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.server_process import ServerProcess, http_call, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "Mio"
SAID = {
    "zh": "我周末喜欢画画，也喜欢弹钢琴",
    "zh-TW": "我週末喜歡畫畫，也喜歡彈鋼琴",
    "ja": "週末はひらがなとカタカナで日記を書く",
    "ko": "주말에는 그림을 그리고 피아노를 쳐요",
    "ru": "По выходным я рисую и играю на пианино",
}

# Draws each character of the texts on a canvas in the font the page gives the element, and lists the
# characters whose pixels are those of a code point no font has (the .notdef box: tofu).
FIND_TOFU = """
([selector, texts]) => {
  const font = getComputedStyle(document.querySelector(selector)).font;
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 64;
  const g = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (ch) => {
    g.clearRect(0, 0, 64, 64); g.font = font; g.fillStyle = '#000'; g.fillText(ch, 8, 44);
    return g.getImageData(0, 0, 64, 64).data.join(',');
  };
  const missing = draw('\\u{10FFFD}');
  const tofu = [];
  for (const text of texts) {
    for (const ch of text) {
      if (/[\\s\\p{P}\\d]/u.test(ch)) continue;
      if (draw(ch) === missing) tofu.push(ch);
    }
  }
  return tofu;
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with server_started(tmp_path_factory.mktemp("browser-scripts")) as server:
        yield server


def test_stored_text_in_every_script_renders_as_glyphs(server: ServerProcess, page) -> None:
    history = [{"type": "human", "data": {"content": text}} for text in SAID.values()]
    body = {"input_history": json.dumps(history, ensure_ascii=False)}  # the wire sends a JSON string
    answer = http_call(server.port, "POST", f"/cache/{CHARACTER}", body)
    assert answer.status == 200, answer.text

    page.goto(f"http://127.0.0.1:{server.port}/browse/{CHARACTER}/recent/")
    raw = page.locator("[data-testid=raw-rows]")
    shown = raw.inner_text()
    assert all(text in shown for text in SAID.values())

    selector = "[data-testid=raw-rows] tbody td"
    # The check itself tells tofu apart: a code point no font has is flagged.
    assert page.evaluate(FIND_TOFU, [selector, ["\U0010fffc"]]) == ["\U0010fffc"]
    assert page.evaluate(FIND_TOFU, [selector, list(SAID.values())]) == []
