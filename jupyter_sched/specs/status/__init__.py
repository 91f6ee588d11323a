"""What a launched app is: its handle, its state and statuses, and what its replicas use.

* :mod:`.handles` -- app handles (``scheduler://session/app_id``) and unique app ids.
* :mod:`.state` -- app and replica states, and the status objects schedulers report.
* :mod:`.usage` -- a replica's usage samples, their GPU part, and the totals kept after it ends.
"""
