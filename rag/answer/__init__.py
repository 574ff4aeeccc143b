"""Answer: rewrite the question, decide whether it can be answered, answer it in the chosen mood."""
