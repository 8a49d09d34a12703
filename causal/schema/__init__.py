"""The Run schema, the one contract between capture and inference: the run, its vocabulary, the
layer graph, the run file and its JSON encoding."""
