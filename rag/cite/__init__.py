"""Cite: the citation rail (quotes are verbatim paragraphs of the source, claims checked)."""
