"""How things look everywhere: sizes and spacing, text marks, toasts and zoom."""
