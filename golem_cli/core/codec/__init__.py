"""The JSON contract shared with Go golem: histories and their spellings."""
