"""Search: the knowledge store protocol and its SQLite store, embeddings, BM25, hybrid retrieval."""
