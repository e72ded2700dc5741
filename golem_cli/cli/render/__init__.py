"""Output for people and scripts: transcripts, streaming markdown, terminal-safe text, reports."""
