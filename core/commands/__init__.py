"""The command line's own commands (`trulymem import-history`, `trulymem sync`): above
the protocol, which they drive; nothing below imports them."""
