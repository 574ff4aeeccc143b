"""Evaluation on labelled questions."""
