"""Report writers (Markdown, JSON, standalone HTML) shared by eval and canary."""
