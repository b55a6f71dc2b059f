"""Ranking: the features, candidate retrieval, clauses, adaptive K and abstention that turn retrieved tools into an offer."""
