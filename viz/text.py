"""Every string the app shows, in English and Chinese. Keys are the same in both languages (a test checks)."""

from __future__ import annotations

import html

LANGUAGES = {"en": "English", "zh": "中文"}

# Names of the languages a checkpoint translates between, in each interface language.
LANGUAGE_NAMES = {
    "en": {"en": "English", "de": "German", "zh": "Chinese", "fr": "French"},
    "zh": {"en": "英语", "de": "德语", "zh": "中文", "fr": "法语"},
}

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Attention explorer: a trained translation Transformer",
        "subtitle": "Type an English sentence. A real encoder–decoder Transformer (6 encoder + 6 decoder layers, "
        "8 heads, as in *Attention Is All You Need*) translates it, and every attention map below is the one the "
        "model computed while producing this translation.",
        "norm_first_note": "One difference from the paper: this checkpoint puts LayerNorm before each sub-layer (pre-norm, x + Sublayer(LayerNorm(x))) instead of after it, and each stack ends in a final LayerNorm, so the cross-attention's keys and values come from the normalised encoder output. Trained with the paper's post-norm on our small English–Chinese corpus and two-core budget, the encoder collapsed to the same vector at every position, so both shipped checkpoints use pre-norm. Attention itself is computed exactly as in the paper.",
        "interface_language": "Interface language",
        "checkpoint": "Checkpoint",
        "no_checkpoints": "No checkpoint found under `{root}`. Train one with `python -m model.train` "
        "(see the README).",
        "checkpoint_error": "This checkpoint cannot be loaded: {error}",
        "examples": "Example sentences",
        "example_placeholder": "(pick an example)",
        "sentence": "English sentence",
        "sentence_help": "Press Enter to translate.",
        "decoding": "Decoding",
        "greedy": "Greedy",
        "beam": "Beam search",
        "beam_size": "Beam size",
        "view": "View",
        "layer": "Layer",
        "head": "Head",
        "mean_heads": "mean over heads",
        "query_token": "Query token (for the step-by-step and √d_k views)",
        "empty_input": "Please type a sentence to translate: the input is empty.",
        "truncated": "The sentence is longer than this model's limit of {limit} pieces; only the first {kept} "
        "pieces were translated.",
        "unknown": "The tokenizer does not know these characters; the model sees each as the unknown token "
        "`<unk>`: {chars}",
        "unfinished": "Decoding stopped at the length limit before the model produced the end-of-sentence token.",
        "translation": "Translation",
        "source_pieces": "Source pieces (SentencePiece)",
        "target_pieces": "Target pieces",
        "token_table_help": "Each output piece with the probability the model gave it when it was chosen, and the "
        "five pieces it rated most likely at that step.",
        "col_position": "step",
        "col_piece": "piece",
        "col_probability": "probability",
        "col_alternatives": "top alternatives",
        "tab_encoder": "Encoder self-attention",
        "tab_decoder": "Masked decoder self-attention",
        "tab_cross": "Cross-attention",
        "tab_positional": "Positional encoding",
        "tab_softmax": "Softmax and √d_k",
        "tab_steps": "Step by step",
        "encoder_query": "encoder position (query)",
        "encoder_key": "encoder position (key)",
        "decoder_query": "decoder position (query)",
        "decoder_key": "decoder position (key)",
        "masked_cell": "masked: a future position, invisible to this query",
        "predicts": "predicts",
        "heatmap_title": "{kind} · layer {layer} · {head}",
        "head_n": "head {n}",
        "grid_title": "All layers × heads (rows: layers 1–{layers}, columns: heads 1–{heads})",
        "grid_help": "Each thumbnail is one head, with the same axes as the large map. The red frame marks the "
        "head shown above. Pick another with the Layer and Head selectors in the sidebar.",
        "download_csv": "Download this attention as CSV",
        "download_npz": "Download the whole translation (.npz)",
        "download_npz_help": "Every attention map, Q/K/V, the pieces and their probabilities, for a notebook: "
                             "`model.export.load(\"translation.npz\")` reads it back, and "
                             "`model.export.to_bertviz(...)` turns it into the input of BertViz's `head_view` / "
                             "`model_view`.",
        "explain_encoder": "Every source piece builds its new representation as a weighted average of all source "
        "pieces (values V), with weights from how well its query Q matches each key K. Row i shows where piece i "
        "looks; every row sums to 1. Nothing is hidden from the encoder: it sees the whole sentence at once. "
        "Only padding would be masked, and a single sentence has none.",
        "explain_decoder": "The decoder writes the translation one piece at a time, so while training it must not peek at pieces it has not produced yet. The causal mask sets the score of every later position to −∞ before the softmax, so those weights are exactly 0 (grey cells). Row t is decoder position t: its input is the piece written at step t − 1 (<s> at step 0), and it chooses output piece t, the piece of step t in the table above (steps are numbered from 0 everywhere). Hover a cell to see it.",
        "explain_cross": "Here the queries come from the decoder and the keys and values from the encoder's output. Row t shows which source pieces decoder position t consulted while choosing output piece t (step t in the table). In some heads this looks like a word alignment; in others it does not: attention is a routing of information, not an explanation by itself.",
        "explain_multihead": "Why several heads? Each head has its own projections W_Q, W_K, W_V into a smaller space (d_k = d_model / h), so different heads can follow different relations, while the total cost stays about that of one head of full width. Their outputs are concatenated and mixed by W_O.",
        "pe_length": "Number of positions",
        "pe_dims": "Dimensions to plot",
        "pe_heatmap_title": "PE matrix for d_model = {d_model}: positions × dimensions",
        "pe_curves_title": "PE against position for chosen dimensions",
        "pe_similarity_title": "Dot product PE(p) · PE(q) between positions",
        "position": "position",
        "dimension": "dimension",
        "explain_positional": "Attention itself is blind to order: shuffle the input pieces and each output is the "
        "same weighted average, only shuffled. The paper therefore adds a fixed vector to each embedding: "
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)) and PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)). "
        "Low dimensions oscillate fast, high ones slowly, so each position gets a distinct pattern of values, "
        "like the hands of a clock turning at different speeds.",
        "explain_similarity": "The dot product of two encodings depends only on how far apart the positions are, "
        "and it is largest on the diagonal. A linear map of PE(pos) gives PE(pos + k), which makes relative "
        "offsets easy for attention to pick up.",
        "variance_title": "Variance of q·k grows with d_k",
        "variance_y": "variance",
        "theory": "theory: d_k",
        "unscaled": "without ÷√d_k",
        "scaled": "with ÷√d_k",
        "softmax_pair_title": "Softmax of the same random scores (d_k = {d_k})",
        "key": "key",
        "weight": "weight",
        "saturation_title": "Softmax saturation over {n_keys} keys as d_k grows",
        "max_weight": "largest weight",
        "entropy": "entropy (nats)",
        "gradient_norm": "softmax gradient norm",
        "d_k_slider": "d_k for the random example",
        "model_scaling_title": "This model, layer {layer}, head {head}, query “{token}”: weights with and "
        "without ÷√d_k (d_k = {d_k})",
        "explain_scaling": "If the entries of q and k are independent, with mean 0 and variance 1, their dot product is a sum of d_k independent terms and has variance d_k (the first plot measures it). Larger scores make softmax peakier. In the third plot, at d_k = 64 over {n_keys} random keys, the largest weight averages {max_weight_unscaled:.2f} without the scaling against {max_weight_scaled:.2f} with it; {near_one_hot_unscaled:.0%} of the rows put more than 0.99 on one key (against {near_one_hot_scaled:.0%}); and the norm of the softmax gradient drops from {gradient_norm_scaled:.3f} to {gradient_norm_unscaled:.3f}, so learning slows. The larger d_k, the stronger the effect. Dividing by √d_k brings the variance back to 1 for any d_k.",
        "explain_model_scaling": "Below are the model's real query and key vectors for the chosen head. The blue "
        "bars are the weights the model actually used; the red bars show what the same head would give without "
        "the scaling (a what-if: the model was trained with it).",
        "qkv_title": "Q, K and V of layer {layer}, head {head}",
        "q": "q (this query)",
        "k": "K (every key)",
        "v": "V (every value)",
        "scores": "1. scores q·kⱼ",
        "scaled_scores": "2. scaled q·kⱼ / √d_k, then mask",
        "weights": "3. softmax weights",
        "output": "4. output Σⱼ wⱼ vⱼ (this head, this query)",
        "mask_col": "mask",
        "masked": "masked (−∞)",
        "steps_kind": "Attention type",
        "steps_matches": "Check: these weights equal row “{token}” of the model's attention map "
        "(largest difference {diff:.1e}).",
        "explain_steps": "Q, K and V are not given with the input: each is the input multiplied by its own learned matrix. The query asks “what am I looking for?”, each key says “what do I offer?”, and each value is what gets passed on if the key is chosen. Scores are query·key, divided by √d_k, masked, turned into weights by softmax, and the output is the weighted sum of the values.",
        "reference": "Reference translation (optional, for teacher forcing)",
        "reference_help": "Type a translation into {target}: the views then show the attention and probabilities "
        "the model assigns to it, feeding it to the decoder instead of the model's own output.",
        "teacher_forcing_note": "Teacher forcing: the decoder was fed your reference translation, not its own output. "
        "The probabilities are the model's for each reference piece.",
        "model_output_was": "The model's own translation:",
        "word_level": "Word level",
        "word_level_help": "Group SentencePiece pieces into words: a word's weight as a key is the sum over its "
        "pieces, its row as a query the mean over its pieces (rows still sum to 1).",
        "hypothesis": "Beam hypothesis",
        "tab_heads": "Head statistics",
        "tab_search": "Head search",
        "tab_compare": "Two sentences",
        "second_sentence": "Second sentence (to compare)",
        "second_sentence_help": "Shown beside the first in the “Two sentences” tab, with the same view, layer and "
                                "head.",
        "minimal_pairs": "Minimal pairs",
        "pair_placeholder": "(pick a pair)",
        "pair_coreference": "“it”: too tired / too wide",
        "pair_word_order": "word order: dog chases cat / cat chases dog",
        "pair_coreference_size": "“it”: too big / too small",
        "pair_roles": "who gives: she → him / he → her",
        "compare_empty": "Type a second sentence in the sidebar (or pick a minimal pair) to see both side by side.",
        "compare_translations": "First: **{first}** · second: **{second}**",
        "compare_difference_title": "First minus second, cell by cell",
        "compare_difference": "difference",
        "compare_no_difference": "No difference map: the two maps have different shapes ({a} and {b}).",
        "compare_heads": "Which heads link a pair of words differently in the two sentences?",
        "compare_query": "Query in the {n}",
        "compare_key": "Key in the {n}",
        "sentence_first": "first",
        "sentence_second": "second",
        "compare_heads_title": "Weight of {a} (first) minus weight of {b} (second), every head",
        "compare_open": "Open L{layer} H{head} ({diff:+.2f})",
        "compare_note": "Both maps use one colour scale, 0 to 1. Pick a corresponding pair of words in each sentence "
                        "(for example `it` → `animal` in the first and `it` → `street` in the second): a head whose "
                        "difference is far from 0 links them differently. In the coreference pairs only one word "
                        "changes, so such a head is a candidate for one that tracks meaning rather than position. "
                        "The buttons open the heads with the largest differences (in absolute value), in the first "
                        "sentence's map.",
        "explain_search": "Which heads link two pieces? Pick a query and a key of this sentence: every layer and "
                          "head of the chosen attention is ranked by what it does from the one to the other, and "
                          "the best are drawn below with that cell outlined (numbers from the maps the model "
                          "computed; with “Word level” on, between words).",
        "search_by": "Rank by",
        "search_weight": "weight",
        "search_lift": "lift",
        "search_pair": "{from_piece} → {to_piece}",
        "search_top_title": "The {n} best heads by {score} for {pair}",
        "search_open": "Open L{layer} H{head}",
        "search_grid_title": "{score} of every head for {pair}",
        "search_lift_note": "Weight: the attention weight from the query to the key. Lift: that weight divided "
                            "by the head's mean weight on the same key over every query that can see it — a head "
                            "that sends every query to this key (often </s> or the full stop) gets a lift near 1, "
                            "a head that links this query to it stands out. (Dividing by the head's mean weight "
                            "from the query would not change the ranking: every row sums to 1, so that mean is the "
                            "same for every head.)",
        "tab_ablation": "Head ablation",
        "tab_decoding": "Decoding steps",
        "statistic": "Statistic",
        "stat_entropy": "entropy (nats): 0 = all weight on one key",
        "stat_distance": "mean distance |query − key| in positions",
        "stat_same": "weight on the same position",
        "stat_previous": "weight on the previous position",
        "stat_next": "weight on the next position",
        "stat_boundary": "weight on the boundary token (</s> in the source, <s> in the decoder)",
        "stat_punctuation": "weight on punctuation",
        "stat_max_weight": "largest weight of a row",
        "stat_alignment_agreement": "agreement with the last layer's averaged alignment",
        "stat_source_order": "follows the source order (correlation of step and strongest source position)",
        "strongest_heads": "The head where each statistic is most pronounced (corpus average)",
        "stats_grid_title": "{kind}: {statistic} (this sentence)",
        "heads_table": "Every head for this sentence (click a column header to sort)",
        "inspect_head": "Show a head in the attention views",
        "inspect_button": "Show layer {layer}, head {head}",
        "corpus_title": "Averaged over held-out sentences (`python -m model.probe`)",
        "corpus_grid_title": "{kind}: {statistic} (corpus average)",
        "corpus_missing": "No corpus statistics ship with this checkpoint. Create them with "
        "`python -m model.probe --checkpoint {path} --split test --n 500`.",
        "named_heads": "Heads with a clear-cut role on average",
        "no_named_heads": "No head passes the thresholds for a named role (0.5 of the weight or of the rows; 0.7 correlation for following the source order).",
        "ablation_ranking": "Single heads ranked by the damage done by switching them off (`python -m model.probe "
        "--ablate`; baseline BLEU {bleu})",
        "ablation_ranking_missing": "No ablation ranking ships with this checkpoint. Create it with "
        "`python -m model.probe --checkpoint {path} --ablate --n 200`.",
        "ablate_heads": "Heads to switch off",
        "ablation_hint": "Pick heads to switch off. Their outputs are set to zero before W_O, the sentence is "
        "translated again, and the maps below are those of the new run. The shared model itself is never changed.",
        "original": "Original",
        "ablated": "With those heads off",
        "logprob_change": "Log-probability of the original translation: {before:.3f} → {after:.3f} "
        "(change {delta:+.3f})",
        "ablated_map": "Attention with those heads off",
        "step": "Decoding step",
        "partial_output": "Output so far (step {step} chooses the next piece)",
        "step_self": "decoder self-attention of this position",
        "step_cross": "cross-attention of this position",
        "step_next": "next-piece probabilities",
        "probability": "probability",
        "explain_decoding_steps": "At step t (numbered from 0, as in the table) the decoder sees <s> and the pieces written before step t. The left chart is where position t looked among them, the middle one which source pieces it consulted, and the right one the most likely next pieces, with the piece of this step in green (given its own bar when it is not among the top five). All three come from the run that produced the translation (layer and head from the sidebar).",
        "mean_note": "Mean over heads: the average of the {heads} heads' maps (the model itself concatenates the "
        "heads' outputs, it never averages their weights).",
        "layer_clamped": "This checkpoint's {kind} has {n} layers, so layer {n} is shown instead of layer {layer}.",
        "link_ignored": "The link's `{parameter}` value “{value}” is not valid here and was ignored.",
        "link_clamped": "The link's `{parameter}` value “{value}” is out of range; {used} is used instead.",
        "table_invalid": "This checkpoint's probe table cannot be used, so its part of this view is left out: {error}",
        "reference_truncated": "The reference is longer than the model reads ({limit} positions): only its first {kept} pieces are used, and since it was cut there, no end-of-sentence `</s>` follows them.",
        "reference_unknown": "The target vocabulary has no piece for these characters of the reference, so the model reads each as `<unk>`: {chars}",
        "fed": "fed",
        "fed_short": "{piece} (p {p:.3f}; the model's own top choice: {top} {top_p:.3f})",
        "fed_sentence": "Teacher forcing: this step was fed the reference piece “{piece}”, to which the model gave probability {p:.3f}; its own top choice was “{top}” ({top_p:.3f}).",
        "chosen_sentence": "This step chose “{piece}” (probability {p:.3f}), the green bar.",
        "query": "query",
        "pe_beyond_model": "The model's own table stops at position {last}: it reads at most {max_len} positions (pieces, with `<s>` or `</s>`). Positions past that are the formula only.",
        "mean_shows_head_1": "The sidebar shows the mean over heads, which has no Q, K or V of its own: this view uses head 1.",
        "details": "Pieces and the probability of each output piece",
        "about": "About this model",
        "presentation": "Presentation mode",
        "presentation_help": "For a projector: larger labels, values and captions, and the layer and head choices above the maps, so the sidebar can be collapsed.",
    },
    "zh": {
        "title": "注意力探索器：一个训练好的翻译 Transformer",
        "subtitle": "输入一句英文。一个真实的编码器–解码器 Transformer（6 层编码器 + 6 层解码器，8 个头，"
        "与《Attention Is All You Need》相同）会翻译它；下面的每一张注意力图，都是模型在生成这条译文时实际算出的。",
        "norm_first_note": "与论文的一处不同：这个检查点把 LayerNorm 放在每个子层之前（前置归一化，x + Sublayer(LayerNorm(x))），而不是之后；并且每个堆栈最后还有一个 LayerNorm，所以交叉注意力的键和值来自经过归一化的编码器输出。在我们的小规模英中语料和双核算力下按论文的后置归一化训练时，编码器在每个位置都塌缩成了同一个向量，所以两个随附的检查点都用前置归一化。注意力本身的计算与论文完全相同。",
        "interface_language": "界面语言",
        "checkpoint": "模型检查点",
        "no_checkpoints": "在 `{root}` 下没有找到检查点。请用 `python -m model.train` 训练一个（见 README）。",
        "checkpoint_error": "无法加载这个检查点：{error}",
        "examples": "示例句子",
        "example_placeholder": "（选择一个示例）",
        "sentence": "英文句子",
        "sentence_help": "按回车键翻译。",
        "decoding": "解码方式",
        "greedy": "贪心解码",
        "beam": "束搜索",
        "beam_size": "束宽",
        "view": "视图",
        "layer": "层",
        "head": "头",
        "mean_heads": "所有头的平均",
        "query_token": "查询子词（用于“逐步计算”和“√d_k”视图）",
        "empty_input": "请输入要翻译的句子：当前输入为空。",
        "truncated": "句子超过了模型的长度上限（{limit} 个子词），只翻译了前 {kept} 个子词。",
        "unknown": "分词器不认识这些字符，模型把它们都看作未知子词 `<unk>`：{chars}",
        "unfinished": "解码在达到长度上限时停止，模型还没有生成句末标记。",
        "translation": "译文",
        "source_pieces": "源语言子词（SentencePiece）",
        "target_pieces": "目标语言子词",
        "token_table_help": "每个输出子词被选中时模型给出的概率，以及那一步模型认为最可能的五个候选。",
        "col_position": "步",
        "col_piece": "子词",
        "col_probability": "概率",
        "col_alternatives": "最可能的候选",
        "tab_encoder": "编码器自注意力",
        "tab_decoder": "解码器掩码自注意力",
        "tab_cross": "交叉注意力",
        "tab_positional": "位置编码",
        "tab_softmax": "Softmax 与 √d_k",
        "tab_steps": "逐步计算",
        "encoder_query": "编码器位置（查询）",
        "encoder_key": "编码器位置（键）",
        "decoder_query": "解码器位置（查询）",
        "decoder_key": "解码器位置（键）",
        "masked_cell": "已遮挡：这是未来位置，当前查询看不到",
        "predicts": "预测",
        "heatmap_title": "{kind} · 第 {layer} 层 · {head}",
        "head_n": "第 {n} 个头",
        "grid_title": "所有层 × 所有头（行：第 1–{layers} 层，列：第 1–{heads} 个头）",
        "grid_help": "每个小图是一个头，坐标轴与上面的大图相同。红框标出上方正在显示的头。"
        "在侧边栏的“层”和“头”选择器中可以换成别的头。",
        "download_csv": "下载当前注意力矩阵（CSV）",
        "download_npz": "下载整个翻译结果（.npz）",
        "download_npz_help": "包含所有注意力矩阵、Q/K/V、子词及其概率，可在 Jupyter 笔记本中使用："
                             "`model.export.load(\"translation.npz\")` 读回，"
                             "`model.export.to_bertviz(...)` 转成 `BertViz` 的 `head_view` / `model_view` 所需的输入。",
        "explain_encoder": "每个源语言子词的新表示，是所有源语言子词的值向量 V 的加权平均；权重取决于它的查询 Q "
        "与每个键 K 的匹配程度。第 i 行表示第 i 个子词在看哪里，每一行的和都是 1。编码器能同时看到整句话，"
        "不遮挡任何位置；只有填充位置才会被遮挡，而单个句子没有填充。",
        "explain_decoder": "解码器一次只写出一个子词，所以训练时不能偷看还没生成的部分。因果掩码在 softmax 之前把所有后面位置的分数设为 −∞，因此这些权重恰好为 0（灰色格子）。第 t 行就是解码器的第 t 个位置：它的输入是第 t − 1 步写出的子词（第 0 步的输入是 <s>），它选出第 t 个输出子词，也就是上表中第 t 步的那个子词（各处的步数都从 0 开始）。把鼠标停在格子上即可看到。",
        "explain_cross": "这里的查询来自解码器，键和值来自编码器的输出。第 t 行表示解码器第 t 个位置在选出第 t 个输出子词（表中第 t 步）时参考了哪些源语言子词。有些头看起来像词对齐，有些则不像：注意力是在传递信息，它本身并不等于解释。",
        "explain_multihead": "为什么要多个头？每个头都有自己的投影矩阵 W_Q、W_K、W_V，把输入映射到更小的子空间（d_k = d_model / h），这样不同的头可以关注不同的关系，而总计算量与一个全维度的头大致相同。各头的输出拼接起来，再由 W_O 融合。",
        "pe_length": "位置数量",
        "pe_dims": "要画的维度",
        "pe_heatmap_title": "d_model = {d_model} 的位置编码矩阵：位置 × 维度",
        "pe_curves_title": "所选维度上位置编码随位置的变化",
        "pe_similarity_title": "位置之间的点积 PE(p) · PE(q)",
        "position": "位置",
        "dimension": "维度",
        "explain_positional": "注意力本身不关心顺序：把输入子词打乱，每个输出还是同样的加权平均，只是顺序也跟着乱了。"
        "所以论文给每个词向量加上一个固定的向量：PE(pos, 2i) = sin(pos / 10000^(2i/d_model))，"
        "PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))。低维变化快、高维变化慢，"
        "于是每个位置都有一组独特的数值，就像转速不同的几根钟表指针。",
        "explain_similarity": "两个位置编码的点积只取决于两个位置相隔多远，并且在对角线上最大。"
        "PE(pos + k) 可以由 PE(pos) 经线性变换得到，所以注意力很容易学会利用相对位置。",
        "variance_title": "q·k 的方差随 d_k 增大",
        "variance_y": "方差",
        "theory": "理论值：d_k",
        "unscaled": "不除以 √d_k",
        "scaled": "除以 √d_k",
        "softmax_pair_title": "同一组随机分数的 softmax（d_k = {d_k}）",
        "key": "键",
        "weight": "权重",
        "saturation_title": "在 {n_keys} 个键上，softmax 随 d_k 增大而饱和",
        "max_weight": "最大权重",
        "entropy": "熵（奈特）",
        "gradient_norm": "softmax 梯度范数",
        "d_k_slider": "随机示例的 d_k",
        "model_scaling_title": "本模型第 {layer} 层第 {head} 个头，查询“{token}”：除以与不除以 √d_k 的权重"
        "（d_k = {d_k}）",
        "explain_scaling": "如果 q 和 k 的各分量相互独立、均值为 0、方差为 1，它们的点积就是 d_k 个独立项之和，方差为 d_k（第一张图实际测量了这一点）。分数越大，softmax 的输出越尖锐。在第三张图中，当 d_k = 64、有 {n_keys} 个随机键时：不缩放时最大权重平均为 {max_weight_unscaled:.2f}，缩放后为 {max_weight_scaled:.2f}；不缩放时有 {near_one_hot_unscaled:.0%} 的行把超过 0.99 的权重给了同一个键（缩放后为 {near_one_hot_scaled:.0%}）；softmax 梯度的范数从 {gradient_norm_scaled:.3f} 降到 {gradient_norm_unscaled:.3f}，学习因此变慢。d_k 越大，这种效应越强。除以 √d_k 之后，无论 d_k 多大，方差都回到 1。",
        "explain_model_scaling": "下面用的是所选头真实的查询向量和键向量。蓝色柱是模型实际使用的权重；"
        "红色柱是同一个头如果不做缩放会得到的权重（这是假设情况：模型训练时是做了缩放的）。",
        "qkv_title": "第 {layer} 层第 {head} 个头的 Q、K、V",
        "q": "q（当前查询）",
        "k": "K（所有键）",
        "v": "V（所有值）",
        "scores": "1. 分数 q·kⱼ",
        "scaled_scores": "2. 缩放 q·kⱼ / √d_k，再加掩码",
        "weights": "3. softmax 权重",
        "output": "4. 输出 Σⱼ wⱼ vⱼ（这个头、这个查询）",
        "mask_col": "掩码",
        "masked": "已遮挡（−∞）",
        "steps_kind": "注意力类型",
        "steps_matches": "核对：这些权重与模型注意力图中“{token}”这一行相同（最大差值 {diff:.1e}）。",
        "explain_steps": "Q、K、V 并不是输入自带的：它们分别是输入乘以各自可学习矩阵的结果。查询问“我在找什么？”，键回答“我能提供什么？”，值则是被选中后真正传递出去的内容。分数等于查询·键，除以 √d_k，加上掩码，经 softmax 变成权重，最后输出是值向量的加权和。",
        "reference": "参考译文（可选，用于教师强制）",
        "reference_help": "输入一个{target}译文：解码器将以它为输入，而不是模型自己的输出，各视图显示模型为这条译文给出的注意力和概率。",
        "teacher_forcing_note": "教师强制：解码器的输入是你给的参考译文，而不是模型自己的输出。表中的概率是模型给参考译文每个子词的概率。",
        "model_output_was": "模型自己的译文：",
        "word_level": "按词显示",
        "word_level_help": "把 SentencePiece 子词合并成词：作为键时，一个词的权重是其各子词之和；作为查询时，它的一行是其各子词行的平均（每行之和仍为 1）。",
        "hypothesis": "束搜索候选",
        "tab_heads": "注意力头统计",
        "tab_search": "注意力头搜索",
        "tab_compare": "两句对比",
        "second_sentence": "第二个句子（用于对比）",
        "second_sentence_help": "在“两句对比”页中与第一个句子并排显示，视图、层和头都相同。",
        "minimal_pairs": "最小对比句对",
        "pair_placeholder": "（选一对句子）",
        "pair_coreference": "“it” 指代：太累 / 太宽",
        "pair_word_order": "语序：狗追猫 / 猫追狗",
        "pair_coreference_size": "“it” 指代：太大 / 太小",
        "pair_roles": "谁给谁：她 → 他 / 他 → 她",
        "compare_empty": "在侧边栏输入第二个句子（或选择一对最小对比句），即可并排比较。",
        "compare_translations": "第一句：**{first}** · 第二句：**{second}**",
        "compare_difference_title": "第一句减第二句，逐格计算",
        "compare_difference": "差值",
        "compare_no_difference": "没有差值图：两张图的形状不同（{a} 与 {b}）。",
        "compare_heads": "哪些头在两句中对对应的一对词的联系不同？",
        "compare_query": "{n}中的查询",
        "compare_key": "{n}中的键",
        "sentence_first": "第一句",
        "sentence_second": "第二句",
        "compare_heads_title": "每个头：{a}（第一句）的权重减去 {b}（第二句）的权重",
        "compare_open": "打开第 {layer} 层第 {head} 个头（{diff:+.2f}）",
        "compare_note": "两张图使用同一色标（0 到 1）。在两句中各选一对对应的词（例如第一句选 `it` → `animal`，第二句选 "
                        "`it` → `street`）：差值远离 0 的头对这两对词的联系不同。在指代句对中只有一个词改变，所以这样的头"
                        "可以作为“跟踪语义而不是位置”的候选。按钮打开差值（绝对值）最大的几个头，显示的是第一句的图。",
        "explain_search": "哪些头把两个子词联系起来？在这句话中选一个查询和一个键：所选注意力类型的每一层、每个头都按它"
                          "从前者到后者的表现排序，最靠前的几个画在下面，并框出那个格子（数字都来自模型实际算出的注意力；"
                          "勾选“按词显示”时按词计算）。",
        "search_by": "排序依据",
        "search_weight": "权重",
        "search_lift": "提升倍数",
        "search_pair": "{from_piece} → {to_piece}",
        "search_top_title": "按{score}排序，对 {pair} 最突出的 {n} 个头",
        "search_open": "打开第 {layer} 层第 {head} 个头",
        "search_grid_title": "每个头对 {pair} 的{score}",
        "search_lift_note": "权重：查询对该键的注意力权重。提升倍数：这个权重除以该头在所有能看到这个键的查询上对它的平均权重——"
                            "如果一个头让每个查询都看向这个键（常见于 </s> 或句号），提升倍数接近 1；专门把这个查询和该键"
                            "联系起来的头则会突出。（除以该头从这个查询出发的平均权重不会改变排序：每一行的和都是 1。）",
        "tab_ablation": "关闭注意力头",
        "tab_decoding": "逐步解码",
        "statistic": "统计量",
        "stat_entropy": "熵（奈特）：0 表示全部权重集中在一个键上",
        "stat_distance": "平均距离 |查询 − 键|（以位置计）",
        "stat_same": "落在同一位置上的权重",
        "stat_previous": "落在前一个位置上的权重",
        "stat_next": "落在后一个位置上的权重",
        "stat_boundary": "落在边界标记上的权重（源语言为 </s>，解码器为 <s>）",
        "stat_punctuation": "落在标点上的权重",
        "stat_max_weight": "每行的最大权重",
        "stat_alignment_agreement": "与最后一层平均对齐的一致程度",
        "stat_source_order": "是否按源语言顺序移动（解码步与最强源位置的相关系数）",
        "strongest_heads": "每个统计量最突出的头（语料平均）",
        "stats_grid_title": "{kind}：{statistic}（当前句子）",
        "heads_table": "当前句子的所有注意力头（点击列标题可排序）",
        "inspect_head": "在注意力视图中查看某个头",
        "inspect_button": "查看第 {layer} 层第 {head} 个头",
        "corpus_title": "在留出句子上的平均值（`python -m model.probe`）",
        "corpus_grid_title": "{kind}：{statistic}（语料平均）",
        "corpus_missing": "这个检查点没有附带语料统计。可以用 `python -m model.probe --checkpoint {path} --split test --n 500` 生成。",
        "named_heads": "平均而言角色明确的头",
        "no_named_heads": "没有头达到命名角色的阈值（权重或行的比例超过 0.5；“按源语言顺序移动”要求相关系数超过 0.7）。",
        "ablation_ranking": "逐个关闭单个头造成的损失排名（`python -m model.probe --ablate`；基线 BLEU {bleu}）",
        "ablation_ranking_missing": "这个检查点没有附带关闭头的排名。可以用 `python -m model.probe --checkpoint {path} --ablate --n 200` 生成。",
        "ablate_heads": "要关闭的头",
        "ablation_hint": "选择要关闭的头。它们的输出在 W_O 之前被置为 0，然后重新翻译，下面的注意力图来自这次新的运行。共享的模型本身不会被修改。",
        "original": "原译文",
        "ablated": "关闭这些头之后",
        "logprob_change": "原译文的对数概率：{before:.3f} → {after:.3f}（变化 {delta:+.3f}）",
        "ablated_map": "关闭这些头之后的注意力",
        "step": "解码步",
        "partial_output": "目前的输出（第 {step} 步选择下一个子词）",
        "step_self": "该位置的解码器自注意力",
        "step_cross": "该位置的交叉注意力",
        "step_next": "下一个子词的概率",
        "probability": "概率",
        "explain_decoding_steps": "在第 t 步（与上表一样从 0 开始计数），解码器能看到 <s> 和第 t 步之前写出的子词。左图是位置 t 在这些子词上的注意力，中图是它参考了哪些源语言子词，右图是最可能的下一个子词，这一步的子词用绿色标出（如果它不在前五名之内，会单独加一根柱子）。三张图都来自生成这条译文的那次运行（层和头取自侧边栏）。",
        "mean_note": "所有头的平均：{heads} 个头的注意力图的平均值（模型本身是把各头的输出拼接起来，"
        "从不平均它们的权重）。",
        "layer_clamped": "这个检查点的{kind}只有 {n} 层，所以这里显示第 {n} 层，而不是第 {layer} 层。",
        "link_ignored": "链接里的 `{parameter}` 值“{value}”在这里无效，已忽略。",
        "link_clamped": "链接里的 `{parameter}` 值“{value}”超出范围，改用 {used}。",
        "table_invalid": "这个检查点附带的统计表无法使用，这部分内容暂不显示：{error}",
        "reference_truncated": "参考译文超出了模型能读入的长度（{limit} 个位置）：只用了前 {kept} 个子词；因为是在这里截断的，后面没有句末标记 `</s>`。",
        "reference_unknown": "目标语言词表里没有参考译文中的这些字符，模型把它们都当作 `<unk>` 读入：{chars}",
        "fed": "喂入",
        "fed_short": "{piece}（概率 {p:.3f}；模型自己的首选：{top} {top_p:.3f}）",
        "fed_sentence": "教师强制：这一步喂入的是参考译文的子词“{piece}”，模型给它的概率是 {p:.3f}；模型自己的首选是“{top}”（{top_p:.3f}）。",
        "chosen_sentence": "这一步选择了“{piece}”（概率 {p:.3f}），即绿色的柱子。",
        "query": "查询",
        "pe_beyond_model": "模型自己的位置编码表只到第 {last} 个位置：它最多读入 {max_len} 个位置（子词，含 `<s>` 或 `</s>`）。再往后的位置只是公式的延伸。",
        "mean_shows_head_1": "侧边栏选的是所有头的平均，它没有自己的 Q、K、V：这个视图使用第 1 个头。",
        "details": "子词，以及每个输出子词的概率",
        "about": "关于这个模型",
        "presentation": "演示模式",
        "presentation_help": "用于投影：更大的标签、数值和说明文字；层和头的选择移到图的上方，侧边栏可以收起。",
    },
}


def t(key: str, lang: str, **kwargs) -> str:
    """The string for key in lang, formatted with kwargs."""
    text = STRINGS[lang][key]
    return text.format(**kwargs) if kwargs else text


def language_name(code: str, lang: str) -> str:
    """The name of a checkpoint's language ("de") in the interface language; the code itself if unknown."""
    return LANGUAGE_NAMES[lang].get(code, code)


def plotly_literal(tokens: list[str]) -> list[str]:
    """HTML-escape user text for Plotly labels and hovers (Plotly renders a subset of HTML; it shows "&lt;s&gt;"
    as "<s>")."""
    return [html.escape(t, quote=False) for t in tokens]


_MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$&:")


def markdown_literal(text: str) -> str:
    """Escape text so Streamlit's markdown shows it literally: no emphasis, links, HTML or LaTeX."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in text)
