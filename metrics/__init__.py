"""Retrieval measures as value objects, and their vectorised computation."""
