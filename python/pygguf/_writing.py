"""Writing files: save, edit, split, merge, quantize_model; and a model's facts."""
