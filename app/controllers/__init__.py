"""What the window's commands do, between the widgets and the backend's packets: memory
edits, settings, conversations, history import, model retirement notices and going to a
message."""
