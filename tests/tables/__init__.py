"""Tests of vecbinlog/tables/: what a table is (TABLE_MAP, DDL and its readers, the tracker,
collations)."""
