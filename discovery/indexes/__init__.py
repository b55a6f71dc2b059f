"""The indexes: the frozen index record (:mod:`.index`), its on-disk cache, and the per-feature indexes it holds."""
