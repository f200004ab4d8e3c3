"""Tests of vecbinlog/log/: one pass over a set of files (runs carried from file to file, row
filters)."""
