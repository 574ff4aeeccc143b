"""Ingest: read files into documents, split them into section chunks and paragraph sub-chunks, store."""
