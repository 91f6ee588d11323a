"""Reading a replica container's log: its history from the engine, and its live output while following.

- ``reader``: ``log_iter``'s iterator: items by the rule every backend shares, a snapshot or a follow.
- ``log_source``: one container's log endpoints (the history, plain or followed) and its state meanwhile.
- ``follow``: following a running container: the history and the live stream, read by two threads, joined.
- ``seam``: where the history and the live stream meet, one stream at a time, so nothing shows twice.
- ``frames``: the engine's multiplexed stream format, parsed in one place, and a timestamped read's cursor.
"""
