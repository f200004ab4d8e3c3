"""Tests of vecbinlog/decode/: rows events to Arrow (the row-image walk, the decoders of each
type family, record-batch assembly)."""
