"""What a table is: the column types' registry, TABLE_MAPs and which layout a table id means,
the DDL in the log replayed into table definitions, and the schema tracker that combines them."""
