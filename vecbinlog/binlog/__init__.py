"""Bytes to typed events: sources, the byte spec, FORMAT_DESCRIPTION, the header walk, checksums,
compressed events, small event bodies, GTIDs and transactions. No tables, no record batches."""
