"""Facts: model, codec (S3), store (S4) and migration (S5)."""
