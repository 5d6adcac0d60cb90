"""Issue 58: a Chinese source typed through the page, several sentences in a row, on a machine without a Chinese
font: each sentence's pieces are the encoder map's columns, drawn in the app's served font, at 1024x768."""

from __future__ import annotations

import shutil

import pytest

from .conftest import ARTIFACTS, assert_no_exception, run_streamlit, server_output, wait_until_idle

SENTENCES = ("猫追狗。", "狗追猫。", "我是一名学生。")
# The encoder map's column labels, in the page's own map (an iframe), once its fonts have loaded.
COLUMNS = """async () => {
    await document.fonts.ready;
    return [...document.querySelectorAll('#map .xtick text')].map((t) => t.textContent);
}"""


@pytest.fixture(scope="module")
def chinese_source_server(tiny_checkpoint, tiny_zh_en_checkpoint, tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    shutil.copytree(tiny_checkpoint, root / "tiny-en-zh")
    shutil.copytree(tiny_zh_en_checkpoint, root / "tiny-zh-en")
    with run_streamlit({"ATTENTION_EXPLORER_CHECKPOINTS": str(root), "ATTENTION_EXPLORER_SWITCH_IN_BROWSER": "1"}) as (
        url,
        server,
    ):
        yield url, server


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chinese_typed_sentence_after_sentence_reads_on_the_encoder_map(
    chinese_source_server, browser_without_cjk, lang
):
    url, server = chinese_source_server
    page = browser_without_cjk.new_page(viewport={"width": 1024, "height": 768})
    page.goto(f"{url}/?ckpt=tiny-zh-en&lang={lang}", wait_until="domcontentloaded")
    label = "Chinese sentence" if lang == "en" else "中文句子"
    box = page.get_by_label(label, exact=True).and_(page.locator("input"))
    box.wait_for(timeout=120_000)
    wait_until_idle(page)
    for sentence in SENTENCES:
        box.fill(sentence)
        box.press("Enter")
        page.wait_for_function(
            "(s) => new URLSearchParams(location.search).get('s') === s", arg=sentence, timeout=60_000
        )
        wait_until_idle(page)
        frame = page.frame_locator("iframe").first
        frame.locator("#map .main-svg").first.wait_for(timeout=60_000)
        map_frame = next(f for f in page.frames if f != page.main_frame)  # the page's own map
        columns = "".join(map_frame.evaluate(COLUMNS)).replace("<unk:", "").replace(">", "")
        assert all(c in columns for c in sentence.rstrip("。")), (sentence, columns)
        assert map_frame.evaluate("() => document.fonts.check('16px explorer-cjk', '猫狗追')")
        assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"chinese-source-{lang}.png"))
    page.close()
    # the server's log holds no widget warning (the in-page switching toggle was given a value beside the one
    # in session state, and Streamlit said so after the first typed sentence)
    assert "was created with a default value but also had its value set" not in server_output(server)
