"""`trulymem --eval`: a scripted conversation against any endpoint, scored on the memory
it leaves and on what it cost (see `run`)."""
