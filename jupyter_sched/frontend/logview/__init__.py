"""Following replica logs and showing them: one reader, and a renderer per medium.

* :mod:`.follower` -- one replica's log read on one thread into a bounded buffer, to its end or a stop: the
  one follower under the notebook's log pane, ``jupyter-sched log -f`` and the Jupyter server's live logs.
* :mod:`.metric_lines` -- the marked metric lines taken out of what every follower shows, their records
  stored with the app's metrics.
* :mod:`.follow` -- reading several replicas' logs, with renderer hooks.
* :mod:`.log_model` -- several replica streams multiplexed into bounded views (the notebook renders them as HTML).
* :mod:`.printer`, :mod:`.live_printer` -- the text renderers: prefixed lines, progress bars in place.
* :mod:`.tail` -- ``jupyter-sched log -f``: an app's logs into a text stream with the renderer that suits it.
"""
