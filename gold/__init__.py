"""Gold query sets: loading, validation, splits, and the shipped default data."""
