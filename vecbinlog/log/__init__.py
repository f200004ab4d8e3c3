"""One pass over a set of binlog files: the files in log order, the walk of their segments,
schema versions, the batches of rows decoded (filters, scheduling) and what the files hold."""
