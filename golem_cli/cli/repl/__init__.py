"""The interactive chat: the loop, slash commands, the chat's start."""
