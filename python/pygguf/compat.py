"""A drop-in for gguf-py's reader and ``gguf.quants``: code written for gguf-py changes one import."""
