"""Agent surface: schemas for providers, search_tools, execution guard, plan validator, MCP."""
