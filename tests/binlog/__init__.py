"""Tests of vecbinlog/binlog/: bytes to typed events (the header walk, checksums, compressed
events, sources, event bodies, transactions and GTIDs)."""
