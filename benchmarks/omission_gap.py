"""How much likelier a checkpoint finds a translation that leaves a word out than a right one, for the lesson rows
whose greedy translations drop a word (the right Chinese written by us; the omitting one is what stage 7 wrote).

    python benchmarks/omission_gap.py checkpoints/en-zh

One line per sentence: log p(right) - log p(omitting), in nats, teacher-forced
(model.training.losses.sequence_log_probs); a negative gap is the model preferring the omission. The omission
contrast (model.train --omission-margin) trains this gap on the training pairs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.checkpoint import load_checkpoint  # noqa: E402
from model.training.batches import collate  # noqa: E402
from model.training.losses import sequence_log_probs  # noqa: E402

ROWS = [  # English, a right translation, the translation stage 7 wrote (a word left out)
    ("Anna works at a hospital in Munich.", "安娜在慕尼黑的一家医院工作。", "安娜在医院工作。"),
    ("My neighbour has two black cats.", "我的邻居有两只黑猫。", "我的邻居有两只猫。"),
    ("Please close the kitchen window.", "请关上厨房的窗户。", "请关上厨房。"),
    ("Sarah teaches mathematics in Madrid.", "莎拉在马德里教数学。", "莎拉在马德里教学。"),
    ("The input sentence has five words.", "输入句子有五个单词。", "输入有五个单词。"),
    ("The output is a probability distribution.", "输出是一个概率分布。", "输出是一个概率。"),
    ("My friend Jack lives in Munich.", "我的朋友杰克住在慕尼黑。", "我朋友住在慕尼黑。"),
    ("The computer is learning to translate.", "计算机正在学习翻译。", "电脑正在学习。"),
    ("Susan studies computer science in Boston.", "苏珊在波士顿学习计算机科学。", "苏珊在波士顿学。"),
    ("We train the model on many sentences.", "我们用许多句子训练模型。", "我们对许多句子进行训练。"),
]


def main(checkpoint: str) -> None:
    torch.set_num_threads(2)
    loaded = load_checkpoint(checkpoint)
    model, source, target = loaded.model.eval(), loaded.source_tokenizer, loaded.target_tokenizer
    with torch.no_grad():
        for english, right, omitting in ROWS:
            ids = source.encode(english)
            src, tgt_in, tgt_out = collate([(ids, target.encode(right)), (ids, target.encode(omitting))])
            _, decoded = model(src, tgt_in)
            right_lp, omitting_lp = sequence_log_probs(decoded.logits, tgt_out).tolist()
            print(f"{right_lp - omitting_lp:7.2f}  {english}  ({right} {right_lp:.2f}, {omitting} {omitting_lp:.2f})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "checkpoints" / "en-zh"))
