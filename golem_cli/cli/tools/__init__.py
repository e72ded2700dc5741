"""Tools as the chat shows and asks about them: which tools start, the tool view, the approval question."""
