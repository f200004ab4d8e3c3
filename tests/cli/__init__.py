"""Tests of vecbinlog/cli/: the command line and the text it prints."""
