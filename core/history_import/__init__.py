"""Past conversations brought in from elsewhere: read, kept, and remembered."""
