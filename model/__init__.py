"""The translation Transformer: network, tokenizers, decoding, training and evaluation."""
