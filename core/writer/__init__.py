"""The memory writer: what a person's message adds to, changes in or takes from the memory.

One room for the checks every writer goes through, the live turn's and the history
builder's alike: what the message states (extraction), whether the person said it
(grounding), whose fact it is, what a forget means and how far it may reach, when a new
value may replace an old one, and which language a message is in.
"""
