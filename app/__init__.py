"""TrulyMEM desktop window (PySide6); displays what core/ does."""
