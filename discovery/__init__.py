"""Discovery: catalog → security filter → retrieval → ranking → offer."""
