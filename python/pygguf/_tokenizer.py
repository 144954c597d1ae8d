"""The tokenizer a model carries (``Model.tokenizer``)."""
