"""Rows events to Arrow: row images placed and walked (compiled), columns decoded one type
family at a time, record batches assembled, and a table's batches fitted to its one schema."""
