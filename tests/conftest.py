"""Shared fixtures: a tiny corpus, tiny tokenizers, a tiny random model and a tiny checkpoint folder.

Nothing here needs the shipped checkpoint or the shared corpora, so most tests run anywhere in seconds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The inner loop runs on pytest-xdist's workers (`-n 2`, README): each worker gets one core. Two workers each
# running torch on two threads took 213 s for it on two cores, one thread each 108 s. Set before torch is imported,
# so the command-line tools the tests start inherit it too.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.checkpoint import save_checkpoint  # noqa: E402
from model.tokenizer import Tokenizer, train_sentencepiece  # noqa: E402
from model.transformer import Transformer, TransformerConfig  # noqa: E402

SHIPPED = ROOT / "checkpoints" / "en-zh"

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)  # in case a plugin imported torch before OMP_NUM_THREADS was set

# Our own little parallel corpus (English, Chinese) for tests.
TINY_PAIRS = [
    ("I like tea.", "我喜欢茶。"),
    ("I like coffee.", "我喜欢咖啡。"),
    ("You like tea.", "你喜欢茶。"),
    ("He likes books.", "他喜欢书。"),
    ("She reads a book.", "她在看书。"),
    ("Tom reads a book.", "汤姆在看书。"),
    ("Tom drinks tea.", "汤姆喝茶。"),
    ("We drink water.", "我们喝水。"),
    ("The cat is sleeping.", "猫在睡觉。"),
    ("The dog is running.", "狗在跑。"),
    ("It is raining today.", "今天下雨。"),
    ("I am a student.", "我是学生。"),
    ("He is a teacher.", "他是老师。"),
    ("Where is the station?", "车站在哪里？"),
    ("Thank you very much.", "非常感谢。"),
    ("Good morning.", "早上好。"),
    ("See you tomorrow.", "明天见。"),
    ("I am hungry.", "我饿了。"),
    ("Open the door.", "开门。"),
    ("Close the window.", "关窗户。"),
]


@pytest.fixture(scope="session")
def tiny_spm() -> tuple[bytes, bytes]:
    source = train_sentencepiece([s for s, _ in TINY_PAIRS] * 5, vocab_size=80)
    target = train_sentencepiece([t for _, t in TINY_PAIRS] * 5, vocab_size=80, normalization="identity")
    return source, target


@pytest.fixture(scope="session")
def tiny_tokenizers(tiny_spm) -> tuple[Tokenizer, Tokenizer]:
    return Tokenizer.from_bytes(tiny_spm[0]), Tokenizer.from_bytes(tiny_spm[1])


def tiny_config(source: Tokenizer, target: Tokenizer, **overrides) -> TransformerConfig:
    settings = dict(
        src_vocab_size=source.vocab_size,
        tgt_vocab_size=target.vocab_size,
        d_model=32,
        n_heads=4,
        d_ff=64,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.0,
        max_len=40,
    )
    settings.update(overrides)
    return TransformerConfig(**settings)


@pytest.fixture
def tiny_model(tiny_tokenizers) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(*tiny_tokenizers)).eval()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, tiny_spm, tiny_tokenizers) -> Path:
    """A checkpoint folder holding a tiny, randomly initialised model (for app tests without the real one)."""
    torch.manual_seed(0)
    model = Transformer(tiny_config(*tiny_tokenizers, max_len=24))
    directory = tmp_path_factory.mktemp("checkpoints") / "tiny"
    meta = {"corpus": "tatoeba-en-zh", "source_language": "en", "target_language": "zh"}
    save_checkpoint(directory, model, *tiny_spm, metadata=meta)
    return directory


@pytest.fixture(scope="session")
def tiny_zh_en_checkpoint(tmp_path_factory) -> Path:
    """The tiny model read the other way: Chinese in (a Chinese source tokenizer, NFKC, no word-start mark, as
    model.train makes one), English out; for the app's Chinese-source paths before a trained zh-en exists."""
    source = train_sentencepiece([t for _, t in TINY_PAIRS] * 5, vocab_size=80, dummy_prefix=False)
    target = train_sentencepiece([s for s, _ in TINY_PAIRS] * 5, vocab_size=80)
    torch.manual_seed(0)
    model = Transformer(tiny_config(Tokenizer.from_bytes(source), Tokenizer.from_bytes(target), max_len=24))
    directory = tmp_path_factory.mktemp("checkpoints") / "tiny-zh-en"
    meta = {"corpus": "tatoeba-extra-ml-zh-en", "source_language": "zh", "target_language": "en"}
    save_checkpoint(directory, model, source, target, metadata=meta)
    return directory


@pytest.fixture(scope="session")
def tiny_corpus_dir(tmp_path_factory) -> Path:
    """A data folder shaped like ../shared/data with the tiny corpus as tatoeba-en-zh/cmn-eng.tsv."""
    root = tmp_path_factory.mktemp("data")
    (root / "tatoeba-en-zh").mkdir()
    lines = [f"{en}\t{zh}\tCC-BY 2.0 (France) test pair #{i}" for i, (en, zh) in enumerate(TINY_PAIRS * 3)]
    (root / "tatoeba-en-zh" / "cmn-eng.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is an end-to-end test (a browser, a server, or both)."""
    e2e = ROOT / "tests" / "e2e"
    for item in items:
        if e2e in Path(item.fspath).parents:
            item.add_marker(pytest.mark.e2e)
