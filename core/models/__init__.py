"""Models that run on this computer: the catalogue, and fetching them checked."""
