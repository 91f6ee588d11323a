"""A docker app's record is its containers: their labels and states, read by any process (pure functions).

- ``state``: container rows and inspects -> replica and app states (exit codes, cancel and interrupted
  records, times).
- ``describe``: ``describe`` and ``list`` answers assembled from those rows, with out-of-memory kills and
  removed containers said in words.
"""
