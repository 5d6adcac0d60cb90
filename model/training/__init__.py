"""Training a translation Transformer, by concern: `options` (the command line), `loop` (the run folder, the
schedule, epochs, validation, export), `batches` (packing and teacher-forced tensors), `losses` (cross-entropy
and the optional terms), `vocabulary` (tokenizers learnt or extended, and the warm start's weights under them).
The command is `python -m model.train`."""
