"""Pure extraction functions: turn fetched documents into structured records."""
