"""Tests of vecbinlog/spark/: the Spark data source, batch and streaming."""
